package wirespec

import (
	"encoding/binary"

	"lukechampine.com/blake3"
)

// The handshake's receiver rules (wire.md 6.4), for a frame read on a
// connection whose handshake is not done. A MAC is judged with the
// receiver's secrets and the transcript of the connection's Hello and
// Challenge, which the checker follows (checker.HandshakeFrame).

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
	// Secrets are the receiver's shared secrets, the current and (in a
	// rotation window) the previous: a MAC verifies under either (6.4).
	Secrets [][]byte
	// Transcript is the connection's so far (its Hello's nonce, and for
	// a Finish its Challenge's), nil when not known: the MAC then goes
	// unjudged.
	Transcript *Transcript
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
		case s.Auth && s.Transcript != nil && !s.Transcript.Verifies(MACOf(f), MACDialer, s.Secrets):
			return closing(RuleMAC, "a Finish whose mac_d is the transcript's under none of the acceptor's keys")
		}
	default:
		switch {
		case c != ReplicaChallenge:
			return closing(RuleChallengeFirst, "a %s", CommandName(c))
		case f[192] != 0:
			return closing(RuleChallengeOK, "status %d", f[192])
		case s.Transcript != nil && !s.Transcript.Verifies(MACOf(f), MACAcceptor, s.Secrets):
			return closing(RuleMAC, "a Challenge whose mac_a is the transcript's under none of the dialer's keys")
		}
	}
	return nil
}

// Nonce is a Hello's or a Challenge's nonce (bytes 128..160, 5.19).
func Nonce(f []byte) [32]byte {
	var n [32]byte
	copy(n[:], f[128:160])
	return n
}

// MACOf is a Challenge's or a Finish's MAC (bytes 160..192, 5.19).
func MACOf(f []byte) [32]byte {
	var m [32]byte
	copy(m[:], f[160:192])
	return m
}

// The handshake's MAC (wire.md 6.1, 6.2), plaintext mode: the checker's own,
// so that it judges a Finish's or a Challenge's MAC itself.
const (
	macKeyContext = "apache-iggy replica-auth v1 psk->mac-key"
	macDomainTag  = "apache-iggy replica-auth v1"
	// MACDialer and MACAcceptor are the transcript's last byte: whose MAC
	// it is (the dialer's, in the Finish; the acceptor's, in the Challenge).
	MACDialer   = 1
	MACAcceptor = 2
)

// MACKey derives the MAC key from a shared secret's raw bytes: BLAKE3
// derive_key with the context of 6.1.
func MACKey(secret []byte) [32]byte {
	var k [32]byte
	blake3.DeriveKey(k[:], macKeyContext, secret)
	return k
}

// Transcript is what both ends of a handshake MAC (6.2): the cluster, the
// dialer's and the acceptor's ids, and both nonces.
type Transcript struct {
	Cluster          U128
	Dialer, Acceptor uint8
	NonceD, NonceA   [32]byte
}

// MAC is the BLAKE3 keyed hash, under key, of the 143-byte transcript for
// direction dir (plaintext mode: mode byte 0, exporter zero).
func (t *Transcript) MAC(key [32]byte, dir byte) [32]byte {
	var b [143]byte
	copy(b[0:27], macDomainTag)
	binary.LittleEndian.PutUint64(b[27:], t.Cluster.Lo)
	binary.LittleEndian.PutUint64(b[35:], t.Cluster.Hi)
	b[43], b[44] = t.Dialer, t.Acceptor
	copy(b[45:77], t.NonceD[:])
	copy(b[77:109], t.NonceA[:])
	b[142] = dir
	h := blake3.New(32, key[:])
	h.Write(b[:])
	var mac [32]byte
	h.Sum(mac[:0])
	return mac
}

// Verifies reports whether mac is the transcript's MAC for dir under the
// key of any of secrets (a receiver's current and previous, 6.4).
func (t *Transcript) Verifies(mac [32]byte, dir byte, secrets [][]byte) bool {
	for _, s := range secrets {
		if t.MAC(MACKey(s), dir) == mac {
			return true
		}
	}
	return false
}
