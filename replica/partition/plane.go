package partition

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Journal is what a Plane reads of its group's journal: the prepares above
// the committed prefix, for the next offset at the head.
type Journal interface {
	Frame(op uint64) ([]byte, bool)
}

// Plane is one partition's state on one replica: the committed batches and
// the offset the next append mints. It is the group's vsr.Plane (the
// primary's stamp at journal append, a backup's check before it journals)
// and, through Apply, its state machine.
//
// Offsets follow the log: the next offset after op k is the base_offset
// plus message_count of the last SendMessages at or below k, so a primary
// that stamps op k+1 reads it from the journal down to the committed
// prefix, where Committed takes over. Nothing is cached above the
// committed prefix: a view change that replaces uncommitted ops replaces
// what they stamped with them.
type Plane struct {
	partitionID uint64
	journal     Journal
	commitMin   func() uint64

	// committed holds every committed batch, in offset order: after a
	// restart first those the segment log kept (SeedSegment), which the
	// log then commits again (applied counts those it has), then the
	// batches the log committed past them.
	committed [][]byte
	applied   int
	next      uint64 // the offset the next committed batch must start at (the log's)
	end       uint64 // the offset after the last batch of committed (what polls see)
	messages  uint64 // messages committed by the log
	segment   SegmentSink
	// offsets: each individual consumer's stored offset, by ConsumerKey
	// (looked up only): seeded at a restart from the durable records
	// (OffsetStore), then applied again from the log as it commits.
	offsets map[uint32]uint64
	// offsetSink, when set, hears every offset a commit applies, to make it
	// durable (the host's OffsetStore).
	offsetSink func(consumer uint32, offset uint64, deleted bool)
}

// SegmentSink hears the batches a plane commits, to write them to its
// segment log.
type SegmentSink interface {
	// Append: a batch committed by op past what the log holds.
	Append(op uint64, batch []byte)
	// Reset: the log held a batch the committed log replaced (beyond the
	// memory-loss bound); batches is the committed log from offset 0.
	Reset(batches [][]byte)
}

// SetSegment sets what hears the committed batches.
func (p *Plane) SetSegment(sink SegmentSink) { p.segment = sink }

// SeedSegment sets the batches a restarted replica read back from its
// segment log, before its log commits again: polls see them at once (a
// restarted replica's visible offset drops back to its flushed segment
// end, partition-plane.md), and each commit of one checks it against what
// the log commits.
func (p *Plane) SeedSegment(batches [][]byte) {
	if len(p.committed) > 0 || p.next > 0 {
		panic("partition: seeding the segment of a plane that committed")
	}
	p.committed = batches
	if n := len(batches); n > 0 {
		h, _ := wire.ReadBatchHeader(batches[n-1])
		p.end = h.BaseOffset + uint64(h.MessageCount)
	}
}

// SetOffsetSink sets what hears every consumer offset a commit applies.
func (p *Plane) SetOffsetSink(sink func(consumer uint32, offset uint64, deleted bool)) {
	p.offsetSink = sink
}

// SeedOffsets sets the stored offsets a restarted replica recovered from
// its durable records, before its log commits again.
func (p *Plane) SeedOffsets(offsets map[uint32]uint64) {
	for k, v := range offsets {
		p.offsets[k] = v
	}
}

// NewPlane returns the empty state of a partition whose batches carry
// partitionID, reading its group's journal and commit_min.
func NewPlane(partitionID uint64, journal Journal, commitMin func() uint64) *Plane {
	if journal == nil || commitMin == nil {
		panic("partition: a plane needs its journal and commit_min")
	}
	return &Plane{partitionID: partitionID, journal: journal, commitMin: commitMin, offsets: make(map[uint32]uint64)}
}

// PartitionID returns the partition id the plane's batches carry.
func (p *Plane) PartitionID() uint64 { return p.partitionID }

// NextOffset returns the visible frontier: the offset after every
// committed batch this replica holds (the visible offset's successor).
func (p *Plane) NextOffset() uint64 { return p.end }

// Messages returns the number of messages committed.
func (p *Plane) Messages() uint64 { return p.messages }

// Batches returns the committed batches, in offset order (read-only).
func (p *Plane) Batches() [][]byte { return p.committed }

// nextAfter returns the offset the append after op mints, reading the
// journal down to the committed prefix; false when a prepare on the way is
// missing (a primary repairing after a view change: it cannot stamp yet).
func (p *Plane) nextAfter(op uint64) (uint64, bool) {
	floor := p.commitMin()
	for o := op; o > floor; o-- {
		f, ok := p.journal.Frame(o)
		if !ok {
			return 0, false
		}
		var h wire.PrepareHeader
		h.Decode(wire.HeaderOf(f))
		if h.Operation == wire.OperationSendMessages {
			return NextOffset(f[wire.HeaderSize:]), true
		}
	}
	return p.next, true
}

