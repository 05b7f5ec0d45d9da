package bus

import (
	"encoding/binary"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// The replica handshake, wire.md 6.4. Every handshake frame the bus sends is
// a raw 256-byte generic header with our cluster and our replica id
// (wire.md 5.19).

// dialerStart runs on Connected: send the Hello. Without auth the dialer
// reads nothing and the connection is established at once; with auth it
// waits for the Challenge.
func (b *Bus) dialerStart(x *conn) {
	if !b.cfg.Auth {
		if !b.sendHandshake(x, wire.CommandReplicaHello, wire.Bytes32{}, wire.Bytes32{}, wire.HandshakeOk) {
			b.fail(x, FailSendRefused)
			return
		}
		b.establish(x)
		return
	}
	x.nonceD = b.nonce()
	if !b.sendHandshake(x, wire.CommandReplicaHello, x.nonceD, wire.Bytes32{}, wire.HandshakeOk) {
		b.fail(x, FailSendRefused)
		return
	}
	x.phase = phaseAwaitChallenge
}

// onChallenge is the auth-enabled dialer reading the acceptor's reply: a
// Challenge with status 0 and a MAC that verifies, else the dial fails; then
// Finish under the current key, and the connection is established (no
// acknowledgement follows).
func (b *Bus) onChallenge(x *conn, frame []byte) {
	if wire.CheckFraming(frame, b.cfg.FrameSizeMax) != nil {
		b.fail(x, FailFraming)
		return
	}
	h := wire.HeaderOf(frame)
	if h.Command() != wire.CommandReplicaChallenge {
		b.fail(x, FailUnexpectedCommand)
		return
	}
	var ch wire.HandshakeHeader
	ch.Decode(h)
	if ch.Status != wire.HandshakeOk {
		b.fail(x, rejectedBy(ch.Status))
		return
	}
	x.nonceA = ch.Nonce
	tr := b.transcript(x)
	if !tr.VerifyMAC(ch.MAC, wire.MACAcceptor, b.key, b.prevKey) {
		b.fail(x, FailMACMismatch)
		return
	}
	if !b.sendHandshake(x, wire.CommandReplicaFinish, wire.Bytes32{}, tr.MAC(b.key, wire.MACDialer), wire.HandshakeOk) {
		b.fail(x, FailSendRefused)
		return
	}
	b.establish(x)
}

// rejectedBy names a nonzero Challenge status as Iggy's reader does
// (wire.md correction 4): 2, 3, 4 and 5 by name, every other value as
// UnknownCommand.
func rejectedBy(s wire.HandshakeStatus) HandshakeFailure {
	switch s {
	case wire.HandshakeClusterMismatch:
		return FailRejectedClusterMismatch
	case wire.HandshakeDirectionalRule:
		return FailRejectedDirectionalRule
	case wire.HandshakeAuthRequired:
		return FailRejectedAuthRequired
	case wire.HandshakeMACMismatch:
		return FailRejectedMACMismatch
	}
	return FailRejectedUnknownCommand
}

// onHello is the acceptor reading its first frame: steps 1-6 of wire.md 6.4.
func (b *Bus) onHello(x *conn, frame []byte) {
	if wire.CheckFraming(frame, b.cfg.FrameSizeMax) != nil {
		b.fail(x, FailFraming)
		return
	}
	h := wire.HeaderOf(frame)
	var hello wire.HandshakeHeader
	hello.Decode(h) // bytes 128..160 decide "has nonce" whatever the command
	hasNonce := !hello.Nonce.IsZero()
	// Reject frames go only to a dialer that speaks the authenticated
	// protocol and so is waiting to read our reply.
	nack := b.cfg.Auth && hasNonce
	if h.Command() != wire.CommandReplicaHello {
		b.reject(x, nack, wire.HandshakeUnknownCommand, FailUnknownCommand)
		return
	}
	if hello.Cluster != b.cfg.Cluster {
		b.reject(x, nack, wire.HandshakeClusterMismatch, FailClusterMismatch)
		return
	}
	peer := hello.Replica
	if peer >= b.cfg.ReplicaCount || peer >= b.cfg.Replica {
		if peer < b.cfg.ReplicaCount && peer != b.cfg.Replica {
			x.peer, x.peerKnown = peer, true // a higher peer of ours dialed us: count it there
		}
		b.reject(x, nack, wire.HandshakeDirectionalRule, FailDirectionalRule)
		return
	}
	x.peer, x.peerKnown = peer, true
	if !b.cfg.Auth {
		b.establish(x)
		return
	}
	if !hasNonce {
		b.fail(x, FailAuthRequired) // closed without a reply
		return
	}
	x.nonceD = hello.Nonce
	x.nonceA = b.nonce()
	tr := b.transcript(x)
	if !b.sendHandshake(x, wire.CommandReplicaChallenge, x.nonceA, tr.MAC(b.key, wire.MACAcceptor), wire.HandshakeOk) {
		b.fail(x, FailSendRefused)
		return
	}
	x.phase = phaseAwaitFinish
}

// onFinish is the acceptor reading the dialer's Finish (step 7): anything
// else, or a MAC that verifies under neither key, closes silently.
func (b *Bus) onFinish(x *conn, frame []byte) {
	if wire.CheckFraming(frame, b.cfg.FrameSizeMax) != nil {
		b.fail(x, FailFraming)
		return
	}
	h := wire.HeaderOf(frame)
	if h.Command() != wire.CommandReplicaFinish {
		b.fail(x, FailUnexpectedCommand)
		return
	}
	var fin wire.HandshakeHeader
	fin.Decode(h)
	tr := b.transcript(x)
	if !tr.VerifyMAC(fin.MAC, wire.MACDialer, b.key, b.prevKey) {
		b.fail(x, FailMACMismatch)
		return
	}
	b.establish(x)
}

// reject ends an inbound handshake at steps 1-3, first sending a reject
// Challenge (status, zero nonce and MAC) when nack is set.
func (b *Bus) reject(x *conn, nack bool, status wire.HandshakeStatus, f HandshakeFailure) {
	if nack {
		b.sendHandshake(x, wire.CommandReplicaChallenge, wire.Bytes32{}, wire.Bytes32{}, status)
	}
	b.fail(x, f)
}

// transcript returns what both ends MAC for x: ids in dialer/acceptor order.
func (b *Bus) transcript(x *conn) wire.Transcript {
	tr := wire.Transcript{Cluster: b.cfg.Cluster, NonceD: x.nonceD, NonceA: x.nonceA}
	if x.role == roleDialer {
		tr.Dialer, tr.Acceptor = b.cfg.Replica, x.peer
	} else {
		tr.Dialer, tr.Acceptor = x.peer, b.cfg.Replica
	}
	if b.cfg.TLS {
		tr.TLS = true
		tr.Exporter = b.binder.ChannelBinding(x.id)
	}
	return tr
}

// sendHandshake builds one handshake frame in the scratch header and sends it.
func (b *Bus) sendHandshake(x *conn, c wire.Command, nonce, mac wire.Bytes32, status wire.HandshakeStatus) bool {
	hh := wire.HandshakeHeader{
		Prefix: wire.Prefix{Cluster: b.cfg.Cluster, Size: wire.HeaderSize, Command: c, Replica: b.cfg.Replica},
		Nonce:  nonce,
		MAC:    mac,
		Status: status,
	}
	hh.Encode(&b.scratch)
	return b.t.Send(x.id, b.scratch[:])
}

// nonce draws 32 bytes from the replica's stream, never all zero (an all-zero
// nonce would read as "no nonce").
func (b *Bus) nonce() wire.Bytes32 {
	var n wire.Bytes32
	for n.IsZero() {
		for i := 0; i < len(n); i += 8 {
			binary.LittleEndian.PutUint64(n[i:], b.rng.Uint64())
		}
	}
	return n
}
