package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/checker/wirespec"
)

// The handshake's refusals (wire.md 6.4): every frame a replica reads on a
// connection whose handshake is not done is held to the checker's reading
// of the handshake's rules (wirespec.ReceiveHandshake). A frame that
// breaks one must fail the handshake, by that rule, and close the
// connection; one that breaks none must not fail it, and a connection it
// establishes must be the peer's the handshake named.

// Violation names of the handshake checks.
const (
	// HandshakeAccepted: a replica established a connection on a
	// handshake frame that breaks a rule of 6.4 (an impostor's).
	HandshakeAccepted = "invalid handshake accepted"
	// HandshakeWrongPeer: a replica established a connection as another
	// peer's than the one its handshake named.
	HandshakeWrongPeer = "handshake established another peer"
	// HandshakeMACWrong: a replica's Challenge or Finish carried a MAC
	// other than its connection's transcript's under its current key
	// (wire.md 6.4: each end signs with its current secret).
	HandshakeMACWrong = "handshake MAC off its transcript"
)

// handshakeConn is what the checker follows of one connection's
// handshake: the nonce of the Hello its acceptor read, and of the
// Challenge its dialer read.
type handshakeConn struct {
	nonceD, nonceA [32]byte
	haveD, haveA   bool
}

// HandshakeReceipt is what a replica did with a frame it read on a
// connection whose handshake was not done, as the harness saw it around
// the call.
type HandshakeReceipt struct {
	// Step is where the frame met the handshake (the harness's count of
	// the frames read on the connection, and the receiver's settings).
	Step wirespec.HandshakeStep
	// Failure names the handshake failure its bus counted during the call
	// (replica/bus HandshakeFailure names), "" for none.
	Failure string
	// Established is the peer whose connection it established during the
	// call, -1 for none.
	Established int
	// Closed: it closed the connection during the call.
	Closed bool
	// Conn names the connection (one id for both its ends), and
	// SenderSecret is the current secret of the replica at its other end
	// (what an honest sender signs with).
	Conn         uint64
	SenderSecret []byte
}

// handshakeFailures: the bus's failure names for each rule of 6.4.
var handshakeFailures = map[string]string{
	wirespec.RuleHelloFirst:      "unknown_command",
	wirespec.RuleHelloCluster:    "cluster_mismatch",
	wirespec.RuleHelloDirection:  "directional_rule",
	wirespec.RuleHelloNonce:      "auth_required",
	wirespec.RuleFinishFirst:     "unexpected_command",
	wirespec.RuleChallengeFirst:  "unexpected_command",
	wirespec.RuleMAC:             "mac_mismatch",
	wirespec.RuleSizeBelowHeader: "framing",
	wirespec.RuleSizeAboveMax:    "framing",
	wirespec.RuleSizeDelimits:    "framing",
	wirespec.RuleCommandRange:    "framing",
}

// rejectedAs is how a dialer names a Challenge's nonzero status (wire.md
// correction 4: 2, 3, 4 and 5 by name, every other value as
// UnknownCommand).
func rejectedAs(status uint8) string {
	switch status {
	case 2:
		return "rejected_cluster_mismatch"
	case 3:
		return "rejected_directional_rule"
	case 4:
		return "rejected_auth_required"
	case 5:
		return "rejected_mac_mismatch"
	}
	return "rejected_unknown_command"
}

