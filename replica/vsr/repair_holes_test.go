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

// TestRepairBelowAChainBreakAsksOnlyForWhatItLacks: every replica restarts
// (commit_min 0) having lost two committed ops outright (slot unreadable,
// no header), each replica different ones a few below the head, so each
// knows the canonical chain only down to its own higher hole. A repair must ask for the ops
// it lacks, not for the ops below the hole that its journal holds but
// cannot check yet: a stretch reaching down over them contains the
// server's own hole, where the server stops, short of the op the asker
// needs, on every peer in turn. (VOPR long run, seed 1 with 3 M safety
// ticks: after 5,028 crashes all three replicas sat at commit_min 0 of
// 1,573 for 2 M ticks, asking 171..178, 172..179 and 167..174 of peers
// whose holes were 174, 178 and 179.)
func TestRepairBelowAChainBreakAsksOnlyForWhatItLacks(t *testing.T) {
	c := newCluster(t, 3, 34)
	commitEverywhere(t, c, 1, 24)
	// Each replica's stretch of eight ops ending at its higher hole holds a
	// hole of each peer's below it: 16..23 for replica 0 meets 18 and 16.
	holes := map[uint8][]uint64{0: {23, 17}, 1: {22, 18}, 2: {21, 16}}
	for _, r := range c.replicas {
		r.crash()
		for _, op := range holes[r.id] {
			delete(r.journal.durable, op)
			delete(r.journal.acked, op)
			r.journal.faulty[op] = true
		}
		r.journal.durableState.CommitMax = 24 // the StartView's headers start at op 24
	}
	for _, r := range c.replicas {
		r.start(false)
	}
	if !c.runUntil(400_000, func() bool {
		for _, r := range c.replicas {
			if r.group.Status() != StatusNormal || r.group.CommitMin() < 24 {
				return false
			}
		}
		return true
	}) {
		c.dump()
		t.Fatalf("the replicas did not repair each other's holes (probes %v)", c.probes)
	}
	for _, r := range c.replicas {
		for _, op := range holes[r.id] {
			if f, ok := r.journal.Frame(op); !ok || wire.HeaderOf(f).Checksum() != c.canon[op] {
				t.Fatalf("replica %d does not hold the committed op %d it lost", r.id, op)
			}
		}
	}
}

// TestRepairSkipsASilentPeer: a restarted primary that lost many
// committed ops repairs them stretch by stretch; once a peer's repair
// request timed out, the rotation skips that peer until it sends anything
// again (here it is down for good): otherwise every stretch that the
// rotation starts at it waits out a repair timeout first (VOPR long run 15228355419466583266: a primary at
// commit_min 0 of 2,201, every hole behind the timeouts of two frozen
// peers, ran out of the liveness budget).
func TestRepairSkipsASilentPeer(t *testing.T) {
	c := newCluster(t, 4, 37)
	commitEverywhere(t, c, 1, 24)
	r0, r1 := c.replicas[0], c.replicas[1]
	r0.crash() // down for good: the lowest peer of every rotation
	holes := []uint64{4, 8, 12, 16, 20}
	for _, r := range c.replicas[1:] {
		r.crash()
		r.journal.durableState.CommitMax = 24
	}
	for _, op := range holes {
		delete(r1.journal.durable, op)
		delete(r1.journal.acked, op)
		r1.journal.faulty[op] = true
	}
	for _, r := range c.replicas[1:] {
		r.start(false)
	}
	if !c.runUntil(400_000, func() bool {
		return r1.group.IsPrimary() && r1.group.Status() == StatusNormal && r1.group.CommitMin() >= 24
	}) {
		c.dump()
		t.Fatalf("r1 did not repair and apply its holes as primary (probes %v)", c.probes)
	}
	if got := c.probes["repair re-requested"]; got >= len(holes) {
		t.Fatalf("%d repair timeouts for %d holes: every stretch asked the down peer first", got, len(holes))
	}
}
