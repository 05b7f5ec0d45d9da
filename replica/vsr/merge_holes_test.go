package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestMergeTruncatesAboveANackQuorum: an op with a nack quorum was never
// committed, so no op above it was either (commits are in op order), and the
// view change truncates the log below it even when an op above it has too
// few nacks to be truncated on its own. Three replicas commit ops 1..3; the
// primary prepares 4 and 5, and only op 5 reaches r1 (its write of op 4
// never happened): r1 and r2 both prove they never acknowledged op 4, r1
// holds op 5. With the primary gone, a view change of r1 and r2 must drop
// ops 4 and 5 and go on; keeping op 5 would wait forever for op 4's body,
// which nobody has (VOPR seed 815).
func TestMergeTruncatesAboveANackQuorum(t *testing.T) {
	c := newCluster(t, 3, 31)
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	commitEverywhere(t, c, 1, 3)
	c.block(link{0, 1}, link{0, 2})
	proposeAt(t, r0, 4)
	proposeAt(t, r0, 5)
	c.settle()
	f5, ok := r0.journal.Frame(5)
	if !ok {
		t.Fatal("the primary did not journal op 5")
	}
	r0.crash()
	r1.crash()
	r1.journal.durable[5] = f5
	r1.journal.acked[5] = wire.HeaderOf(f5).Checksum()
	c.unblockAll()
	r1.start(false)
	if k := r1.journal.Knowledge(4); k != KnowledgeNever {
		t.Fatalf("r1's knowledge of op 4 is %v, want never (provably unacknowledged)", k)
	}
	if !c.runUntil(400_000, func() bool {
		return r1.group.Status() == StatusNormal && r2.group.Status() == StatusNormal && r1.group.View() == r2.group.View()
	}) {
		c.dump()
		t.Fatalf("r1 and r2 never finished a view change (probes %v)", c.probes)
	}
	for _, r := range []*replica{r1, r2} {
		if r.group.Op() != 3 {
			t.Fatalf("replica %d's head is op %d after the view change, want 3 (ops 4 and 5 truncated)", r.id, r.group.Op())
		}
	}
	if c.probes["view change truncated above an op with a nack quorum"] == 0 {
		t.Fatalf("the truncation below op 5 never happened (probes %v)", c.probes)
	}
}

// TestMergeTakesAHeaderTheOpAboveNames: the canonical voter (highest
// log_view) lost op 4 (it can prove it never acknowledged it) but holds op 5;
// a voter of a lower log_view holds op 4 with the identity op 5 names as its
// parent. Too few nacks to truncate op 4, so the merge must take that copy as
// the canonical op 4 and repair its body from it, not wait forever for a
// header no canonical vote carries (VOPR seed 814).
func TestMergeTakesAHeaderTheOpAboveNames(t *testing.T) {
	c := newCluster(t, 3, 32)
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	commitEverywhere(t, c, 1, 3)
	c.block(link{0, 1}, link{0, 2})
	proposeAt(t, r0, 4)
	proposeAt(t, r0, 5)
	c.settle()
	f4, ok4 := r0.journal.Frame(4)
	f5, ok5 := r0.journal.Frame(5)
	if !ok4 || !ok5 {
		t.Fatal("the primary did not journal ops 4 and 5")
	}
	r0.crash()
	r1.crash()
	r2.crash()
	// r1: log_view 2, op 5 held, op 4 never acknowledged.
	r1.journal.durable[5] = f5
	r1.journal.acked[5] = wire.HeaderOf(f5).Checksum()
	r1.journal.durableState.View, r1.journal.durableState.LogView = 2, 2
	// r2: log_view 0, op 4 held.
	r2.journal.durable[4] = f4
	r2.journal.acked[4] = wire.HeaderOf(f4).Checksum()
	c.unblockAll()
	r1.start(false)
	r2.start(false)
	if !c.runUntil(400_000, func() bool {
		return r1.group.Status() == StatusNormal && r2.group.Status() == StatusNormal && r1.group.View() == r2.group.View()
	}) {
		c.dump()
		t.Fatalf("r1 and r2 never finished a view change (probes %v)", c.probes)
	}
	holdsBoth := func() bool {
		for _, r := range []*replica{r1, r2} {
			for _, f := range [][]byte{f4, f5} {
				op := u64op(wire.HeaderOf(f))
				if g, ok := r.journal.Frame(op); !ok || wire.HeaderOf(g).Checksum() != wire.HeaderOf(f).Checksum() {
					return false
				}
			}
		}
		return true
	}
	if !c.runUntil(400_000, holdsBoth) {
		c.dump()
		t.Fatal("r1 and r2 never both held ops 4 and 5")
	}
	if c.probes["view change took a header the op above names"] == 0 {
		t.Fatalf("the merge did not take op 4 from the lower log_view (probes %v)", c.probes)
	}
	for _, r := range []*replica{r1, r2} {
		if r.group.Op() != 5 {
			t.Fatalf("replica %d's head is %d, want 5", r.id, r.group.Op())
		}
		for op := uint64(4); op <= 5; op++ {
			f, ok := r.journal.Frame(op)
			want := f4
			if op == 5 {
				want = f5
			}
			if !ok || wire.HeaderOf(f).Checksum() != wire.HeaderOf(want).Checksum() {
				t.Fatalf("replica %d does not hold op %d as the primary prepared it", r.id, op)
			}
		}
	}
}
