package wirespec

// The handshake's receiver rules (wire.md 6.4), for a frame read on a
// connection whose handshake is not done. A MAC's validity needs the
// secret and both nonces: the checker does not hold them, so the frame's
// builder declares a MAC it broke (HandshakeStep.BadMAC) and these rules
// take its word.

// Handshake rules, named as wire.md 6.4 states them.
const (
	RuleHelloFirst     = "6.4 step 1: the acceptor's first frame is a Hello"
	RuleHelloCluster   = "6.4 step 2: the Hello's cluster is the acceptor's"
	RuleHelloDirection = "6.4 step 3: the Hello's replica is below the acceptor's and the count"
	RuleHelloNonce     = "6.4 step 5: with auth, the Hello carries a nonce"
	RuleFinishFirst    = "6.4 step 7: the acceptor's second frame is a Finish"
	RuleChallengeFirst = "6.4: the dialer's reply is a Challenge"
	RuleChallengeOK    = "6.4 and correction 4: the Challenge's status is 0"
	RuleMAC            = "6.4: the MAC verifies under the current or the previous key"
)

// HandshakeStep says where a frame meets its receiver's handshake.
type HandshakeStep struct {
	// Acceptor: the receiver accepted the connection (else it dialed it,
	// and with auth this is the Challenge it waits for).
	Acceptor bool
	// Second: the acceptor read a Hello that passed on this connection
	// already (auth on): this is the frame it takes as the Finish.
	Second bool
	// Cluster, Replica and Replicas are the receiver's; Auth whether its
	// handshake is authenticated.
	Cluster  U128
	Replica  uint8
	Replicas int
	Auth     bool
	// SizeMax is its max_message_size: the framing rules (1.1) come
	// first in the handshake too.
	SizeMax uint32
	// BadMAC: the frame's builder broke its MAC (an injected Finish or
	// Challenge whose MAC had a bit flipped).
	BadMAC bool
}

// ReceiveHandshake judges frame f at step s of its receiver's handshake:
// nil if the step passes (the acceptor establishes the connection or, with
// auth, sends its Challenge; the dialer establishes it), else the rule it
// breaks. Every refusal closes the connection (6.4: reject, close, fail).
func ReceiveHandshake(f []byte, s HandshakeStep) *Refusal {
	if r := framing(f, s.SizeMax); r != nil {
		return r
	}
	c := f[OffCommand]
	closing := func(rule, format string, a ...any) *Refusal {
		r := refuse(rule, format, a...)
		r.Close = true
		return r
	}
	switch {
	case s.Acceptor && !s.Second:
		switch {
		case c != ReplicaHello:
			return closing(RuleHelloFirst, "a %s", CommandName(c))
		case Get128(f, OffCluster) != s.Cluster:
			return closing(RuleHelloCluster, "cluster %s, the acceptor's %s", Get128(f, OffCluster), s.Cluster)
		case int(f[OffReplica]) >= s.Replicas || f[OffReplica] >= s.Replica:
			return closing(RuleHelloDirection, "replica %d at replica %d of %d", f[OffReplica], s.Replica, s.Replicas)
		case s.Auth && zero(f, 128, 160, "") == nil:
			return closing(RuleHelloNonce, "a Hello without a nonce")
		}
	case s.Acceptor:
		switch {
		case c != ReplicaFinish:
			return closing(RuleFinishFirst, "a %s", CommandName(c))
		case s.BadMAC:
			return closing(RuleMAC, "a Finish whose mac_d had a bit flipped")
		}
	default:
		switch {
		case c != ReplicaChallenge:
			return closing(RuleChallengeFirst, "a %s", CommandName(c))
		case f[192] != 0:
			return closing(RuleChallengeOK, "status %d", f[192])
		case s.BadMAC:
			return closing(RuleMAC, "a Challenge whose mac_a had a bit flipped")
		}
	}
	return nil
}
