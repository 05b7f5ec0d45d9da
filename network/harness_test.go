package network_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/zeebo/xxh3"
)

// The loop and the streams of package sim are what the network runs on.
var (
	_ network.Scheduler = (*kernel.Loop)(nil)
	_ network.Streams   = kernel.Streams{}
)

// TestSimSatisfiesInterfaces: *kernel.Loop is a Scheduler and kernel.Streams a
// Streams (checked at compile time above; this test names the check).
func TestSimSatisfiesInterfaces(t *testing.T) {
	var s network.Scheduler = kernel.NewLoop()
	var r network.Streams = kernel.NewStreams(1)
	if s.Now() != 0 || r.Stream("x") == nil {
		t.Fatal("unexpected zero values")
	}
	if network.TickNs != kernel.TickNs {
		t.Fatalf("network tick %d ns, consensus tick %d ns", network.TickNs, kernel.TickNs)
	}
}

// rec is one Endpoint callback, as the world logs it.
type rec struct {
	AtNs int64
	Node network.NodeID
	Kind string // accepted, connected, dial_failed, received, closed
	Conn network.ConnID
	Peer network.NodeID // accepted only
	Hash uint64         // received: xxh3 of the frame
}

func (r rec) String() string {
	return fmt.Sprintf("%dns node %d %s conn %d peer %d hash %016x", r.AtNs, r.Node, r.Kind, r.Conn, r.Peer, r.Hash)
}

// track is what the world knows of one connection: its ends, and per
// direction (0: dialer to acceptor) the frames accepted by Send and the
// frames received, in order.
type track struct {
	ends        [2]network.NodeID
	sent        [2][][]byte
	got         [2][][]byte
	gotAtNs     [2][]int64
	dialStamp   uint64
	acceptStamp uint64
	targetDown  bool // the target was down when dialed
	opened      bool
	failed      bool
	accepted    bool
	closedBy    [2]bool  // the end called Close
	closedAt    [2]int64 // when the end saw Closed, -1 if never
	resetAtNs   int64    // a scripted Reset, -1 if none
	// sentBeforeReset[s]: frames of direction s sent before the scripted reset.
	sentBeforeReset [2]int
	gotBeforeReset  [2]int
}

// tb is what the world needs of *testing.T, *testing.B and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}

// world is a network on a real kernel.Loop, with recording endpoints for nodes
// 0..replicas-1 (replicas) and replicas..replicas+clients-1 (clients).
type world struct {
	t      tb
	loop   *kernel.Loop
	net    *network.Network
	nodes  int
	log    []rec
	tracks []*track // by ConnID-1: ids are issued densely from 1
	// hook, if set, runs after each callback is logged.
	hook func(r rec, frame []byte)
	// keep, when false, stops the world from copying frames (benchmarks).
	keep bool
	// stamp orders dials and node failures; downStamp[node] is the stamp of
	// the node's last failure, 0 if never.
	stamp     uint64
	downStamp []uint64
	isReplica []bool
}

type endpoint struct {
	w  *world
	id network.NodeID
}

func newWorld(t tb, seed uint64, opts network.Options, replicas, clients int) *world {
	w := &world{t: t, loop: kernel.NewLoop(), nodes: replicas + clients, keep: true}
	w.downStamp = make([]uint64, w.nodes)
	w.isReplica = make([]bool, w.nodes)
	w.net = network.New(w.loop, kernel.NewStreams(seed), opts)
	for i := range w.nodes {
		w.isReplica[i] = i < replicas
		w.net.AddNode(network.NodeID(i), i < replicas, &endpoint{w: w, id: network.NodeID(i)})
	}
	return w
}

func (w *world) track(c network.ConnID) *track { return w.tracks[c-1] }

// side returns the direction index of frames sent by node from on c.
func (tr *track) side(from network.NodeID) int {
	if from == tr.ends[0] {
		return 0
	}
	return 1
}

func (w *world) dial(from, to network.NodeID) network.ConnID {
	c := w.net.Dial(from, to)
	w.stamp++
	if int(c) != len(w.tracks)+1 {
		w.t.Fatalf("connection id %d, want %d", c, len(w.tracks)+1)
	}
	w.tracks = append(w.tracks, &track{ends: [2]network.NodeID{from, to}, closedAt: [2]int64{-1, -1},
		resetAtNs: -1, dialStamp: w.stamp, targetDown: !w.net.Up(to)})
	return c
}

