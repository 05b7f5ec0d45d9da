package wire

import (
	"fmt"
	"math"

	"github.com/zeebo/xxh3"
)

// BatchHeaderSize is the size of the header at the front of every message
// batch (wire.md 7.1). A SendMessages prepare body is one batch: this header,
// then the blob of message frames.
const BatchHeaderSize = 256

// MessageHeaderSize is the size of the fixed part of a message frame
// (wire.md 7.2); the payload and then the user headers follow it.
const MessageHeaderSize = 48

// Offsets inside the batch header (wire.md 7.1).
const (
	offBatchPartitionID     = 0
	offBatchBaseOffset      = 8
	offBatchBaseTimestamp   = 16
	offBatchOriginTimestamp = 24
	offBatchLength          = 32
	offBatchChecksum        = 40
	offBatchMessageCount    = 48
	offBatchReserved        = 52

	// batchChecksumFieldsLen is how many header bytes feed batch_checksum
	// (wire.md 7.3): the five u64 fields before batch_checksum, then
	// message_count. The checksum field itself sits between them and is
	// skipped.
	batchChecksumFieldsLen = 44
)

// Offsets inside a message frame (wire.md 7.2).
const (
	offMsgChecksum          = 0
	offMsgID                = 8
	offMsgOffsetDelta       = 24
	offMsgTimestampDelta    = 28
	offMsgUserHeadersLength = 32
	offMsgPayloadLength     = 36
	offMsgReserved          = 40
)

// BatchHeader holds the fields of a batch header (wire.md 7.1). The 204
// reserved bytes are not represented: they are always zero.
type BatchHeader struct {
	PartitionID     uint64 // stamped at admission
	BaseOffset      uint64 // stamped at journal append
	BaseTimestamp   uint64 // stamped at journal append: the prepare's timestamp (µs)
	OriginTimestamp uint64 // producer: min origin timestamp of the messages (µs)
	BatchLength     uint64 // BatchHeaderSize + blob length
	BatchChecksum   uint64 // wire.md 7.3
	MessageCount    uint32 // > 0 on the replica plane
}

// Message is one message frame of a batch (wire.md 7.2).
type Message struct {
	Checksum       uint64 // XXH3 of the frame from byte 8 to its end
	ID             U128
	OffsetDelta    uint32 // offset = base_offset + OffsetDelta (not validated)
	TimestampDelta uint32 // µs after the batch's origin_timestamp
	Payload        []byte
	UserHeaders    []byte
}

// frameLen is the encoded size of m.
func (m *Message) frameLen() int { return MessageHeaderSize + len(m.Payload) + len(m.UserHeaders) }

// EncodeBatch builds a batch from h and msgs the way a producer (or a stamping
// primary) does: it writes every frame, computes each frame's checksum, and
// fills in batch_length, message_count and batch_checksum. The Checksum of
// each message and h's BatchLength, MessageCount and BatchChecksum are
// outputs, so their input values are ignored.
//
// A batch needs at least one message and every length must fit its u32
// field; anything else is a programming error and panics.
func EncodeBatch(h BatchHeader, msgs []Message) []byte {
	if len(msgs) == 0 {
		panic("wire: EncodeBatch with no messages (message_count must be > 0)")
	}
	if uint64(len(msgs)) > math.MaxUint32 {
		panic(fmt.Sprintf("wire: EncodeBatch with %d messages (message_count is a u32)", len(msgs)))
	}
	size := BatchHeaderSize
	for i := range msgs {
		if uint64(len(msgs[i].Payload)) > math.MaxUint32 || uint64(len(msgs[i].UserHeaders)) > math.MaxUint32 {
			panic(fmt.Sprintf("wire: EncodeBatch message %d is longer than a u32 length field", i))
		}
		size += msgs[i].frameLen()
	}

	b := make([]byte, size)
	put64(b[offBatchPartitionID:], h.PartitionID)
	put64(b[offBatchBaseOffset:], h.BaseOffset)
	put64(b[offBatchBaseTimestamp:], h.BaseTimestamp)
	put64(b[offBatchOriginTimestamp:], h.OriginTimestamp)
	put64(b[offBatchLength:], uint64(size))
	put32(b[offBatchMessageCount:], uint32(len(msgs)))

	off := BatchHeaderSize
	for i := range msgs {
		m := &msgs[i]
		f := b[off : off+m.frameLen()]
		putU128(f[offMsgID:], m.ID)
		put32(f[offMsgOffsetDelta:], m.OffsetDelta)
		put32(f[offMsgTimestampDelta:], m.TimestampDelta)
		put32(f[offMsgUserHeadersLength:], uint32(len(m.UserHeaders)))
		put32(f[offMsgPayloadLength:], uint32(len(m.Payload)))
		// Payload first, then user headers (wire.md 7.2).
		n := copy(f[MessageHeaderSize:], m.Payload)
		copy(f[MessageHeaderSize+n:], m.UserHeaders)
		put64(f[offMsgChecksum:], xxh3.Hash(f[offMsgID:]))
		off += len(f)
	}
	put64(b[offBatchChecksum:], BatchChecksum(b))
	return b
}

