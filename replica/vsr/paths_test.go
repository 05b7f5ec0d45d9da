package vsr

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Scripted tests for rare paths the campaigns reach seldom or never: each
// asserts that its probe fires and what the path must do.

// TestBackpressureHoldsAWrappingOpUntilACheckpoint: the journal's ring
// holds the ops above the durable checkpoint, so a primary prepares no op
// whose slot holds one of them (DEVIATIONS.md 18). With 8 slots and no
// checkpoint it prepares ops 1..8 and queues the rest; once every replica's
// checkpoint at op 4 is durable, ops 9..12 may reuse slots 1..4, and the
// queue drains into them.
func TestBackpressureHoldsAWrappingOpUntilACheckpoint(t *testing.T) {
	const slots = 8
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			c := newCluster(t, n, 31)
			for _, r := range c.replicas {
				r.journal.ringSlots = slots
			}
			p := c.replicas[0]
			propose := func(req uint64) ProposeResult {
				return p.group.Propose(Proposal{Client: wire.U128From64(5), Request: req, Body: []byte{byte(req)}})
			}
			// A full pipeline (4) and a queue behind it: the queue drains
			// into the pipeline only up to the ring's last free slot.
			for req := uint64(1); req <= 10; req++ {
				want := Proposed
				if req > 4 {
					want = Queued
				}
				if got := propose(req); got != want {
					t.Fatalf("request %d: %v, want %v", req, got, want)
				}
			}
			c.settle()
			c.tick(0, 80)
			if p.group.Op() != slots || !c.committedEverywhere(slots) {
				c.dump()
				t.Fatalf("head %d, want ops 1..%d prepared and committed", p.group.Op(), slots)
			}
			if got := len(p.group.requests); got != 2 {
				t.Fatalf("%d requests still queued, want the 2 whose ops would overwrite uncovered slots", got)
			}
			if c.probes["journal wrap: backpressure until a checkpoint frees the next slot"] == 0 {
				t.Fatal("no backpressure probe")
			}
			for key := range c.prepared {
				if key[1] > slots {
					t.Fatalf("op %d was prepared before a checkpoint: it reuses slot %d", key[1], key[1]%slots)
				}
			}
			// Every replica checkpoints op 4: the queued requests take ops 9
			// and 10, in slots 1 and 2.
			recorded := 0
			for _, r := range c.replicas {
				r.group.Checkpoint(4, wire.U128From64(44), func() { recorded++ })
			}
			c.settle()
			c.tick(0, 80)
			if recorded != n {
				t.Fatalf("%d checkpoints recorded, want %d", recorded, n)
			}
			if p.group.Op() != slots+2 || !c.committedEverywhere(slots+2) || len(p.group.requests) != 0 {
				c.dump()
				t.Fatalf("head %d with %d requests queued, want ops up to %d committed", p.group.Op(), len(p.group.requests), slots+2)
			}
		})
	}
}

// TestCorruptSlotRepaired: a backup restarts with op 2's body corrupt (its
// header intact, so it may have acknowledged op 2). It rejoins, learns op 2's
// identity down the hash chain from the StartView, repairs the body from the
// primary, and holds op 2 whole again.
func TestCorruptSlotRepaired(t *testing.T) {
	c := newCluster(t, 3, 32)
	r2 := c.replicas[2]
	commitEverywhere(t, c, 1, 3)
	r2.crash()
	f := r2.journal.durable[2]
	delete(r2.journal.durable, 2)
	r2.journal.durableHdrs[2] = *wire.HeaderOf(f)
	r2.start(false)
	if k := r2.journal.Knowledge(2); k != KnowledgeHeader {
		t.Fatalf("r2's op 2 is %v, want header known and body corrupt", k)
	}
	if !c.runUntil(200_000, func() bool { return r2.group.Status() == StatusNormal && r2.group.CommitMin() >= 3 }) {
		c.dump()
		t.Fatal("r2 did not rejoin and replay")
	}
	if c.probes["corrupt slot repaired"] != 1 {
		t.Fatalf("probe \"corrupt slot repaired\" fired %d times, want once (probes %v)", c.probes["corrupt slot repaired"], c.probes)
	}
	c.settle() // the repaired write completes
	if g, ok := r2.journal.Frame(2); !ok || wire.HeaderOf(g).Checksum() != c.canon[2] || !r2.journal.Durable(2) {
		t.Fatal("r2 does not hold op 2 durably with its committed identity")
	}
}

