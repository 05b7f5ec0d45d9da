package network_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/zeebo/xxh3"
)

// probe is a test event that calls f every TickNs, 1 ns after the
// network's tick, so it sees the state each tick left.
type probe struct {
	loop *kernel.Loop
	f    func(nowNs int64)
}

func (p *probe) Fire(nowNs int64, _ uint64) (string, int32, uint64) {
	p.f(nowNs)
	p.loop.At(nowNs+network.TickNs, p, 0)
	return "", -1, 0
}

func startProbe(w *world, f func(nowNs int64)) {
	p := &probe{loop: w.loop, f: f}
	w.loop.At((w.loop.Now()/network.TickNs+1)*network.TickNs+1, p, 0)
}

// connect dials from -> to and runs until the connection is open at both ends.
func (w *world) connect(from, to network.NodeID) network.ConnID {
	w.t.Helper()
	c := w.dial(from, to)
	w.run(w.loop.Now() + 100*ms)
	if tr := w.track(c); !tr.opened || !tr.accepted {
		w.t.Fatalf("dial %d -> %d did not open", from, to)
	}
	return c
}

// sendSeq sends commit frames with seqs first..last on c from node from.
func (w *world) sendSeq(c network.ConnID, from network.NodeID, first, last uint64) {
	w.t.Helper()
	for seq := first; seq <= last; seq++ {
		if !w.send(c, from, commitFrame(seq, 0)) {
			w.t.Fatalf("send of seq %d refused", seq)
		}
	}
}

// seqs returns the commit fields of the frames received in direction s of c.
func (w *world) seqs(c network.ConnID, s int) []uint64 {
	var out []uint64
	for _, f := range w.track(c).got[s] {
		var h wire.CommitHeader
		h.Decode(wire.HeaderOf(f))
		out = append(out, h.Commit)
	}
	return out
}

func seqRange(first, last uint64) []uint64 {
	var out []uint64
	for s := first; s <= last; s++ {
		out = append(out, s)
	}
	return out
}

// cutSides reads the partition off the cut matrix of replicas 0..r-1: the
// side that cannot receive (for a symmetric partition, the side holding the
// smallest id that has a cut), the other side, and whether it is one-way.
// It fails the test if the cuts are not a two-sided partition of that shape.
func cutSides(t *testing.T, w *world, r int) (side, other []network.NodeID, oneWay bool) {
	t.Helper()
	cut := func(a, b int) bool { return w.net.Cut(network.NodeID(a), network.NodeID(b)) }
	symmetric, asymmetric := false, false
	inSide := make([]bool, r)
	inOther := make([]bool, r)
	for a := range r {
		for b := range r {
			if !cut(a, b) {
				continue
			}
			if cut(b, a) {
				symmetric = true
			} else {
				asymmetric = true
			}
		}
	}
	if symmetric == asymmetric {
		t.Fatalf("cuts are neither all symmetric nor all one-way (symmetric %v)", symmetric)
	}
	oneWay = asymmetric
	if oneWay {
		for a := range r {
			for b := range r {
				if cut(b, a) {
					inSide[a], inOther[b] = true, true
				}
			}
		}
	} else {
		// The side holding the first node with a cut: it and every node
		// it is not cut from.
		first := -1
		for a := range r {
			for b := range r {
				if cut(a, b) && first < 0 {
					first = a
				}
			}
		}
		for b := range r {
			inSide[b] = b == first || !cut(first, b)
			inOther[b] = !inSide[b]
		}
	}
	for a := range r {
		if inSide[a] == inOther[a] {
			t.Fatalf("replica %d is on %v sides", a, map[bool]string{true: "both", false: "neither"}[inSide[a]])
		}
		if inSide[a] {
			side = append(side, network.NodeID(a))
		} else {
			other = append(other, network.NodeID(a))
		}
	}
	for _, a := range side {
		for _, b := range other {
			if !w.net.Cut(b, a) || w.net.Cut(a, b) != !oneWay {
				t.Fatalf("path %d <-> %d not cut as a partition %v / %v (one-way %v) requires", a, b, side, other, oneWay)
			}
		}
	}
	for _, s := range [][]network.NodeID{side, other} {
		for _, a := range s {
			for _, b := range s {
				if w.net.Cut(a, b) {
					t.Fatalf("path %d -> %d cut within one side", a, b)
				}
			}
		}
	}
	return side, other, oneWay
}

