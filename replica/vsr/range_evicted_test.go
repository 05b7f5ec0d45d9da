package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestRangeEvictedThenAnotherPeer: a replica asked for ops below its
// journal's retained floor says so with RangeEvicted (op: its oldest
// retained op) and then RepairDone(retained_from - 1) when it serves none
// (wire.md 5.10 and correction 0.3); the asker counts that as no progress
// and repairs from another peer. r2 restarts without ops 1 and 2; the
// primary has evicted them (as a checkpoint would), r1 has not.
func TestRangeEvictedThenAnotherPeer(t *testing.T) {
	c := newCluster(t, 3, 28)
	r0, r2 := c.replicas[0], c.replicas[2]
	commitEverywhere(t, c, 1, 5)
	r0.journal.evicted = 2

	r2.crash()
	delete(r2.journal.durable, 1)
	delete(r2.journal.durable, 2)
	r2.start(false)
	var evicted, done []wire.RepairRangeHeader
	c.drop = func(m message) bool {
		h := wire.HeaderOf(m.frame)
		if m.from != 0 || m.to != 2 {
			return false
		}
		var x wire.RepairRangeHeader
		switch h.Command() {
		case wire.CommandRangeEvicted:
			x.Decode(h)
			evicted = append(evicted, x)
		case wire.CommandRepairDone:
			x.Decode(h)
			done = append(done, x)
		}
		return false
	}
	if !c.runUntil(400_000, func() bool { return r2.group.CommitMin() >= 5 }) {
		c.dump()
		t.Fatalf("r2 never repaired ops 1 and 2 (probes %v)", c.probes)
	}
	if len(evicted) == 0 {
		t.Fatalf("the primary never answered RangeEvicted (probes %v)", c.probes)
	}
	if evicted[0].Op != 3 {
		t.Fatalf("RangeEvicted op %d, want 3 (the primary's oldest retained op)", evicted[0].Op)
	}
	if len(done) == 0 || done[0].Op != 2 || done[0].Nonce != evicted[0].Nonce {
		t.Fatalf("RepairDone after the RangeEvicted: %+v, want op 2 (retained_from - 1) with the same nonce", done)
	}
	for _, probe := range []string{"RangeEvicted sent", "repair answered with RangeEvicted"} {
		if c.probes[probe] == 0 {
			t.Fatalf("probe %q never fired (probes %v)", probe, c.probes)
		}
	}
	for op := uint64(1); op <= 2; op++ {
		if f, ok := r2.journal.Frame(op); !ok || wire.HeaderOf(f).Checksum() != c.canon[op] {
			t.Fatalf("r2 does not hold the committed op %d", op)
		}
	}
}

// TestMemJournalPurge: a purged op is gone, never served, and never nacked
// (it was held, and may have been acknowledged).
func TestMemJournalPurge(t *testing.T) {
	var later []func()
	j := NewMemJournal(func(f func()) { later = append(later, f) })
	for op := uint64(1); op <= 4; op++ {
		j.Append(stalePrepare(op, wire.U128{}, 0), func() {})
	}
	for _, f := range later {
		f()
	}
	if j.RetainedFrom() != 1 {
		t.Fatalf("RetainedFrom %d before any purge, want 1", j.RetainedFrom())
	}
	j.Purge(2)
	if j.RetainedFrom() != 3 {
		t.Fatalf("RetainedFrom %d after purging through 2, want 3", j.RetainedFrom())
	}
	for op := uint64(1); op <= 2; op++ {
		if _, ok := j.Frame(op); ok {
			t.Fatalf("op %d still held after the purge", op)
		}
		if k := j.Knowledge(op); k != KnowledgeNone {
			t.Fatalf("purged op %d knowledge %v, want none (never nack it)", op, k)
		}
	}
	if _, ok := j.Frame(3); !ok || !j.Durable(3) {
		t.Fatal("op 3 lost by a purge through 2")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("purging above the head did not panic")
		}
	}()
	j.Purge(5)
}

// TestAppliedButNotHeldIsEvicted: on a partition plane, a backup asked
// for ops it applied but no longer holds (a state transfer installed them,
// or its memory journal restarted empty) answers RangeEvicted at the first
// op it holds, so the asker turns to a state transfer, instead of a
// RepairDone with nothing, which sent every replica asking every other
// forever (VOPR seed 22354).
func TestAppliedButNotHeldIsEvicted(t *testing.T) {
	c := newCluster(t, 3, 71)
	c.plane = func(r *replica) Plane { return &testPlane{r: r} }
	for _, r := range c.replicas {
		r.start(true)
	}
	commitEverywhere(t, c, 1, 4)
	r1 := c.replicas[1]
	if r1.group.IsPrimary() || r1.group.CommitMin() < 4 {
		t.Fatalf("r1: primary %v, commit_min %d", r1.group.IsPrimary(), r1.group.CommitMin())
	}
	for op := uint64(1); op <= 2; op++ {
		delete(r1.journal.frames, op) // applied, not held
	}
	var answers []wire.Command
	var evictedAt uint64
	c.observe = func(m message) {
		if m.from != 1 || m.to != 2 {
			return
		}
		switch h := wire.HeaderOf(m.frame); h.Command() {
		case wire.CommandRangeEvicted:
			var x wire.RepairRangeHeader
			x.Decode(h)
			evictedAt = x.Op
			fallthrough
		case wire.CommandRepairDone, wire.CommandRepairPrepare:
			answers = append(answers, h.Command())
		}
	}
	rp := wire.RequestPreparesHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("vsr-test"), Replica: 2},
		Nonce: wire.U128{Lo: 9, Hi: 1}, FromOp: 1, ToOp: 4, Group: r1.group.cfg.Group}
	r1.group.Receive(2, wire.BuildFrame(&rp, nil))
	c.settle()
	if len(answers) == 0 || answers[0] != wire.CommandRangeEvicted || evictedAt != 3 {
		t.Fatalf("r1 answered %v (RangeEvicted at %d), want RangeEvicted at op 3 first", answers, evictedAt)
	}
	if c.probes["repair: ops applied but not held answered as evicted"] == 0 {
		t.Fatalf("the probe did not fire (probes %v)", c.probes)
	}
}
