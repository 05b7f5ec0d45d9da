package sim

import (
	"bytes"
	"flag"
	"runtime"
	"sync"
	"testing"
)

var determinismSeeds = flag.Int("determinism.seeds", 0, "how many swarm seeds the determinism tests run (0: the default)")

// determinismSeedCount is how many swarm seeds each determinism test runs:
// enough to cover crashes, partitions and view changes, few enough for
// `go test -race`.
func determinismSeedCount() uint64 {
	if *determinismSeeds > 0 {
		return uint64(*determinismSeeds)
	}
	return 4
}

// fingerprint is everything a run promises to reproduce: its summary line
// (counters and digest), its violation, and its full event trace.
type fingerprint struct {
	summary   string
	violation string
	trace     []byte
}

func runFingerprint(seed uint64) fingerprint {
	var trace bytes.Buffer
	r := Run(Swarm(seed), &trace)
	return fingerprint{summary: r.Summary(), violation: r.Violation, trace: trace.Bytes()}
}

func (f fingerprint) diff(t *testing.T, seed uint64, what string, g fingerprint) {
	t.Helper()
	if f.summary != g.summary {
		t.Errorf("seed %d: %s: summaries differ:\n  %s\n  %s", seed, what, f.summary, g.summary)
	}
	if f.violation != g.violation {
		t.Errorf("seed %d: %s: violations differ: %q vs %q", seed, what, f.violation, g.violation)
	}
	if !bytes.Equal(f.trace, g.trace) {
		t.Errorf("seed %d: %s: traces differ (%d vs %d bytes) from byte %d", seed, what,
			len(f.trace), len(g.trace), firstDifference(f.trace, g.trace))
	}
}

func firstDifference(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// TestSameSeedSameDigest: a seed run twice in one process gives the same
// summary, digest and trace, byte for byte.
func TestSameSeedSameDigest(t *testing.T) {
	for seed := uint64(1); seed <= determinismSeedCount(); seed++ {
		first := runFingerprint(seed)
		if len(first.trace) == 0 {
			t.Fatalf("seed %d: empty trace", seed)
		}
		runFingerprint(seed).diff(t, seed, "second run", first)
	}
}

// TestDigestIndependentOfGOMAXPROCS: the scheduler has nothing to decide in
// a single-threaded simulation, so GOMAXPROCS 1 and 2 agree.
func TestDigestIndependentOfGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for seed := uint64(1); seed <= determinismSeedCount(); seed++ {
		runtime.GOMAXPROCS(1)
		one := runFingerprint(seed)
		runtime.GOMAXPROCS(2)
		runFingerprint(seed).diff(t, seed, "GOMAXPROCS 2 vs 1", one)
	}
}

// TestParallelCampaignMatchesSerial: simulations running at once on several
// goroutines share nothing, so each seed's result is the one it gets alone.
// Under `go test -race` (make test runs it so) this also proves there is no
// data race between simulations.
func TestParallelCampaignMatchesSerial(t *testing.T) {
	seeds := determinismSeedCount()
	serial := make([]fingerprint, seeds)
	for i := range serial {
		serial[i] = runFingerprint(uint64(i) + 1)
	}
	parallel := make([]fingerprint, seeds)
	var wg sync.WaitGroup
	for i := range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parallel[i] = runFingerprint(uint64(i) + 1)
		}()
	}
	wg.Wait()
	for i := range serial {
		parallel[i].diff(t, uint64(i)+1, "parallel vs serial", serial[i])
	}
}

// TestDifferentSeedsDifferentDigests guards the tests above against a digest
// that ignores what happened: distinct seeds must give distinct digests.
func TestDifferentSeedsDifferentDigests(t *testing.T) {
	seen := map[string]uint64{}
	for seed := uint64(1); seed <= determinismSeedCount(); seed++ {
		r := Run(Swarm(seed), nil)
		d := r.Summary()[len(r.Summary())-16:]
		if prev, ok := seen[d]; ok {
			t.Errorf("seeds %d and %d share digest %s", prev, seed, d)
		}
		seen[d] = seed
	}
}
