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
