package wire

import "testing"

// artBigBatch builds a batch of about 1 MiB: 1000 messages of 1000 payload
// bytes and 24 user-header bytes, the shape of a busy producer's batch.
func artBigBatch() []byte {
	msgs := make([]Message, 1000)
	for i := range msgs {
		payload := make([]byte, 1000)
		for j := range payload {
			payload[j] = byte(i + j)
		}
		msgs[i] = Message{
			ID:             U128{Lo: uint64(i) + 1},
			OffsetDelta:    uint32(i),
			TimestampDelta: uint32(i * 3),
			Payload:        payload,
			UserHeaders:    []byte("content-type=binary;v=1\x00"),
		}
	}
	return EncodeBatch(BatchHeader{PartitionID: 7, BaseOffset: 1 << 20, BaseTimestamp: 1_700_000_000_000_000, OriginTimestamp: 1_699_999_999_000_000}, msgs)
}

func BenchmarkVerifyBatch(b *testing.B) {
	batch := artBigBatch()
	if err := VerifyBatch(batch); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		if err := VerifyBatch(batch); err != nil {
			b.Fatal(err)
		}
	}
}