// HandshakeFrame judges what replica to did with a handshake-phase frame
// from the other end of its connection (replica from, as the network
// knows it). injected: the bad-frames nemesis put it there in place of the
// frame from sent.
func (c *Checker) HandshakeFrame(nowNs int64, from, to uint8, frame []byte, injected bool, r HandshakeReceipt) {
	c.nowNs = nowNs
	if c.violation != nil || len(frame) < wirespec.HeaderSize {
		return
	}
	cmd := wirespec.CommandName(frame[wirespec.OffCommand])
	what := fmt.Sprintf("a %s from replica %d in the handshake", cmd, from)
	if injected {
		what = fmt.Sprintf("a %s injected as from replica %d in the handshake", cmd, from)
	}
	fail := func(name, format string, a ...any) {
		c.fail(Violation{Name: name, Replicas: []uint8{to, from}, Detail: fmt.Sprintf("replica %d, %s, ", to, what) + fmt.Sprintf(format, a...)})
	}
	if c.refusals.handshakes == nil {
		c.refusals.handshakes = map[uint64]*handshakeConn{}
	}
	hc := c.refusals.handshakes[r.Conn]
	if hc == nil {
		hc = &handshakeConn{}
		c.refusals.handshakes[r.Conn] = hc
	}
	cmd8 := frame[wirespec.OffCommand]
	if r.Step.Acceptor && !r.Step.Second && cmd8 == wirespec.ReplicaHello {
		hc.nonceD, hc.haveD = wirespec.Nonce(frame), true
	}
	// The transcript of a Challenge the dialer reads (its nonce is the
	// frame's) or of a Finish the acceptor reads.
	var tr *wirespec.Transcript
	dir := byte(wirespec.MACDialer)
	switch {
	case !r.Step.Acceptor && cmd8 == wirespec.ReplicaChallenge && frame[192] == 0 && hc.haveD:
		tr = &wirespec.Transcript{Cluster: r.Step.Cluster, Dialer: to, Acceptor: from, NonceD: hc.nonceD, NonceA: wirespec.Nonce(frame)}
		dir = wirespec.MACAcceptor
	case r.Step.Acceptor && r.Step.Second && cmd8 == wirespec.ReplicaFinish && hc.haveD && hc.haveA:
		tr = &wirespec.Transcript{Cluster: r.Step.Cluster, Dialer: from, Acceptor: to, NonceD: hc.nonceD, NonceA: hc.nonceA}
	}
	if !r.Step.Acceptor && cmd8 == wirespec.ReplicaChallenge && frame[192] == 0 {
		hc.nonceA, hc.haveA = wirespec.Nonce(frame), true
	}
	if tr != nil && r.Step.Auth {
		if want := tr.MAC(wirespec.MACKey(r.SenderSecret), dir); !injected && wirespec.MACOf(frame) != want {
			c.fail(Violation{Name: HandshakeMACWrong, Replicas: []uint8{from, to}, Detail: fmt.Sprintf("replica %d sent replica %d a %s whose MAC %x is not its connection's transcript's under its current key (%x): dialer %d, acceptor %d, nonces %x and %x",
				from, to, cmd, wirespec.MACOf(frame), want, tr.Dialer, tr.Acceptor, tr.NonceD, tr.NonceA)})
			return
		}
		r.Step.Transcript = tr
	}
	ref := wirespec.ReceiveHandshake(frame, r.Step)
	if ref == nil {
		want := -1
		switch {
		case r.Step.Acceptor && !r.Step.Second && !r.Step.Auth:
			want = int(frame[wirespec.OffReplica])
		case r.Step.Acceptor && r.Step.Second, !r.Step.Acceptor:
			want = int(from)
		}
		switch {
		case r.Failure == "send_refused":
			// Its answer met a connection the transport had let go (the
			// other end closed it while the frame was in flight): no rule
			// of the frame's.
		case r.Failure != "" || r.Closed:
			fail(ValidFrameRefused, "failed the handshake (%s, closed %v), and the frame breaks none of wire.md 6.4's rules", r.Failure, r.Closed)
		case r.Established >= 0 && want < 0:
			fail(HandshakeAccepted, "established the connection of replica %d before the handshake's Finish (wire.md 6.4 step 6)", r.Established)
		case r.Established >= 0 && r.Established != want:
			fail(HandshakeWrongPeer, "established the connection as replica %d's, and the handshake named replica %d", r.Established, want)
		}
		return
	}
	switch {
	case r.Established >= 0:
		fail(HandshakeAccepted, "established the connection as replica %d's, and the frame breaks wire.md %s (%s)", r.Established, ref.Rule, ref.Detail)
		return
	case !r.Closed:
		fail(RefusalConnection, "kept the connection, and the frame breaks wire.md %s (%s): the handshake fails and the connection closes", ref.Rule, ref.Detail)
		return
	}
	want := handshakeFailures[ref.Rule]
	if ref.Rule == wirespec.RuleChallengeOK {
		want = rejectedAs(frame[192])
	}
	if r.Failure != want {
		fail(RefusedByAnotherRule, "failed the handshake as %q, and the frame breaks wire.md %s (%s): %q", r.Failure, ref.Rule, ref.Detail, want)
	}
}
