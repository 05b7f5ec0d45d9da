package sim

import (
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/sim/plan"
)

// branchRun runs seed's swarm options with out.Branch at atNs (salt), the
// kernel's trace recorded.
func branchRun(t *testing.T, seed uint64, b *Branch, g *plan.Gate) (Result, []kernel.TraceEntry) {
	t.Helper()
	var trace []kernel.TraceEntry
	r := RunWith(Swarm(seed), Outputs{RecordTrace: &trace, Branch: b, Plan: g})
	return r, trace
}

// TestABranchIsTheSeedUpToItsMomentAndAnotherRunAfter: a branch fires the
// very events of the seed's own run before its moment, and others after it
// (its faults drew another future); the same branch twice is the same run,
// another salt another run, and a branch past the run's end is the run.
func TestABranchIsTheSeedUpToItsMomentAndAnotherRunAfter(t *testing.T) {
	const seed = 3
	base, baseTrace := branchRun(t, seed, nil, nil)
	if len(baseTrace) < 1000 {
		t.Fatalf("seed %d fired %d events: too short to branch", seed, len(baseTrace))
	}
	atNs := baseTrace[len(baseTrace)/3].AtNs / kernel.TickNs * kernel.TickNs
	one, oneTrace := branchRun(t, seed, &Branch{AtNs: atNs, Salt: 1}, nil)
	if one.BranchedAtNs != atNs {
		t.Fatalf("branched at %d ns, want %d", one.BranchedAtNs, atNs)
	}
	parted := kernel.FirstDivergence(baseTrace, oneTrace)
	if parted < 0 {
		t.Fatalf("the branch at %d ns fired the seed's own run (digest %016x)", atNs, one.Digest)
	}
	if at := oneTrace[parted].AtNs; at < atNs {
		t.Fatalf("the branch at %d ns parted from the run before it, at %d ns: %s", atNs, at,
			kernel.DescribeDivergence(baseTrace, oneTrace))
	}
	again, _ := branchRun(t, seed, &Branch{AtNs: atNs, Salt: 1}, nil)
	if again.Digest != one.Digest {
		t.Fatalf("one branch ran twice: digests %016x and %016x", one.Digest, again.Digest)
	}
	other, _ := branchRun(t, seed, &Branch{AtNs: atNs, Salt: 2}, nil)
	if other.Digest == one.Digest {
		t.Fatalf("salts 1 and 2 gave one run (digest %016x)", one.Digest)
	}
	late, _ := branchRun(t, seed, &Branch{AtNs: int64(base.Ticks+10) * kernel.TickNs, Salt: 1}, nil)
	if late.Digest != base.Digest || late.BranchedAtNs != -1 {
		t.Fatalf("a branch past the run's end: digest %016x (branched at %d), the run's %016x",
			late.Digest, late.BranchedAtNs, base.Digest)
	}
}

// TestABranchReleasesAReplayedPlan: with a plan replayed, the branch's
// prefix is the plan's run, and after the branch the draws decide (a
// plan with every firing removed still gets faults after the branch).
func TestABranchReleasesAReplayedPlan(t *testing.T) {
	const seed = 3
	rec := plan.Recorder()
	RunWith(Swarm(seed), Outputs{Plan: rec})
	if len(rec.Firings()) < 10 {
		t.Fatalf("seed %d fired no faults", seed)
	}
	empty := plan.Plan{Seed: seed}
	quiet := plan.Replayer(empty, kernel.TickNs)
	RunWith(Swarm(seed), Outputs{Plan: quiet})
	// The liveness core is noted as fired even from an empty plan: a
	// handful at most.
	quietFired, _, _ := quiet.Stats()
	g := plan.Replayer(empty, kernel.TickNs)
	r := RunWith(Swarm(seed), Outputs{Plan: g, Branch: &Branch{AtNs: 0, Salt: 1}})
	if fired, _, _ := g.Stats(); fired < quietFired+5 {
		t.Fatalf("after the branch at 0 the draws fired %d faults, the empty plan alone %d (run %s; unbranched %d firings)",
			fired, quietFired, r.Summary(), len(rec.Firings()))
	}
}
