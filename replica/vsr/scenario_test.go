package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

func proposeAt(t *testing.T, r *replica, request uint64) {
	t.Helper()
	if res := r.group.Propose(Proposal{Client: wire.U128From64(9), Request: request,
		Operation: wire.OperationCreateStream, Body: []byte{byte(request)}}); res != Proposed {
		t.Fatalf("replica %d refused request %d (status %v, primary %v)", r.id, request, r.group.Status(), r.group.IsPrimary())
	}
}

// TestStaleHeadersDoNotSurviveAMerge scripts the interleaving behind seed 149
// of TestRandomClusters: a replica holds an op of an old view that the
// cluster later truncated and replaced, far below the window of the view
// change that makes it primary. Its old view's headers must not survive the
// merge, or it applies its stale op.
func TestStaleHeadersDoNotSurviveAMerge(t *testing.T) {
	c := newCluster(t, 3, 1)
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]

	// View 0: op 1 committed everywhere.
	proposeAt(t, r0, 1)
	c.settle()
	c.tick(0, 80) // a heartbeat tells the backups
	if !c.committedEverywhere(1) {
		t.Fatal("op 1 not committed everywhere")
	}

	// Op 2 (call it A) reaches only r2, by retransmission, and r0's own
	// journal never makes it durable: r0 then crashes and loses it.
	c.block(link{0, 1}, link{2, 0})
	proposeAt(t, r0, 2)
	c.settleExcept(0)
	c.tickHolding(0, 200, 0) // the prepare timeout resends A directly to r2
	c.settleExcept(0)
	if r2.group.Op() != 2 {
		t.Fatalf("r2 did not journal A (op %d)", r2.group.Op())
	}
	f, _ := r2.journal.Frame(2)
	a := wire.HeaderOf(f).Checksum()
	r0.crash()
	c.unblockAll()

	// Without r2, r0 and r1 move on: a new view truncates A (both nack it)
	// and commits ops 2..6 (B2..B6).
	c.isolate(2)
	r0.start(false)
	if !c.runUntil(200000, func() bool { p := c.primary(); return p != nil && p != r2 && p.group.View() > 0 }) {
		c.dump()
		t.Fatal("no new primary among r0 and r1")
	}
	p := c.primary()
	for req := uint64(2); req <= 6; req++ {
		if !c.runUntil(200000, func() bool { return p.group.IsPrimary() && p.group.stateDurable() && p.group.PipelineLen() < 4 }) {
			t.Fatal("pipeline full")
		}
		proposeAt(t, p, 10+req)
		c.settle()
	}
	if !c.runUntil(200000, func() bool { return r0.group.CommitMin() >= 6 && r1.group.CommitMin() >= 6 }) {
		c.dump()
		t.Fatal("ops 2..6 not committed on r0 and r1")
	}

	// Meanwhile r2, alone, times out again and again and climbs the views.
	// It comes back in a view change for a view it is primary of, so it
	// merges with its old log (log_view 0, op 2 = A) against a canonical
	// log whose window starts at op 6: it must repair op 2, not apply A.
	if !c.runUntil(2000000, func() bool {
		v := r2.group.View()
		return r2.group.Status() == StatusViewChange && v%3 == 2 && v > r0.group.View() && v > r1.group.View()
	}) {
		c.dump()
		t.Fatal("r2 did not reach a view it leads")
	}
	c.unblockAll()
	if !c.runUntil(400000, func() bool { return r2.group.IsPrimary() }) {
		c.dump()
		t.Fatal("r2 never became primary")
	}
	if !c.runUntil(400000, func() bool { return r2.group.CommitMin() >= 6 }) {
		c.dump()
		t.Fatal("r2 did not catch up")
	}
	// The harness checker compared every commit of r2 with r0's and r1's;
	// A must not be what the cluster committed at op 2.
	if c.canon[2] == a {
		t.Fatal("A was committed: the scenario did not replace it")
	}
}

// TestLostPrepareOkIsResent scripts what seeds 7 and 12 of the cluster
// runs hit: a backup's PrepareOk is lost; the primary retransmits the
// prepare, and the backup, which already holds it, must acknowledge it again
// (it used to skip ops it had acknowledged once, and a two-replica group,
// which needs both, stalled forever).
func TestLostPrepareOkIsResent(t *testing.T) {
	c := newCluster(t, 2, 3)
	r0 := c.replicas[0]
	dropped := 0
	c.drop = func(m message) bool {
		if m.from == 1 && wire.HeaderOf(m.frame).Command() == wire.CommandPrepareOk && dropped == 0 {
			dropped++
			return true
		}
		return false
	}
	proposeAt(t, r0, 1)
	c.settle()
	if dropped != 1 || r0.group.CommitMax() != 0 {
		t.Fatalf("the ack was not dropped (dropped %d, commit %d)", dropped, r0.group.CommitMax())
	}
	c.tick(0, 100) // the prepare timeout retransmits
	if r0.group.CommitMax() != 1 {
		t.Fatal("op 1 did not commit after the retransmission: the backup did not re-ack")
	}
}

