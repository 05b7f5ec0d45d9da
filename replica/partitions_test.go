package replica

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// applyMetadata applies a client's metadata request to the replica's state
// as a commit would (projected first, as a primary does), and reconciles
// its partition groups.
func applyMetadata(t *testing.T, g *forwardRig, op uint64, operation wire.Operation, body []byte) {
	t.Helper()
	applyMetadataNow(t, g, op, operation, body)
	for g.loop.Step() {
	}
}

// applyMetadataNow is applyMetadata without running the I/O it starts.
func applyMetadataNow(t *testing.T, g *forwardRig, op uint64, operation wire.Operation, body []byte) {
	t.Helper()
	proj, refusal := metadata.Project(operation, body, g.r.alloc)
	if refusal.Refused() {
		t.Fatalf("%v refused: %+v", operation, refusal)
	}
	for _, p := range g.r.state.Partitions() {
		g.r.alloc.Observe(p.Group)
	}
	g.r.state.Apply(wire.PrepareHeader{Op: op, Timestamp: 1000 + op, Operation: proj.Operation}, proj.Body)
	if metadata.ChangesPartitions(proj.Operation) {
		g.r.parts.reconcile()
	}
}

// writeSlot makes slot hold group's superblock record (state, held) before
// any group is built, as a replica that ran it before its restart left it.
func writeSlot(t *testing.T, g *forwardRig, slot int, group uint64, state wire.VsrState, held bool) {
	t.Helper()
	done := false
	g.r.parts.store.Recover(slot, group)
	g.r.parts.store.Write(slot, group, state, held, func() { done = true })
	for g.loop.Step() {
	}
	if !done {
		t.Fatal("the setup's state write did not complete")
	}
}

// TestGroupsOfOneCommitDoNotTakeEachOthersSlot scripts VOPR seed
// 2345597566921490960 (one replica, restarted 88 times): replaying its
// log, the replica rebuilt the groups one CreateTopic minted in id order,
// and the first took the slot that held the second's superblock (the
// second was not built yet, so its record looked like a dead group's);
// the second then found its own slot with the first's write in flight.
// A slot holding the record of any group the state has is taken.
func TestGroupsOfOneCommitDoNotTakeEachOthersSlot(t *testing.T) {
	g := openFresh(t, 0)
	applyMetadata(t, g, 1, wire.OperationCreateStream, metadata.CreateStream{Name: "s"}.Encode())
	// Before the crash, group 2 (the second partition of the topic below)
	// kept its state in slot 0; group 1 never wrote one.
	writeSlot(t, g, 0, 2, wire.VsrState{View: 7, LogView: 7}, false)
	applyMetadata(t, g, 2, wire.OperationCreateTopic, metadata.CreateTopic{Stream: metadata.Named("s"), PartitionsCount: 2,
		Name: "t"}.Encode())
	ids := g.r.PartitionGroups()
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Fatalf("groups %v, want [1 2]", ids)
	}
	one, two := g.r.parts.groups[1], g.r.parts.groups[2]
	if two.slot != 0 || one.slot == 0 {
		t.Fatalf("group 1 in slot %d, group 2 in slot %d: want group 2 in its own slot 0", one.slot, two.slot)
	}
	if v := two.group.View(); v < 7 {
		t.Fatalf("group 2 starts in view %d, below the view 7 its superblock holds", v)
	}
}

// TestHeldSurvivesTheStateWritesAfterARestart scripts VOPR seed 598: a
// group that had held prepares restarts (amnesiac), writes a state before it
// holds a prepare again (a view change), and restarts once more. The record
// must still say it held prepares: otherwise the second restart rebuilds it
// as a group that lost nothing, and its empty vote under its log_view
// truncates committed ops (the merge panicked: committed ops lost).
func TestHeldSurvivesTheStateWritesAfterARestart(t *testing.T) {
	g := openFresh(t, 1)
	applyMetadata(t, g, 1, wire.OperationCreateStream, metadata.CreateStream{Name: "s"}.Encode())
	writeSlot(t, g, 0, 1, wire.VsrState{View: 3, LogView: 3, CommitMax: 2}, true)
	applyMetadata(t, g, 2, wire.OperationCreateTopic, metadata.CreateTopic{Stream: metadata.Named("s"), PartitionsCount: 1,
		Name: "t"}.Encode())
	pg := g.r.parts.groups[1]
	if pg == nil || pg.slot != 0 || !pg.group.Amnesiac() {
		t.Fatal("the group was not rebuilt from its slot, amnesiac")
	}
	wrote := false
	pg.journal.WriteState(wire.VsrState{View: 4, LogView: 3, CommitMax: 2}, func() { wrote = true })
	for g.loop.Step() {
	}
	if !wrote {
		t.Fatal("the group's state write did not complete")
	}
	if state, held, ok := g.r.parts.store.Recover(0, 1); !ok || state.View != 4 || !held {
		t.Fatalf("after the state write the record holds view %d, held %v (ok %v): want view 4, held", state.View, held, ok)
	}
}

