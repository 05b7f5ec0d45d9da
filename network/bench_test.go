package network_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// echoNode is a minimal endpoint for benchmarks: it echoes every frame back
// on its connection, opens each connection it dials with a window of frames,
// and redials when a connection it dialed ends, as a message bus would. It
// keeps nothing per frame, so the network's own allocations show.
type echoNode struct {
	b         *echoBench
	id        network.NodeID
	dialedTo  map[network.ConnID]network.NodeID // reconnect targets (not on the steady path)
	delivered int
}

type echoBench struct {
	loop   *kernel.Loop
	net    *network.Network
	nodes  []*echoNode
	frame  []byte
	window int
}

func (e *echoNode) dial(to network.NodeID) {
	e.dialedTo[e.b.net.Dial(e.id, to)] = to
}

func (e *echoNode) redial(c network.ConnID) {
	if to, ok := e.dialedTo[c]; ok {
		delete(e.dialedTo, c)
		if e.b.net.Up(e.id) {
			e.dial(to)
		}
	}
}

func (e *echoNode) Accepted(network.ConnID, network.NodeID) {}
func (e *echoNode) Connected(c network.ConnID) {
	for range e.b.window {
		e.b.net.Send(c, e.id, e.b.frame)
	}
}
func (e *echoNode) DialFailed(c network.ConnID) { e.redial(c) }
func (e *echoNode) Received(c network.ConnID, frame []byte) {
	e.delivered++
	e.b.net.Send(c, e.id, frame)
}
func (e *echoNode) Closed(c network.ConnID) { e.redial(c) }

// newEchoBench builds replicas + clients nodes; every node dials every
// replica other than itself, and runs until the dials complete.
func newEchoBench(opts network.Options, replicas, clients, frameSize, window int) *echoBench {
	b := &echoBench{loop: kernel.NewLoop(), window: window}
	b.net = network.New(b.loop, kernel.NewStreams(1), opts)
	b.frame = commitFrame(1, 0)
	if frameSize > len(b.frame) {
		b.frame = append(b.frame, make([]byte, frameSize-len(b.frame))...)
	}
	for i := range replicas + clients {
		e := &echoNode{b: b, id: network.NodeID(i), dialedTo: map[network.ConnID]network.NodeID{}}
		b.nodes = append(b.nodes, e)
		b.net.AddNode(e.id, i < replicas, e)
	}
	for _, e := range b.nodes {
		for to := range replicas {
			if network.NodeID(to) != e.id {
				e.dial(network.NodeID(to))
			}
		}
	}
	b.loop.RunUntil(100*ms, 0)
	return b
}

func (b *echoBench) delivered() int {
	n := 0
	for _, e := range b.nodes {
		n += e.delivered
	}
	return n
}

// TestZeroAllocsSteadyState: with faults off, once buffers, rings and the
// loop's queue have grown, a delivered frame (and the echo it triggers)
// allocates nothing, with buffer poisoning on.
func TestZeroAllocsSteadyState(t *testing.T) {
	o := quietOptions()
	o.PoisonBuffers = true
	b := newEchoBench(o, 3, 1, 0, 8)
	for range 100_000 {
		b.loop.Step()
	}
	before := b.delivered()
	allocs := testing.AllocsPerRun(10_000, func() {
		if !b.loop.Step() {
			t.Fatal("loop idle")
		}
	})
	if b.delivered() == before {
		t.Fatal("nothing delivered")
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per event in steady state, want 0", allocs)
	}
}

func benchDeliver(b *testing.B, opts network.Options, frameSize int) {
	eb := newEchoBench(opts, 3, 2, frameSize, 8)
	for range 50_000 {
		eb.loop.Step()
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(eb.frame)))
	start := eb.delivered()
	b.ResetTimer()
	for eb.delivered()-start < b.N {
		if !eb.loop.Step() {
			b.Fatal("loop idle")
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	st := eb.net.Stats()
	b.ReportMetric(float64(st.ResetsTotal()), "resets")
}

// BenchmarkDeliver measures frames delivered per second (each delivery
// echoes one frame back), with faults off and with every fault on; ns/op and
// allocs/op are per delivered frame.
func BenchmarkDeliver(b *testing.B) {
	b.Run("faults_off", func(b *testing.B) { benchDeliver(b, quietOptions(), 0) })
	b.Run("faults_off_16KiB", func(b *testing.B) { benchDeliver(b, quietOptions(), 16<<10) })
	b.Run("faults_on", func(b *testing.B) { benchDeliver(b, allFaults(), 0) })
}
