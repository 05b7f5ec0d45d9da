package vsr

import "testing"

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