// ReadBatchHeader reads the batch header at the front of b. It checks only
// that b is long enough to hold one: it is for summaries and logs, not a
// substitute for VerifyBatch.
func ReadBatchHeader(b []byte) (BatchHeader, error) {
	if len(b) < BatchHeaderSize {
		return BatchHeader{}, formatErrf("batch", ErrShort, 0, "%d bytes, header needs %d", len(b), BatchHeaderSize)
	}
	return readBatchHeader(b), nil
}

func readBatchHeader(b []byte) BatchHeader {
	return BatchHeader{
		PartitionID:     u64(b[offBatchPartitionID:]),
		BaseOffset:      u64(b[offBatchBaseOffset:]),
		BaseTimestamp:   u64(b[offBatchBaseTimestamp:]),
		OriginTimestamp: u64(b[offBatchOriginTimestamp:]),
		BatchLength:     u64(b[offBatchLength:]),
		BatchChecksum:   u64(b[offBatchChecksum:]),
		MessageCount:    u32(b[offBatchMessageCount:]),
	}
}

// VerifyBatch applies every rule of wire.md 7 to b, which must be exactly one
// batch (a prepare body): the header fits; batch_length is at least 256 and
// equals len(b); the reserved header bytes are zero; message_count > 0;
// exactly message_count frames tile the blob; each frame's reserved field is
// zero and its checksum verifies; batch_checksum verifies. The checks run in
// that order, each frame completely before the next, so the error names the
// first broken rule a receiver reading front to back would meet.
//
// VerifyBatch does not allocate when b is valid.
func VerifyBatch(b []byte) error {
	if len(b) < BatchHeaderSize {
		return formatErrf("batch", ErrShort, 0, "%d bytes, header needs %d", len(b), BatchHeaderSize)
	}
	if n := u64(b[offBatchLength:]); n < BatchHeaderSize || n != uint64(len(b)) {
		return formatErrf("batch", ErrBatchLength, offBatchLength, "batch_length %d, batch is %d bytes", n, len(b))
	}
	if !allZero(b[offBatchReserved:BatchHeaderSize]) {
		return formatErrf("batch", ErrReservedNonzero, offBatchReserved, "bytes 52..256")
	}
	count := u32(b[offBatchMessageCount:])
	if count == 0 {
		return formatErr("batch", ErrMessageCountZero, offBatchMessageCount)
	}

	// One pass: every frame is bounded, checked and hashed, and its stored
	// checksum streamed into batch_checksum, as Iggy's
	// verify_and_recompute_batch_checksum does.
	var sum xxh3.Hasher
	writeBatchChecksumFields(&sum, b)
	off := BatchHeaderSize
	for i := uint32(0); i < count; i++ {
		end, err := frameEnd(b, off, i)
		if err != nil {
			return err
		}
		f := b[off:end]
		if r := u64(f[offMsgReserved:]); r != 0 {
			return formatErrf("batch", ErrMessageReservedNonzero, off+offMsgReserved, "message %d reserved %#x", i, r)
		}
		stored := u64(f[offMsgChecksum:])
		if got := xxh3.Hash(f[offMsgID:]); got != stored {
			return formatErrf("batch", ErrMessageChecksum, off, "message %d: stored %#016x, computed %#016x", i, stored, got)
		}
		sum.Write(f[offMsgChecksum : offMsgChecksum+8])
		off = end
	}
	if off != len(b) {
		return formatErrf("batch", ErrMessagesTrailing, off,
			"%d bytes after the last of %d messages", len(b)-off, count)
	}
	stored := u64(b[offBatchChecksum:])
	if got := sum.Sum64(); got != stored {
		return formatErrf("batch", ErrBatchChecksum, offBatchChecksum, "stored %#016x, computed %#016x", stored, got)
	}
	return nil
}

