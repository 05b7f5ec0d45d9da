package partition

import (
	"errors"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// ErrStamp: a backup refuses a prepare whose batch is not stamped as its own
// next append (partition-plane.md "Backup").
var ErrStamp = errors.New("stamp is not this replica's next append")

// Stamp returns a copy of a verified batch stamped at the primary's journal
// append (wire.md 7.4): partition_id, base_offset (the partition's next
// offset: 0 for its first batch, else the previous base_offset plus its
// message_count), base_timestamp (the prepare's timestamp), and the
// batch_checksum recomputed over them. The messages are unchanged.
func Stamp(batch []byte, partitionID, baseOffset, baseTimestamp uint64) []byte {
	b := append([]byte(nil), batch...)
	wire.StampBatch(b, partitionID, baseOffset, baseTimestamp)
	return b
}

// CheckStamp is a backup's check of a SendMessages prepare's batch before it
// journals it: the batch verifies in full (every message checksum and the
// batch checksum, message_count > 0), and it is stamped for this partition
// at (next, timestamp): this replica's own next offset and the prepare's
// timestamp.
func CheckStamp(batch []byte, partitionID, next, timestamp uint64) error {
	if err := wire.VerifyBatch(batch); err != nil {
		return fmt.Errorf("partition: %w: %w", ErrBatch, err)
	}
	h, _ := wire.ReadBatchHeader(batch)
	if h.PartitionID != partitionID || h.BaseOffset != next || h.BaseTimestamp != timestamp {
		return fmt.Errorf("partition: %w: partition %d base_offset %d base_timestamp %d, want %d, %d, %d",
			ErrStamp, h.PartitionID, h.BaseOffset, h.BaseTimestamp, partitionID, next, timestamp)
	}
	return nil
}

// NextOffset is the offset the append after a stamped batch mints.
func NextOffset(batch []byte) uint64 {
	h, err := wire.ReadBatchHeader(batch)
	if err != nil {
		panic(fmt.Sprintf("partition: NextOffset of a batch that is none: %v", err))
	}
	return h.BaseOffset + uint64(h.MessageCount)
}