// TestPartitionModes: random partitions in every mode and symmetry have the
// mode's shape, never touch clients, and respect the minimum partitioned and
// healed durations.
func TestPartitionModes(t *testing.T) {
	for _, mode := range []network.PartitionMode{network.PartitionIsolateSingle, network.PartitionUniformSize, network.PartitionUniformPartition} {
		for _, sym := range []network.PartitionSymmetry{network.PartitionSymmetric, network.PartitionOneWay} {
			t.Run(fmt.Sprintf("%v/%v", mode, sym), func(t *testing.T) {
				const replicas, clients = 5, 2
				o := quietOptions()
				o.PartitionMode, o.PartitionSymmetry = mode, sym
				o.PartitionProbability, o.UnpartitionProbability = 0.3, 0.2
				o.PartitionStabilityMinTicks, o.UnpartitionStabilityMinTicks = 6, 3
				w := newWorld(t, 7, o, replicas, clients)
				var (
					partitions, widest int
					wasPartitioned     bool
					sinceTick          int64
					tick               int64
				)
				startProbe(w, func(nowNs int64) {
					tick++
					p := w.net.Partitioned()
					for c := replicas; c < replicas+clients; c++ {
						for r := range replicas + clients {
							if w.net.Cut(network.NodeID(c), network.NodeID(r)) || w.net.Cut(network.NodeID(r), network.NodeID(c)) {
								t.Fatalf("client %d cut from %d", c, r)
							}
						}
					}
					if p != wasPartitioned {
						held := tick - sinceTick
						if min := map[bool]int64{true: 6, false: 3}[wasPartitioned]; tick > 1 && held < min {
							t.Fatalf("tick %d: %s for %d ticks, minimum %d", tick, map[bool]string{true: "partitioned", false: "healed"}[wasPartitioned], held, min)
						}
						wasPartitioned, sinceTick = p, tick
						if p {
							partitions++
							side, other, oneWay := cutSides(t, w, replicas)
							if oneWay != (sym == network.PartitionOneWay) {
								t.Fatalf("partition one-way %v under %v", oneWay, sym)
							}
							smaller := min(len(side), len(other))
							if mode == network.PartitionIsolateSingle && smaller != 1 {
								t.Fatalf("isolate_single split %v / %v", side, other)
							}
							widest = max(widest, smaller)
						}
					}
				})
				w.run(30_000 * ms)
				if partitions < 20 {
					t.Fatalf("only %d partitions in 30 s", partitions)
				}
				if mode != network.PartitionIsolateSingle && widest < 2 {
					t.Fatalf("%v never split 2 / 3", mode)
				}
				if st := w.net.Stats(); st.Partitions != uint64(partitions) {
					t.Fatalf("stats count %d partitions, probe saw %d", st.Partitions, partitions)
				}
			})
		}
	}
}

// TestPartitionMinimumDurations: with certain start and heal, partitions
// last exactly the partitioned minimum and gaps exactly the healed minimum.
func TestPartitionMinimumDurations(t *testing.T) {
	o := quietOptions()
	o.PartitionMode = network.PartitionUniformSize
	o.PartitionProbability, o.UnpartitionProbability = 1, 1
	o.PartitionStabilityMinTicks, o.UnpartitionStabilityMinTicks = 7, 4
	w := newWorld(t, 1, o, 3, 0)
	var transitions []int64
	was := false
	startProbe(w, func(nowNs int64) {
		if p := w.net.Partitioned(); p != was {
			was = p
			transitions = append(transitions, nowNs/network.TickNs)
		}
	})
	w.run(1_000 * ms)
	if len(transitions) < 10 {
		t.Fatalf("only %d transitions", len(transitions))
	}
	for i := 1; i < len(transitions); i++ {
		want := int64(4)
		if i%2 == 1 { // transitions[i-1] started a partition
			want = 7
		}
		if got := transitions[i] - transitions[i-1]; got != want {
			t.Fatalf("window %d lasted %d ticks, want %d (transitions at ticks %v)", i, got, want, transitions)
		}
	}
}

