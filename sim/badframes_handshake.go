package sim

import (
	"fmt"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// The bad-frames nemesis's impostor: now and then it arms one handshake
// substitution, and the next handshake frame of that step any replica
// sends is replaced on its connection by an impostor's (wire.md 6.4): a
// first frame that is not a Hello, a Hello of another cluster, a Hello
// naming a replica the acceptor does not accept from, a Hello without a
// nonce (auth on), a Finish whose MAC had a bit flipped or a frame that is
// not a Finish, a Challenge that rejects, whose MAC had a bit flipped, or
// a frame that is not a Challenge. The receiver must fail the handshake by
// that rule and close the connection (checker.HandshakeFrame); the honest
// sender meets a closed connection and dials again at its next sweep.

// impostorKind is one substitution: the handshake frame it replaces, and
// whether it needs auth.
type impostorKind struct {
	name     string
	replaces wire.Command // the honest frame it takes the place of
	auth     bool
	build    func(b *badFrames, honest []byte, from uint8, c network.ConnID, to uint8) []byte
}

var impostorKinds = []impostorKind{
	{"a Commit as the first frame", wire.CommandReplicaHello, false, func(b *badFrames, h []byte, from uint8, _ network.ConnID, _ uint8) []byte {
		return b.impostorCommit(h, from)
	}},
	{"a Hello of another cluster", wire.CommandReplicaHello, false, func(b *badFrames, h []byte, _ uint8, _ network.ConnID, _ uint8) []byte {
		f := append([]byte(nil), h...)
		other := wire.ClusterID(fmt.Sprintf("not-vopr-%d", b.rng.IntN(1000)))
		putU128(f, 32, other)
		return f
	}},
	{"a Hello naming a replica not below the acceptor", wire.CommandReplicaHello, false, func(b *badFrames, h []byte, _ uint8, _ network.ConnID, _ uint8) []byte {
		f := append([]byte(nil), h...)
		f[61] = 0xff // the acceptor's id or above: set at substitution
		return f
	}},
	{"a Hello without a nonce", wire.CommandReplicaHello, true, func(b *badFrames, h []byte, _ uint8, _ network.ConnID, _ uint8) []byte {
		f := append([]byte(nil), h...)
		clear(f[128:160])
		return f
	}},
	{"a Finish whose MAC had a bit flipped", wire.CommandReplicaFinish, true, func(b *badFrames, h []byte, _ uint8, _ network.ConnID, _ uint8) []byte {
		f := append([]byte(nil), h...)
		f[160+b.rng.IntN(32)] ^= 1 << b.rng.IntN(8)
		return f
	}},
	{"a Commit in place of the Finish", wire.CommandReplicaFinish, true, func(b *badFrames, h []byte, from uint8, _ network.ConnID, _ uint8) []byte {
		return b.impostorCommit(h, from)
	}},
	{"a Finish signed without the secret", wire.CommandReplicaFinish, true, func(b *badFrames, h []byte, from uint8, c network.ConnID, to uint8) []byte {
		// An impostor that holds no secret MACs under the key of the
		// empty one.
		f := append([]byte(nil), h...)
		tr := b.transcript(h, from, to, c)
		mac := tr.MAC(wire.DeriveMACKey(nil), wire.MACDialer)
		copy(f[160:192], mac[:])
		return f
	}},
	{"a Challenge signed without the secret", wire.CommandReplicaChallenge, true, func(b *badFrames, h []byte, from uint8, c network.ConnID, to uint8) []byte {
		f := append([]byte(nil), h...)
		tr := b.transcript(h, to, from, c)
		mac := tr.MAC(wire.DeriveMACKey(nil), wire.MACAcceptor)
		copy(f[160:192], mac[:])
		return f
	}},
	{"a Challenge that rejects", wire.CommandReplicaChallenge, true, func(b *badFrames, h []byte, _ uint8, _ network.ConnID, _ uint8) []byte {
		f := append([]byte(nil), h...)
		clear(f[128:192])
		f[192] = byte(1 + b.rng.IntN(255))
		return f
	}},
	{"a Challenge whose MAC had a bit flipped", wire.CommandReplicaChallenge, true, func(b *badFrames, h []byte, _ uint8, _ network.ConnID, _ uint8) []byte {
		f := append([]byte(nil), h...)
		f[160+b.rng.IntN(32)] ^= 1 << b.rng.IntN(8)
		return f
	}},
	{"a Commit in place of the Challenge", wire.CommandReplicaChallenge, true, func(b *badFrames, h []byte, from uint8, _ network.ConnID, _ uint8) []byte {
		return b.impostorCommit(h, from)
	}},
}

// transcript is what the handshake on c between dialer and acceptor MACs
// (wire.md 6.2), from the nonces its Hello and Challenge carried.
func (b *badFrames) transcript(honest []byte, dialer, acceptor uint8, c network.ConnID) wire.Transcript {
	tr := wire.Transcript{Dialer: dialer, Acceptor: acceptor, NonceD: b.nonces[c][0], NonceA: b.nonces[c][1]}
	tr.Cluster.Lo, tr.Cluster.Hi = le64(honest[32:]), le64(honest[40:])
	return tr
}

// impostorCommit is a sealed Commit of the honest frame's cluster, as
// from replica from.
func (b *badFrames) impostorCommit(honest []byte, from uint8) []byte {
	var cluster wire.U128
	cluster.Lo, cluster.Hi = le64(honest[32:]), le64(honest[40:])
	return wire.BuildFrame(&wire.CommitHeader{Prefix: wire.Prefix{Cluster: cluster, Replica: from}, TimestampMonotonic: 1 + b.rng.Uint64N(100),
		Group: wire.MetadataGroup}, nil)
}

func le64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func putU128(f []byte, off int, u wire.U128) {
	put64(f, off, u.Lo)
	put64(f, off+8, u.Hi)
}

// Impostor timing, in ticks: a round armed waits this long for its
// handshake step; past half of it, it resets a connection so that one
// comes (a scripted reset).
const impostorWaitTicks = 1500

// armImpostor arms a substitution (one round in four, when none is).
func (b *badFrames) armImpostor(tick int64) bool {
	if b.impostor >= 0 || b.rng.IntN(4) != 0 {
		return false
	}
	var kinds []int
	for i, k := range impostorKinds {
		if !k.auth || b.v.o.Auth {
			kinds = append(kinds, i)
		}
	}
	b.impostor = kinds[b.rng.IntN(len(kinds))]
	b.impostorUntil = tick + impostorWaitTicks
	b.impostorReset = false
	b.v.res.Probes["bad frames: impostor armed: "+impostorKinds[b.impostor].name]++
	return true
}

// impostorTick disarms a round past its deadline, and past half of it
// resets one established connection between replicas, so that a
// handshake comes.
func (b *badFrames) impostorTick(tick int64) {
	if b.impostor < 0 {
		return
	}
	if tick > b.impostorUntil {
		b.v.res.Probes["bad frames: impostor round expired"]++
		b.impostor = -1
		return
	}
	if b.impostorReset || tick < b.impostorUntil-impostorWaitTicks/2 {
		return
	}
	b.impostorReset = true
	var conns []network.ConnID
	rc := b.v.c.receipts
	for _, to := range b.v.c.Replicas {
		if !to.Up() || to.Replica() == nil {
			continue
		}
		for from := range uint8(len(b.v.c.Replicas)) {
			if c, ok := rc.conns[[2]uint8{from, to.ID()}]; ok && from < to.ID() {
				if _, open := b.v.c.Net.Peer(c, network.NodeID(to.ID())); open {
					conns = append(conns, c)
				}
			}
		}
	}
	if len(conns) > 0 {
		b.v.c.Net.Reset(conns[b.rng.IntN(len(conns))])
		b.v.res.Probes["bad frames: impostor reset a connection to get a handshake"]++
	}
}

// send sees every frame a replica hands the network for a peer: the armed
// substitution takes the first frame of its step and sends the impostor's
// in its place. It reports whether it took the frame.
func (b *badFrames) send(from uint8, c network.ConnID, frame []byte) bool {
	if len(frame) < wire.HeaderSize || !b.v.o.Auth {
		return false
	}
	// The nonces of each handshake, for an impostor that signs its own.
	switch wire.HeaderOf(frame).Command() {
	case wire.CommandReplicaHello:
		n := b.nonces[c]
		copy(n[0][:], frame[128:160])
		b.nonces[c] = n
	case wire.CommandReplicaChallenge:
		n := b.nonces[c]
		copy(n[1][:], frame[128:160])
		b.nonces[c] = n
	}
	if b.impostor < 0 || !b.v.faulted {
		return false
	}
	k := impostorKinds[b.impostor]
	if wire.HeaderOf(frame).Command() != k.replaces {
		return false
	}
	if k.replaces == wire.CommandReplicaChallenge && frame[192] != 0 {
		return false // a reject: the impostor replaces an accepting Challenge
	}
	to, ok := b.v.c.Net.Peer(c, network.NodeID(from))
	if !ok || int(to) >= len(b.v.c.Replicas) {
		return false
	}
	bad := k.build(b, frame, from, c, uint8(to))
	if bad[61] == 0xff && bad[60] == byte(wire.CommandReplicaHello) {
		bad[61] = uint8(to) + uint8(b.rng.IntN(256-int(to)))
	}
	h := b.v.c.receipts.handshake(c, uint8(to))
	h.injected = true
	b.impostor = -1
	b.v.res.Probes["bad frames: impostor sent "+k.name]++
	b.v.tr.process("nemesis", uint8(to), false, fmt.Sprintf("bad frames: %s sent to it in place of replica %d's", k.name, from), 0)
	b.v.c.Net.Send(c, network.NodeID(from), bad)
	return true
}
