package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestRepairAcrossHolesOnBothReplicas: two replicas restart, each having
// lost the bodies of different committed ops (their slots keep only the
// header, as a corrupt prepare chunk leaves them), and each op is held by
// the other. They must repair each other and apply everything. (VOPR seed
// 288 with 5 s clogs: the primary knew no canonical identity below its own
// highest hole, so it served nothing there, and each asked for a stretch
// the other could not serve past its own hole: repair looped forever with
// commit_min 0 on both.)
func TestRepairAcrossHolesOnBothReplicas(t *testing.T) {
	c := newCluster(t, 2, 30)
	commitEverywhere(t, c, 1, 30)
	holes := map[uint8][]uint64{0: {1, 10, 23}, 1: {5, 17, 26}}
	for _, r := range c.replicas {
		r.crash()
		for _, op := range holes[r.id] {
			f := r.journal.durable[op]
			r.journal.durableHdrs[op] = *wire.HeaderOf(f)
			delete(r.journal.durable, op)
		}
		r.journal.durableState.CommitMax = 30
	}
	for _, r := range c.replicas {
		r.start(false)
	}
	if !c.runUntil(400_000, func() bool {
		for _, r := range c.replicas {
			if r.group.Status() != StatusNormal || r.group.CommitMin() < 30 {
				return false
			}
		}
		return true
	}) {
		c.dump()
		t.Fatalf("the replicas did not repair each other's holes (probes %v)", c.probes)
	}
	for _, r := range c.replicas {
		for op := uint64(1); op <= 30; op++ {
			if f, ok := r.journal.Frame(op); !ok || wire.HeaderOf(f).Checksum() != c.canon[op] {
				t.Fatalf("replica %d does not hold the committed op %d", r.id, op)
			}
		}
	}
}
