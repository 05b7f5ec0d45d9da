package bus

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/replica/wire/wiresample"
	"pgregory.net/rapid"
)

const (
	rogueNode = 31     // the hand-driven dialer: never a replica of these clusters
	rogueView = 0x0BAD // marks every consensus frame a rogue sends
)

// propertyWorld is a cluster of buses plus rogues driven by rapid.
type propertyWorld struct {
	t       *rapid.T
	c       *cluster
	count   uint8
	buses   []uint8 // ids that run a bus
	auth    bool
	rogue   *rogue // dials buses and sends anything
	top     *rogue // when set, plays the highest replica id as an acceptor
	samples [][]byte
	sent    uint64 // frames the buses sent to each other, numbered
}

func newPropertyWorld(t *rapid.T) *propertyWorld {
	w := &propertyWorld{t: t, c: newCluster(t), samples: wiresample.Frames()}
	w.count = rapid.Uint8Range(2, 5).Draw(t, "count")
	w.auth = rapid.Bool().Draw(t, "auth")
	rotation := rapid.IntRange(0, 2).Draw(t, "rotation")
	tls := w.auth && rapid.Bool().Draw(t, "tls")
	topRogue := rapid.Bool().Draw(t, "topRogue")
	steps := [][2][]byte{{secretOld, nil}, {secretOld, secretNew}, {secretNew, secretOld}, {secretNew, nil}}
	for i := range w.count {
		if topRogue && i == w.count-1 {
			w.top = w.c.n.addRogue(i)
			break
		}
		cfg := testConfig(i, w.count)
		cfg.ReconnectTicks = rapid.IntRange(1, 20).Draw(t, "reconnect")
		cfg.HandshakeGraceTicks = rapid.IntRange(1, 30).Draw(t, "grace")
		cfg.PeerQueueFramesMax = rapid.IntRange(1, 4).Draw(t, "queue")
		cfg.FrameSizeMax = uint32(rapid.IntRange(256, 4096).Draw(t, "frameMax"))
		if w.auth {
			// Every replica sits at one of two adjacent steps of a rolling
			// rotation, so every pair can complete a handshake.
			k := rotation + rapid.IntRange(0, 1).Draw(t, "step")
			cfg.Auth, cfg.Secret, cfg.PreviousSecret, cfg.TLS = true, steps[k][0], steps[k][1], tls
		}
		w.c.add(cfg, rapid.Uint64().Draw(t, "seed"))
		w.buses = append(w.buses, i)
	}
	w.rogue = w.c.n.addRogue(rogueNode)
	return w
}

func (w *propertyWorld) bus(label string) *Bus {
	return w.c.buses[rapid.SampledFrom(w.buses).Draw(w.t, label)]
}

// rogueFrame draws anything a hostile or broken peer could write.
func (w *propertyWorld) rogueFrame() []byte {
	t := w.t
	bytes32 := func(label string) wire.Bytes32 {
		var b wire.Bytes32
		if rapid.Bool().Draw(t, label+"Zero") {
			return b
		}
		binary.LittleEndian.PutUint64(b[:], rapid.Uint64().Draw(t, label))
		return b
	}
	cluster := testCluster
	if rapid.IntRange(0, 5).Draw(t, "foreign") == 0 {
		cluster = wire.ClusterID("foreign")
	}
	replica := rapid.Uint8Range(0, 40).Draw(t, "replica")
	switch rapid.IntRange(0, 7).Draw(t, "frameKind") {
	case 0:
		return handshakeFrame(wire.CommandReplicaHello, cluster, replica, bytes32("nonce"), wire.Bytes32{}, 0)
	case 1:
		return handshakeFrame(wire.CommandReplicaChallenge, cluster, replica, bytes32("nonce"), bytes32("mac"),
			wire.HandshakeStatus(rapid.Uint8().Draw(t, "status")))
	case 2:
		return handshakeFrame(wire.CommandReplicaFinish, cluster, replica, wire.Bytes32{}, bytes32("mac"), 0)
	case 3:
		return wire.BuildFrame(&wire.CommitHeader{Prefix: wire.Prefix{Cluster: cluster, View: rogueView,
			Command: wire.CommandCommit, Replica: replica}, Commit: 1}, nil)
	case 4, 5:
		f := slices.Clone(rapid.SampledFrom(w.samples).Draw(t, "sample"))
		wire.HeaderOf(f).SetView(rogueView)
		wire.Finish(f)
		if rapid.Bool().Draw(t, "mutate") {
			i := rapid.IntRange(0, len(f)-1).Draw(t, "at")
			f[i] ^= byte(rapid.IntRange(1, 255).Draw(t, "flip"))
			if i >= 52 && i < 56 {
				wire.HeaderOf(f).SetView(rogueView)
			}
		}
		return f
	default:
		f := rapid.SliceOfN(rapid.Byte(), 0, 600).Draw(t, "raw")
		if len(f) >= wire.HeaderSize {
			binary.LittleEndian.PutUint32(f[52:], rogueView)
			if rapid.Bool().Draw(t, "delimit") {
				wire.HeaderOf(f).SetSize(uint32(len(f)))
			}
		}
		return f
	}
}

