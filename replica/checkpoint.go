package replica

import (
	"fmt"

	"github.com/iggy-vopr/vopr/canary/bug"
	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/transfer"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// maybeCheckpoint takes a checkpoint of the metadata plane after op p was
// applied, if p is a multiple of the interval: the snapshot of the state
// and the client table as they are now, written to the checkpoint area the
// superblock does not name, then recorded in the superblock. The state is
// encoded at once, so it is the state at p whatever commits while the
// write is in flight. A checkpoint that comes due while the previous one is
// still being written waits for it (the newest such one only): the
// journal's ring reuses slots only below a durable checkpoint, so a
// skipped one would hold the ring back a whole interval.
func (r *Replica) maybeCheckpoint(p *wire.PrepareHeader) {
	interval := r.cfg.checkpointInterval()
	if p.Op%interval != 0 {
		return
	}
	// A single replica replays its log while its group is being built
	// (r.metadata is nil then), from above the checkpoint it restored: the
	// group records checkpoints, so such a one waits for the store's next
	// turn (a tick), as one that comes due during a write does. Skipping it
	// would leave the ring full of ops above the old checkpoint, and the
	// primary could prepare nothing more.
	if r.metadata != nil && p.Op <= r.metadata.CheckpointOp() {
		return // replaying below the checkpoint the superblock records
	}
	op := p.Op
	if bug.CheckpointAtCommitMax && r.metadata != nil && r.metadata.CommitMax() > op {
		op = r.metadata.CommitMax() // canary_checkpoint_at_commit_max: the state at commit_min, labelled commit_max
		r.probe("canary: a checkpoint labelled with commit_max")
	}
	meta := metadata.SnapshotMeta{CreatedAt: p.Timestamp, SequenceNumber: op, ClientTable: r.table.EncodeCheckpoint()}
	payload := r.state.EncodeSnapshot(meta)
	cp := transfer.Checkpoint{Op: op, Identity: p.Checksum, Timestamp: p.Timestamp, Payload: payload,
		Checksum: wire.SnapshotChecksum(payload)}
	// What a state transfer of this checkpoint carries of the client table:
	// the whole rings as they are at the checkpoint's op (client-ops.md 6.4).
	due := &dueCheckpoint{cp: cp, table: r.table.Encode()}
	if r.metadata == nil || r.checkpoints.Busy() {
		if r.dueCheckpoint != nil {
			r.probe("checkpoint superseded: a newer one came due while it waited")
		}
		r.probe("checkpoint waits: the previous one is still being written")
		r.dueCheckpoint = due
		return
	}
	r.writeCheckpoint(due)
}

// dueCheckpoint is a checkpoint encoded and waiting for the store.
type dueCheckpoint struct {
	cp    transfer.Checkpoint
	table []byte
}

// writeDueCheckpoint writes the checkpoint that waited, once the store is
// free (the replica's tick asks).
func (r *Replica) writeDueCheckpoint() {
	due := r.dueCheckpoint
	if due == nil || r.checkpoints.Busy() {
		return
	}
	r.dueCheckpoint = nil
	if due.cp.Op <= r.metadata.CheckpointOp() {
		return // an installed state moved the superblock past it
	}
	r.writeCheckpoint(due)
}

func (r *Replica) writeCheckpoint(due *dueCheckpoint) {
	cp := due.cp
	r.checkpoints.Write(cp, func(area int) {
		if cp.Op <= r.metadata.CheckpointOp() {
			r.checkpoints.Release() // an installed state moved the superblock past it
			return
		}
		r.metadata.Checkpoint(cp.Op, cp.Checksum, func() {
			r.adoptCheckpoint(cp, area, due.table)
			r.probe("checkpoint written")
			r.env.Sink.Event(Event{Kind: EventCheckpoint, Replica: r.cfg.Replica, Op: cp.Op, Frame: cp.Payload, Disk: DiskReport{ClientTable: due.table}})
		})
	})
}

// adoptCheckpoint: the superblock now names cp, in area: it is what this
// replica offers in a state transfer, and its journal no longer serves the
// ops it covers.
func (r *Replica) adoptCheckpoint(cp transfer.Checkpoint, area int, clientTable []byte) {
	r.checkpoints.Adopt(area)
	r.offer = transfer.NewMetadataOffer(cp, clientTable)
	r.mj.retainedFrom = cp.Op + 1
}

// restore replaces the empty state and client table with a checkpoint's.
// The payload passed the area's checksums, so a payload that does not
// decode is this replica's own bug.
func (r *Replica) restore(cp *transfer.Checkpoint) {
	r.reportCheckpointRead(cp)
	state, meta, err := metadata.DecodeSnapshot(cp.Payload, r.cfg.MetadataLimits())
	if err != nil {
		panic(fmt.Sprintf("replica %d: the checkpoint at op %d does not decode: %v", r.cfg.Replica, cp.Op, err))
	}
	if meta.SequenceNumber != cp.Op || meta.CreatedAt != cp.Timestamp || meta.ClientTable == nil {
		panic(fmt.Sprintf("replica %d: the checkpoint at op %d holds a snapshot of op %d (created_at %d, timestamp %d)",
			r.cfg.Replica, cp.Op, meta.SequenceNumber, meta.CreatedAt, cp.Timestamp))
	}
	table, err := clients.DecodeCheckpoint(meta.ClientTable, r.cfg.Profile.ClientTableMax)
	if err != nil {
		panic(fmt.Sprintf("replica %d: the checkpoint at op %d holds a client table that does not decode: %v", r.cfg.Replica, cp.Op, err))
	}
	r.state, r.table = state, table
	r.offer = transfer.NewMetadataOffer(*cp, table.Encode())
	r.probe("state restored from a checkpoint")
	r.env.Sink.Event(Event{Kind: EventRestored, Replica: r.cfg.Replica, Op: cp.Op, Frame: cp.Payload, Disk: DiskReport{ClientTable: table.Encode()}})
}
