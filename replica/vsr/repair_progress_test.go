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

// TestRepairRotationReachesTheOtherPeer scripts VOPR long seed 424245: a
// replica asks for an op that its first peer does not hold (it answers
// RepairDone with nothing) and only the second holds. Each fruitless
// request was counted twice, by its empty reply and again by the repair
// timeout, so with two peers the rotation's start (attempts mod 2) never
// moved and the same peer was asked forever. Three replicas: the primary
// r0 lost op 2's body after applying it, r2 restarts without it, r1 holds it.
func TestRepairRotationReachesTheOtherPeer(t *testing.T) {
	c := newCluster(t, 3, 31)
	r0, r2 := c.replicas[0], c.replicas[2]
	commitEverywhere(t, c, 1, 3)
	delete(r0.journal.frames, 2)
	delete(r0.journal.durable, 2)
	restartWithout(r2, 3, 2)
	asked := countRepairRequests(c, 2)
	// No heartbeats reach r2, so only its repair timeout asks again, as for
	// the seed's primary, which hears no heartbeats at all.
	c.drop = func(m message) bool { return m.to == 2 && wire.HeaderOf(m.frame).Command() == wire.CommandCommit }
	if !c.runUntil(400_000, func() bool { return r2.group.CommitMin() >= 3 }) {
		c.dump()
		t.Fatalf("r2 never repaired op 2 (asked %v)", asked)
	}
	// One fruitless request to r0, then r1: the rotation moves one peer per
	// failed request. Counted twice, it asked r0 again and again until a
	// view change (r0 suspected) moved it.
	if asked[1] != 1 || asked[0] != 1 || c.probes["primary suspected"] != 0 {
		t.Fatalf("r2 asked %v before it repaired op 2 from r1, the only peer holding it (probes %v)", asked, c.probes)
	}
}

// TestRepairAsksThePrimaryBelowAStretchNobodyServes scripts VOPR seed
// 3115659328: a backup restarts holding ops 1..3 and 5 but not 4, so it can
// vouch for none of them (the chain from 5 breaks at its hole). The only
// replica that still holds op 4 is cut off, and the primary lost its body
// after committing it. Asking only for the stretch that ends at the highest
// op of known identity (4) asks forever what no reachable replica serves,
// while the primary would serve the committed 1..3 below it: one round of
// every rotation now asks the primary from the bottom.
func TestRepairAsksThePrimaryBelowAStretchNobodyServes(t *testing.T) {
	c := newCluster(t, 3, 33)
	r0, r2 := c.replicas[0], c.replicas[2]
	commitEverywhere(t, c, 1, 5)
	delete(r0.journal.frames, 4)
	delete(r0.journal.durable, 4)
	restartWithout(r2, 5, 4)
	c.isolate(1)
	asked := countRepairRequests(c, 2)
	if !c.runUntil(400_000, func() bool { return r2.group.CommitMin() >= 3 }) {
		c.dump()
		t.Fatalf("r2 never committed the ops below its hole that its primary serves (asked %v, probes %v)", asked, c.probes)
	}
	if c.probes["repair asks the primary below a stretch nobody served"] == 0 {
		t.Fatalf("r2 committed ops 1..3 without asking the primary from the bottom (asked %v)", asked)
	}
	if r2.group.CommitMin() != 3 {
		t.Fatalf("r2 committed op %d, past the hole at op 4 that nobody reachable holds", r2.group.CommitMin())
	}
}

// restartWithout crashes r and restarts it with the given ops' prepares lost
// and commitMax as its durable commit_max.
func restartWithout(r *replica, commitMax uint64, ops ...uint64) {
	r.crash()
	for _, op := range ops {
		delete(r.journal.frames, op)
		delete(r.journal.durable, op)
	}
	r.journal.durableState.CommitMax = commitMax
	r.start(false)
}

// countRepairRequests counts, per peer, the RequestPrepares from sends
// from now on.
func countRepairRequests(c *cluster, from uint8) map[uint8]int {
	asked := map[uint8]int{}
	c.observe = func(m message) {
		if m.from == from && wire.HeaderOf(m.frame).Command() == wire.CommandRequestPrepares {
			asked[m.to]++
		}
	}
	return asked
}
