package replica

import (
	"slices"

	"github.com/iggy-vopr/vopr/replica/transfer"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// The partition planes' durable artifacts, reported to the harness's
// checker, which reads the same records from the device by its own reading
// of their format (docs/disk-format.md 14.2, 14.3): what a group's build
// recovered, and each consumer offset write asked for and made durable.
// Nothing here decides anything; the events only say what the replica did.

// reportDisk sends a durable artifact event of group.
func (h *partitionHost) reportDisk(kind EventKind, group uint64, d DiskReport) {
	h.r.env.Sink.Event(Event{Kind: kind, Replica: h.r.cfg.Replica, PartitionGroup: group, Disk: d})
}

// writeOffset asks the offset records to make consumer's offset (or its
// deletion) durable in group's slot, as OffsetStore.Write does, and reports
// the write (EventOffsetWrite) and its done (EventOffsetDurable) before
// done runs.
func (h *partitionHost) writeOffset(slot int, group uint64, consumer uint32, offset uint64, deleted bool, done func()) bool {
	d := DiskReport{Slot: slot, Consumer: consumer, Offset: offset, Deleted: deleted, Recorded: true}
	recorded := h.offsets.Write(slot, group, consumer, offset, deleted, func() {
		h.reportDisk(EventOffsetDurable, group, d)
		done()
	})
	d.Recorded = recorded
	h.reportDisk(EventOffsetWrite, group, d)
	return recorded
}

// offsetEntries lists offsets in ascending consumer order.
func offsetEntries(offsets map[uint32]uint64) []wire.OffsetEntry {
	keys := make([]uint32, 0, len(offsets))
	for k := range offsets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]wire.OffsetEntry, len(keys))
	for i, k := range keys {
		out[i] = wire.OffsetEntry{ID: k, Offset: offsets[k]}
	}
	return out
}

// reportCheckpointRead reports the checkpoint a restart read back, as
// transfer.Open read its area, before restore judges it.
func (r *Replica) reportCheckpointRead(cp *transfer.Checkpoint) {
	r.env.Sink.Event(Event{Kind: EventCheckpointRead, Replica: r.cfg.Replica, Op: cp.Op, Frame: cp.Payload,
		Disk: DiskReport{Identity: cp.Identity, Timestamp: cp.Timestamp}})
}
