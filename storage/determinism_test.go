package storage_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
	"github.com/zeebo/xxh3"
)

// workload is a loop event that, every 10µs, issues random I/O on a cluster's
// devices and sometimes crashes one, recording every completion.
type workload struct {
	loop   *kernel.Loop
	devs   []*storage.SimDevice
	rng    *rand.Rand
	rounds int
	log    []string
}

func (w *workload) Fire(nowNs int64, _ uint64) (string, int32, uint64) {
	for range 6 {
		r := w.rng.IntN(len(w.devs))
		dev := w.devs[r]
		if dev.InFlight() >= 64 {
			continue
		}
		count := 1 + w.rng.Uint64N(4)
		sector := w.rng.Uint64N(dev.Sectors() - count + 1)
		switch w.rng.IntN(4) {
		case 0, 1:
			data := pattern(w.rng.Uint64(), int(count)*512)
			dev.Write(sector, data, func(err error) {
				w.log = append(w.log, fmt.Sprintf("%d %d write %d %v", w.loop.Now(), r, sector, err))
			})
		case 2:
			buf := make([]byte, count*512)
			dev.Read(sector, buf, func(err error) {
				w.log = append(w.log, fmt.Sprintf("%d %d read %d %v %x", w.loop.Now(), r, sector, err, xxh3.Hash(buf)))
			})
		case 3:
			dev.Sync(func(err error) {
				w.log = append(w.log, fmt.Sprintf("%d %d sync %v", w.loop.Now(), r, err))
			})
		}
	}
	if w.rng.IntN(25) == 0 {
		r := w.rng.IntN(len(w.devs))
		report := w.devs[r].Crash()
		w.log = append(w.log, fmt.Sprintf("%d %d crash %+v", nowNs, r, report))
	}
	if w.rounds--; w.rounds > 0 {
		w.loop.At(nowNs+10_000, w, 0)
	}
	return "test.workload", -1, 0
}

// runCluster runs the workload over three faulty devices and returns the
// loop (with its trace) and the completion log.
func runCluster(seed uint64) (*kernel.Loop, []string, []storage.Stats) {
	streams := kernel.NewStreams(seed)
	loop := kernel.NewLoop()
	loop.RecordTrace(true)
	atlas := storage.NewAtlas(journalLayout(), 3, streams.Stream("storage.atlas"), storage.AtlasOptions{
		Linked: [][2]string{{"headers", "prepares"}},
	})
	w := &workload{loop: loop, rng: streams.Stream("test.workload"), rounds: 400}
	for r := range int32(3) {
		opts := quiet(atlas.Layout(), 512)
		opts.Atlas = atlas
		opts.Faults = storage.Faults{LatentProbability: 0.05, CorruptProbability: 0.05, MisdirectProbability: 0.05}
		opts.CrashLostProbability, opts.CrashTornProbability = 0.3, 0.3
		w.devs = append(w.devs, storage.NewSimDevice(loop, streams, r, opts))
	}
	loop.At(0, w, 0)
	drain(loop)
	var stats []storage.Stats
	for _, dev := range w.devs {
		stats = append(stats, dev.Stats())
	}
	return loop, w.log, stats
}

// TestDeterminism: one seed gives the same completions, in the same order,
// with the same contents, and the same per-event trace and digest; another
// seed gives another run. The run must exercise every fault.
func TestDeterminism(t *testing.T) {
	a, logA, stats := runCluster(42)
	b, logB, _ := runCluster(42)
	if d := kernel.DescribeDivergence(a.Trace(), b.Trace()); d != "" {
		t.Fatalf("one seed, two traces: %s", d)
	}
	if a.Digest() != b.Digest() {
		t.Fatal("one seed, two digests")
	}
	if len(logA) != len(logB) {
		t.Fatalf("one seed, %d and %d completions", len(logA), len(logB))
	}
	for i := range logA {
		if logA[i] != logB[i] {
			t.Fatalf("one seed, completion %d differs: %q vs %q", i, logA[i], logB[i])
		}
	}
	c, _, _ := runCluster(43)
	if c.Digest() == a.Digest() {
		t.Error("two seeds, one digest")
	}
	var total storage.Stats
	for _, s := range stats {
		total.LatentMarked += s.LatentMarked
		total.CorruptMarked += s.CorruptMarked
		total.Misdirected += s.Misdirected
		total.ReadFaults += s.ReadFaults
		total.Crashes += s.Crashes
		total.CrashTorn += s.CrashTorn
		total.CrashLost += s.CrashLost
		total.CrashKept += s.CrashKept
	}
	if total.LatentMarked == 0 || total.CorruptMarked == 0 || total.Misdirected == 0 || total.ReadFaults == 0 ||
		total.Crashes == 0 || total.CrashTorn == 0 || total.CrashLost == 0 || total.CrashKept == 0 {
		t.Errorf("the run does not exercise every fault: %+v", total)
	}
}
