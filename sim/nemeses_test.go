package sim

import "testing"

// TestStaleAnswersReachTheIncarnationGuard: the stale-answer nemesis
// brings an earlier incarnation's StartView to a restarted replica, and a
// correct one ignores it (consensus.md correction 6), in a good share of
// the seeds that run it. Without the nemesis no seed reaches the guard.
func TestStaleAnswersReachTheIncarnationGuard(t *testing.T) {
	const seeds = 12
	reached, without := 0, 0
	for seed := uint64(1); seed <= seeds; seed++ {
		o := Swarm(seed)
		o.Replicas, o.StaleAnswers = 3, true
		r := Run(o, nil)
		if r.Outcome != Pass {
			t.Fatalf("seed %d: %s: %s", seed, r.Outcome, r.Violation)
		}
		if r.Probes["stale StartView ignored"] > 0 {
			reached++
		}
		o.StaleAnswers = false
		if Run(o, nil).Probes["stale StartView ignored"] > 0 {
			without++
		}
	}
	if reached < seeds/4 || without > 0 {
		t.Fatalf("the guard ran in %d of %d seeds with the nemesis (want a quarter), %d without (want none)", reached, seeds, without)
	}
}

// TestViewChangeFaultsReachTheNackQuorum: the view-change fault nemesis
// leaves a view change an op only its crashed primary held, with no body,
// so that the merge waits for a body nobody reported and then truncates
// the op on a nack quorum.
func TestViewChangeFaultsReachTheNackQuorum(t *testing.T) {
	const seeds = 16
	waited, truncated := 0, 0
	for seed := uint64(1); seed <= seeds; seed++ {
		o := Swarm(seed)
		o.Replicas, o.ViewChangeFaults, o.Rollback, o.PartitionMode = 3, true, false, 0
		r := Run(o, nil)
		if r.Outcome != Pass {
			t.Fatalf("seed %d: %s: %s", seed, r.Outcome, r.Violation)
		}
		if r.Probes["view change waits for a body nobody reported"] > 0 {
			waited++
		}
		if r.Probes["view change truncated an op on a nack quorum"] > 0 {
			truncated++
		}
	}
	if waited == 0 || truncated == 0 {
		t.Fatalf("of %d seeds, %d waited for a body nobody reported and %d truncated on a nack quorum: want both", seeds, waited, truncated)
	}
	t.Logf("of %d seeds, %d waited for a body nobody reported, %d truncated on a nack quorum", seeds, waited, truncated)
}
