package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestCatchUpBeforeAdoptingAViewBeyondTheRing: a backup whose journal's
// ring cannot hold a StartView's log does not go Normal with it (a durable
// log_view whose log its journal does not record, VOPR seed 7000112 with
// -journal-slots 18). r2 is down while r0 and r1 commit ops 1..12 over a
// ring of 8 slots, checkpointing op 8. It restarts with no checkpoint (its
// ring reaches op 8), meets the StartView of head 12, stays Recovering,
// repairs and applies ops 1..8 from the primary, checkpoints op 8, and only
// then adopts the view and repairs the rest.
func TestCatchUpBeforeAdoptingAViewBeyondTheRing(t *testing.T) {
	const slots = 8
	c := newCluster(t, 3, 29)
	for _, r := range c.replicas {
		r.journal.ringSlots = slots
	}
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	r2.crash()
	commitOnTwo := func(first, last uint64) {
		for req := first; req <= last; req++ {
			proposeAt(t, r0, req)
			c.settle()
		}
		c.tick(0, 80)
		if r0.group.CommitMin() < last || r1.group.CommitMin() < last {
			c.dump()
			t.Fatalf("ops up to %d not committed by r0 and r1", last)
		}
	}
	commitOnTwo(1, 8)
	for _, r := range []*replica{r0, r1} {
		r.group.Checkpoint(8, wire.U128From64(88), func() {})
	}
	c.settle()
	commitOnTwo(9, 12)

	r2.start(false)
	checkpointed := false
	ok := c.runUntil(400_000, func() bool {
		g := r2.group
		if g.Status() == StatusNormal && g.Op() > r2.journal.AdmitsThrough() {
			c.dump()
			t.Fatalf("r2 went Normal in view %d with head op %d, its ring reaching op %d", g.View(), g.Op(), r2.journal.AdmitsThrough())
		}
		if !checkpointed && g.CommitMin() >= 8 {
			checkpointed = true
			g.Checkpoint(8, wire.U128From64(88), func() {})
		}
		return g.Status() == StatusNormal && g.CommitMin() >= 12
	})
	if !ok {
		c.dump()
		t.Fatalf("r2 never caught up: %v, commit_min %d (probes %v)", r2.group.Status(), r2.group.CommitMin(), c.probes)
	}
	for _, probe := range []string{
		"StartView beyond the journal's ring: the replica catches up before adopting it",
		"StartView adopted after catching up",
	} {
		if c.probes[probe] == 0 {
			t.Fatalf("probe %q never fired (probes %v)", probe, c.probes)
		}
	}
	if f, ok := r2.journal.Frame(12); !ok || wire.HeaderOf(f).Checksum() != c.canon[12] {
		t.Fatal("r2 does not hold the committed op 12")
	}
}
