package workload

import (
	"encoding/binary"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// The workload's own encoder of a producer's message batch (wire.md 7),
// written from the specification, as its request encoders are (encode.go):
// a batch the client writes itself shows when the replica's reading or
// stamping of it is wrong, where a batch built with the replica's own
// wire.EncodeBatch would agree with it.

// Batch layout (wire.md 7.1, 7.2): a 256-byte header, then the message
// frames, each a 48-byte header, its payload, then its user headers.
const (
	batchHeaderBytes   = 256
	messageHeaderBytes = 48
)

// encodeBatch builds a producer's batch of msgs with the given
// origin_timestamp: partition_id, base_offset and base_timestamp 0 (the
// primary stamps them), batch_length and message_count from the frames,
// every message's checksum (XXH3-64 of its frame from byte 8), and
// batch_checksum (wire.md 7.3: XXH3-64 over the header's first 40 bytes,
// message_count, then each frame's stored checksum). A message's Checksum
// field is ignored.
func encodeBatch(originTimestamp uint64, msgs []wire.Message) []byte {
	if len(msgs) == 0 {
		panic("workload: a batch of no messages")
	}
	size := batchHeaderBytes
	for _, m := range msgs {
		size += messageHeaderBytes + len(m.Payload) + len(m.UserHeaders)
	}
	le := binary.LittleEndian
	b := make([]byte, size)
	le.PutUint64(b[24:], originTimestamp)
	le.PutUint64(b[32:], uint64(size))
	le.PutUint32(b[48:], uint32(len(msgs)))
	var sum xxh3.Hasher
	sum.Write(b[:40])
	sum.Write(b[48:52])
	off := batchHeaderBytes
	for _, m := range msgs {
		f := b[off : off+messageHeaderBytes+len(m.Payload)+len(m.UserHeaders)]
		le.PutUint64(f[8:], m.ID.Lo)
		le.PutUint64(f[16:], m.ID.Hi)
		le.PutUint32(f[24:], m.OffsetDelta)
		le.PutUint32(f[28:], m.TimestampDelta)
		le.PutUint32(f[32:], uint32(len(m.UserHeaders)))
		le.PutUint32(f[36:], uint32(len(m.Payload)))
		copy(f[messageHeaderBytes+copy(f[messageHeaderBytes:], m.Payload):], m.UserHeaders)
		le.PutUint64(f, xxh3.Hash(f[8:]))
		sum.Write(f[:8])
		off += len(f)
	}
	le.PutUint64(b[40:], sum.Sum64())
	return b
}