// Stamp implements vsr.Plane: a SendMessages body (the producer's batch,
// verified at admission) is stamped at the next offset after the head and
// the prepare's timestamp.
func (p *Plane) Stamp(x *wire.PrepareHeader, body []byte) ([]byte, bool) {
	if bug.OffsetAtPrepare {
		p.canaryApplyOffset(x, body) // canary_offset_at_prepare: the offset applied at prepare
	}
	if x.Operation != wire.OperationSendMessages {
		return body, true
	}
	next, ok := p.nextAfter(x.Op - 1)
	if !ok {
		return nil, false
	}
	return Stamp(body, p.partitionID, next, x.Timestamp), true
}

// Admit implements vsr.Plane: a backup journals a SendMessages prepare only
// if its batch verifies in full and is stamped at this replica's own next
// offset after its head and the prepare's timestamp.
func (p *Plane) Admit(frame []byte) bool {
	var x wire.PrepareHeader
	x.Decode(wire.HeaderOf(frame))
	if bug.OffsetAtPrepare {
		p.canaryApplyOffset(&x, frame[wire.HeaderSize:]) // canary_offset_at_prepare: the offset applied at prepare
	}
	if x.Operation != wire.OperationSendMessages {
		return x.Operation.IsPartition()
	}
	next, ok := p.nextAfter(x.Op - 1)
	return ok && CheckStamp(frame[wire.HeaderSize:], p.partitionID, next, x.Timestamp) == nil
}

// Intact implements vsr.Plane: a SendMessages batch verifies in full.
func (p *Plane) Intact(frame []byte) bool {
	var x wire.PrepareHeader
	x.Decode(wire.HeaderOf(frame))
	return x.Operation != wire.OperationSendMessages || wire.VerifyBatch(frame[wire.HeaderSize:]) == nil
}

// Apply applies a committed prepare and returns its reply body. A batch
// that does not start at the committed frontier, or does not verify, means
// this replica's log diverged: it panics, as Iggy's commit path does
// ("replica is divergent").
func (p *Plane) Apply(x *wire.PrepareHeader, body []byte, stream, topic uint32) []byte {
	switch x.Operation {
	case wire.OperationSendMessages:
		if err := CheckStamp(body, p.partitionID, p.next, x.Timestamp); err != nil {
			panic(fmt.Sprintf("partition: replica is divergent: committed op %d: %v", x.Op, err))
		}
		h, _ := wire.ReadBatchHeader(body)
		p.next += uint64(h.MessageCount)
		p.messages += uint64(h.MessageCount)
		reply := SendMessagesReply(stream, topic, uint32(p.partitionID), h.BaseOffset)
		if p.applied < len(p.committed) {
			if bytes.Equal(p.committed[p.applied], body) {
				p.applied++
				return reply // the segment log kept it
			}
			// The log commits another batch where the segment kept one:
			// only a cluster that lost every journal does (beyond the
			// memory-loss bound). The log is the truth.
			p.committed = p.committed[:p.applied]
			p.committed = append(p.committed, append([]byte(nil), body...))
			p.applied, p.end = len(p.committed), p.next
			if p.segment != nil {
				p.segment.Reset(p.committed)
			}
			return reply
		}
		p.committed = append(p.committed, append([]byte(nil), body...))
		p.applied, p.end = len(p.committed), p.next
		if p.segment != nil {
			p.segment.Append(x.Op, p.committed[len(p.committed)-1])
		}
		return reply
	case wire.OperationStoreConsumerOffset, wire.OperationDeleteConsumerOffset:
		store := x.Operation == wire.OperationStoreConsumerOffset
		r, err := DecodeOffsetRequest(body, store)
		if err != nil {
			panic(fmt.Sprintf("partition: replica is divergent: committed op %d: %v", x.Op, err))
		}
		if store {
			p.StoreOffset(ConsumerKey(r.Consumer), r.Offset)
		} else {
			p.DeleteOffset(ConsumerKey(r.Consumer))
		}
		if p.offsetSink != nil {
			p.offsetSink(ConsumerKey(r.Consumer), r.Offset, !store)
		}
		return OffsetReply()
	}
	panic(fmt.Sprintf("partition: committed op %d has operation %v", x.Op, x.Operation))
}

// OffsetReply is the body of a StoreConsumerOffset or DeleteConsumerOffset
// success (client-ops.md 5.26: result-framed, no payload).
func OffsetReply() []byte { return []byte{0, 0, 0, 0} }

// SendMessagesReply is the body of a SendMessages reply (client-ops.md
// 5.25, not result-framed): one confirmation.
func SendMessagesReply(stream, topic, partition uint32, baseOffset uint64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 1)
	b = binary.LittleEndian.AppendUint32(b, stream)
	b = binary.LittleEndian.AppendUint32(b, topic)
	b = binary.LittleEndian.AppendUint32(b, partition)
	return binary.LittleEndian.AppendUint64(b, baseOffset)
}
