package refmodel

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// The partition plane's request bodies (client-ops.md 5.25-5.27), decoded
// from the specification alone, so that the checker can say which
// SendMessages and consumer offset requests a correct replica admits, and
// where they go: a replica that drops a body the model decodes, or
// proposes one it does not, breaks a promise the model names.

// Partitioning kinds (1.5).
const (
	partitioningBalanced    = 1
	partitioningPartitionID = 2
	partitioningMessagesKey = 3
)

// Consumer kinds (1.3) and ack levels (1.7).
const (
	consumerSingle = 1
	consumerGroup  = 2
	ackNone        = 0
	ackQuorum      = 1
)

// Target is where a partition-plane request goes: a stream and a topic,
// and for a send its partitioning, for a consumer offset request its
// partition.
type Target struct {
	stream, topic identifier
	// partitioning: 1 Balanced, 2 PartitionID (partition), 3 MessagesKey;
	// 0 for a consumer offset request, which names partition when
	// hasPartition.
	partitioning uint8
	partition    uint32
	key          []byte // MessagesKey
	hasPartition bool
}

// String describes the target for messages.
func (t Target) String() string {
	id := func(x identifier) string {
		if x.numeric {
			return fmt.Sprint(x.id)
		}
		return fmt.Sprintf("%q", x.name)
	}
	s := fmt.Sprintf("stream %s topic %s", id(t.stream), id(t.topic))
	switch {
	case t.partitioning == partitioningBalanced:
		return s + " balanced"
	case t.partitioning == partitioningMessagesKey:
		return s + " by key"
	case t.partitioning == partitioningPartitionID || t.hasPartition:
		return s + fmt.Sprintf(" partition %d", t.partition)
	}
	return s + " no partition"
}

// DecodeSendMessages decodes a SendMessages request body as the partition
// plane admits it (5.25): metadata_length u32, then exactly that many bytes
// of stream_id, topic_id, partitioning (1.5) and messages_count u32, then a
// batch that verifies by every rule of wire.md 7 (package wire's
// VerifyBatch, the format's own reader), holding messages_count messages,
// not zero. A body that fails any of these is dropped without an answer
// (5.25, on the partition primary: E).
func DecodeSendMessages(body []byte) (Target, error) {
	r := &reader{what: "SendMessages", b: body}
	n, err := r.u32()
	if err != nil {
		return Target{}, err
	}
	if uint64(n) > uint64(r.rest()) {
		return Target{}, bodyErr("SendMessages", 0, "metadata_length %d, %d bytes follow", n, r.rest())
	}
	prefix, _ := r.bytes(int(n))
	p := &reader{what: "SendMessages prefix", b: prefix}
	var t Target
	if t.stream, err = p.identifier(); err != nil {
		return Target{}, err
	}
	if t.topic, err = p.identifier(); err != nil {
		return Target{}, err
	}
	at := p.at
	kind, err := p.u8()
	if err != nil {
		return Target{}, err
	}
	size, err := p.u8()
	if err != nil {
		return Target{}, err
	}
	value, err := p.bytes(int(size))
	if err != nil {
		return Target{}, err
	}
	switch {
	case kind == partitioningBalanced && size == 0:
	case kind == partitioningPartitionID && size == 4:
		t.partition = binary.LittleEndian.Uint32(value)
	case kind == partitioningMessagesKey && size >= 1:
		t.key = value
	default:
		return Target{}, bodyErr("SendMessages prefix", at, "partitioning kind %d with a value of %d bytes", kind, size)
	}
	t.partitioning = kind
	count, err := p.u32()
	if err != nil {
		return Target{}, err
	}
	if err := p.done(); err != nil {
		return Target{}, err
	}
	batch := body[r.at:]
	if err := wire.VerifyBatch(batch); err != nil {
		return Target{}, fmt.Errorf("%w: SendMessages batch: %v", errBody, err)
	}
	h, _ := wire.ReadBatchHeader(batch)
	if count == 0 || count != h.MessageCount {
		return Target{}, bodyErr("SendMessages prefix", p.at-4, "messages_count %d, the batch holds %d", count, h.MessageCount)
	}
	return t, nil
}

// OffsetRequest is a decoded StoreConsumerOffset or DeleteConsumerOffset.
type OffsetRequest struct {
	Target
	consumerKind uint8
	// Quorum: ack level 1 (replicated); 0 is applied by the partition
	// primary alone (5.26).
	Quorum bool
}

// DecodeOffsetRequest decodes a StoreConsumerOffset (store) or
// DeleteConsumerOffset body (5.26, 5.27): a consumer (1.3: kind 1 or 2, an
// identifier), stream_id, topic_id, the optional partition (1.4), the
// offset u64 (store only), the ack level (1.7: 0 or 1). The body must end
// there: vopr's replica reads these bodies to their exact length
// (DEVIATIONS.md 71; Iggy's decode_from would ignore trailing bytes).
func DecodeOffsetRequest(body []byte, store bool) (OffsetRequest, error) {
	r := &reader{what: "consumer offset", b: body}
	var q OffsetRequest
	var err error
	if q.consumerKind, q.Target, err = r.consumerTarget(); err != nil {
		return q, err
	}
	if store {
		if _, err := r.u64(); err != nil {
			return q, err
		}
	}
	at := r.at
	ack, err := r.u8()
	if err != nil {
		return q, err
	}
	if ack != ackNone && ack != ackQuorum {
		return q, bodyErr(r.what, at, "ack level %d", ack)
	}
	q.Quorum = ack == ackQuorum
	return q, r.done()
}

