package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestHeadlessStartViewIsCaughtUpOn scripts VOPR seed 3965681371 (two
// replicas, a partition group, -evicted-ring 1): ops 1..3 commit on r0 and
// r1, and r1 flushes and evicts them from its memory journal, so it holds
// no header of its log. r0, the primary of view 0, restarts amnesiac; r1
// starts view 1 at op 3 with commit 3 and its StartView carries no headers.
// Asking for a full StartView only got the same answer again: r0 probed,
// elected and went Recovering for the whole liveness phase. Every op of
// that log is committed, so r0 catches up on them instead (its repair meets
// RangeEvicted and a state transfer installs op 3) and adopts view 1 only
// once it has applied op 3: it never goes Normal in a log_view whose log it
// does not hold.
func TestHeadlessStartViewIsCaughtUpOn(t *testing.T) {
	c := newTunedCluster(t, 2, 64, func(cfg *Config) { cfg.MemoryJournal = true })
	c.plane = func(r *replica) Plane { return &testPlane{r: r} }
	for _, r := range c.replicas {
		r.start(true)
	}
	r0, r1 := c.replicas[0], c.replicas[1]
	for req := uint64(1); req <= 3; req++ {
		proposeAt(t, r0, req)
		c.settle()
	}
	c.tick(0, 80)
	if r0.group.CommitMin() != 3 || r1.group.CommitMin() != 3 {
		t.Fatalf("setup: r0 commit %d, r1 commit %d", r0.group.CommitMin(), r1.group.CommitMin())
	}
	var head wire.PrepareHeader
	head.Decode(&r1.committed[2])
	// r1 flushed ops 1..3 to its segment log and evicted them, as a
	// MemJournal.Purge does: it keeps no frame, and retains from op 4.
	for op := uint64(1); op <= 3; op++ {
		delete(r1.journal.frames, op)
		delete(r1.journal.durable, op)
	}
	r1.journal.evicted = 3

	// The state transfer a RangeEvicted starts: r1's state at op 3, after
	// a fetch (a later step).
	transfers := 0
	c.stateTransfer = func(r *replica, peer uint8, retained uint64) {
		if r != r0 || peer != 1 {
			t.Fatalf("replica %d asked replica %d for a state transfer", r.id, peer)
		}
		transfers++
		r.defer_(func() {
			if r.group.StateTransferNeed() >= 3 {
				return
			}
			r.group.Install(CheckpointRef{Op: 3, Identity: head.Checksum, Timestamp: head.Timestamp}, head.Checksum,
				func() {}, func(bool) {})
		})
	}
	headless := 0
	c.observe = func(m message) {
		h := wire.HeaderOf(m.frame)
		if m.from != 1 || h.Command() != wire.CommandStartView {
			return
		}
		var x wire.StartViewHeader
		x.Decode(h)
		if len(m.frame) == wire.HeaderSize && x.Op == 3 && x.Commit == 3 {
			headless++
		}
	}
	r0.crash()
	r0.amnesiac = true
	r0.start(false)
	r0.amnesiac = false
	if !r0.group.Amnesiac() || r0.group.CommitMin() != 0 {
		t.Fatalf("r0 restarted amnesiac %v at commit %d, want amnesiac at commit 0", r0.group.Amnesiac(), r0.group.CommitMin())
	}

	ok := c.runUntil(400_000, func() bool {
		g := r0.group
		if g.Status() == StatusNormal && g.CommitMin() < g.Op() {
			c.dump()
			t.Fatalf("r0 went Normal in log_view %d at op %d having applied only op %d: a log it knows no header of",
				g.LogView(), g.Op(), g.CommitMin())
		}
		return c.primary() == r1 && g.Status() == StatusNormal && g.View() == r1.group.View() && g.CommitMin() >= 3 && !g.Amnesiac()
	})
	if !ok {
		c.dump()
		t.Fatalf("r0 never caught up on view %d's committed ops: %v in view %d at commit %d (probes %v)",
			r1.group.View(), r0.group.Status(), r0.group.View(), r0.group.CommitMin(), c.probes)
	}
	if headless == 0 {
		t.Fatal("r1 never sent a StartView without headers at op 3 commit 3: the test does not reach the path")
	}
	if transfers == 0 {
		t.Fatalf("r0 caught up without a state transfer (probes %v)", c.probes)
	}
	for _, probe := range []string{
		"StartView without headers, its ops committed: the replica catches up before adopting it",
		"repair answered with RangeEvicted",
		"StartView adopted after catching up",
	} {
		if c.probes[probe] == 0 {
			t.Fatalf("probe %q never fired (probes %v)", probe, c.probes)
		}
	}
	if n := c.probes["StartView without headers"]; n > 0 {
		t.Fatalf("r0 probed again %d times for a full StartView", n)
	}
}

// TestHeadlessStartViewOnTheMetadataPlane: the same path on a durable
// journal, where the primary still holds the ops. r2 is down while r0 and
// r1 commit ops 1..4; it restarts, its probes lost, and hears only a
// StartView without headers of view 0 at op 4 with commit 4 (as r0's
// answer to an older view's heartbeat is). It repairs ops 1..4 from r0,
// applies them, and only then goes Normal in view 0, its journal holding
// the log it adopted. Asking again for a full StartView (its probes lost)
// ended in an election instead.
func TestHeadlessStartViewOnTheMetadataPlane(t *testing.T) {
	c := newCluster(t, 3, 65)
	r0, r2 := c.replicas[0], c.replicas[2]
	r2.crash()
	for req := uint64(1); req <= 4; req++ {
		proposeAt(t, r0, req)
		c.settle()
	}
	c.tick(0, 80)
	if r0.group.CommitMin() != 4 || c.replicas[1].group.CommitMin() != 4 {
		t.Fatalf("setup: r0 commit %d, r1 commit %d", r0.group.CommitMin(), c.replicas[1].group.CommitMin())
	}
	c.drop = func(m message) bool {
		return m.from == 2 && wire.HeaderOf(m.frame).Command() == wire.CommandRequestStartView
	}
	r2.start(false)
	if r2.group.Status() != StatusRecovering || r2.group.CommitMin() != 0 {
		t.Fatalf("r2 restarted %v at commit %d", r2.group.Status(), r2.group.CommitMin())
	}
	sv := wire.StartViewHeader{Prefix: r0.group.prefix(), Op: 4, Commit: 4, Group: r0.group.cfg.Group}
	r2.group.Receive(0, wire.BuildFrame(&sv, nil))
	ok := c.runUntil(400_000, func() bool {
		g := r2.group
		if g.View() > 0 {
			c.dump()
			t.Fatalf("r2 moved to view %d: the StartView of view 0 was not caught up on (probes %v)", g.View(), c.probes)
		}
		if g.Status() == StatusNormal && g.CommitMin() < g.Op() {
			c.dump()
			t.Fatalf("r2 went Normal in log_view %d at op %d having applied only op %d: a log it knows no header of",
				g.LogView(), g.Op(), g.CommitMin())
		}
		return g.Status() == StatusNormal && g.CommitMin() >= 4
	})
	if !ok {
		c.dump()
		t.Fatalf("r2 never caught up: %v at commit %d (probes %v)", r2.group.Status(), r2.group.CommitMin(), c.probes)
	}
	if c.probes["StartView without headers, its ops committed: the replica catches up before adopting it"] == 0 ||
		c.probes["StartView adopted after catching up"] == 0 {
		t.Fatalf("r2 did not catch up on the StartView without headers (probes %v)", c.probes)
	}
	c.settle()
	for op := uint64(1); op <= 4; op++ {
		if f, ok := r2.journal.durable[op]; !ok || wire.HeaderOf(f).Checksum() != c.canon[op] {
			t.Fatalf("r2 does not hold the committed op %d durably", op)
		}
	}
}
