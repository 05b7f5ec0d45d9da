package workload

import (
	"fmt"
	"math/rand/v2"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Op is one request a client sends.
type Op struct {
	Operation wire.Operation
	Body      []byte
	Code      uint32 // a NonReplicated read's command code
	// SetChecksum: the request carries Checksum as its request_checksum,
	// not the body's (a bad request: any value, 0 included).
	SetChecksum bool
	Checksum    wire.U128
	// Silent: no answer is owed (a SendMessages the partition plane drops
	// as undecodable, client-ops.md 5.25): the client gives up on it after
	// one timeout instead of trying the next replica.
	Silent bool
}

// Mix draws the metadata operations the replica supports, over a small
// shared pool of stream and topic names so that clients collide: creates of
// names that exist, deletes of names that do not, and so every committed
// rejection the operations have shows up (client-ops.md 7 targets the same
// outcomes).
type Mix struct {
	rng     *rand.Rand
	weights [11]int
	names   int // stream and topic names per pool
	// Sends (weights[7]): batches of 1..batchMax messages with payloads of
	// up to payloadMax bytes, user headers in some; every message id is
	// unique (nextID), so the checker can tell a retry's duplicate from a
	// lost or reordered one.
	batchMax   int
	payloadMax int
	headers    bool
	nextID     uint64
	sends      bool
	// bootstrap: the ops the mix hands out first when it sends, so that
	// the producers have a topic with partitions early (the hot stream,
	// then the hot topic).
	bootstrap int
}

// The hot stream and topic sends go to (names of the pools).
const (
	hotStream = "wl-s-0"
	hotTopic  = "wl-t-0"
)

// hot reports whether a create or a send goes to the hot names: a third of
// the creates and two thirds of the sends, when the mix sends.
func (m *Mix) hot(outOf int) bool { return m.sends && m.rng.IntN(3) < outOf }

// NewMix draws a mix's weights (some operations may be off) from rng; sends
// says whether SendMessages is among them.
func NewMix(rng *rand.Rand, sends bool) *Mix {
	m := &Mix{rng: rng, names: 3 + rng.IntN(6)}
	for i := range m.weights {
		if rng.IntN(5) > 0 {
			m.weights[i] = 1 + rng.IntN(100)
		}
	}
	m.weights[0] = max(m.weights[0], 10) // always create streams, or nothing else succeeds
	if !sends {
		m.weights[7], m.weights[8], m.weights[9], m.weights[10] = 0, 0, 0, 0
	} else {
		// A producer needs a topic with partitions: sends go mostly to one
		// hot stream and topic, which creates name often (with partitions)
		// and deletes still hit, so groups are built, written and dropped.
		// Sends are a fifth of the mix at least, and polls a tenth, so that
		// even a seed of twenty requests sends and polls.
		m.weights[3] = max(m.weights[3], 10)
		others := 0
		for i, w := range m.weights {
			if i != 7 && i != 8 {
				others += w
			}
		}
		m.weights[7] = max(m.weights[7], 20, others/4)
		m.weights[8] = max(m.weights[8], (others+m.weights[7])/9)
	}
	m.sends = sends
	m.batchMax = 1 + rng.IntN(16)
	if rng.IntN(3) == 0 {
		// Single-message batches in a third of the mixes: a poll's
		// records then say exactly where it started, so a Next poll shows
		// the stored offset it read.
		m.batchMax = 1
	}
	m.payloadMax = rng.IntN(65)
	m.headers = rng.IntN(3) == 0
	return m
}

// Next draws the next operation.
func (m *Mix) Next() Op {
	if m.sends && m.bootstrap < 4 {
		// The hot stream and topic, twice: clients run the first ops at
		// once, and a topic whose stream is not created yet is refused.
		m.bootstrap++
		if m.bootstrap%2 == 1 {
			return Op{Operation: wire.OperationCreateStream, Body: encodeCreateStream(hotStream, nil)}
		}
		return Op{Operation: wire.OperationCreateTopic, Body: encodeCreateTopic(named(hotStream), uint32(1+m.rng.IntN(4)), hotTopic, nil)}
	}
	total := 0
	for _, w := range m.weights {
		total += w
	}
	k := m.rng.IntN(total)
	kind := 0
	for kind = range m.weights {
		if k < m.weights[kind] {
			break
		}
		k -= m.weights[kind]
	}
	stream := m.stream()
	if m.sends && (kind == 1 || kind == 2 || kind == 4 || kind == 6) && m.rng.IntN(8) > 0 {
		// Renames and deletes mostly spare the hot names, so that the
		// producers' topic lives most of the run; some still drop it, with
		// its groups' messages.
		stream = m.coldStream()
	}
	switch kind {
	case 0:
		if m.hot(1) {
			return Op{Operation: wire.OperationCreateStream, Body: encodeCreateStream(hotStream, nil)}
		}
		return Op{Operation: wire.OperationCreateStream, Body: encodeCreateStream(m.streamName(), nil)}
	case 1:
		return Op{Operation: wire.OperationUpdateStream, Body: encodeUpdateStream(stream, m.streamName(), nil)}
	case 2:
		return Op{Operation: wire.OperationDeleteStream, Body: encodeStreamID(stream)}
	case 3:
		if m.hot(1) {
			return Op{Operation: wire.OperationCreateTopic, Body: encodeCreateTopic(named(hotStream), uint32(1+m.rng.IntN(4)), hotTopic, nil)}
		}
		count := uint32(m.rng.IntN(4))
		return Op{Operation: wire.OperationCreateTopic, Body: encodeCreateTopic(stream, count, m.topicName(), nil)}
	case 4:
		return Op{Operation: wire.OperationDeleteTopic, Body: encodeTopicID(stream, m.topic())}
	case 5:
		topic := m.topic()
		return Op{Operation: wire.OperationCreatePartitions, Body: encodePartitions(stream, topic, uint32(1+m.rng.IntN(4)))}
	case 7:
		return m.send(stream)
	case 8:
		return m.poll(stream)
	case 9, 10:
		return m.offset(kind == 9)
	default:
		topic := m.topic()
		return Op{Operation: wire.OperationDeletePartitions, Body: encodePartitions(stream, topic, uint32(1+m.rng.IntN(3)))}
	}
}

// send draws a SendMessages: a topic of the pool, a partitioning (mostly a
// partition id, since a topic has a few), and a batch of fresh messages.
func (m *Mix) send(stream ident) Op {
	var p partitioning
	switch k := m.rng.IntN(8); {
	case k < 6:
		// Mostly the first two partitions, which most topics have.
		p = partitioning{kind: partitionByID, partition: uint32(m.rng.IntN(2 + 2*m.rng.IntN(2)))}
	case k == 6:
		p = partitioning{kind: partitionBalanced}
	default:
		p = partitioning{kind: partitionByKey, key: []byte(fmt.Sprintf("key-%d", m.rng.IntN(16)))}
	}
	msgs := make([]wire.Message, 1+m.rng.IntN(m.batchMax))
	for i := range msgs {
		m.nextID++
		payload := make([]byte, m.rng.IntN(m.payloadMax+1))
		for j := range payload {
			payload[j] = byte(m.rng.Uint32())
		}
		msgs[i] = wire.Message{ID: wire.U128{Hi: 0x5e4d, Lo: m.nextID}, OffsetDelta: uint32(i),
			TimestampDelta: uint32(i), Payload: payload}
		if m.headers && m.rng.IntN(2) == 0 {
			msgs[i].UserHeaders = []byte(fmt.Sprintf("h%d", m.nextID))
		}
	}
	batch := encodeBatch(1, msgs)
	topic := m.topic()
	if m.hot(2) {
		stream, topic = named(hotStream), named(hotTopic)
	}
	return Op{Operation: wire.OperationSendMessages, Body: encodeSendMessages(sendPrefix(stream, topic, p, uint32(len(msgs))), batch)}
}

// offset draws a StoreConsumerOffset (store) or DeleteConsumerOffset of one
// of four consumers of the hot topic's first partitions, at either ack level;
// a stored offset is drawn near the offsets the producers reach.
func (m *Mix) offset(store bool) Op {
	q := offsetRequest{consumerKind: consumerIndividual, consumer: numeric(uint32(1 + m.rng.IntN(4))),
		stream: named(hotStream), topic: named(hotTopic), hasPartition: true}
	q.partition = uint32(m.rng.IntN(2))
	q.offset = uint64(m.rng.IntN(8 << (3 * m.rng.IntN(2))))
	q.ack = uint8(m.rng.IntN(2))
	if store {
		return Op{Operation: wire.OperationStoreConsumerOffset, Body: encodeOffsetRequest(q, true)}
	}
	return Op{Operation: wire.OperationDeleteConsumerOffset, Body: encodeOffsetRequest(q, false)}
}

// poll draws a PollMessages: mostly of the hot topic, a partition id, any
// strategy, a count of 1..20.
func (m *Mix) poll(stream ident) Op {
	q := poll{consumerKind: consumerIndividual, consumer: numeric(uint32(1 + m.rng.IntN(4))), stream: stream}
	q.topic = m.topic()
	q.hasPartition, q.partition = true, uint32(m.rng.IntN(4))
	q.strategy = uint8(1 + m.rng.IntN(5))
	q.count = uint32(1 + m.rng.IntN(20))
	if m.hot(2) {
		q.stream, q.topic = named(hotStream), named(hotTopic)
	}
	if m.sends && m.rng.IntN(3) == 0 {
		// A consumer's Next poll, as the offsets' consumers store them
		// (the hot topic's first partitions): it reads where the stored
		// offset says, so that a store seen before it commits shows.
		q.strategy, q.partition = pollNext, uint32(m.rng.IntN(2))
		q.stream, q.topic = named(hotStream), named(hotTopic)
	}
	switch q.strategy {
	case pollOffset:
		q.value = uint64(m.rng.IntN(64))
	case pollTimestamp:
		if m.rng.IntN(2) == 0 {
			q.value = 1 << 62 // after every batch
		}
	}
	return Op{Operation: wire.OperationNonReplicated, Body: encodePoll(q), Code: pollMessagesCode}
}

// coldStream names a stream of the pool other than the hot one.
func (m *Mix) coldStream() ident {
	return named(fmt.Sprintf("wl-s-%d", 1+m.rng.IntN(m.names-1)))
}

func (m *Mix) streamName() string { return fmt.Sprintf("wl-s-%d", m.rng.IntN(m.names)) }
func (m *Mix) topicName() string  { return fmt.Sprintf("wl-t-%d", m.rng.IntN(m.names)) }

// stream addresses a stream by name mostly, by numeric id sometimes.
func (m *Mix) stream() ident {
	if m.rng.IntN(4) == 0 {
		return numeric(uint32(m.rng.IntN(m.names)))
	}
	return named(m.streamName())
}

func (m *Mix) topic() ident {
	if m.rng.IntN(4) == 0 {
		return numeric(uint32(m.rng.IntN(m.names)))
	}
	return named(m.topicName())
}
