package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestPrimaryDoesNotServeFramesAnInstallSkipped scripts the path behind VOPR
// seed 191 (-evicted-ring 1 -flush-messages 1): a primary's journal still
// holds prepares of an old view at ops its install skipped (they were never
// applied from the journal, and are not the committed ones), and its
// backups take the primary's frames of committed ops unchecked. r0 commits
// ops 1..3 with r1 and r2, then holds stale prepares at ops 4 and 5 and
// installs a state at op 6 whose op 6 its journal lacks: asked for ops 4..6
// it serves none of them and answers RangeEvicted at op 7, while ops 1..3,
// which chain down from what it applied, are still served.
func TestPrimaryDoesNotServeFramesAnInstallSkipped(t *testing.T) {
	c := newCluster(t, 3, 31)
	r0 := c.replicas[0]
	for req := uint64(1); req <= 3; req++ {
		proposeAt(t, r0, req)
		c.settle()
	}
	c.tick(0, 80)
	if r0.group.CommitMin() < 3 || !r0.group.IsPrimary() {
		c.dump()
		t.Fatalf("r0: commit_min %d, primary %v", r0.group.CommitMin(), r0.group.IsPrimary())
	}
	// Stale prepares at ops 4 and 5, chained to op 3 as an old view's were.
	parent := c.canon[3]
	for op := uint64(4); op <= 5; op++ {
		x := wire.PrepareHeader{Prefix: wire.Prefix{Cluster: r0.group.cfg.Cluster, Replica: 0, Command: wire.CommandPrepare}, Op: op, Parent: parent, Group: r0.group.cfg.Group,
			Commit: 3, Timestamp: 1 << 40, Operation: wire.OperationCreateStream, Request: 100 + op, Client: wire.U128From64(7)}
		f := wire.BuildFrame(&x, []byte{byte(op)})
		r0.journal.frames[op] = f
		parent = wire.HeaderOf(f).Checksum()
	}
	installed := false
	r0.group.Install(CheckpointRef{Op: 6, Identity: wire.U128From64(66), Timestamp: 1 << 41}, wire.U128From64(66), func() {}, func(ok bool) {
		installed = ok
	})
	c.settle()
	if !installed || r0.group.CommitMin() != 6 || !r0.group.IsPrimary() {
		t.Fatalf("install: %v, commit_min %d, primary %v", installed, r0.group.CommitMin(), r0.group.IsPrimary())
	}
	var served []uint64
	evictedAt := uint64(0)
	c.observe = func(m message) {
		if m.from != 0 || m.to != 1 {
			return
		}
		h := wire.HeaderOf(m.frame)
		switch h.Command() {
		case wire.CommandRepairPrepare:
			var x wire.PrepareHeader
			x.Decode(h)
			served = append(served, x.Op)
		case wire.CommandRangeEvicted:
			var x wire.RepairRangeHeader
			x.Decode(h)
			evictedAt = x.Op
		}
	}
	ask := func(from, to uint64) {
		served, evictedAt = nil, 0
		req := wire.RequestPreparesHeader{Prefix: wire.Prefix{Cluster: r0.group.cfg.Cluster, Replica: 1}, Nonce: wire.U128From64(from),
			FromOp: from, ToOp: to, Group: r0.group.cfg.Group}
		r0.group.Receive(1, wire.BuildFrame(&req, nil))
	}
	ask(4, 6)
	if len(served) != 0 || evictedAt != 7 {
		t.Fatalf("asked for ops 4..6: served %v, RangeEvicted at %d; want nothing served and RangeEvicted at 7", served, evictedAt)
	}
	if c.probes["repair: the primary cannot vouch for ops an install skipped"] == 0 {
		t.Fatalf("probe never fired (probes %v)", c.probes)
	}
	// Below the install the journal's frames are what r0 applied, but the
	// install's identity does not chain down to them: r0 vouches for none.
	ask(1, 3)
	if len(served) != 0 || evictedAt != 7 {
		t.Fatalf("asked for ops 1..3: served %v, RangeEvicted at %d", served, evictedAt)
	}
}

