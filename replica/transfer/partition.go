package transfer

import (
	"bytes"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Limits of the partition plane's state transfer.
const (
	// PartitionArtifactMax is Iggy's partition.transfer_artifact_bytes_max
	// (wire.md 11): a receiver refuses a partition artifact above it.
	PartitionArtifactMax = 1088 << 20
	// PartitionTransfersMax is how many partition transfers a replica runs
	// at once (partition-plane.md "Repair and state transfer"): the offer
	// limit of its partition server, and of its fetches.
	PartitionTransfersMax = 4
)

// PartitionState is a partition's state at CommitOp, as an offer carries it.
type PartitionState struct {
	CommitOp  uint64    // the op the state is at (the server's commit_min)
	Identity  wire.U128 // the prepare identity of op CommitOp
	Timestamp uint64    // the prepare timestamp of op CommitOp
	// Batches holds every committed batch, stamped (wire.md 7.4), in
	// ascending offset order and contiguous from offset 0.
	Batches [][]byte
	// Offsets is the ICO1 state; its NextOffset is the offset after the
	// last batch.
	Offsets wire.ConsumerOffsets
}

// NewPartitionOffer builds the offer of a partition's state (wire.md 8.1):
// its batches as segment logs (kind 2, frontier the segment's first
// base_offset, the batch records concatenated verbatim, wire.md 8.4), then
// one ICO1 artifact (kind 3, frontier CommitOp, wire.md 8.5) carrying op
// CommitOp's identity and timestamp. A segment takes batches in order until
// the next would take it past segmentBytesMax, which stands for Iggy's
// segment rotation; a segment always holds at least one batch, so a batch
// larger than segmentBytesMax makes a segment of its own. A partition with
// no batches offers the ICO1 artifact alone.
//
// A state that is not a partition's (CommitOp 0, no identity, batches not
// contiguous from 0, NextOffset not after the last batch) is a programming
// error and panics.
func NewPartitionOffer(s PartitionState, segmentBytesMax int) Offer {
	if s.CommitOp == 0 || s.Identity.IsZero() || segmentBytesMax < 1 {
		panic(fmt.Sprintf("transfer: partition offer at op %d, identity %s, segments of %d bytes",
			s.CommitOp, s.Identity, segmentBytesMax))
	}
	next := uint64(0)
	for i, b := range s.Batches {
		h, err := wire.ReadBatchHeader(b)
		if err != nil || h.BatchLength != uint64(len(b)) || h.MessageCount == 0 || h.BaseOffset != next {
			panic(fmt.Sprintf("transfer: partition offer batch %d (%d bytes, %+v, %v): not the batch at offset %d",
				i, len(b), h, err, next))
		}
		next += uint64(h.MessageCount)
	}
	if s.Offsets.NextOffset != next {
		panic(fmt.Sprintf("transfer: partition offer with next_offset %d, its batches end at %d", s.Offsets.NextOffset, next))
	}

	var o Offer
	o.CommitOp = s.CommitOp
	for i := 0; i < len(s.Batches); {
		frontier, _ := wire.ReadBatchHeader(s.Batches[i])
		n := len(s.Batches[i])
		j := i + 1
		for ; j < len(s.Batches) && n+len(s.Batches[j]) <= segmentBytesMax; j++ {
			n += len(s.Batches[j])
		}
		seg := make([]byte, 0, n)
		for _, b := range s.Batches[i:j] {
			seg = append(seg, b...)
		}
		o.add(wire.ArtifactSegmentLog, frontier.BaseOffset, wire.U128{}, 0, seg)
		i = j
	}
	o.add(wire.ArtifactConsumerOffsets, s.CommitOp, s.Identity, s.Timestamp, wire.EncodeConsumerOffsets(s.Offsets))
	if len(o.Entries) > wire.ManifestEntriesMax {
		panic(fmt.Sprintf("transfer: partition offer of %d artifacts, a manifest holds %d", len(o.Entries), wire.ManifestEntriesMax))
	}
	return o
}

// add appends one artifact and its entry to the offer.
func (o *Offer) add(kind uint8, frontier uint64, identity wire.U128, timestamp uint64, artifact []byte) {
	o.Entries = append(o.Entries, wire.ManifestEntry{Kind: kind, Frontier: frontier, Len: uint64(len(artifact)), Checksum: checksum64(artifact)})
	o.Identities = append(o.Identities, identity)
	o.Timestamps = append(o.Timestamps, timestamp)
	o.Artifacts = append(o.Artifacts, artifact)
}

// DecodePartitionOffer rebuilds a partition's state from a complete,
// verified offer (every artifact pulled and checked against its entry, as
// a Fetch of PlanePartition completes one). An offer that is not complete
// (a missing artifact, identity or timestamp; an artifact not of its
// entry's length) is a programming error and panics. An offer whose
// artifacts passed their checksums but do not make a partition of
// partitionID is the server's bug or ours, and returns an error naming the
// rule broken, checked in this order: the entries are k ≥ 0 segments then
// exactly one ICO1, last; the segment frontiers strictly ascend; the first
// starts at offset 0; each segment, walked record by record, holds at least
// one batch and no trailing bytes shorter than a batch, and each batch has
// message_count > 0, verifies (wire.VerifyBatch), is of partitionID, and
// has the base_offset the offsets so far lead to (contiguous across
// segments), the first of a segment its frontier; the ICO1 decodes and its
// NextOffset is the end of the batches; its frontier is CommitOp; its
// identity is not zero.
//
// The batches returned are capped sub-slices of a copy of each segment:
// they share no memory with o, whose buffers a Fetch handed over.
func DecodePartitionOffer(o Offer, partitionID uint64) (PartitionState, error) {
	n := len(o.Entries)
	if len(o.Artifacts) != n || len(o.Identities) != n || len(o.Timestamps) != n {
		panic(fmt.Sprintf("transfer: a partition offer of %d entries, %d artifacts, %d identities, %d timestamps",
			n, len(o.Artifacts), len(o.Identities), len(o.Timestamps)))
	}
	for i, e := range o.Entries {
		if uint64(len(o.Artifacts[i])) != e.Len {
			panic(fmt.Sprintf("transfer: partition offer artifact %d of %d bytes, its entry says %d", i, len(o.Artifacts[i]), e.Len))
		}
	}
	if n == 0 || o.Entries[n-1].Kind != wire.ArtifactConsumerOffsets {
		return PartitionState{}, fmt.Errorf("partition offer at op %d: %d artifacts, not segments then one consumer-offsets artifact last",
			o.CommitOp, n)
	}
	for i, e := range o.Entries[:n-1] {
		if e.Kind != wire.ArtifactSegmentLog {
			return PartitionState{}, fmt.Errorf("partition offer at op %d: artifact %d of kind %d, not a segment log before the consumer offsets",
				o.CommitOp, i, e.Kind)
		}
		if i > 0 && e.Frontier <= o.Entries[i-1].Frontier {
			return PartitionState{}, fmt.Errorf("partition offer at op %d: segment frontiers not strictly ascending: segment %d at %d after %d",
				o.CommitOp, i, e.Frontier, o.Entries[i-1].Frontier)
		}
	}
	if n > 1 && o.Entries[0].Frontier != 0 {
		return PartitionState{}, fmt.Errorf("partition offer at op %d: the first segment starts at offset %d, not 0",
			o.CommitOp, o.Entries[0].Frontier)
	}

	var batches [][]byte
	next := uint64(0)
	for i, e := range o.Entries[:n-1] {
		seg := bytes.Clone(o.Artifacts[i])
		var err error
		if batches, next, err = walkSegment(seg, e.Frontier, next, partitionID, batches); err != nil {
			return PartitionState{}, fmt.Errorf("partition offer at op %d: segment %d (frontier %d): %w", o.CommitOp, i, e.Frontier, err)
		}
	}

	last := o.Entries[n-1]
	offsets, err := wire.DecodeConsumerOffsets(o.Artifacts[n-1])
	switch {
	case err != nil:
		return PartitionState{}, fmt.Errorf("partition offer at op %d: consumer offsets: %w", o.CommitOp, err)
	case offsets.NextOffset != next:
		return PartitionState{}, fmt.Errorf("partition offer at op %d: consumer offsets next_offset %d, the batches end at %d",
			o.CommitOp, offsets.NextOffset, next)
	case last.Frontier != o.CommitOp:
		return PartitionState{}, fmt.Errorf("partition offer at op %d: consumer offsets frontier %d, not commit_op",
			o.CommitOp, last.Frontier)
	case o.Identities[n-1].IsZero():
		return PartitionState{}, fmt.Errorf("partition offer at op %d: consumer offsets carry no identity of commit_op", o.CommitOp)
	}
	return PartitionState{CommitOp: o.CommitOp, Identity: o.Identities[n-1], Timestamp: o.Timestamps[n-1],
		Batches: batches, Offsets: offsets}, nil
}

// walkSegment appends the batches of seg to batches (capped sub-slices of
// seg) and returns the offset after the last, checking the segment-log
// rules of wire.md 8.4: next is the base_offset the first batch must have,
// which must also be the segment's frontier.
func walkSegment(seg []byte, frontier, next, partitionID uint64, batches [][]byte) ([][]byte, uint64, error) {
	if len(seg) == 0 {
		return nil, 0, fmt.Errorf("an empty segment, no batch")
	}
	for off := 0; off < len(seg); {
		rest := seg[off:]
		h, err := wire.ReadBatchHeader(rest)
		if err != nil {
			return nil, 0, fmt.Errorf("trailing bytes shorter than a batch: %d at byte %d", len(rest), off)
		}
		if h.BatchLength > uint64(len(rest)) {
			return nil, 0, fmt.Errorf("trailing bytes shorter than a batch: batch_length %d at byte %d, %d bytes left",
				h.BatchLength, off, len(rest))
		}
		if h.MessageCount == 0 {
			return nil, 0, fmt.Errorf("batch at byte %d: message_count 0", off)
		}
		// A batch_length below the header cannot advance the walk; cut the
		// header instead and let VerifyBatch reject its batch_length.
		b := rest[:max(h.BatchLength, wire.BatchHeaderSize):max(h.BatchLength, wire.BatchHeaderSize)]
		if err := wire.VerifyBatch(b); err != nil {
			return nil, 0, fmt.Errorf("batch at byte %d does not verify: %w", off, err)
		}
		switch {
		case h.PartitionID != partitionID:
			return nil, 0, fmt.Errorf("batch at byte %d: partition_id %d, not %d", off, h.PartitionID, partitionID)
		case off == 0 && h.BaseOffset != frontier:
			return nil, 0, fmt.Errorf("first base_offset %d, not the frontier", h.BaseOffset)
		case h.BaseOffset != next:
			return nil, 0, fmt.Errorf("batch at byte %d: base_offset %d, offsets not contiguous (want %d)", off, h.BaseOffset, next)
		}
		batches = append(batches, b)
		next += uint64(h.MessageCount)
		off += len(b)
	}
	return batches, next, nil
}