func quietPartitionWorld(t *testing.T) *world {
	o := quietOptions()
	o.TCPTimeoutMinNs, o.TCPTimeoutMeanNs = 10_000*ms, 0
	return newWorld(t, 3, o, 3, 1)
}

// TestPartitionHoldsThenHealDelivers: frames across a symmetric cut are held
// (neither delivered nor lost) and, when the partition heals, delivered at
// once, in order; traffic within a side flows.
func TestPartitionHoldsThenHealDelivers(t *testing.T) {
	w := quietPartitionWorld(t)
	c01 := w.connect(0, 1)
	c12 := w.connect(1, 2)
	w.net.Partition([]network.NodeID{0}, false)
	w.sendSeq(c01, 0, 1, 5)
	w.sendSeq(c01, 1, 11, 15)
	w.sendSeq(c12, 1, 21, 22)
	w.run(w.loop.Now() + 1_000*ms)
	if len(w.track(c01).got[0])+len(w.track(c01).got[1]) != 0 {
		t.Fatal("delivery across the cut")
	}
	if got := w.seqs(c12, 0); !slices.Equal(got, seqRange(21, 22)) {
		t.Fatalf("within a side: got %v", got)
	}
	if w.net.InFlight(c01, 0) != 5 || w.net.InFlight(c01, 1) != 5 {
		t.Fatalf("in flight %d, %d; want 5, 5", w.net.InFlight(c01, 0), w.net.InFlight(c01, 1))
	}
	healAt := w.loop.Now()
	w.net.Heal([]network.NodeID{0, 1, 2})
	if w.net.Partitioned() {
		t.Fatal("still partitioned after healing every replica")
	}
	w.run(w.loop.Now() + 100*ms)
	if got := w.seqs(c01, 0); !slices.Equal(got, seqRange(1, 5)) {
		t.Fatalf("0 -> 1 after heal: %v", got)
	}
	if got := w.seqs(c01, 1); !slices.Equal(got, seqRange(11, 15)) {
		t.Fatalf("1 -> 0 after heal: %v", got)
	}
	for s := range 2 {
		for _, at := range w.track(c01).gotAtNs[s] {
			if at != healAt {
				t.Fatalf("held frame delivered at %d, heal at %d", at, healAt)
			}
		}
	}
	if st := w.net.Stats(); st.Lost() != 0 || st.ResetsTotal() != 0 {
		t.Fatalf("partition lost frames or reset: %+v", st)
	}
}

// TestPartitionOneWay: the side that can send but not receive gets its
// frames across, not the other way; heal delivers the rest.
func TestPartitionOneWay(t *testing.T) {
	w := quietPartitionWorld(t)
	c := w.connect(0, 1)
	w.net.Partition([]network.NodeID{0}, true)
	if !w.net.Cut(1, 0) || w.net.Cut(0, 1) {
		t.Fatal("one-way partition {0}: want 1 -> 0 cut, 0 -> 1 open")
	}
	w.sendSeq(c, 0, 1, 3)
	w.sendSeq(c, 1, 11, 13)
	w.run(w.loop.Now() + 1_000*ms)
	if got := w.seqs(c, 0); !slices.Equal(got, seqRange(1, 3)) {
		t.Fatalf("0 -> 1 (open way): %v", got)
	}
	if got := w.seqs(c, 1); len(got) != 0 {
		t.Fatalf("1 -> 0 (cut way) delivered %v", got)
	}
	w.net.Heal([]network.NodeID{0, 1})
	w.run(w.loop.Now() + 10*ms)
	if got := w.seqs(c, 1); !slices.Equal(got, seqRange(11, 13)) {
		t.Fatalf("1 -> 0 after heal: %v", got)
	}
}

