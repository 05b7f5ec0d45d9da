package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// The bad-frames nemesis (Options.BadFrames) puts frames on the replicas'
// connections that a peer could send and that wire.md's receiver rules
// refuse: sealed as their command is sealed (the network's bit flips
// already test the seals), each breaking one named rule (framing, sizes,
// reserved bytes, command ranges, suffix sizes, body seals, view and op
// ranges, the batch of a SendMessages prepare: badframes_catalogue.go).
// The swarm sends only well-formed frames, so without it the receivers'
// refusals never run (issue 26).
//
// A round picks a pair of replicas whose connection the receiver's bus
// has counted a frame on (so it is established there), builds a frame of
// one catalogue entry as if the other end sent it, and hands it to the
// receiver, observed as every peer frame is (peerReceipts): the checker
// judges the receipt by its own reading of the rules (checker.PeerFrame).
// The frame enters at the receiver, not through the network: the network
// draws nothing for it, so a seed's faults stay where they were, and the
// sender never knows (as for a peer that misbehaves). The nemesis draws
// from its own stream.
type badFrames struct {
	v        *vopr
	rng      *rand.Rand
	nextTick int64
	// The armed impostor round (badframes_handshake.go): its kind (-1:
	// none), its deadline, and whether it reset a connection yet.
	impostor      int
	impostorUntil int64
	impostorReset bool
	// nonces: per connection, its Hello's and its Challenge's nonces, as
	// sent (auth on). Looked up only.
	nonces map[network.ConnID][2]wire.Bytes32
}

// Round timing, in ticks: a frame every 20 to 200 ticks of the safety
// phase (some hundred a seed).
const (
	badGapTicksMin    = 20
	badGapTicksSpread = 180
)

func newBadFrames(v *vopr) *badFrames {
	b := &badFrames{v: v, rng: v.c.Streams.Stream("vopr.badframes"), impostor: -1, nonces: map[network.ConnID][2]wire.Bytes32{}}
	b.nextTick = badGapTicksMin + b.rng.Int64N(badGapTicksSpread)
	return b
}

// tick injects one frame when its time has come.
func (b *badFrames) tick(nowNs int64) {
	tick := nowNs / kernel.TickNs
	b.impostorTick(tick)
	if tick < b.nextTick {
		return
	}
	b.nextTick = tick + badGapTicksMin + b.rng.Int64N(badGapTicksSpread)
	if b.armImpostor(tick) {
		return
	}
	rc := b.v.c.receipts
	type pair struct {
		from, to uint8
		conn     network.ConnID
	}
	var pairs []pair
	for _, to := range b.v.c.Replicas {
		if !to.Up() || to.Paused() || to.Replica() == nil {
			continue
		}
		for from := range uint8(len(b.v.c.Replicas)) {
			c, ok := rc.conns[[2]uint8{from, to.ID()}]
			if !ok || from == to.ID() || !to.Replica().Bus().Established(from) {
				continue
			}
			if _, open := b.v.c.Net.Peer(c, network.NodeID(to.ID())); open {
				pairs = append(pairs, pair{from, to.ID(), c})
			}
		}
	}
	if len(pairs) == 0 {
		b.v.res.Probes["bad frames: no established connection to inject on"]++
		return
	}
	p := pairs[b.rng.IntN(len(pairs))]
	k := badKinds[b.rng.IntN(len(badKinds))]
	n := b.v.c.Replicas[p.to]
	g := n.Replica().Metadata()
	cfg := n.Replica().Config()
	x := &badCtx{rng: b.rng, cluster: cfg.Cluster(), from: p.from, replicas: len(b.v.c.Replicas),
		sizeMax: cfg.Profile.FrameSizeMax, view: g.View(), op: g.Op(), commit: g.CommitMax()}
	if groups := n.Replica().PartitionGroups(); len(groups) > 0 {
		x.group = groups[b.rng.IntN(len(groups))]
	}
	for x.unknownGroup == 0 {
		// Above any id the metadata mints in a run, below bit 52.
		g := 1<<40 + b.rng.Uint64N(1<<20)
		if _, runs := n.Replica().PartitionGroup(g); !runs {
			x.unknownGroup = g
		}
	}
	var frame []byte
	if b.rng.IntN(4) == 0 {
		v := voidKinds[b.rng.IntN(len(voidKinds))]
		if frame = v.build(x); frame != nil {
			b.v.res.Probes["bad frames: void frame injected: "+v.name]++
			b.v.tr.process("nemesis", p.to, false, fmt.Sprintf("bad frames: %s injected as from replica %d", v.name, p.from), 0)
		}
	}
	if frame == nil {
		frame = k.build(x)
		b.v.res.Probes["bad frames: injected, breaking "+k.rule]++
		b.v.tr.process("nemesis", p.to, false, fmt.Sprintf("bad frames: a frame breaking %s injected as from replica %d", k.rule, p.from), 0)
	}
	if !rc.receive(n, p.conn, network.NodeID(p.from), true, frame, true) {
		// Replaced by a newer connection the receiver has not read a
		// frame from yet.
		delete(rc.conns, [2]uint8{p.from, p.to})
		b.v.res.Probes["bad frames: the connection was gone"]++
	}
}
