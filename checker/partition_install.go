package checker

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Partition state transfer (partition-plane.md "Repair and state
// transfer"). A replica whose partition group fell behind what its peers
// still hold installs the state of the partition at some op C from the
// group's primary: its segment log (every committed batch from offset 0,
// the stamped batches verbatim, wire.md 8.4) and its consumer offsets (an
// ICO1 artifact, wire.md 8.5), then applies op C+1 next. As on the metadata
// plane (installed), an install never applies an op twice nor goes back,
// and installs only a committed state; and the state is the one the
// canonical log holds at C, judged with the checker's own model of it:
//
//   - the segment log's records are the canonical batches of ops 1..C, byte
//     for byte, in order, nothing more and nothing less;
//   - the ICO1 decodes, its next_offset is the offset after those batches,
//     its purge generation 0 (nothing purges the partition plane), its
//     group section empty (the plane stores individual consumers' offsets
//     only), and its consumer section the offsets the committed
//     StoreConsumerOffset and DeleteConsumerOffset ops 1..C leave, applied
//     in op order, keyed by the consumer's numeric id (client-ops.md 1.3).
//
// A NoAck store or delete is applied by the primary alone and never enters
// the log (admitOffset, partition-plane.md "Consumer offsets"), so the
// primary's offsets may differ from the log's by what NoAck requests did: a
// consumer's offset may instead be one a NoAck store of it invoked, and
// may be missing after a NoAck delete of it. Named consumers are keyed by
// the XXH32 of their name, which the checker does not compute: where one
// stored an offset, the consumer section is not compared (noted). Beyond
// the memory-loss bound the canonical log may have been cut, so only the
// first two checks apply.

// partitionInstalled: replica r installed the state of partition group at
// op that a partition state transfer brought: segmentLog and the ICO1
// artifact offsets.
func (c *Checker) partitionInstalled(r uint8, group, op uint64, segmentLog, offsets []byte) {
	c.note("replica %d installed the state of group %d at op %d (a segment log of %d bytes, consumer offsets of %d)",
		r, group, op, len(segmentLog), len(offsets))
	l := c.partitionLog(group)
	if op+1 <= l.next[r] {
		c.fail(Violation{Name: InstallBehind, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d installed the state of group %d at op %d with op %d next to apply", r, group, op, l.next[r])})
		return
	}
	if op > uint64(len(l.canon)) {
		c.fail(Violation{Name: InstallUncommitted, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d installed the state of group %d at op %d, but only ops up to %d are committed there",
				r, group, op, len(l.canon))})
		return
	}
	if !c.beyondBound {
		diff := installedSegmentDiff(l, op, segmentLog)
		if diff == "" {
			diff = c.installedOffsetsDiff(l, op, offsets)
		}
		if diff != "" {
			c.fail(Violation{Name: InstallDiverged, Replicas: []uint8{r}, Ops: []uint64{op},
				Detail: fmt.Sprintf("replica %d installed the state of group %d at op %d: %s", r, group, op, diff)})
			return
		}
	}
	l.next[r] = op + 1
	l.high[r] = max(l.high[r], op)
}

// canonBatches returns the canonical ops 1..op that committed a batch.
func canonBatches(l *partitionLog, op uint64) []uint64 {
	var ops []uint64
	for k := uint64(1); k <= op; k++ {
		if l.canon[k-1].batch != nil {
			ops = append(ops, k)
		}
	}
	return ops
}

// installedSegmentDiff compares an installed segment log with the canonical
// batches of ops 1..op, walking it by batch_length as a receiver does
// (wire.md 8.4); it describes the first difference, or returns "".
func installedSegmentDiff(l *partitionLog, op uint64, log []byte) string {
	want := canonBatches(l, op)
	at, i := 0, 0
	for ; at < len(log); i++ {
		b, err := wire.ReadBatchHeader(log[at:])
		if err == nil && (b.BatchLength < wire.BatchHeaderSize || b.BatchLength > uint64(len(log)-at)) {
			err = fmt.Errorf("batch_length %d, %d bytes remain", b.BatchLength, len(log)-at)
		}
		if err != nil {
			return fmt.Sprintf("segment log record %d (at byte %d) does not frame: %v", i, at, err)
		}
		rec := log[at : at+int(b.BatchLength)]
		if i >= len(want) {
			return fmt.Sprintf("segment log record %d (offset %d, %d messages) is one more than the %d batches ops 1..%d committed",
				i, b.BaseOffset, b.MessageCount, len(want), op)
		}
		e := l.canon[want[i]-1]
		if string(rec) != string(e.batch) {
			return fmt.Sprintf("segment log record %d (offset %d, %d messages, %d bytes) is not op %d's committed batch (offset %d, %d messages, %d bytes): they differ from byte %d",
				i, b.BaseOffset, b.MessageCount, len(rec), want[i], e.base, e.count, len(e.batch), firstDifference(rec, e.batch))
		}
		at += len(rec)
	}
	if i < len(want) {
		e := l.canon[want[i]-1]
		return fmt.Sprintf("the segment log ends after %d records, without op %d's committed batch (offset %d, %d messages) and %d more",
			i, want[i], e.base, e.count, len(want)-i-1)
	}
	return ""
}

// firstDifference returns the first index at which a and b differ (the
// shorter's length when one is a prefix of the other).
func firstDifference(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// installedOffsetsDiff compares an installed ICO1 artifact with the model's
// consumer offsets at op; it describes the first difference, or returns "".
func (c *Checker) installedOffsetsDiff(l *partitionLog, op uint64, artifact []byte) string {
	got, err := readICO1(artifact)
	if err != nil {
		return fmt.Sprintf("the consumer offsets do not decode: %v", err)
	}
	next := uint64(0)
	if ops := canonBatches(l, op); len(ops) > 0 {
		e := l.canon[ops[len(ops)-1]-1]
		next = e.base + e.count
	}
	if got.nextOffset != next {
		return fmt.Sprintf("next_offset %d, but the batches ops 1..%d committed end at offset %d", got.nextOffset, op, next)
	}
	if got.purgeGeneration != 0 {
		return fmt.Sprintf("purge_generation %d, but nothing purges the partition plane", got.purgeGeneration)
	}
	if len(got.groups) > 0 {
		return fmt.Sprintf("consumer group %d at offset %d (and %d groups more), but only individual consumers store offsets",
			got.groups[0].id, got.groups[0].offset, len(got.groups)-1)
	}
	want, modeled := storedOffsetsAt(l, op)
	if !modeled || c.noAck.unmodeled {
		c.note("group %d: the installed consumer offsets are not compared: a named consumer stored an offset", l.group)
		return ""
	}
	installed := make(map[uint32]uint64, len(got.consumers))
	for _, e := range got.consumers {
		installed[e.id] = e.offset
	}
	ids := slices.Sorted(maps.Keys(want))
	for id := range installed {
		if _, ok := want[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		w, inModel := want[id]
		g, inArtifact := installed[id]
		switch {
		case inModel && inArtifact && g == w, inArtifact && c.noAck.stored[id][g]:
		case !inArtifact && c.noAck.deleted[id]:
		case !inArtifact:
			return fmt.Sprintf("consumer %d has no offset, but the ops up to %d stored offset %d", id, op, w)
		case !inModel:
			return fmt.Sprintf("consumer %d at offset %d, but the ops up to %d leave it none stored", id, g, op)
		default:
			return fmt.Sprintf("consumer %d at offset %d, but the ops up to %d stored offset %d", id, g, op, w)
		}
	}
	return ""
}

// storedOffsetsAt returns the consumer offsets the canonical ops 1..op
// leave stored, by numeric consumer id: each StoreConsumerOffset sets one,
// each DeleteConsumerOffset removes one. modeled is false when a consumer
// that is not an individual one with a numeric id appears (its key the
// checker does not compute).
func storedOffsetsAt(l *partitionLog, op uint64) (offsets map[uint32]uint64, modeled bool) {
	offsets = map[uint32]uint64{}
	for k := uint64(1); k <= op; k++ {
		body := l.canon[k-1].offsetBody
		if body == nil {
			continue
		}
		id, ok := numericConsumer(body)
		if !ok {
			return nil, false
		}
		var p wire.PrepareHeader
		p.Decode(&l.canon[k-1].header)
		if p.Operation == wire.OperationDeleteConsumerOffset {
			delete(offsets, id)
			continue
		}
		// checkOffsetCommit let only a body it parses commit.
		offset, _ := storedOffsetOf(body)
		offsets[id] = offset
	}
	return offsets, true
}

// numericConsumer returns the id of a consumer offset body's consumer when
// it is an individual consumer (kind 1) named by a numeric identifier
// (client-ops.md 1.2, 1.3): the key its offsets are stored under.
func numericConsumer(body []byte) (uint32, bool) {
	if len(body) < 7 || body[0] != 1 || body[1] != 1 || body[2] != 4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(body[3:]), true
}

// noAckOffsets is what the NoAck consumer offset requests invoked may have
// done to a partition primary's offsets, by numeric consumer id and not by
// partition (the requests name theirs by stream and topic, which the
// checker does not resolve): the offsets stored, and the consumers deleted.
// unmodeled: a request of a consumer without a numeric id.
type noAckOffsets struct {
	stored    map[uint32]map[uint64]bool
	deleted   map[uint32]bool
	unmodeled bool
}

// noAckOffsetRequest records an invoked StoreConsumerOffset or
// DeleteConsumerOffset when its ack level (the body's last byte,
// client-ops.md 5.26, 5.27) is NoAck.
func (c *Checker) noAckOffsetRequest(op wire.Operation, body []byte) {
	if len(body) == 0 || body[len(body)-1] != 0 {
		return // Quorum: the log holds what it does
	}
	id, ok := numericConsumer(body)
	if !ok {
		c.noAck.unmodeled = true
		return
	}
	if op == wire.OperationDeleteConsumerOffset {
		if c.noAck.deleted == nil {
			c.noAck.deleted = map[uint32]bool{}
		}
		c.noAck.deleted[id] = true
		return
	}
	offset, ok := storedOffsetOf(body)
	if !ok {
		return // the primary refuses a body that does not parse
	}
	if c.noAck.stored == nil {
		c.noAck.stored = map[uint32]map[uint64]bool{}
	}
	if c.noAck.stored[id] == nil {
		c.noAck.stored[id] = map[uint64]bool{}
	}
	c.noAck.stored[id][offset] = true
}