// TestStaleStartViewIgnored: a StartView that answers an earlier boot's
// probe (its incarnation is not ours) and would move our head back is
// ignored while recovering (consensus.md correction 6). r2's first probe is
// answered at op 3; the answer is delayed in the network while r2 rejoins,
// acknowledges ops 4 and 5, and restarts. Installing the old answer would
// truncate ops r2 acknowledged.
func TestStaleStartViewIgnored(t *testing.T) {
	c := newCluster(t, 3, 33)
	r2 := c.replicas[2]
	commitEverywhere(t, c, 1, 3)
	r2.crash()
	r2.start(false)
	var delayed []byte
	c.drop = func(m message) bool {
		if delayed == nil && m.to == 2 && wire.HeaderOf(m.frame).Command() == wire.CommandStartView {
			delayed = m.frame
			return true
		}
		return false
	}
	if !c.runUntil(200_000, func() bool { return r2.group.Status() == StatusNormal }) {
		c.dump()
		t.Fatal("r2 did not rejoin")
	}
	var sv wire.StartViewHeader
	sv.Decode(wire.HeaderOf(delayed))
	if sv.Op != 3 || sv.Incarnation.IsZero() {
		t.Fatalf("the delayed StartView has op %d incarnation %s, want an answer at op 3", sv.Op, sv.Incarnation)
	}
	commitEverywhere(t, c, 4, 5)
	r2.crash()
	r2.start(false) // a new incarnation, head 5
	if r2.group.Status() != StatusRecovering || r2.group.Op() != 5 {
		t.Fatalf("r2 restarted %v at op %d, want recovering at op 5", r2.group.Status(), r2.group.Op())
	}

	r2.group.Receive(0, delayed)
	if c.probes["stale StartView ignored"] != 1 {
		t.Fatalf("probe \"stale StartView ignored\" fired %d times, want once", c.probes["stale StartView ignored"])
	}
	if r2.group.Status() != StatusRecovering || r2.group.Op() != 5 {
		t.Fatalf("the stale StartView moved r2 to %v at op %d: below ops it acknowledged", r2.group.Status(), r2.group.Op())
	}
	c.settle()
	if !c.runUntil(200_000, func() bool { return r2.group.Status() == StatusNormal && r2.group.CommitMin() >= 5 }) {
		c.dump()
		t.Fatal("r2 did not rejoin with its own probe's answer")
	}
}

// TestTimeoutBackoffAndJitter: every timer fires after its base plus a
// jitter in U[0, period/2] drawn from the replica's own stream; only the
// prepare retransmit backs off, its period doubling per unanswered fire up to
// 2^4 times the base. Over many draws each interval stays in its bounds and
// the jitter reaches both ends of its range (the seeds are fixed, so this is
// deterministic: 3000 draws miss an end of 251 values with odds of 1e-5).
func TestTimeoutBackoffAndJitter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		base    int
		backoff bool
	}{
		{"prepare retransmit", 25, true},
		{"commit message", 50, false},
		{"normal heartbeat", 500, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const fires = 7
			lowest := make([]int, fires)
			highest := make([]int, fires)
			const seeds = 3000
			for seed := range uint64(seeds) {
				clock := &timerClock{stage: -1}
				tm := newTimeout(tc.name, tc.base, tc.backoff, rand.New(rand.NewPCG(seed, 1)), clock, 0)
				tick := func() bool { clock.now++; return tm.tick() }
				tm.start()
				for k := range fires {
					ticks := 1
					for !tick() {
						ticks++
						if ticks > 1000*tc.base {
							t.Fatalf("fire %d never came", k)
						}
					}
					period := tc.base
					if tc.backoff {
						period <<= min(k, 4)
					}
					if ticks < period || ticks > period+period/2 {
						t.Fatalf("seed %d fire %d after %d ticks, want within [%d, %d]", seed, k, ticks, period, period+period/2)
					}
					if seed == 0 || ticks < lowest[k] {
						lowest[k] = ticks
					}
					highest[k] = max(highest[k], ticks)
				}
				if tm.attempts != fires {
					t.Fatalf("%d attempts counted after %d fires", tm.attempts, fires)
				}
				// A restart (a commit, a heartbeat) forgets the backoff.
				tm.start()
				ticks := 1
				for !tick() {
					ticks++
				}
				if ticks > tc.base+tc.base/2 {
					t.Fatalf("after a restart it fired after %d ticks: the backoff was not forgotten", ticks)
				}
			}
			for k := range fires {
				period := tc.base
				if tc.backoff {
					period <<= min(k, 4)
				}
				if lowest[k] != period || highest[k] != period+period/2 {
					t.Fatalf("fire %d: intervals %d..%d over %d seeds, want the jitter to span %d..%d", k, lowest[k], highest[k], seeds, period, period+period/2)
				}
			}
		})
	}
}