// TestPartialHeal: healing a subset ends cuts among it only.
func TestPartialHeal(t *testing.T) {
	w := quietPartitionWorld(t)
	w.net.Partition([]network.NodeID{0, 1}, false)
	w.net.Heal([]network.NodeID{1, 2})
	if w.net.Cut(1, 2) || w.net.Cut(2, 1) || !w.net.Cut(0, 2) || !w.net.Cut(2, 0) {
		t.Fatal("partial heal healed the wrong paths")
	}
	if !w.net.Partitioned() {
		t.Fatal("partial heal ended the partition")
	}
}

// TestTCPTimeoutReset: frames stalled across a cut past the drawn TCP
// timeout reset the connection: both ends see Closed, the frames are lost.
// An idle connection across the same cut is not timed out.
func TestTCPTimeoutReset(t *testing.T) {
	o := quietOptions()
	o.TCPTimeoutMinNs, o.TCPTimeoutMeanNs = 1_000*ms, 0
	w := newWorld(t, 5, o, 3, 0)
	c := w.connect(0, 1)
	idle := w.connect(0, 2)
	w.net.Partition([]network.NodeID{0}, false)
	sentAt := w.loop.Now()
	w.sendSeq(c, 0, 1, 3)
	w.run(w.loop.Now() + 5_000*ms)
	tr := w.track(c)
	if tr.closedAt[0] < 0 || tr.closedAt[1] < 0 {
		t.Fatal("ends did not see Closed after the TCP timeout")
	}
	if d := tr.closedAt[0] - sentAt; d < 1_000*ms || d > 1_000*ms+o.DelayMinNs+50*o.DelayMeanNs {
		t.Fatalf("reset %d ns after the send; timeout 1 s after the head was due", d)
	}
	if len(tr.got[0]) != 0 {
		t.Fatal("frames delivered across the cut")
	}
	st := w.net.Stats()
	if st.Resets[network.ResetTimeout] != 1 || st.FramesLost[network.LostReset] != 3 {
		t.Fatalf("resets %v, lost %v", st.Resets, st.FramesLost)
	}
	if ti := w.track(idle); ti.closedAt[0] >= 0 || ti.closedAt[1] >= 0 {
		t.Fatal("an idle connection across the cut timed out")
	}
}

// TestHealCancelsTimeout: a heal before the TCP timeout delivers the frames
// and the timeout never fires.
func TestHealCancelsTimeout(t *testing.T) {
	o := quietOptions()
	o.TCPTimeoutMinNs, o.TCPTimeoutMeanNs = 1_000*ms, 0
	w := newWorld(t, 5, o, 2, 0)
	c := w.connect(0, 1)
	w.net.Partition([]network.NodeID{0}, false)
	w.sendSeq(c, 0, 1, 3)
	w.run(w.loop.Now() + 900*ms)
	w.net.Heal([]network.NodeID{0, 1})
	w.run(w.loop.Now() + 5_000*ms)
	if got := w.seqs(c, 0); !slices.Equal(got, seqRange(1, 3)) {
		t.Fatalf("got %v", got)
	}
	if w.net.Stats().ResetsTotal() != 0 {
		t.Fatal("timeout fired after heal")
	}
}

// TestDialRefused: dials to a client, to a down node, across a cut, or to a
// node down at dial time (even if it is up by completion) are refused; a dial
// whose target fails before completion is refused too.
func TestDialRefused(t *testing.T) {
	w := quietPartitionWorld(t) // replicas 0..2, client 3
	toClient := w.dial(0, 3)
	w.setUp(2, false)
	toDown := w.dial(0, 2)
	w.setUp(2, true)
	w.net.Partition([]network.NodeID{1}, true) // 0 -> 1 open, 1 -> 0 cut
	acrossCut := w.dial(0, 1)
	w.run(w.loop.Now() + 100*ms)
	w.net.Heal([]network.NodeID{0, 1, 2})
	failsLater := w.dial(3, 2)
	w.setUp(2, false)
	w.run(w.loop.Now() + 100*ms)
	for _, c := range []network.ConnID{toClient, toDown, acrossCut, failsLater} {
		if tr := w.track(c); !tr.failed || tr.opened || tr.accepted {
			t.Fatalf("conn %d: failed %v opened %v accepted %v", c, tr.failed, tr.opened, tr.accepted)
		}
	}
	if st := w.net.Stats(); st.DialsFailed != 4 || st.ConnectionsOpened != 0 {
		t.Fatalf("stats %+v", st)
	}
	w.setUp(2, true)
	w.connect(3, 2)
}