// TestReconcileOfAHeldLogWaitsForHeld scripts VOPR seed 358: a restarted
// group whose superblock already held log_view 1 (it had joined view 1 with
// an empty log, so it never recorded held) adopts view 1's log of two ops
// by a StartView and goes Normal; it crashed 2 ms later, before the state
// write recording held was durable, and after the restart voted log_view 1
// with an empty log as a group that lost nothing. A reconcile of a non-empty
// log completes only once held is durable, so the group is never Normal in a
// log_view with ops that a crash would let it vote without.
func TestReconcileOfAHeldLogWaitsForHeld(t *testing.T) {
	g := openFresh(t, 0)
	applyMetadata(t, g, 1, wire.OperationCreateStream, metadata.CreateStream{Name: "s"}.Encode())
	writeSlot(t, g, 0, 1, wire.VsrState{View: 1, LogView: 1}, false)
	applyMetadata(t, g, 2, wire.OperationCreateTopic, metadata.CreateTopic{Stream: metadata.Named("s"), PartitionsCount: 1,
		Name: "t"}.Encode())
	pg := g.r.parts.groups[1]
	if pg == nil || pg.slot != 0 || pg.group.Amnesiac() {
		t.Fatal("the group was not rebuilt from its slot as one that never held a prepare")
	}
	reconciled, heldAtDone := false, false
	pg.journal.Reconcile(2, nil, func() {
		reconciled = true
		_, heldAtDone, _ = g.r.parts.store.Recover(0, 1)
	})
	g.r.parts.drain()
	for g.loop.Step() {
	}
	if !reconciled {
		t.Fatal("the reconcile never completed")
	}
	if !heldAtDone {
		t.Fatal("the reconcile of a log with two ops completed before held was durable")
	}
}

// TestANewGroupWaitsOutAnOffsetWriteToItsSlot scripts VOPR seed 9100784
// (one replica, found by this stop's first campaign with checkpoints,
// whose I/O moved the timing): a topic was deleted while a consumer offset
// record of its group was still being written, and the next CreateTopic's
// group took the freed slot and recovered its offset records with that
// write in flight (the offset store panicked). A slot with an offset write
// queued or in flight is not free.
func TestANewGroupWaitsOutAnOffsetWriteToItsSlot(t *testing.T) {
	g := openFresh(t, 0)
	applyMetadata(t, g, 1, wire.OperationCreateStream, metadata.CreateStream{Name: "s"}.Encode())
	applyMetadata(t, g, 2, wire.OperationCreateTopic, metadata.CreateTopic{Stream: metadata.Named("s"), PartitionsCount: 1, Name: "a"}.Encode())
	first := g.r.parts.groups[1]
	if first == nil || first.slot != 0 {
		t.Fatal("the first topic's group is not in slot 0")
	}
	if !g.r.parts.offsets.Write(0, 1, 7, 42, false, func() {}) {
		t.Fatal("the offset write was refused")
	}
	applyMetadataNow(t, g, 3, wire.OperationDeleteTopic, metadata.DeleteTopic{Stream: metadata.Named("s"), Topic: metadata.Named("a")}.Encode())
	applyMetadataNow(t, g, 4, wire.OperationCreateTopic, metadata.CreateTopic{Stream: metadata.Named("s"), PartitionsCount: 1, Name: "b"}.Encode())
	second := g.r.parts.groups[2]
	if second == nil || second.slot == 0 {
		t.Fatal("the second topic's group took slot 0 with an offset write to it in flight")
	}
	for g.loop.Step() {
	}
}
