package network_test

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// chatter is a workload event: every 5 ms it redials, sends on some open
// connections, and now and then fails, restarts or closes something, drawing
// from its own stream.
type chatter struct {
	w        *world
	rng      *rand.Rand
	seq      uint64
	replicas int
}

func (ch *chatter) Fire(nowNs int64, _ uint64) (string, int32, uint64) {
	w := ch.w
	w.redial(ch.replicas)
	for _, u := range w.usable(false) {
		if ch.rng.IntN(3) == 0 {
			ch.seq++
			w.send(u.c, u.from, commitFrame(ch.seq, uint8(u.from)))
		}
	}
	if ch.rng.IntN(40) == 0 {
		id := network.NodeID(ch.rng.IntN(w.nodes))
		w.setUp(id, !w.net.Up(id))
	}
	if u := w.usable(false); len(u) > 0 && ch.rng.IntN(20) == 0 {
		e := u[ch.rng.IntN(len(u))]
		w.close(e.c, e.from)
	}
	w.loop.At(nowNs+5*ms, ch, 0)
	return "test.chatter", -1, ch.seq
}

// allFaults enables every fault at rates that make each happen often.
func allFaults() network.Options {
	o := quietOptions()
	o.DelayMinNs, o.DelayMeanNs = 200_000, 3*ms
	o.ResetProbability, o.CorruptProbability = 0.002, 0.01
	o.ClogProbability, o.ClogDurationMeanNs = 0.005, 100*ms
	o.PartitionMode, o.PartitionSymmetry = network.PartitionUniformPartition, network.PartitionOneWay
	o.PartitionProbability, o.UnpartitionProbability = 0.02, 0.1
	o.PartitionStabilityMinTicks, o.UnpartitionStabilityMinTicks = 20, 10
	o.TCPTimeoutMinNs, o.TCPTimeoutMeanNs = 300*ms, 300*ms
	return o
}

type runResult struct {
	log    []rec
	digest uint64
	trace  []kernel.TraceEntry
	stats  network.Stats
}

// runChatter runs the chatter workload with every fault on for 3 s of
// virtual time.
func runChatter(t tb, seed uint64) runResult {
	w := newWorld(t, seed, allFaults(), 4, 2)
	w.loop.RecordTrace(true)
	ch := &chatter{w: w, rng: kernel.NewStreams(seed).Stream("test.chatter"), replicas: 4}
	w.loop.At(0, ch, 0)
	w.run(3_000 * ms)
	w.checkFIFOCorrupt()
	w.checkCounters()
	return runResult{log: w.log, digest: w.loop.Digest(), trace: w.loop.Trace(), stats: w.net.Stats()}
}

// checkFIFOCorrupt is checkFIFO allowing single-bit corruption.
func (w *world) checkFIFOCorrupt() {
	for i, tr := range w.tracks {
		for s := range 2 {
			for k, f := range tr.got[s] {
				if d := flippedBits(f, tr.sent[s][k]); len(d) > 1 {
					w.t.Fatalf("conn %d dir %d frame %d: %d bits differ", i+1, s, k, len(d))
				}
			}
		}
	}
}

// goroutineTB lets a run on another goroutine fail the test: Fatalf records
// the error and ends that goroutine only (FailNow belongs to the test's own).
type goroutineTB struct{ t *testing.T }

func (g goroutineTB) Helper()                         {}
func (g goroutineTB) Logf(format string, args ...any) { g.t.Logf(format, args...) }
func (g goroutineTB) Fatalf(format string, args ...any) {
	g.t.Errorf(format, args...)
	runtime.Goexit()
}

// TestDeterminism: one seed gives the same Endpoint callbacks, loop trace and
// digest, also when two runs share the process in parallel; another seed
// gives another digest. Every fault fires in the run.
func TestDeterminism(t *testing.T) {
	var a, b runResult
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a = runChatter(goroutineTB{t}, 42) }()
	go func() { defer wg.Done(); b = runChatter(goroutineTB{t}, 42) }()
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	if d := kernel.DescribeDivergence(a.trace, b.trace); d != "" {
		t.Fatalf("same seed diverged: %s", d)
	}
	if !slices.Equal(a.log, b.log) || a.digest != b.digest {
		t.Fatal("same seed: callbacks or digest differ")
	}
	st := a.stats
	if st.Partitions == 0 || st.Clogs == 0 || st.Resets[network.ResetRandom] == 0 || st.FramesCorrupted == 0 ||
		st.Resets[network.ResetDown] == 0 || st.Closes == 0 || st.FramesDelivered < 1000 {
		t.Fatalf("a fault never fired: %+v", st)
	}
	c := runChatter(t, 43)
	if c.digest == a.digest || slices.Equal(c.log, a.log) {
		t.Fatal("different seeds gave the same run")
	}
	t.Logf("seed 42: %d callbacks, %d events, %d delivered, %d partitions, %d clogs, resets %v, %d corrupted",
		len(a.log), len(a.trace), st.FramesDelivered, st.Partitions, st.Clogs, st.Resets, st.FramesCorrupted)
}
