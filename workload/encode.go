package workload

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// The workload's own encoders of the request bodies it sends
// (client-ops.md 1 and 5), written from the specification. A client built
// on the replica's encoders (replica/metadata, replica/partition) sends
// whatever a mutated encoder writes, which the replica then reads back the
// same way and the checker's model agrees with; a body the client writes
// itself shows when the replica's reading, or its projection's re-encoding,
// is wrong.

// ident is a stream, topic or consumer identifier (client-ops.md 1.2): a
// numeric id, or a name.
type ident struct {
	numeric bool
	id      uint32
	name    string
}

func named(s string) ident   { return ident{name: s} }
func numeric(n uint32) ident { return ident{numeric: true, id: n} }

// String renders the identifier as the route hints name it.
func (x ident) String() string {
	if x.numeric {
		return fmt.Sprintf("#%d", x.id)
	}
	return x.name
}

// identOf is the identifier a decoded request named.
func identOf(x metadata.Identifier) ident {
	if x.Kind == metadata.IdentifierNumeric {
		return numeric(x.Numeric)
	}
	return named(x.Name)
}

// appendIdent appends [kind u8][len u8][value]: kind 1 with a u32, kind 2
// with the name's bytes.
func appendIdent(b []byte, x ident) []byte {
	if x.numeric {
		return binary.LittleEndian.AppendUint32(append(b, 1, 4), x.id)
	}
	return append(append(b, 2, byte(len(x.name))), x.name...)
}

// appendName appends a Name: [len u8][bytes].
func appendName(b []byte, s string) []byte { return append(append(b, byte(len(s))), s...) }

func appendU32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }
func appendU64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// encodeCreateStream: name, then the options block (5.3).
func encodeCreateStream(name string, options []byte) []byte {
	return append(appendName(nil, name), options...)
}

// encodeUpdateStream: stream_id, name, options block (5.4).
func encodeUpdateStream(stream ident, name string, options []byte) []byte {
	return append(appendName(appendIdent(nil, stream), name), options...)
}

// encodeStreamID: DeleteStream's body, one identifier (5.5).
func encodeStreamID(stream ident) []byte { return appendIdent(nil, stream) }

// encodeCreateTopic: stream_id, partitions_count u32, name, options block
// (5.7).
func encodeCreateTopic(stream ident, partitions uint32, name string, options []byte) []byte {
	return append(appendName(appendU32(appendIdent(nil, stream), partitions), name), options...)
}

// encodeTopicID: DeleteTopic's body, stream_id then topic_id (5.9).
func encodeTopicID(stream, topic ident) []byte { return appendIdent(appendIdent(nil, stream), topic) }

// encodePartitions: Create/DeletePartitions, stream_id, topic_id,
// partitions_count u32 (5.11, 5.12).
func encodePartitions(stream, topic ident, count uint32) []byte {
	return appendU32(encodeTopicID(stream, topic), count)
}

// Partitioning kinds (1.5), the individual consumer kind (1.3), ack levels
// (1.7) and PollMessages' NonReplicated command code (5.28).
const (
	partitionBalanced  = 1
	partitionByID      = 2
	partitionByKey     = 3
	consumerIndividual = 1
	ackNone            = 0
	ackQuorum          = 1
	pollMessagesCode   = 100
)

// Poll strategies (1.6).
const (
	pollOffset    = 1
	pollTimestamp = 2
	pollNext      = 5
)

// partitioning is a SendMessages' partitioning (1.5).
type partitioning struct {
	kind      uint8
	partition uint32
	key       []byte
}

func appendPartitioning(b []byte, p partitioning) []byte {
	switch p.kind {
	case partitionByID:
		return appendU32(append(b, partitionByID, 4), p.partition)
	case partitionByKey:
		return append(append(b, partitionByKey, byte(len(p.key))), p.key...)
	}
	return append(b, p.kind, 0)
}

// sendPrefix is a SendMessages' routing prefix: stream_id, topic_id,
// partitioning, messages_count u32.
func sendPrefix(stream, topic ident, p partitioning, count uint32) []byte {
	return appendU32(appendPartitioning(appendIdent(appendIdent(nil, stream), topic), p), count)
}

// encodeSendMessages: metadata_length u32, then the prefix (that many
// bytes), then the batch (5.25).
func encodeSendMessages(prefix, batch []byte) []byte {
	return append(append(appendU32(nil, uint32(len(prefix))), prefix...), batch...)
}

// offsetRequest is a StoreConsumerOffset or DeleteConsumerOffset (5.26,
// 5.27).
type offsetRequest struct {
	consumerKind  uint8
	consumer      ident
	stream, topic ident
	hasPartition  bool
	partition     uint32
	offset        uint64 // a store's
	ack           uint8
}

// encodeOffsetRequest: consumer (kind, identifier), stream_id, topic_id,
// the optional partition (1.4), the offset (a store only), the ack level.
func encodeOffsetRequest(q offsetRequest, store bool) []byte {
	b := appendIdent(append([]byte(nil), q.consumerKind), q.consumer)
	b = appendIdent(appendIdent(b, q.stream), q.topic)
	b = appendU32(append(b, flag(q.hasPartition)), q.partition)
	if store {
		b = appendU64(b, q.offset)
	}
	return append(b, q.ack)
}

func flag(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// poll is a PollMessages (5.28).
type poll struct {
	consumerKind  uint8
	consumer      ident
	stream, topic ident
	hasPartition  bool
	partition     uint32
	strategy      uint8
	value         uint64
	count         uint32
	autoCommit    bool
}

// encodePoll: consumer, stream_id, topic_id, the optional partition, the
// strategy (kind u8, value u64), count u32, auto_commit u8.
func encodePoll(q poll) []byte {
	b := appendIdent(append([]byte(nil), q.consumerKind), q.consumer)
	b = appendIdent(appendIdent(b, q.stream), q.topic)
	b = appendU32(append(b, flag(q.hasPartition)), q.partition)
	b = appendU64(append(b, q.strategy), q.value)
	b = appendU32(b, q.count)
	return append(b, flag(q.autoCommit))
}

// optionEntry is one [kind u8][len u32][data] entry of an options block
// (1.8); a pair is a key entry (kind 2) then a value entry.
type optionEntry struct {
	kind uint8
	data []byte
}

// appendEntries appends the entries as given, right or wrong: the bad
// requests break the block's rules on purpose (odd counts, kinds, lengths).
func appendEntries(b []byte, entries ...optionEntry) []byte {
	for _, e := range entries {
		b = appendU32(append(b, e.kind), uint32(len(e.data)))
		b = append(b, e.data...)
	}
	return b
}

// The key entry and value entries of the kinds the topic catalog reads
// (1.8).
func keyEntry(k string) optionEntry {
	return optionEntry{kind: uint8(wire.OptionString), data: []byte(k)}
}
func textEntry(s string) optionEntry {
	return optionEntry{kind: uint8(wire.OptionString), data: []byte(s)}
}
func u64Entry(v uint64) optionEntry {
	return optionEntry{kind: uint8(wire.OptionUint64), data: appendU64(nil, v)}
}
func u32Entry(v uint32) optionEntry {
	return optionEntry{kind: uint8(wire.OptionUint32), data: appendU32(nil, v)}
}
func u8Entry(v uint8) optionEntry { return optionEntry{kind: uint8(wire.OptionUint8), data: []byte{v}} }
func boolEntry(v uint8) optionEntry {
	return optionEntry{kind: uint8(wire.OptionBool), data: []byte{v}}
}