// TestQueuedProposalOwnsItsBody scripts what the first VOPR campaign found
// (swarm seeds 1, 4, 5, 8 and 9 at 87dba21): a proposal queued behind a
// full pipeline kept the caller's body slice, a network receive buffer the
// network reuses, so the prepare built later carried whatever the buffer
// held by then.
func TestQueuedProposalOwnsItsBody(t *testing.T) {
	c := newCluster(t, 1, 5)
	r := c.replicas[0]
	bodies := [][]byte{}
	for i := range 6 { // a pipeline of 4, then two queued
		body := []byte{byte(i), byte(i), byte(i)}
		res := r.group.Propose(Proposal{Client: wire.U128From64(3), Request: uint64(i + 1), Body: body})
		if res == Refused {
			t.Fatalf("proposal %d refused", i)
		}
		bodies = append(bodies, append([]byte(nil), body...))
		clear(body) // the caller reuses its buffer
	}
	c.settle()
	for op := uint64(1); op <= 6; op++ {
		f, ok := r.journal.Frame(op)
		if !ok {
			t.Fatalf("op %d not journaled", op)
		}
		if got := f[wire.HeaderSize:]; string(got) != string(bodies[op-1]) {
			t.Fatalf("op %d body %x, proposed %x", op, got, bodies[op-1])
		}
	}
}

// TestRepairFromBackupsWhenThePrimaryCannotVouch scripts swarm seed 214 (at
// 87dba21): every replica restarted and must replay the log, each missing a
// different op. The primary serves only ops it can vouch for, so a backup
// that asked only the primary waited forever; it must ask the others too
// and check their frames by the hash chain.
func TestRepairFromBackupsWhenThePrimaryCannotVouch(t *testing.T) {
	c := newCluster(t, 3, 6)
	r0 := c.replicas[0]
	for req := uint64(1); req <= 6; req++ {
		proposeAt(t, r0, req)
		c.settle()
	}
	c.tick(0, 80)
	if !c.committedEverywhere(6) {
		t.Fatal("ops 1..6 not committed everywhere")
	}
	for i, r := range c.replicas {
		r.crash()
		// Each replica loses a different op it had made durable, and its
		// superblock knows ops up to 6 committed, so the view change's
		// headers start at op 6 and the rest must come down the chain.
		lost := uint64(2 + i)
		delete(r.journal.durable, lost)
		r.journal.durableState.CommitMax = 6
	}
	for _, r := range c.replicas {
		r.start(false)
	}
	if !c.runUntil(500000, func() bool { return c.committedEverywhere(6) }) {
		c.dump()
		t.Fatalf("the replicas did not replay the log (probes %v)", c.probes)
	}
}

// TestSingleReplicaRestartStartsANewView scripts VOPR seed 1045 (at
// 275df09): a single replica prepared op 2, crashed before the write was
// durable, restarted in the same view and prepared a different op 2, so one
// (view, op) had two prepares. A restarted single replica begins a new view.
func TestSingleReplicaRestartStartsANewView(t *testing.T) {
	c := newCluster(t, 1, 11)
	r := c.replicas[0]
	proposeAt(t, r, 1)
	c.settle()
	if r.group.CommitMin() != 1 {
		t.Fatalf("op 1 did not commit (commit_min %d)", r.group.CommitMin())
	}
	if res := r.group.Propose(Proposal{Client: wire.U128From64(9), Request: 1, Body: []byte("lost")}); res != Proposed {
		t.Fatalf("proposal refused: %v", res)
	}
	r.crash() // op 2's write never completes
	r.start(false)
	if r.group.View() != 1 || r.group.LogView() != 1 || r.group.Op() != 1 {
		t.Fatalf("restarted in view %d log_view %d op %d, want view 1 log_view 1 op 1",
			r.group.View(), r.group.LogView(), r.group.Op())
	}
	if res := r.group.Propose(Proposal{Client: wire.U128From64(9), Request: 1, Body: []byte("other")}); res != Refused {
		t.Fatal("the new view was proposed into before it was durable")
	}
	c.settle()
	if res := r.group.Propose(Proposal{Client: wire.U128From64(9), Request: 1, Body: []byte("other")}); res != Proposed {
		t.Fatalf("proposal refused after the view became durable: %v", res)
	}
	c.settle() // the harness fails on a second prepare for (view, op)
	if r.group.CommitMin() != 2 {
		t.Fatalf("op 2 did not commit in the new view (commit_min %d)", r.group.CommitMin())
	}
}

