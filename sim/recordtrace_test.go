package sim

import (
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
)

// recordedRun runs a short safety-only world of seed with the kernel's
// trace recorded (Outputs.RecordTrace).
func recordedRun(t *testing.T, seed uint64) (Result, []kernel.TraceEntry) {
	t.Helper()
	o := Swarm(seed)
	o.Lite = true
	o.SafetyTicksMax = 2_000 // 20 s of virtual time: thousands of events, a fraction of a second
	var trace []kernel.TraceEntry
	r := RunWith(o, Outputs{RecordTrace: &trace})
	if r.Outcome == SimError {
		t.Fatalf("seed %d: %s", seed, r.Violation)
	}
	return r, trace
}

// TestRecordTraceSameSeed: two runs of one seed record the same event
// trace, so DescribeDivergence (what vopr -check-determinism prints) has
// nothing to name; recording leaves the digest as a plain run's; and two
// seeds' traces do part, so the comparison is not vacuous.
func TestRecordTraceSameSeed(t *testing.T) {
	const seed = 3
	first, a := recordedRun(t, seed)
	second, b := recordedRun(t, seed)
	if len(a) < 100 {
		t.Fatalf("seed %d: %d events recorded", seed, len(a))
	}
	if d := kernel.DescribeDivergence(a, b); d != "" || len(a) != len(b) {
		t.Errorf("seed %d: two recorded runs differ (%d and %d events): %s", seed, len(a), len(b), d)
	}
	if first.Digest != second.Digest {
		t.Errorf("seed %d: digests %016x and %016x", seed, first.Digest, second.Digest)
	}
	o := first.Options
	if plain := RunWith(o, Outputs{}); plain.Digest != first.Digest {
		t.Errorf("seed %d: a recorded run's digest %016x, a plain run's %016x", seed, first.Digest, plain.Digest)
	}
	_, other := recordedRun(t, seed+1)
	if d := kernel.DescribeDivergence(a, other); d == "" {
		t.Errorf("seeds %d and %d: identical traces", seed, seed+1)
	}
}
