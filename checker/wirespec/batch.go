package wirespec

import (
	"github.com/zeebo/xxh3"
)

// The batch header (wire.md 7.1) and a message frame (7.2).
const (
	BatchHeaderSize     = 256
	OffBatchPartition   = 0
	OffBatchBaseOffset  = 8
	OffBatchBaseTime    = 16
	OffBatchOriginTime  = 24
	OffBatchLength      = 32
	OffBatchChecksum    = 40
	OffBatchCount       = 48
	messageHeaderSize   = 48
	offMsgChecksum      = 0
	offMsgHeadersLength = 32
	offMsgPayloadLength = 36
)

// CheckBatch judges a stamped SendMessages batch (a partition prepare's
// body) by wire.md 7: its length, count and reserved bytes, frames that tile
// its blob exactly with their checksums, the batch checksum over the
// stamped fields, and base_timestamp the prepare's timestamp (7.4).
func CheckBatch(b []byte, prepareTimestamp uint64) *Problem {
	return checkBatch(b, prepareTimestamp, true)
}

// checkBatch is CheckBatch, with the stamping rule (7.4) only when
// stamped: a receiver's ingress check (Receive) verifies the batch alone,
// and the append compares the stamps later.
func checkBatch(b []byte, prepareTimestamp uint64, stamped bool) *Problem {
	if len(b) < BatchHeaderSize {
		return problem(RuleBatchShort, "a batch of %d bytes (at least 256)", len(b))
	}
	length, count := U64(b, OffBatchLength), U32(b, OffBatchCount)
	switch {
	case length != uint64(len(b)):
		return problem(RuleBatchLength, "batch_length %d in a body of %d bytes", length, len(b))
	case count == 0:
		return problem(RuleBatchCount, "a batch of 0 messages")
	case stamped && U64(b, OffBatchBaseTime) != prepareTimestamp:
		return problem("7.4 base_timestamp", "base_timestamp %d, the prepare's timestamp is %d", U64(b, OffBatchBaseTime), prepareTimestamp)
	}
	if p := zero(b, 52, BatchHeaderSize, RuleBatchReserved); p != nil {
		return p
	}
	sum := make([]byte, 0, 44+8*int(count))
	sum = append(sum, b[:40]...)
	sum = append(sum, b[OffBatchCount:OffBatchCount+4]...)
	at := BatchHeaderSize
	for i := uint32(0); i < count; i++ {
		if len(b)-at < messageHeaderSize {
			return problem(RuleBatchFrames, "message %d of %d starts at byte %d of %d: no room for its header", i, count, at, len(b))
		}
		m := b[at:]
		end := messageHeaderSize + int(U32(m, offMsgPayloadLength)) + int(U32(m, offMsgHeadersLength))
		if end > len(m) || end < messageHeaderSize {
			return problem(RuleBatchFrames, "message %d of %d runs past the batch", i, count)
		}
		if got, want := U64(m, offMsgChecksum), xxh3.Hash(m[8:end]); got != want {
			return problem(RuleBatchMsgSum, "message %d checksum 0x%x, XXH3(frame[8..]) is 0x%x", i, got, want)
		}
		if p := zero(m, 40, 48, RuleBatchMsgReserv); p != nil {
			p.Detail = "message " + uitoa(uint64(i)) + ": " + p.Detail
			return p
		}
		sum = append(sum, m[:8]...)
		at += end
	}
	if at != len(b) {
		return problem(RuleBatchFrames, "%d messages end at byte %d of a %d-byte batch (they tile it exactly)", count, at, len(b))
	}
	if got, want := U64(b, OffBatchChecksum), xxh3.Hash(sum); got != want {
		return problem(RuleBatchChecksum, "batch_checksum 0x%x, over its stamped fields 0x%x", got, want)
	}
	return nil
}

// CheckUnstampedBatch judges a batch as a producer sends it (wire.md 7.4:
// nothing stamped yet): every rule of CheckBatch but the stamp's.
func CheckUnstampedBatch(b []byte) *Problem { return checkBatch(b, 0, false) }