// TestSingleReplicaForgetsOpsAboveAHole scripts VOPR seed 15 with
// -crash-io-factor=100 (at 4686bdb): a single replica crashed with three
// writes in flight; the first and third were durable, the second lost. It
// panicked replaying its own log ("lost op 2 of 3"). Nothing above the hole
// was committed (an op commits only with every op below it durable), so the
// replica forgets it and prepares over it in its new view.
func TestSingleReplicaForgetsOpsAboveAHole(t *testing.T) {
	c := newCluster(t, 1, 12)
	r := c.replicas[0]
	c.settle()
	for req := uint64(1); req <= 3; req++ {
		proposeAt(t, r, req)
	}
	if len(c.later) != 3 {
		t.Fatalf("%d completions pending, want the 3 appends", len(c.later))
	}
	first, third := c.later[0], c.later[2]
	c.later = nil
	first.fn()
	third.fn() // op 2's write is lost in the crash
	if r.group.CommitMin() != 1 {
		t.Fatalf("commit_min %d before the crash, want 1", r.group.CommitMin())
	}
	r.crash()
	r.start(false)
	if r.group.Op() != 1 || r.group.CommitMin() != 1 || c.probes["single replica forgot ops above a hole in its log"] != 1 {
		t.Fatalf("restarted at op %d commit_min %d (probes %v), want op 1 commit_min 1 with the hole forgotten",
			r.group.Op(), r.group.CommitMin(), c.probes)
	}
	c.settle()
	proposeAt(t, r, 4)
	c.settle()
	if r.group.CommitMin() != 2 {
		t.Fatalf("commit_min %d, want op 2 committed in the new view", r.group.CommitMin())
	}
}

// TestHeaderOnlyOpIsNacked scripts VOPR seed 2267 (at 4686bdb): in a
// two-replica group the primary prepared op 2 while its backup was down;
// the backup restarted and learned op 2's header from the primary's
// StartView but never its body; then the primary crashed with op 2's write
// torn. In the view change nobody has op 2's body and the primary cannot
// say whether it acknowledged it, so only the backup can prove op 2 was
// never committed: it never acknowledged it. It must nack it, with its
// header, or the view change waits forever for a body nobody has.
func TestHeaderOnlyOpIsNacked(t *testing.T) {
	c := newCluster(t, 2, 13)
	r0, r1 := c.replicas[0], c.replicas[1]
	proposeAt(t, r0, 1)
	if !c.runUntil(20_000, func() bool { return c.committedEverywhere(1) }) {
		t.Fatal("op 1 did not commit")
	}
	r1.crash()
	pending := len(c.later)
	proposeAt(t, r0, 2)
	c.later = c.later[:pending]     // op 2's write at the primary never completes
	c.drop = func(m message) bool { // the backup never gets op 2's body
		return m.to == 1 && wire.HeaderOf(m.frame).Command().IsPrepare()
	}
	r1.start(false)
	if !c.runUntil(20_000, func() bool { return r1.group.Status() == StatusNormal && r1.group.Op() == 2 }) {
		t.Fatalf("the backup did not learn op 2 (status %v op %d)", r1.group.Status(), r1.group.Op())
	}
	if k := r1.journal.Knowledge(2); k != KnowledgeHeaderNever {
		t.Fatalf("the backup's op 2 is %v, want known by header and never acknowledged", k)
	}
	r0.crash()
	r0.journal.faulty[2] = true // its write of op 2 tore
	r0.start(false)
	c.drop = nil
	if !c.runUntil(50_000, func() bool { return c.primary() != nil && c.primary().group.View() > 0 }) {
		c.dump()
		t.Fatalf("no view change completed: probes %v", c.probes)
	}
	if c.probes["view change truncated an op on a nack quorum"] == 0 {
		t.Fatal("op 2 was not truncated on the backup's nack")
	}
	// The group goes on: a new op 2 commits (retried across any further
	// view change, which may drop an uncommitted proposal).
	for attempt := 0; !c.committedEverywhere(2); attempt++ {
		if attempt == 10 {
			c.dump()
			t.Fatal("the new op 2 did not commit")
		}
		c.propose(1, 20_000)
		c.runUntil(20_000, func() bool { return c.committedEverywhere(2) })
	}
}