// TestNodeDown: a node going down resets its connections: frames in flight
// are lost (LostDown), peers see Closed, the node hears nothing; its pending
// dials vanish; after it restarts, new connections work.
func TestNodeDown(t *testing.T) {
	w := quietPartitionWorld(t)
	c := w.connect(0, 1)
	w.sendSeq(c, 0, 1, 3)
	w.sendSeq(c, 1, 11, 12)
	pending := w.dial(1, 2)
	w.setUp(1, false)
	if w.net.Send(c, 0, commitFrame(99, 0)) {
		t.Fatal("send on a connection reset by the peer's failure accepted")
	}
	w.run(w.loop.Now() + 100*ms)
	tr := w.track(c)
	if tr.closedAt[0] < 0 || tr.closedAt[1] >= 0 || len(tr.got[0])+len(tr.got[1]) != 0 {
		t.Fatalf("closed at %v, got %d + %d", tr.closedAt, len(tr.got[0]), len(tr.got[1]))
	}
	if tp := w.track(pending); tp.opened || tp.failed || tp.accepted {
		t.Fatal("a dial of a failed node completed or failed visibly")
	}
	st := w.net.Stats()
	if st.FramesLost[network.LostDown] != 5 || st.Resets[network.ResetDown] != 1 {
		t.Fatalf("lost %v resets %v", st.FramesLost, st.Resets)
	}
	w.setUp(1, true)
	c2 := w.connect(0, 1)
	w.sendSeq(c2, 0, 1, 2)
	w.run(w.loop.Now() + 100*ms)
	if got := w.seqs(c2, 0); !slices.Equal(got, seqRange(1, 2)) {
		t.Fatalf("after restart: %v", got)
	}
}

// TestOrderlyClose: the closer's frames arrive, then Closed; the peer's
// frames towards the closer are lost once it closed; the closer hears
// nothing more (the world fails any callback to it).
func TestOrderlyClose(t *testing.T) {
	w := quietPartitionWorld(t)
	c := w.connect(0, 1)
	w.sendSeq(c, 0, 1, 3)
	w.sendSeq(c, 1, 11, 12) // in flight towards the closer: lost
	w.close(c, 0)
	if w.net.Send(c, 0, commitFrame(4, 0)) {
		t.Fatal("the closer could still send")
	}
	w.sendSeq(c, 1, 13, 13) // the peer does not know yet: accepted, lost
	w.run(w.loop.Now() + 100*ms)
	tr := w.track(c)
	if got := w.seqs(c, 0); !slices.Equal(got, seqRange(1, 3)) {
		t.Fatalf("closer's frames: %v", got)
	}
	if tr.closedAt[1] < tr.gotAtNs[0][2] || tr.closedAt[0] >= 0 {
		t.Fatalf("Closed at %v, last frame at %d", tr.closedAt, tr.gotAtNs[0][2])
	}
	if st := w.net.Stats(); st.FramesLost[network.LostClosed] != 3 || st.Closes != 1 {
		t.Fatalf("lost %v closes %d", st.FramesLost, st.Closes)
	}
	if w.net.Send(c, 1, commitFrame(14, 0)) {
		t.Fatal("send accepted after Closed")
	}
}

