package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestRejectedRepairIsNoProgress: a repair reply whose frames were all
// rejected is no progress, so the next request goes to another peer. Four
// replicas; r2 restarts without op 1's body. The primary's repair answers to
// r2 are lost and r1 serves a stale op 1 (validly sealed, off the chain), so
// only r3 can repair it. If a rejected reply counted as progress, r2 would
// reset its attempts and alternate between the primary and r1 forever.
func TestRejectedRepairIsNoProgress(t *testing.T) {
	c := newCluster(t, 4, 27)
	r1, r2 := c.replicas[1], c.replicas[2]
	commitEverywhere(t, c, 1, 3)
	r1.journal.frames[1] = stalePrepare(1, wire.U128{}, 0)

	r2.crash()
	delete(r2.journal.durable, 1)
	r2.journal.durableState.CommitMax = 3
	r2.start(false)
	asked := map[uint8]int{}
	c.drop = func(m message) bool {
		h := wire.HeaderOf(m.frame)
		if m.from == 2 && h.Command() == wire.CommandRequestPrepares {
			asked[m.to]++
		}
		cmd := h.Command()
		return m.from == 0 && m.to == 2 && (cmd == wire.CommandRepairPrepare || cmd == wire.CommandRepairDone)
	}
	if !c.runUntil(400_000, func() bool { return r2.group.CommitMin() >= 3 }) {
		c.dump()
		t.Fatalf("r2 never repaired op 1 (asked %v, probes %v)", asked, c.probes)
	}
	if c.probes["repaired prepare rejected: not canonical"] == 0 {
		t.Fatalf("r1's stale op 1 was never served and rejected (asked %v)", asked)
	}
	if asked[3] == 0 {
		t.Fatalf("r2 never asked r3 (asked %v)", asked)
	}
	if f, _ := r2.journal.Frame(1); wire.HeaderOf(f).Checksum() != c.canon[1] {
		t.Fatal("r2 holds another op 1 than the cluster committed")
	}
}

// TestRepairAnyPeer: with RepairAnyPeer a backup sends some first repair
// requests to a peer other than its primary and still repairs only the
// canonical ops; without it, a first request always goes to the primary.
func TestRepairAnyPeer(t *testing.T) {
	for _, anyPeer := range []bool{false, true} {
		toOthers := 0
		for seed := uint64(40); seed < 60; seed++ {
			c := newTunedCluster(t, 4, seed, func(cfg *Config) { cfg.RepairAnyPeer = anyPeer })
			r2 := c.replicas[2]
			commitEverywhere(t, c, 1, 3)
			// A replica's random stream is seeded by its incarnation (not
			// the cluster's seed): restart it a different number of times.
			for range seed - 40 {
				r2.crash()
				r2.start(false)
			}
			r2.crash()
			delete(r2.journal.durable, 2)
			r2.start(false)
			first := true
			c.observe = func(m message) {
				if m.from == 2 && wire.HeaderOf(m.frame).Command() == wire.CommandRequestPrepares && first {
					first = false
					if m.to != c.primary().id {
						toOthers++
					}
				}
			}
			if !c.runUntil(400_000, func() bool { return r2.group.CommitMin() >= 3 }) {
				c.dump()
				t.Fatalf("any-peer %v seed %d: r2 never repaired op 2", anyPeer, seed)
			}
			if f, ok := r2.journal.Frame(2); !ok || wire.HeaderOf(f).Checksum() != c.canon[2] {
				t.Fatalf("any-peer %v seed %d: r2 holds another op 2", anyPeer, seed)
			}
			if first {
				t.Fatalf("any-peer %v seed %d: r2 repaired op 2 without a RequestPrepares", anyPeer, seed)
			}
		}
		switch {
		case !anyPeer && toOthers > 0:
			t.Fatalf("without RepairAnyPeer, %d first requests went to another peer than the primary", toOthers)
		case anyPeer && toOthers == 0:
			t.Fatal("with RepairAnyPeer, every first request still went to the primary")
		}
	}
}