// send sends frame on c from node from and records it if accepted.
func (w *world) send(c network.ConnID, from network.NodeID, frame []byte) bool {
	ok := w.net.Send(c, from, frame)
	if ok {
		tr := w.track(c)
		s := tr.side(from)
		tr.sent[s] = append(tr.sent[s], bytes.Clone(frame))
	}
	return ok
}

// knows reports whether node's current incarnation knows connection c: it
// dialed it, or accepted it, since it last went down.
func (w *world) knows(c network.ConnID, node network.NodeID) bool {
	tr := w.track(c)
	if node == tr.ends[0] {
		return w.downStamp[node] <= tr.dialStamp
	}
	return tr.accepted && w.downStamp[node] <= tr.acceptStamp
}

// setUp brings a node up or down, remembering when it went down.
func (w *world) setUp(id network.NodeID, up bool) {
	if !up && w.net.Up(id) {
		w.stamp++
		w.downStamp[id] = w.stamp
	}
	w.net.SetUp(id, up)
}

func (w *world) close(c network.ConnID, by network.NodeID) {
	tr := w.track(c)
	tr.closedBy[tr.side(by)] = true
	w.net.Close(c, by)
}

func (w *world) reset(c network.ConnID) {
	tr := w.track(c)
	if tr.resetAtNs < 0 {
		tr.resetAtNs = w.loop.Now()
		for s := range 2 {
			tr.sentBeforeReset[s] = len(tr.sent[s])
			tr.gotBeforeReset[s] = len(tr.got[s])
		}
	}
	w.net.Reset(c)
}

func (w *world) run(untilNs int64) {
	if !w.loop.RunUntil(untilNs, 50_000_000) {
		w.t.Fatalf("loop did not reach %dns within its event bound", untilNs)
	}
}

func (w *world) record(r rec, frame []byte) {
	r.AtNs = w.loop.Now()
	if !w.net.Up(r.Node) {
		w.t.Fatalf("callback at down node: %v", r)
	}
	tr := w.track(r.Conn)
	if r.Kind != "accepted" && !w.knows(r.Conn, r.Node) {
		w.t.Fatalf("callback on a connection of an earlier incarnation of the node: %v", r)
	}
	if tr.closedBy[tr.side(r.Node)] {
		w.t.Fatalf("callback after the node closed the connection: %v", r)
	}
	if r.Kind == "received" {
		sender := tr.ends[1-tr.side(r.Node)]
		if w.net.Cut(sender, r.Node) {
			w.t.Fatalf("delivery across a cut %d -> %d: %v", sender, r.Node, r)
		}
		if w.net.Clogged(sender, r.Node) {
			w.t.Fatalf("delivery on a clogged path %d -> %d: %v", sender, r.Node, r)
		}
	}
	w.log = append(w.log, r)
	if w.hook != nil {
		w.hook(r, frame)
	}
}

func (e *endpoint) Accepted(c network.ConnID, peer network.NodeID) {
	tr := e.w.track(c)
	if tr.accepted || tr.ends[1] != e.id || tr.ends[0] != peer {
		e.w.t.Fatalf("node %d: Accepted conn %d from %d, ends %v", e.id, c, peer, tr.ends)
	}
	tr.accepted = true
	e.w.stamp++
	tr.acceptStamp = e.w.stamp
	e.w.record(rec{Node: e.id, Kind: "accepted", Conn: c, Peer: peer}, nil)
}

func (e *endpoint) Connected(c network.ConnID) {
	tr := e.w.track(c)
	if tr.opened || tr.failed || tr.ends[0] != e.id {
		e.w.t.Fatalf("node %d: Connected conn %d twice or at the wrong end", e.id, c)
	}
	tr.opened = true
	e.w.record(rec{Node: e.id, Kind: "connected", Conn: c}, nil)
}

func (e *endpoint) DialFailed(c network.ConnID) {
	tr := e.w.track(c)
	if tr.opened || tr.failed || tr.ends[0] != e.id {
		e.w.t.Fatalf("node %d: DialFailed conn %d after an outcome or at the wrong end", e.id, c)
	}
	tr.failed = true
	e.w.record(rec{Node: e.id, Kind: "dial_failed", Conn: c}, nil)
}

func (e *endpoint) Received(c network.ConnID, frame []byte) {
	tr := e.w.track(c)
	s := 1 - tr.side(e.id)
	if tr.ends[1-s] != e.id {
		e.w.t.Fatalf("node %d received on conn %d it is not an end of", e.id, c)
	}
	if e.w.keep {
		tr.got[s] = append(tr.got[s], bytes.Clone(frame))
		tr.gotAtNs[s] = append(tr.gotAtNs[s], e.w.loop.Now())
	}
	e.w.record(rec{Node: e.id, Kind: "received", Conn: c, Hash: xxh3.Hash(frame)}, frame)
}