// TestFilterHoldRelease: a Hold filter keeps the matching frame and
// everything behind it on that direction, not the other direction; Release
// lets them go in order and the filter holds the next match; RemoveFilter
// lets everything go for good.
func TestFilterHoldRelease(t *testing.T) {
	w := quietPartitionWorld(t)
	c := w.connect(0, 1)
	isSeq3 := func(f []byte) bool {
		var h wire.CommitHeader
		h.Decode(wire.HeaderOf(f))
		return h.Commit == 3
	}
	id := w.net.AddFilter(network.Filter{From: 0, To: network.AnyNode, Match: isSeq3, Action: network.Hold})
	w.sendSeq(c, 0, 1, 6)
	w.sendSeq(c, 1, 1, 4) // 1 -> 0: the filter's path is from 0 only
	w.run(w.loop.Now() + 1_000*ms)
	if got := w.seqs(c, 0); !slices.Equal(got, seqRange(1, 2)) {
		t.Fatalf("before release: %v", got)
	}
	if got := w.seqs(c, 1); !slices.Equal(got, seqRange(1, 4)) {
		t.Fatalf("other direction: %v", got)
	}
	w.net.Release(id)
	w.run(w.loop.Now() + 100*ms)
	if got := w.seqs(c, 0); !slices.Equal(got, seqRange(1, 6)) {
		t.Fatalf("after release: %v", got)
	}
	w.sendSeq(c, 0, 3, 4)
	w.run(w.loop.Now() + 100*ms)
	if got := w.seqs(c, 0); len(got) != 6 {
		t.Fatalf("filter did not hold the next match: %v", got)
	}
	if n := w.net.Filters(); n != 1 {
		t.Fatalf("%d filters installed, want 1", n)
	}
	w.net.RemoveFilter(id)
	w.net.RemoveFilter(id) // twice: nothing
	if n := w.net.Filters(); n != 0 {
		t.Fatalf("%d filters installed after RemoveFilter, want 0", n)
	}
	w.run(w.loop.Now() + 100*ms)
	if got := w.seqs(c, 0); !slices.Equal(got, append(seqRange(1, 6), 3, 4)) {
		t.Fatalf("after remove: %v", got)
	}
}

// TestFilterDrop: a Drop filter loses the matching frames only.
func TestFilterDrop(t *testing.T) {
	w := quietPartitionWorld(t)
	c := w.connect(0, 1)
	w.net.AddFilter(network.Filter{From: network.AnyNode, To: 1, Action: network.Drop, Match: func(f []byte) bool {
		var h wire.CommitHeader
		h.Decode(wire.HeaderOf(f))
		return h.Commit%2 == 0
	}})
	w.sendSeq(c, 0, 1, 6)
	w.run(w.loop.Now() + 100*ms)
	if got := w.seqs(c, 0); !slices.Equal(got, []uint64{1, 3, 5}) {
		t.Fatalf("got %v", got)
	}
	if st := w.net.Stats(); st.FramesLost[network.LostFiltered] != 3 {
		t.Fatalf("lost %v", st.FramesLost)
	}
}

// TestClogAndHeal: a clogged path delivers nothing until the clog ends or a
// heal lifts it, then everything in order; Clogged reports it.
func TestClogAndHeal(t *testing.T) {
	w := quietPartitionWorld(t)
	c2 := w.connect(3, 0) // a client's path clogs like any other
	w.net.Clog(3, 0, w.loop.Now()+500*ms)
	w.sendSeq(c2, 3, 1, 4)
	w.run(w.loop.Now() + 100*ms)
	if !w.net.Clogged(3, 0) || len(w.seqs(c2, 0)) != 0 {
		t.Fatal("clog did not stall")
	}
	w.run(w.loop.Now() + 500*ms)
	if got := w.seqs(c2, 0); !slices.Equal(got, seqRange(1, 4)) {
		t.Fatalf("after the clog ended: %v", got)
	}
	w.net.Clog(3, 0, w.loop.Now()+10_000*ms)
	w.sendSeq(c2, 3, 5, 6)
	w.run(w.loop.Now() + 100*ms)
	healAt := w.loop.Now()
	w.net.Heal([]network.NodeID{0, 3})
	w.run(w.loop.Now() + 10*ms)
	if got := w.seqs(c2, 0); !slices.Equal(got, seqRange(1, 6)) {
		t.Fatalf("after heal: %v", got)
	}
	if at := w.track(c2).gotAtNs[0][5]; at != healAt {
		t.Fatalf("delivered at %d, healed at %d", at, healAt)
	}
}