// TestChainDownVouchesForTheAppliedChain: the frames a replica applied
// chain down from its applied identity, so a primary still serves them.
func TestChainDownVouchesForTheAppliedChain(t *testing.T) {
	c := newCluster(t, 3, 32)
	r0 := c.replicas[0]
	for req := uint64(1); req <= 4; req++ {
		proposeAt(t, r0, req)
		c.settle()
	}
	c.tick(0, 80)
	g := r0.group
	if g.CommitMin() < 4 {
		t.Fatalf("commit_min %d", g.CommitMin())
	}
	if from := g.chainDown(g.CommitMin(), g.appliedIdentity); from != 1 {
		t.Fatalf("chainDown from op %d: %d, want 1", g.CommitMin(), from)
	}
	if from := g.chainDown(4, wire.U128From64(5)); from != 5 {
		t.Fatalf("chainDown with another identity: %d, want 5", from)
	}
	for op := uint64(1); op <= 4; op++ {
		if _, ok := g.servable(op); !ok {
			t.Fatalf("op %d not servable", op)
		}
	}
}

// TestViewChangeStartsWithoutTheAppliedHeadsHeader scripts the stall behind
// VOPR seed 3562540142 -long: in a memory-journal group every replica has
// applied the head op, and no journal holds its prepare any more (a state
// transfer installed it, or a flush purged it), so no DoViewChange reports
// the head's header. The new primary applied the head and knows its
// identity: the view starts without the header instead of waiting for one
// nobody can send.
func TestViewChangeStartsWithoutTheAppliedHeadsHeader(t *testing.T) {
	c := newTunedCluster(t, 3, 33, func(cfg *Config) { cfg.MemoryJournal = true })
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	for req := uint64(1); req <= 3; req++ {
		proposeAt(t, r0, req)
		c.settle()
	}
	c.tick(0, 80)
	c.settle()
	for _, r := range c.replicas {
		if r.group.CommitMin() != 3 {
			c.dump()
			t.Fatalf("replica %d: commit_min %d, want 3", r.id, r.group.CommitMin())
		}
		for op := uint64(1); op <= 3; op++ {
			delete(r.journal.frames, op)
			delete(r.journal.durable, op)
		}
		r.journal.evicted = 3
	}
	c.isolate(0)
	ok := c.runUntil(400_000, func() bool {
		return r1.group.Status() == StatusNormal && r1.group.View() > 0 && r1.group.IsPrimary() &&
			r2.group.Status() == StatusNormal && r2.group.View() == r1.group.View()
	})
	if !ok {
		c.dump()
		t.Fatalf("no view started without r0: r1 %v view %d, r2 %v view %d (probes %v)",
			r1.group.Status(), r1.group.View(), r2.group.Status(), r2.group.View(), c.probes)
	}
	if c.probes["view change: the head is applied here, its header is not needed"] == 0 {
		t.Fatalf("the view started some other way (probes %v)", c.probes)
	}
	if r1.group.Op() != 3 || r1.group.CommitMin() != 3 {
		t.Fatalf("r1: op %d commit_min %d, want 3 and 3", r1.group.Op(), r1.group.CommitMin())
	}
}

// TestRestartBelowAnUnreadableCheckpointKeepsItsOpInTheHead scripts the
// path behind VOPR seed 3729636 -long: a replica whose superblock records
// checkpoint op 4 (installed by a state transfer: its journal never held
// ops 3 and 4) restarts unable to read the checkpoint. Its head stays at
// op 4 (committed, and in the log it went Normal with), so its vote's log
// of its log_view does not end below it: a vote ending at op 2 would imply
// a nack of committed ops ("log_view without its log").
func TestRestartBelowAnUnreadableCheckpointKeepsItsOpInTheHead(t *testing.T) {
	c := newCluster(t, 3, 34)
	r0, r2 := c.replicas[0], c.replicas[2]
	for req := uint64(1); req <= 4; req++ {
		proposeAt(t, r0, req)
		c.settle()
	}
	c.tick(0, 80)
	c.settle()
	if r2.group.CommitMin() != 4 {
		c.dump()
		t.Fatalf("r2: commit_min %d, want 4", r2.group.CommitMin())
	}
	r2.group.Checkpoint(4, wire.U128From64(44), func() {})
	c.settle()
	if r2.journal.durableState.CheckpointOp != 4 {
		t.Fatalf("r2's superblock records checkpoint %d, want 4", r2.journal.durableState.CheckpointOp)
	}
	for op := uint64(3); op <= 4; op++ {
		delete(r2.journal.durable, op)
		delete(r2.journal.frames, op)
	}
	r2.crash()
	r2.start(false) // the harness restores no checkpoint: it reads as unreadable
	if got := r2.group.Op(); got != 4 {
		t.Fatalf("r2 restarted with head op %d below its recorded checkpoint 4", got)
	}
	v := r2.group.buildVote()
	if v.op != 4 || v.commit != 4 || !v.nack.IsZero() {
		t.Fatalf("r2's vote: op %d commit %d nacks %v; want head 4, commit 4, no nack", v.op, v.commit, v.nack)
	}
}