func (e *endpoint) Closed(c network.ConnID) {
	tr := e.w.track(c)
	end := tr.side(e.id)
	if tr.closedAt[end] >= 0 {
		e.w.t.Fatalf("node %d: Closed conn %d twice", e.id, c)
	}
	tr.closedAt[end] = e.w.loop.Now()
	e.w.record(rec{Node: e.id, Kind: "closed", Conn: c}, nil)
}

// commitFrame is a sealed Commit whose commit field carries seq, so frames
// are distinct and a test can name them.
func commitFrame(seq uint64, replica uint8) []byte {
	return wire.BuildFrame(&wire.CommitHeader{
		Prefix: wire.Prefix{Cluster: wire.ClusterID("test"), Replica: replica},
		Commit: seq, TimestampMonotonic: seq + 1, Group: wire.MetadataGroup,
	}, nil)
}

// detected reports whether a receiver rejects frame (wire.Validate also
// verifies a SendMessages prepare's batch, as Iggy does at ingress).
func detected(frame []byte) bool { return wire.Validate(frame) != nil }

// checkFIFO asserts, for every direction of every connection, that what was
// received is a prefix of what was sent, byte for byte, in order.
func (w *world) checkFIFO() {
	w.t.Helper()
	for i, tr := range w.tracks {
		for s := range 2 {
			if len(tr.got[s]) > len(tr.sent[s]) {
				w.t.Fatalf("conn %d dir %d: %d received, %d sent", i+1, s, len(tr.got[s]), len(tr.sent[s]))
			}
			for k, f := range tr.got[s] {
				if !bytes.Equal(f, tr.sent[s][k]) {
					w.t.Fatalf("conn %d dir %d: frame %d received differs from frame %d sent (reordered, lost in the middle, or corrupted)", i+1, s, k, k)
				}
			}
		}
	}
}

// checkCounters asserts that every frame accepted was delivered or lost,
// or is still in flight, in the totals and the per-path and per-command
// breakdowns.
func (w *world) checkCounters() {
	w.t.Helper()
	st := w.net.Stats()
	if st.FramesSent != st.FramesDelivered+st.Lost()+st.FramesInFlight {
		w.t.Fatalf("stats: sent %d != delivered %d + lost %d + in flight %d", st.FramesSent, st.FramesDelivered, st.Lost(), st.FramesInFlight)
	}
	var sent, delivered, lost uint64
	for _, p := range w.net.PathStats() {
		sent += p.FramesSent
		delivered += p.FramesDelivered
		lost += p.Lost()
	}
	if sent != st.FramesSent || delivered != st.FramesDelivered || lost != st.Lost() {
		w.t.Fatalf("path stats (%d, %d, %d) disagree with totals (%d, %d, %d)", sent, delivered, lost, st.FramesSent, st.FramesDelivered, st.Lost())
	}
	sent, delivered, lost = 0, 0, 0
	for _, c := range w.net.CommandStats() {
		sent += c.FramesSent
		delivered += c.FramesDelivered
		lost += c.Lost()
	}
	if sent != st.FramesSent || delivered != st.FramesDelivered || lost != st.Lost() {
		w.t.Fatalf("command stats (%d, %d, %d) disagree with totals (%d, %d, %d)", sent, delivered, lost, st.FramesSent, st.FramesDelivered, st.Lost())
	}
	var accepted, got uint64
	for _, tr := range w.tracks {
		for s := range 2 {
			accepted += uint64(len(tr.sent[s]))
			got += uint64(len(tr.got[s]))
		}
	}
	if accepted != st.FramesSent || got != st.FramesDelivered {
		w.t.Fatalf("world saw %d sent, %d received; stats say %d, %d", accepted, got, st.FramesSent, st.FramesDelivered)
	}
}

// quiesce turns faults off, heals every node, and runs long enough for
// every clog to end and every frame to land.
func (w *world) quiesce() {
	w.net.FaultsOff()
	all := make([]network.NodeID, w.nodes)
	for i := range all {
		all[i] = network.NodeID(i)
	}
	w.net.Heal(all)
	w.run(w.loop.Now() + 600_000_000_000)
}

// quietOptions returns the default options (every fault off, buffers
// poisoned) with small, fast delays.
func quietOptions() network.Options {
	o := network.DefaultOptions()
	o.DelayMinNs, o.DelayMeanNs = 100_000, 1_000_000
	o.ConnectDelayMinNs, o.ConnectDelayMeanNs = 100_000, 500_000
	return o
}