// TestOverflowResets: a Send beyond the in-flight bound resets the
// connection and is refused.
func TestOverflowResets(t *testing.T) {
	o := quietOptions()
	o.InFlightFramesMax = 4
	w := newWorld(t, 1, o, 2, 0)
	c := w.connect(0, 1)
	w.net.Clog(0, 1, w.loop.Now()+1_000*ms)
	w.sendSeq(c, 0, 1, 4)
	if w.send(c, 0, commitFrame(5, 0)) {
		t.Fatal("send beyond the bound accepted")
	}
	w.run(w.loop.Now() + 2_000*ms)
	tr := w.track(c)
	if tr.closedAt[0] < 0 || tr.closedAt[1] < 0 || len(tr.got[0]) != 0 {
		t.Fatalf("closed at %v, %d delivered", tr.closedAt, len(tr.got[0]))
	}
	if st := w.net.Stats(); st.Resets[network.ResetOverflow] != 1 || st.FramesLost[network.LostReset] != 4 {
		t.Fatalf("resets %v lost %v", st.Resets, st.FramesLost)
	}
}

// TestFaultsOff: after FaultsOff no random reset, partition, clog or
// corruption happens; the partition in place stays (frozen) and clogs
// expire.
func TestFaultsOff(t *testing.T) {
	o := quietOptions()
	o.ResetProbability, o.CorruptProbability = 0.05, 0.2
	o.ClogProbability, o.ClogDurationMeanNs = 0.05, 200*ms
	o.PartitionMode, o.PartitionProbability, o.UnpartitionProbability = network.PartitionUniformPartition, 0.5, 0.5
	o.PartitionStabilityMinTicks, o.UnpartitionStabilityMinTicks = 2, 2
	o.TCPTimeoutMinNs = 100_000 * ms
	w := newWorld(t, 11, o, 4, 1)
	seq := uint64(0)
	traffic := func(d int64) {
		for end := w.loop.Now() + d; w.loop.Now() < end; {
			for _, u := range w.usable(false) {
				seq++
				w.send(u.c, u.from, commitFrame(seq, 0))
			}
			w.redial(4)
			w.run(w.loop.Now() + 10*ms)
		}
	}
	traffic(3_000 * ms)
	for !w.net.Partitioned() {
		traffic(10 * ms)
	}
	before := w.net.Stats()
	if before.Partitions == 0 || before.Clogs == 0 || before.Resets[network.ResetRandom] == 0 || before.FramesCorrupted == 0 {
		t.Fatalf("faults did not all fire before FaultsOff: %+v", before)
	}
	w.net.FaultsOff()
	var cuts []bool
	for a := range 4 {
		for b := range 4 {
			cuts = append(cuts, w.net.Cut(network.NodeID(a), network.NodeID(b)))
		}
	}
	traffic(3_000 * ms)
	after := w.net.Stats()
	if after.Partitions != before.Partitions || after.Clogs != before.Clogs ||
		after.Resets[network.ResetRandom] != before.Resets[network.ResetRandom] || after.FramesCorrupted != before.FramesCorrupted {
		t.Fatalf("faults after FaultsOff: before %+v after %+v", before, after)
	}
	if after.FramesSent <= before.FramesSent {
		t.Fatal("no traffic after FaultsOff")
	}
	i := 0
	for a := range 4 {
		for b := range 4 {
			if w.net.Cut(network.NodeID(a), network.NodeID(b)) != cuts[i] {
				t.Fatal("partition changed after FaultsOff")
			}
			i++
		}
	}
	w.run(w.loop.Now() + 100_000*ms)
	for a := range 5 {
		for b := range 5 {
			if w.net.Clogged(network.NodeID(a), network.NodeID(b)) {
				t.Fatalf("path %d -> %d still clogged long after FaultsOff", a, b)
			}
		}
	}
}

