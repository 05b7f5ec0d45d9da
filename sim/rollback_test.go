package sim

import (
	"strings"
	"testing"
)

// TestRollbackBuildsTheShape: over a few seeds with five replicas and no
// process faults, the rollback nemesis goes through every stage of its
// round, each leader it aims at leads, and the replica's defences against
// replaced prepares see real wrong frames: a repaired prepare rejected by
// the chain, and a journal frame not taken as canonical below the merged
// headers. Random partitions never reach these (DEVIATIONS.md 40); every
// run must still pass.
func TestRollbackBuildsTheShape(t *testing.T) {
	const seeds = 12
	fired := map[string]int{}
	for seed := uint64(1); seed <= seeds; seed++ {
		o := Swarm(seed)
		o.Replicas, o.Rollback, o.PartitionMode = 5, true, 0
		o.CrashProbability, o.PauseProbability = 0, 0
		o.Lite = true
		res := Run(o, nil)
		if res.Outcome != Pass {
			t.Fatalf("seed %d: %v: %s", seed, res.Outcome, res.Violation)
		}
		for name, n := range res.Probes {
			fired[name] += n
		}
	}
	for _, name := range []string{
		"rollback: old primary cut off",
		"rollback: a lagging backup cut off with it",
		"rollback: a backup committed over a replaced op cut from its primary",
		"rollback: old primary joined with a backup committed over its replaced op",
		"rollback: the aimed leader leads",
		"rollback: the old primary leads the joined side",
		"rollback: the lagging backup leads the joined side",
		"repaired prepare rejected: not canonical",
		"journal frame off the hash chain not taken as canonical",
		"fault: partition by the rollback nemesis",
	} {
		if fired[name] == 0 {
			t.Errorf("probe %q never fired in seeds 1..%d", name, seeds)
		}
	}
	for name := range fired {
		if strings.HasPrefix(name, "fault: partition ") && name != "fault: partition by the rollback nemesis" {
			t.Errorf("random partition %q with the nemesis on", name)
		}
	}
}

// TestRollbackOffChangesNothing: a seed whose options do not ask for the
// nemesis runs exactly as before it existed (its stream is never drawn),
// and one with too few replicas for it runs as without it.
func TestRollbackOffChangesNothing(t *testing.T) {
	// The first seed whose three-replica world the nemesis acts in (most
	// do; which one moves with every change to the worlds).
	for seed := uint64(1); seed <= 30; seed++ {
		o := Swarm(seed)
		o.Replicas, o.PartitionMode, o.Rollback = 3, 0, true
		o.StaleAnswers, o.ViewChangeFaults = false, false // the other nemeses would act at two replicas
		on := Run(o, nil)
		if on.Probes["rollback: old primary cut off"] == 0 {
			continue
		}
		o.Rollback = false
		if off := Run(o, nil); on.Digest == off.Digest {
			t.Fatalf("seed %d, three replicas: the nemesis acted, yet the digest is that of a run without it (%x)", seed, on.Digest)
		}
		o.Replicas = 2
		without := Run(o, nil)
		o.Rollback = true
		if with := Run(o, nil); without.Digest != with.Digest {
			t.Fatalf("seed %d, two replicas: digest %x with the nemesis, %x without: it acted below three replicas", seed, with.Digest, without.Digest)
		}
		return
	}
	t.Fatal("the nemesis acted in no three-replica world of seeds 1..30")
}
