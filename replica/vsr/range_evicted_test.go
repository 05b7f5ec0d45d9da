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