// redial dials, from every up node to every other replica (0..replicas-1),
// unless a connection it dialed there is pending or open, as a message bus
// reconnects.
func (w *world) redial(replicas int) {
	alive := make([][]bool, w.nodes)
	for i := range alive {
		alive[i] = make([]bool, replicas)
	}
	for i, tr := range w.tracks {
		a, b := tr.ends[0], tr.ends[1]
		if int(b) < replicas && w.knows(network.ConnID(i+1), a) && !tr.failed && tr.closedAt[0] < 0 && !tr.closedBy[0] {
			alive[a][b] = true
		}
	}
	for a := range w.nodes {
		for b := range replicas {
			if a != b && !alive[a][b] && w.net.Up(network.NodeID(a)) {
				w.dial(network.NodeID(a), network.NodeID(b))
			}
		}
	}
}

// TestEventKinds: the loop's trace names network events, the receiving node,
// and for a delivery the frame's XXH3 xor the connection id.
func TestEventKinds(t *testing.T) {
	w := quietPartitionWorld(t)
	w.loop.RecordTrace(true)
	c := w.connect(0, 1)
	frame := commitFrame(1, 0)
	w.send(c, 0, frame)
	w.close(c, 0)
	w.run(w.loop.Now() + 100*ms)
	var kinds []string
	for _, e := range w.loop.Trace() {
		kinds = append(kinds, e.Kind)
	}
	if want := []string{"network.connect", "network.deliver", "network.closed"}; !slices.Equal(kinds, want) {
		t.Fatalf("kinds %v, want %v", kinds, want)
	}
	deliver := w.loop.Trace()[1]
	var b [28]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(deliver.AtNs))
	binary.LittleEndian.PutUint32(b[8:], uint32(1))
	binary.LittleEndian.PutUint64(b[12:], xxh3.Hash(frame)^uint64(c))
	binary.LittleEndian.PutUint64(b[20:], xxh3.HashString("network.deliver"))
	if deliver.Node != 1 || deliver.Hash != xxh3.Hash(b[:]) {
		t.Fatalf("deliver event %v", deliver)
	}
}

// TestPoisonBuffers: a receiver that keeps the frame slice instead of
// copying it sees poison once the callback returns.
func TestPoisonBuffers(t *testing.T) {
	w := quietPartitionWorld(t)
	c := w.connect(0, 1)
	var kept []byte
	w.hook = func(r rec, frame []byte) {
		if r.Kind == "received" {
			kept = frame
		}
	}
	frame := commitFrame(1, 0)
	w.send(c, 0, frame)
	w.run(w.loop.Now() + 100*ms)
	if kept == nil || bytes.Equal(kept, frame) || !bytes.Equal(kept, bytes.Repeat([]byte{0xA5}, len(frame))) {
		t.Fatal("a kept frame slice was not poisoned")
	}
}

// TestProgrammerErrors: misuse panics, as TigerBeetle-style assertions.
func TestProgrammerErrors(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Fatalf("%s did not panic", name)
			}
		}()
		f()
	}
	w := quietPartitionWorld(t)
	c := w.connect(0, 1)
	mustPanic("send by a node not an end", func() { w.net.Send(c, 2, commitFrame(1, 0)) })
	mustPanic("send on an id never issued", func() { w.net.Send(99, 0, commitFrame(1, 0)) })
	mustPanic("send of a short frame", func() { w.net.Send(c, 0, make([]byte, 10)) })
	mustPanic("dial to oneself", func() { w.net.Dial(0, 0) })
	mustPanic("dial to an unknown node", func() { w.net.Dial(0, 42) })
	mustPanic("add a node twice", func() { w.net.AddNode(0, true, &endpoint{w: w}) })
	mustPanic("partition with a client", func() { w.net.Partition([]network.NodeID{3}, false) })
	mustPanic("partition with an empty side", func() { w.net.Partition([]network.NodeID{0, 1, 2}, false) })
	w.setUp(0, false)
	mustPanic("send from a down node", func() { w.net.Send(c, 0, commitFrame(1, 0)) })
	mustPanic("dial from a down node", func() { w.net.Dial(0, 1) })
	mustPanic("bad options", func() {
		o := quietOptions()
		o.ResetProbability = 2
		network.New(kernel.NewLoop(), kernel.NewStreams(1), o)
	})
}
