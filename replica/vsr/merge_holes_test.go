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
	r1, r2 := c.replicas[1], c.replicas[2]
	_, f5 := preparedAlone(t, c)
	r1.crash()
	holdDurably(r1, f5)
	r1.start(false)
	if k := r1.journal.Knowledge(4); k != KnowledgeNever {
		t.Fatalf("r1's knowledge of op 4 is %v, want never (provably unacknowledged)", k)
	}
	viewChangeOf(t, c, r1, r2)
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
	r1, r2 := c.replicas[1], c.replicas[2]
	f4, f5 := preparedAlone(t, c)
	r1.crash()
	r2.crash()
	// r1: log_view 2, op 5 held, op 4 never acknowledged.
	holdDurably(r1, f5)
	r1.journal.durableState.View, r1.journal.durableState.LogView = 2, 2
	// r2: log_view 0, op 4 held.
	holdDurably(r2, f4)
	r1.start(false)
	r2.start(false)
	viewChangeOf(t, c, r1, r2)
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
	}
}

// preparedAlone commits ops 1..3 on every replica of c, then lets the
// primary (replica 0) prepare ops 4 and 5 that reach nobody, and crashes it;
// it returns the two prepares, for a test to plant where it wants them.
func preparedAlone(t *testing.T, c *cluster) (f4, f5 []byte) {
	t.Helper()
	r0 := c.replicas[0]
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
	c.unblockAll()
	return f4, f5
}

// holdDurably plants frame in a crashed replica's journal as durable and
// acknowledged, as a completed append would have left it.
func holdDurably(r *replica, frame []byte) {
	op := u64op(wire.HeaderOf(frame))
	r.journal.durable[op] = frame
	r.journal.acked[op] = wire.HeaderOf(frame).Checksum()
}

// viewChangeOf runs c until a and b are Normal in one view.
func viewChangeOf(t *testing.T, c *cluster, a, b *replica) {
	t.Helper()
	if !c.runUntil(400_000, func() bool {
		return a.group.Status() == StatusNormal && b.group.Status() == StatusNormal && a.group.View() == b.group.View()
	}) {
		c.dump()
		t.Fatalf("replicas %d and %d never finished a view change (probes %v)", a.id, b.id, c.probes)
	}
}