// rogueConn picks one of r's connections open at its end, or 0.
func (w *propertyWorld) rogueConn(r *rogue) ConnID {
	var ids []ConnID
	for _, fc := range w.c.n.openConns() {
		if fc.node[0] == r.id || fc.node[1] == r.id {
			ids = append(ids, fc.id)
		}
	}
	if len(ids) == 0 {
		return 0
	}
	return rapid.SampledFrom(ids).Draw(w.t, "rogueConn")
}

func (w *propertyWorld) step() {
	t, n := w.t, w.c.n
	switch rapid.IntRange(0, 14).Draw(t, "action") {
	case 0, 1: // one tick of one bus
		w.bus("tick").Tick()
	case 2, 3, 4, 5, 6, 7: // one network event, any that TCP order allows
		var ready []int
		for i := range n.queue {
			if !n.blocked(i) {
				ready = append(ready, i)
			}
		}
		if len(ready) > 0 {
			n.stepAt(rapid.SampledFrom(ready).Draw(t, "event"))
		}
	case 8, 9: // a bus sends to a peer
		b := w.bus("from")
		peer := rapid.Uint8Range(0, w.count-1).Draw(t, "to")
		if peer != b.cfg.Replica {
			w.sent++
			b.Send(peer, wire.BuildFrame(&wire.CommitHeader{Prefix: wire.Prefix{Cluster: testCluster,
				Command: wire.CommandCommit, Replica: b.cfg.Replica}, Commit: w.sent}, nil))
		}
	case 10: // a connection resets
		if conns := n.openConns(); len(conns) > 0 {
			n.reset(rapid.SampledFrom(conns).Draw(t, "reset").id)
		}
	case 11: // the rogue dials a replica
		if len(w.rogue.accepted)+len(w.rogue.conned) < 3*AcceptsPendingMax {
			w.rogue.dial(rapid.SampledFrom(w.buses).Draw(t, "rogueDial"))
		}
	case 12, 13: // a rogue writes something
		r := w.rogue
		if w.top != nil && rapid.Bool().Draw(t, "top") {
			r = w.top
		}
		if c := w.rogueConn(r); c != 0 {
			r.n.port(r.id).Send(c, w.rogueFrame())
		}
	case 14: // a rogue closes a connection
		r := w.rogue
		if w.top != nil && rapid.Bool().Draw(t, "top") {
			r = w.top
		}
		if c := w.rogueConn(r); c != 0 {
			r.close(c)
		}
	}
	w.c.check()
	if w.auth {
		// Without the secret the rogue never completes a handshake, so none
		// of its frames is ever delivered.
		for _, id := range w.buses {
			for _, d := range w.c.sinks[id].got {
				if wire.HeaderOf(d.frame).View() == rogueView {
					w.t.Fatalf("replica %d delivered a rogue frame from peer %d", id, d.peer)
				}
			}
		}
	}
}

// settle closes the rogues' connections, lets every event land, then ticks
// long enough for a sweep and a handshake: every pair of buses must then
// share exactly one connection, established at both ends.
func (w *propertyWorld) settle() {
	n := w.c.n
	for _, fc := range n.openConns() {
		for _, r := range []*rogue{w.rogue, w.top} {
			if r != nil && (fc.node[0] == r.id || fc.node[1] == r.id) {
				r.close(fc.id)
			}
		}
	}
	n.run()
	for range 60 { // > max reconnect (20) + max grace (30)
		w.c.tick(1)
	}
	for _, i := range w.buses {
		for _, j := range w.buses {
			if i >= j {
				continue
			}
			bi, bj := w.c.buses[i], w.c.buses[j]
			if !bi.Established(j) || !bj.Established(i) {
				w.t.Fatalf("pair %d-%d not established: %v %v", i, j, bi.Established(j), bj.Established(i))
			}
			if bi.peers[j].established.id != bj.peers[i].established.id {
				w.t.Fatalf("pair %d-%d on two connections", i, j)
			}
		}
	}
	for _, id := range w.buses {
		for p := range w.c.buses[id].peers {
			if w.top != nil && p == int(w.top.id) {
				continue
			}
			if ps := w.c.buses[id].peers[p]; ps.outbound != nil {
				w.t.Fatalf("replica %d still dialing %d", id, p)
			}
		}
	}
	// Frames between buses are delivered once each.
	for _, id := range w.buses {
		seen := map[uint64]bool{}
		for _, d := range w.c.sinks[id].got {
			if wire.HeaderOf(d.frame).View() == rogueView {
				continue
			}
			var ch wire.CommitHeader
			ch.Decode(wire.HeaderOf(d.frame))
			if seen[ch.Commit] {
				w.t.Fatalf("replica %d got frame %d twice", id, ch.Commit)
			}
			seen[ch.Commit] = true
		}
	}
}

func TestPropertyRandomInterleavings(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := newPropertyWorld(t)
		steps := rapid.IntRange(0, 400).Draw(t, "steps")
		for range steps {
			w.step()
		}
		w.settle()
	})
}