// frameEnd returns the end of message frame i, which starts at off, or the
// error for a frame that does not fit in b. An off at the end of b means the
// batch promised more frames than its blob holds.
func frameEnd(b []byte, off int, i uint32) (int, error) {
	rest := len(b) - off
	if rest == 0 {
		return 0, formatErrf("batch", ErrMessageFrameOverrun, off,
			"message %d of %d starts at the end of the batch", i, u32(b[offBatchMessageCount:]))
	}
	if rest < MessageHeaderSize {
		return 0, formatErrf("batch", ErrMessageFrameOverrun, off,
			"message %d: %d bytes left, frame header needs %d", i, rest, MessageHeaderSize)
	}
	// u64 sums: two u32 lengths cannot overflow them, whatever int's width.
	need := uint64(MessageHeaderSize) + uint64(u32(b[off+offMsgPayloadLength:])) + uint64(u32(b[off+offMsgUserHeadersLength:]))
	if need > uint64(rest) {
		return 0, formatErrf("batch", ErrMessageFrameOverrun, off,
			"message %d: frame needs %d bytes, %d left", i, need, rest)
	}
	return off + int(need), nil
}

// writeBatchChecksumFields feeds the 44 header bytes of wire.md 7.3 to h:
// bytes 0..40 and message_count, skipping batch_checksum at 40..48.
func writeBatchChecksumFields(h *xxh3.Hasher, b []byte) {
	h.Write(b[:offBatchChecksum])
	h.Write(b[offBatchMessageCount : offBatchMessageCount+4])
}

// DecodeBatch verifies b with VerifyBatch and returns its header and
// messages. The messages' Payload and UserHeaders alias b (capped, so an
// append to one cannot overwrite the next); copy them to keep them past b.
func DecodeBatch(b []byte) (BatchHeader, []Message, error) {
	if err := VerifyBatch(b); err != nil {
		return BatchHeader{}, nil, err
	}
	h := readBatchHeader(b)
	// Safe to size from message_count now: VerifyBatch proved that many
	// frames, of at least 48 bytes each, lie inside b.
	msgs := make([]Message, h.MessageCount)
	off := BatchHeaderSize
	for i := range msgs {
		f := b[off:]
		pl := int(u32(f[offMsgPayloadLength:]))
		uhl := int(u32(f[offMsgUserHeadersLength:]))
		p := MessageHeaderSize
		msgs[i] = Message{
			Checksum:       u64(f[offMsgChecksum:]),
			ID:             getU128(f[offMsgID:]),
			OffsetDelta:    u32(f[offMsgOffsetDelta:]),
			TimestampDelta: u32(f[offMsgTimestampDelta:]),
			Payload:        f[p : p+pl : p+pl],
			UserHeaders:    f[p+pl : p+pl+uhl : p+pl+uhl],
		}
		off += p + pl + uhl
	}
	return h, msgs, nil
}

// BatchChecksum computes batch_checksum (wire.md 7.3) over b's stored header
// fields and stored frame checksums. It does not verify the frames: b must
// be a batch whose frames tile it (one built by EncodeBatch or passed by
// VerifyBatch); anything else is a programming error and panics.
func BatchChecksum(b []byte) uint64 {
	if len(b) < BatchHeaderSize {
		panic(fmt.Sprintf("wire: BatchChecksum on %d bytes, shorter than a batch header", len(b)))
	}
	var sum xxh3.Hasher
	writeBatchChecksumFields(&sum, b)
	count := u32(b[offBatchMessageCount:])
	off := BatchHeaderSize
	for i := uint32(0); i < count; i++ {
		end, err := frameEnd(b, off, i)
		if err != nil {
			panic("wire: BatchChecksum on a batch whose frames do not tile it: " + err.Error())
		}
		sum.Write(b[off+offMsgChecksum : off+offMsgChecksum+8])
		off = end
	}
	if off != len(b) {
		panic(fmt.Sprintf("wire: BatchChecksum on a batch with %d bytes after its %d frames", len(b)-off, count))
	}
	return sum.Sum64()
}

// StampBatch performs the primary's journal append on a verified batch
// (wire.md 7.4): it overwrites partition_id, base_offset and base_timestamp
// in place and recomputes batch_checksum over the final fields. The frames,
// and so their checksums, do not change.
func StampBatch(b []byte, partitionID, baseOffset, baseTimestamp uint64) {
	if len(b) < BatchHeaderSize || u64(b[offBatchLength:]) != uint64(len(b)) {
		panic("wire: StampBatch on bytes that are not one whole batch")
	}
	put64(b[offBatchPartitionID:], partitionID)
	put64(b[offBatchBaseOffset:], baseOffset)
	put64(b[offBatchBaseTimestamp:], baseTimestamp)
	put64(b[offBatchChecksum:], BatchChecksum(b))
}