// TestPrepareRetransmitBacksOffPerBackup: an unacknowledged prepare goes
// again from the primary straight to each backup that has not acknowledged
// it (DEVIATIONS.md 4), at the backoff's intervals, and never to one that
// has. Five replicas: r1 acknowledges op 1, r2..r4's acknowledgements are
// lost, so op 1 (q_rep 3) stays uncommitted and keeps being resent.
func TestPrepareRetransmitBacksOffPerBackup(t *testing.T) {
	c := newCluster(t, 5, 34)
	r0 := c.replicas[0]
	c.drop = func(m message) bool {
		return m.from >= 2 && wire.HeaderOf(m.frame).Command() == wire.CommandPrepareOk
	}
	tick := 0
	resent := map[uint8][]int{} // per backup, the ticks at which r0 sent it op 1
	c.observe = func(m message) {
		if m.from == 0 && wire.HeaderOf(m.frame).Command() == wire.CommandPrepare {
			resent[m.to] = append(resent[m.to], tick)
		}
	}
	proposeAt(t, r0, 1)
	c.settle()
	base := testConfig(0, 5).Timeouts.PrepareRetransmitTicks
	// Five fires take at most 1.5 * (1+2+4+8+16) * base = 1162 ticks.
	ticks := 60 * base
	for tick = 1; tick <= ticks; tick++ {
		c.tick(0, 1)
	}
	if r0.group.CommitMax() != 0 {
		t.Fatal("op 1 committed without a replication quorum")
	}
	if got := resent[1]; len(got) != 1 || got[0] != 0 {
		t.Fatalf("r1 acknowledged op 1 but r0 sent it op 1 at ticks %v, want only the first send at tick 0", got)
	}
	for to := uint8(2); to <= 4; to++ {
		// The first transmission goes along the chain (r0 to r1 only); every
		// send from r0 to r2..r4 is a retransmission.
		retries := resent[to]
		if len(retries) < 5 {
			t.Fatalf("r%d got %d retransmissions in %d ticks, want at least 5", to, len(retries), ticks)
		}
		prev := 0
		for k, at := range retries {
			period := base << min(k, 4)
			if gap := at - prev; gap < period || gap > period+period/2 {
				t.Fatalf("retransmission %d to r%d after %d ticks, want within [%d, %d] (sends at %v)", k, to, gap, period, period+period/2, retries)
			}
			prev = at
		}
	}
}

// TestViewChangeMissedStartViewProbes: a replica whose StartView was lost
// stays in view change for a view that has started. When the primary of
// that view reaches it (a heartbeat, then a prepare) it asks for the
// StartView at once and acknowledges, instead of waiting out its view
// change timeout and starting the next view (VOPR seed 38 at 34f80c2: an
// old primary sat in view change for 6.4 s while serving stale prepares).
func TestViewChangeMissedStartViewProbes(t *testing.T) {
	c := newCluster(t, 3, 41)
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	proposeAt(t, r0, 1)
	c.settle()
	if !c.runUntil(100_000, func() bool { return c.committedEverywhere(1) }) {
		c.dump()
		t.Fatal("op 1 did not commit")
	}
	// The primary goes quiet; the StartView of view 1 never reaches r2.
	c.isolate(0)
	c.drop = func(m message) bool {
		return m.to == 2 && wire.HeaderOf(m.frame).Command() == wire.CommandStartView
	}
	if !c.runUntil(400_000, func() bool {
		return r1.group.IsPrimary() && r1.group.View() == 1 && r1.group.stateDurable() && !r1.group.vc.startViewPending &&
			r2.group.Status() == StatusViewChange && r2.group.View() == 1
	}) {
		c.dump()
		t.Fatalf("no view 1 with r2 left in view change (probes %v)", c.probes)
	}
	c.settle()
	c.drop = nil
	if r2.group.Status() != StatusViewChange {
		t.Fatalf("r2 is %v before the primary reached it", r2.group.Status())
	}
	proposeAt(t, r1, 2)
	c.settle()
	c.tickAll(30) // heartbeats, the probe and retransmissions: far short of a view change timeout
	if r2.group.Status() != StatusNormal || r2.group.View() != 1 || r1.group.CommitMax() < 2 {
		c.dump()
		t.Fatalf("r2 %v in view %d, commit_max %d at the primary: the missed StartView was not asked for (probes %v)",
			r2.group.Status(), r2.group.View(), r1.group.CommitMax(), c.probes)
	}
	if c.probes["view started without us: StartView requested"] == 0 {
		t.Fatalf("no probe (probes %v)", c.probes)
	}
}
