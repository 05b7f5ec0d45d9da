package canary

import (
	"flag"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggy-vopr/vopr/sim"
)

var (
	seedsFlag    = flag.Int("canary.seeds", 4000, "how many swarm seeds (1..N) the campaign may run")
	parallelFlag = flag.Int("canary.parallel", runtime.GOMAXPROCS(0), "simulations at once")
	keepGoing    = flag.Bool("canary.keep-going", false, "run every seed and report every one that catches the canary")
	seedFlag     = flag.Uint64("canary.seed", 0, "TestCanaryPorcupine: the seed to run again with porcupine")
)

// TestCanary runs the campaign against the canary this test binary was
// built with (-tags canary_<name>): it must be caught within the seeds, with
// the outcome and a violation the canary expects.
func TestCanary(t *testing.T) {
	if Tag == "" {
		t.Skip("no canary tag: build with -tags canary_<name> (see README.md)")
	}
	c, ok := Lookup(Tag)
	if !ok {
		t.Fatalf("canary %s is not in the suite's table", Tag)
	}
	results := campaign(*seedsFlag, *parallelFlag, !*keepGoing)
	caught, ran, exercised := 0, 0, 0
	var first *sim.Result
	for i := range results {
		r := &results[i]
		if r.Seed == 0 {
			continue
		}
		ran++
		if fired(r) > 0 {
			exercised++
		}
		if r.Outcome == sim.Pass {
			continue
		}
		caught++
		if first == nil {
			first = r
		}
		if *keepGoing {
			t.Logf("seed %d: %s: %s", r.Seed, r.Outcome, r.Violation)
		}
	}
	if c.Probed {
		t.Logf("%s: the bug path fired (a \"canary:\" probe) in %d of the %d seeds run", Tag, exercised, ran)
	}
	if first == nil {
		t.Fatalf("%s ESCAPED: no seed in 1..%d failed (expected %s)", Tag, *seedsFlag, c.Expect)
	}
	t.Logf("%s caught: seeds-to-catch=%d result=%s violation: %s", Tag, first.Seed, first.Outcome, first.Violation)
	if *keepGoing {
		t.Logf("%s caught by %d of %d seeds", Tag, caught, *seedsFlag)
	}
	if !c.Accepts(first.Outcome, first.Violation) {
		t.Errorf("%s was caught, but not as expected (%s %s): %s: %s\n%s", Tag, c.Outcome, c.Expect,
			first.Outcome, first.Violation, strings.Join(first.Evidence, "\n"))
	}
}

// fired counts the canary probes of a run: how often the bug changed what
// the replica did (the canaries in replica/vsr report it; the others do not).
func fired(r *sim.Result) int {
	n := 0
	for name, count := range r.Probes {
		if strings.HasPrefix(name, "canary:") {
			n += count
		}
	}
	return n
}

// campaign runs seeds 1..n, parallel at once. With stopEarly, no seed above
// the lowest failing one found so far is started. results[i] is seed i+1's
// result (Seed 0: not run).
func campaign(n, parallel int, stopEarly bool) []sim.Result {
	results := make([]sim.Result, n)
	var mu sync.Mutex
	next, lowestFail := uint64(1), uint64(n+1)
	var wg sync.WaitGroup
	for range max(parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				seed := next
				next++
				if seed > uint64(n) || stopEarly && seed > lowestFail {
					mu.Unlock()
					return
				}
				mu.Unlock()
				r := sim.Run(sim.Swarm(seed), nil)
				mu.Lock()
				results[seed-1] = r
				if r.Outcome != sim.Pass && seed < lowestFail {
					lowestFail = seed
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return results
}

// TestCanaryPorcupine runs the canary build's seeds from -canary.seed on,
// each with porcupine (sim.Outputs), up to the first that fails, and logs
// it as "canary porcupine: seed=N result=R porcupine=WORD": run.sh -go
// asks porcupine so about the failing seeds of a client-visible catch
// (issue 12 item 6).
func TestCanaryPorcupine(t *testing.T) {
	if Tag == "" || *seedFlag == 0 {
		t.Skip("needs a canary tag and -canary.seed")
	}
	for seed := *seedFlag; seed < *seedFlag+uint64(*seedsFlag); seed++ {
		r := sim.RunWith(sim.Swarm(seed), sim.Outputs{Porcupine: true, PorcupineTimeout: 60 * time.Second})
		if r.Outcome == sim.Pass {
			continue
		}
		if r.Porcupine == nil {
			t.Fatalf("seed %d: no porcupine verdict: %s: %s", seed, r.Outcome, r.Violation)
		}
		t.Logf("canary porcupine: seed=%d result=%s porcupine=%s (%v): %s", seed, r.Outcome, r.Porcupine.Word(), r.Porcupine, r.Violation)
		return
	}
	t.Fatalf("no seed from %d failed", *seedFlag)
}