// consumerTarget reads what a consumer offset request and a poll begin
// with (5.26-5.28): a consumer (1.3: kind 1 or 2, an identifier),
// stream_id, topic_id and the optional partition (1.4: a flag, then a
// u32 read whatever the flag; hasPartition when the flag is 1).
func (r *reader) consumerTarget() (kind uint8, t Target, err error) {
	at := r.at
	if kind, err = r.u8(); err != nil {
		return 0, t, err
	}
	if kind != consumerSingle && kind != consumerGroup {
		return 0, t, bodyErr(r.what, at, "consumer kind %d", kind)
	}
	if _, err = r.identifier(); err != nil {
		return 0, t, err
	}
	if t.stream, err = r.identifier(); err != nil {
		return 0, t, err
	}
	if t.topic, err = r.identifier(); err != nil {
		return 0, t, err
	}
	flag, err := r.u8()
	if err != nil {
		return 0, t, err
	}
	t.hasPartition = flag == 1
	if t.partition, err = r.u32(); err != nil {
		return 0, t, err
	}
	return kind, t, nil
}

// Admissible reports why a decoded consumer offset request is refused with
// ResourceNotFound whatever the state (5.26): a group consumer (this slice
// has no consumer groups, so no group owns a partition) or no partition
// named. Nil when only the state decides.
func (q OffsetRequest) Admissible() error {
	switch {
	case q.consumerKind != consumerSingle:
		return fmt.Errorf("consumer kind %d: no group owns a partition", q.consumerKind)
	case !q.hasPartition:
		return fmt.Errorf("no partition named")
	}
	return nil
}

// Groups returns the consensus groups of the partitions a target may go to
// in the model's state (1.5): the partition a PartitionID send or an offset
// request names, the one at XXH32(key) mod the partition count in the
// topic's list for a MessagesKey send, any of the topic's for a Balanced
// send (a per-process round robin, 10 item 8); none when it does not
// resolve.
func (m *Model) Groups(t Target) []uint64 {
	_, s, ok := m.resolveStream(t.stream)
	if !ok {
		return nil
	}
	_, tp, ok := s.resolveTopic(t.topic)
	if !ok || len(tp.partitions) == 0 {
		return nil
	}
	switch t.partitioning {
	case partitioningBalanced:
		out := make([]uint64, len(tp.partitions))
		for i, p := range tp.partitions {
			out[i] = p.group
		}
		return out
	case partitioningMessagesKey:
		return []uint64{tp.partitions[xxh32(t.key)%uint32(len(tp.partitions))].group}
	}
	if t.partitioning == 0 && !t.hasPartition {
		return nil
	}
	for _, p := range tp.partitions {
		if p.id == t.partition {
			return []uint64{p.group}
		}
	}
	return nil
}

// Resolves reports whether a target reaches a partition in the model's
// state, as the replica that applied exactly the model's ops resolves it
// (1.5, 5.25-5.27): the stream and topic resolve, the topic has a
// partition, and a partition id (a PartitionID send, or an offset
// request's partition) is one of the topic's.
func (m *Model) Resolves(t Target) bool { return len(m.Groups(t)) > 0 }

// Poll is a decoded PollMessages (5.28).
type Poll struct {
	Target
	consumerKind uint8
}

// DecodePoll decodes a PollMessages body (5.28): a consumer (1.3), stream_id,
// topic_id, the optional partition (1.4; none reads partition 0), the
// strategy (1.6: kind 1..5, then a u64), count u32, auto_commit u8, and
// nothing after (vopr's replica reads it to its exact length, as its
// consumer offset bodies, DEVIATIONS.md 71).
func DecodePoll(body []byte) (Poll, error) {
	r := &reader{what: "PollMessages", b: body}
	var q Poll
	var err error
	if q.consumerKind, q.Target, err = r.consumerTarget(); err != nil {
		return q, err
	}
	if !q.hasPartition {
		q.partition = 0
	}
	q.hasPartition = true // a poll names partition 0 when it names none
	at := r.at
	strategy, err := r.u8()
	if err != nil {
		return q, err
	}
	if strategy < 1 || strategy > 5 {
		return q, bodyErr(r.what, at, "strategy %d", strategy)
	}
	if _, err := r.bytes(8 + 4 + 1); err != nil {
		return q, err
	}
	return q, r.done()
}

// NamesPartition reports whether a poll reply's partition id is the one
// the poll reads.
func (q Poll) NamesPartition(id uint32) bool { return q.partition == id }

// Individual reports whether the poll is an individual consumer's (kind
// 1): a group's is answered with an empty poll in this slice, whatever the
// state.
func (q Poll) Individual() bool { return q.consumerKind == consumerSingle }

// StreamResolves and TopicResolves: how far a target resolves in the
// model's state, for a poll's NotFound codes (5.28: 1009, 2010, 3007).
func (m *Model) StreamResolves(t Target) bool {
	_, _, ok := m.resolveStream(t.stream)
	return ok
}

// TopicResolves: the target's stream and topic resolve.
func (m *Model) TopicResolves(t Target) bool {
	_, s, ok := m.resolveStream(t.stream)
	if !ok {
		return false
	}
	_, _, ok = s.resolveTopic(t.topic)
	return ok
}
