package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestMergeBoundsCommitMaxByThePipeline: a merge whose voters all restarted
// with a stale commit_max in their superblocks still takes commit_max no
// lower than what a voter's head implies (the commit it carries, and head -
// PipelineMax: a primary never had more uncommitted ops than its pipeline),
// so the new primary re-proposes at most PipelineMax ops (vsr-random seed 327 rebuilt a pipeline of 167 ops and tripped the
// suffix bound). Three replicas commit 20 ops, then all restart believing
// nothing was committed.
func TestMergeBoundsCommitMaxByThePipeline(t *testing.T) {
	c := newCluster(t, 3, 29)
	commitEverywhere(t, c, 1, 20)
	pipelineMax := testConfig(0, 3).PipelineMax
	for _, r := range c.replicas {
		r.crash()
		r.journal.durableState.CommitMax = 0
	}
	longest := 0
	c.onEvent = func(r *replica, e Event) {
		if r.group.IsPrimary() {
			longest = max(longest, r.group.PipelineLen())
		}
	}
	for _, r := range c.replicas {
		r.start(false)
	}
	if !c.runUntil(400_000, func() bool {
		for _, r := range c.replicas {
			if r.group.Status() != StatusNormal || r.group.CommitMin() < 20 {
				return false
			}
		}
		return true
	}) {
		c.dump()
		t.Fatal("the cluster did not recover its 20 committed ops")
	}
	if longest > pipelineMax {
		t.Fatalf("a new primary re-proposed %d ops, more than the pipeline's %d", longest, pipelineMax)
	}
	for op := uint64(1); op <= 20; op++ {
		for _, r := range c.replicas {
			if f, ok := r.journal.Frame(op); !ok || wire.HeaderOf(f).Checksum() != c.canon[op] {
				t.Fatalf("replica %d lost op %d", r.id, op)
			}
		}
	}
}
