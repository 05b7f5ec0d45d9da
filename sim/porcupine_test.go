package sim

import (
	"flag"
	"testing"
	"time"
)

var porcupineSeeds = flag.Int("porcupine.seeds", 0, "how many swarm seeds TestPorcupineAgreesWithTheChecker runs (0: the default)")

// TestPorcupineAgreesWithTheChecker (issue 12 item 6): on real runs, the
// clients' recorded metadata history, given to porcupine with the
// checker's reference model as the sequential specification, is
// linearizable wherever the checker passed the run: porcupine must decide
// (ok), never run out of time, and never find illegal what the checker
// passed (the run would then fail with "non-linearizable history"). The
// other direction, that porcupine finds the client-visible canaries'
// histories illegal, is make canary's (canary/run.sh).
func TestPorcupineAgreesWithTheChecker(t *testing.T) {
	seeds := 100
	if *porcupineSeeds > 0 {
		seeds = *porcupineSeeds
	}
	operations := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		// The timeout is generous so that a slow machine does not turn a
		// hard but linearizable history (seed 42: 28 indefinite operations,
		// seconds of search) into "unknown".
		r := RunWith(Swarm(seed), Outputs{Porcupine: true, PorcupineTimeout: 10 * time.Minute})
		if r.Porcupine == nil {
			t.Fatalf("seed %d: no porcupine verdict (%s: %s)", seed, r.Outcome, r.Violation)
		}
		if r.Outcome != Pass {
			t.Errorf("seed %d: %s: %s (porcupine: %v)", seed, r.Outcome, r.Violation, r.Porcupine)
			continue
		}
		if w := r.Porcupine.Word(); w != "ok" {
			t.Errorf("seed %d: the checker passed it, porcupine says %v", seed, r.Porcupine)
		}
		operations += r.Porcupine.Operations
	}
	if operations < 10*seeds {
		t.Fatalf("only %d metadata operations in %d seeds: the history is not reaching porcupine", operations, seeds)
	}
	t.Logf("%d seeds, %d metadata operations, every history linearizable", seeds, operations)
}
