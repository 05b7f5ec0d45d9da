package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

func TestNormalOperationCommitsEverywhere(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		c := newCluster(t, n, uint64(n))
		if got := c.propose(20, 20000); got != 20 {
			t.Fatalf("n=%d: %d of 20 proposals accepted", n, got)
		}
		if !c.runUntil(20000, func() bool { return c.committedEverywhere(20) }) {
			for _, r := range c.replicas {
				t.Logf("replica %d: status %v view %d op %d commit %d/%d", r.id, r.group.Status(), r.group.View(), r.group.Op(), r.group.CommitMin(), r.group.CommitMax())
			}
			t.Fatalf("n=%d: not every replica committed 20 ops", n)
		}
	}
}

func TestPrimaryCrashViewChange(t *testing.T) {
	for _, n := range []int{3, 5} {
		c := newCluster(t, n, 42)
		if c.propose(10, 20000) != 10 || !c.runUntil(20000, func() bool { return c.committedEverywhere(10) }) {
			t.Fatalf("n=%d: warm-up did not commit", n)
		}
		old := c.primary()
		old.crash()
		if !c.runUntil(100000, func() bool { p := c.primary(); return p != nil && p != old }) {
			for _, r := range c.replicas {
				t.Logf("replica %d: up %v status %v view %d op %d commit %d/%d", r.id, r.up, r.group.Status(), r.group.View(), r.group.Op(), r.group.CommitMin(), r.group.CommitMax())
			}
			t.Fatalf("n=%d: no new primary", n)
		}
		if got := c.propose(10, 50000); got != 10 {
			t.Fatalf("n=%d: %d of 10 proposals accepted after the view change", n, got)
		}
		old.start(false)
		if !c.runUntil(200000, func() bool { return c.committedEverywhere(20) }) {
			for _, r := range c.replicas {
				t.Logf("replica %d: up %v status %v view %d op %d commit %d/%d", r.id, r.up, r.group.Status(), r.group.View(), r.group.Op(), r.group.CommitMin(), r.group.CommitMax())
			}
			t.Fatalf("n=%d: not every replica committed 20 ops after the restart", n)
		}
		t.Logf("n=%d: %d steps, probes %v", n, c.steps, c.probes)
	}
}

// TestCommittedPrepareAcknowledgedAgain: a lagging backup knows a higher
// commit_max than its head (the old primary's Commit reached it, op 4 did
// not), and its DoViewChange cannot say so (the wire caps a vote's commit
// at its op). The new primary starts the view believing op 4 uncommitted
// and re-proposes it; the backup repairs op 4 and, knowing it committed,
// applies it before the re-proposal reaches it. It must acknowledge the
// re-proposed op anyway, or the new primary never commits it (VOPR seed
// 90202304419227697: four replicas, the primary of view 4 at commit 54,
// every backup at 55, the core converged nowhere).
func TestCommittedPrepareAcknowledgedAgain(t *testing.T) {
	c := newCluster(t, 3, 36)
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	commitEverywhere(t, c, 1, 3)
	// Op 4 reaches r1 only (not forwarded along the chain either); the
	// commit of op 4 reaches r2 only.
	c.drop = func(m message) bool {
		cmd := wire.HeaderOf(m.frame).Command()
		return m.from == 0 && (m.to == 2 && cmd != wire.CommandCommit || m.to == 1 && cmd == wire.CommandCommit) ||
			m.from == 1 && m.to == 2
	}
	proposeAt(t, r0, 4)
	c.settle()
	c.tick(0, 80) // the heartbeat carries commit 4
	if r0.group.CommitMin() != 4 || r1.group.CommitMax() != 3 || r2.group.CommitMax() != 4 || r2.group.Op() != 3 {
		t.Fatalf("setup: r0 commit %d, r1 commit_max %d, r2 commit_max %d op %d", r0.group.CommitMin(), r1.group.CommitMax(), r2.group.CommitMax(), r2.group.Op())
	}
	r0.crash()
	// The new primary's prepares reach r2 only once r2 has applied op 4.
	c.drop = func(m message) bool {
		return m.from == 1 && m.to == 2 && wire.HeaderOf(m.frame).Command() == wire.CommandPrepare && r2.group.CommitMin() < 4
	}
	if !c.runUntil(400_000, func() bool { return r1.group.CommitMin() >= 4 && r2.group.CommitMin() >= 4 }) {
		c.dump()
		t.Fatalf("op 4 never committed in the new view: r1 %d/%d, r2 %d/%d (probes %v)",
			r1.group.CommitMin(), r1.group.CommitMax(), r2.group.CommitMin(), r2.group.CommitMax(), c.probes)
	}
	if c.probes["committed prepare acknowledged again"] == 0 {
		t.Fatalf("r2 never acknowledged a prepare it had committed (probes %v)", c.probes)
	}
}
