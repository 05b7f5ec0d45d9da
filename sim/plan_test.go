package sim

import (
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/sim/plan"
)

// withoutNemeses turns off the targeted nemeses, whose crashes and splits
// a plan does not hold.
func withoutNemeses(o Options) Options {
	o.Rollback, o.StaleAnswers, o.ViewChangeFaults = false, false, false
	return o
}

// recordPlan runs o recording its fault plan.
func recordPlan(o Options) (Result, plan.Plan) {
	g := plan.Recorder()
	r := RunWith(o, Outputs{Plan: g})
	return r, plan.Plan{Seed: o.Seed, Firings: g.Firings()}
}

func replayPlan(o Options, p plan.Plan) (Result, *plan.Gate) {
	g := plan.Replayer(p, kernel.TickNs)
	return RunWith(o, Outputs{Plan: g}), g
}

// Recording a fault plan changes nothing, and replaying the whole plan is
// the recorded run again: the same digest, every firing fired, nothing
// suppressed or missed, and as many crashes and partitions as the plan
// holds (the targeted nemeses off: their faults are not in a plan).
func TestReplayingTheWholePlanIsTheRecordedRun(t *testing.T) {
	for seed := uint64(1); seed <= 16; seed++ {
		o := withoutNemeses(Swarm(seed))
		plain := Run(o, nil)
		r, p := recordPlan(o)
		if r.Digest != plain.Digest {
			t.Fatalf("seed %d: recording changed the digest: %x, plain %x", seed, r.Digest, plain.Digest)
		}
		again, g := replayPlan(o, p)
		fired, suppressed, missed := g.Stats()
		if again.Digest != r.Digest || fired != len(p.Firings) || suppressed != 0 || missed != 0 {
			t.Fatalf("seed %d: the whole plan (%d firings) replayed to digest %x (recorded %x), fired %d, suppressed %d, missed %d",
				seed, len(p.Firings), again.Digest, r.Digest, fired, suppressed, missed)
		}
		crashes, partitions := 0, 0
		for _, f := range p.Firings {
			switch f.Site.Kind {
			case plan.Crash:
				crashes++
			case plan.Partition:
				partitions++
			}
		}
		if uint64(crashes) != r.Crashes || uint64(partitions) != r.Partitions {
			t.Fatalf("seed %d: the plan holds %d crashes and %d partitions, the run had %d and %d", seed, crashes, partitions, r.Crashes, r.Partitions)
		}
	}
}

// A plan with firings removed replays deterministically, and what was
// removed does not fire: with every crash and partition gone, the run has
// none, though its draws still say when they would have happened.
func TestAPlanWithFiringsRemovedReplaysWithoutThem(t *testing.T) {
	for seed := uint64(1); seed <= 24; seed++ {
		o := withoutNemeses(Swarm(seed))
		r, p := recordPlan(o)
		if r.Crashes == 0 || r.Partitions == 0 {
			continue
		}
		var kept plan.Plan
		kept.Seed = p.Seed
		for _, f := range p.Firings {
			if f.Site.Kind != plan.Crash && f.Site.Kind != plan.Partition {
				kept.Firings = append(kept.Firings, f)
			}
		}
		a, g := replayPlan(o, kept)
		b, _ := replayPlan(o, kept)
		if a.Digest != b.Digest {
			t.Fatalf("seed %d: two replays of one plan: digests %x and %x", seed, a.Digest, b.Digest)
		}
		if a.Crashes != 0 || a.Partitions != 0 {
			t.Fatalf("seed %d: a plan without crashes and partitions replayed %d crashes and %d partitions", seed, a.Crashes, a.Partitions)
		}
		if _, suppressed, _ := g.Stats(); suppressed == 0 {
			t.Fatalf("seed %d: the draws fired nothing the plan lacked (the recording had %d crashes)", seed, r.Crashes)
		}
		return
	}
	t.Fatal("no seed in 1..24 both crashed and partitioned")
}

// A crash the memory-loss bound defers waits and fires once the bound
// allows it (issue 28: dropping it cut the crashes of bounded seeds), and
// the plan holds it where it fired: replaying the plan is the recorded run.
func TestADeferredCrashFiresOnceTheBoundAllowsAndReplays(t *testing.T) {
	const waited = "crash deferred: fired once the memory-loss bound allowed it"
	for seed := uint64(1); seed <= 40; seed++ {
		o := withoutNemeses(Swarm(seed))
		if !o.MemoryLossBounded {
			continue
		}
		r, p := recordPlan(o)
		if r.Probes[waited] == 0 {
			continue
		}
		if deferred := r.Probes["crash deferred: the memory-loss bound"]; deferred < r.Probes[waited] {
			t.Fatalf("seed %d: %d deferred crashes fired of %d deferred", seed, r.Probes[waited], deferred)
		}
		again, g := replayPlan(o, p)
		fired, suppressed, missed := g.Stats()
		if again.Digest != r.Digest || again.Crashes != r.Crashes || suppressed != 0 || missed != 0 {
			t.Fatalf("seed %d: the plan (%d firings) replayed to digest %x (recorded %x), %d crashes (recorded %d), fired %d, suppressed %d, missed %d",
				seed, len(p.Firings), again.Digest, r.Digest, again.Crashes, r.Crashes, fired, suppressed, missed)
		}
		return
	}
	t.Fatal("no memory-loss-bounded seed in 1..40 fired a deferred crash")
}
