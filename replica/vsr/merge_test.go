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

// TestMergeBoundsCommitMaxByTheHighestKnownHeader: three votes of one
// log_view whose voters all believe nothing was committed (their
// superblocks' commit_max lags: it is persisted with the view, not with
// every commit) and none of which can read its own head op (reported
// blank), with more ops in their logs than a suffix carries. The top ops
// are truncated on their nack quorums; what remains is more than a suffix
// above the votes' commits. The highest header each voter knows still
// bounds commit_max from below (any prepare that exists was built under a
// pipeline: its op - PipelineMax was committed). Counting only the heads,
// the merge kept commit_max 0 and panicked ("merged 147 uncommitted ops";
// VOPR seed 424245 -long -view-change-faults -rollback, with 494).
func TestMergeBoundsCommitMaxByTheHighestKnownHeader(t *testing.T) {
	const head = wire.SuffixEntriesMax + 20
	c := newCluster(t, 3, 31)
	commitEverywhere(t, c, 1, head)
	g := c.replicas[0].group
	vote := func(from uint8, op uint64) *dvcVote {
		d := &dvcVote{from: from, logView: g.logView, op: op}
		for i := range wire.SuffixEntriesMax {
			o := op - uint64(i)
			if i == 0 {
				d.entries = append(d.entries, wire.BlankEntry(o)) // its head, unreadable
				continue
			}
			f, ok := c.replicas[from].journal.Frame(o)
			if !ok {
				t.Fatalf("replica %d lacks op %d", from, o)
			}
			d.entries = append(d.entries, *wire.HeaderOf(f))
			d.present = d.present.WithBit(i)
		}
		return d
	}
	g.vc.dvcs = []*dvcVote{vote(0, head), vote(1, head-1), vote(2, head-2)}
	g.commitMax = 0
	m, ok := g.merge()
	if !ok {
		t.Fatalf("the merge did not decide (probes %v)", c.probes)
	}
	pipelineMax := uint64(testConfig(0, 3).PipelineMax)
	if m.head != head-1 || m.commitMax < m.head-pipelineMax {
		t.Fatalf("merged head %d commit_max %d, want head %d and commit_max at least %d", m.head, m.commitMax, head-1, head-1-pipelineMax)
	}
}
