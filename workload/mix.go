package workload

import (
	"fmt"
	"math/rand/v2"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Op is one request a client sends.
type Op struct {
	Operation wire.Operation
	Body      []byte
}

// Mix draws the metadata operations the replica supports, over a small
// shared pool of stream and topic names so that clients collide: creates of
// names that exist, deletes of names that do not, and so every committed
// rejection the operations have shows up (client-ops.md 7 targets the same
// outcomes).
type Mix struct {
	rng     *rand.Rand
	weights [7]int
	names   int // stream and topic names per pool
}

// NewMix draws a mix's weights (some operations may be off) from rng.
func NewMix(rng *rand.Rand) *Mix {
	m := &Mix{rng: rng, names: 3 + rng.IntN(6)}
	for i := range m.weights {
		if rng.IntN(5) > 0 {
			m.weights[i] = 1 + rng.IntN(100)
		}
	}
	m.weights[0] = max(m.weights[0], 10) // always create streams, or nothing else succeeds
	return m
}

// Next draws the next operation.
func (m *Mix) Next() Op {
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
	switch kind {
	case 0:
		return Op{wire.OperationCreateStream, metadata.CreateStream{Name: m.streamName()}.Encode()}
	case 1:
		return Op{wire.OperationUpdateStream, metadata.UpdateStream{Stream: stream, Name: m.streamName()}.Encode()}
	case 2:
		return Op{wire.OperationDeleteStream, metadata.DeleteStream{Stream: stream}.Encode()}
	case 3:
		return Op{wire.OperationCreateTopic, metadata.CreateTopic{Stream: stream, PartitionsCount: uint32(m.rng.IntN(4)),
			Name: m.topicName()}.Encode()}
	case 4:
		return Op{wire.OperationDeleteTopic, metadata.DeleteTopic{Stream: stream, Topic: m.topic()}.Encode()}
	case 5:
		return Op{wire.OperationCreatePartitions, metadata.CreatePartitions{Stream: stream, Topic: m.topic(),
			PartitionsCount: uint32(1 + m.rng.IntN(4))}.Encode()}
	default:
		return Op{wire.OperationDeletePartitions, metadata.DeletePartitions{Stream: stream, Topic: m.topic(),
			PartitionsCount: uint32(1 + m.rng.IntN(3))}.Encode()}
	}
}

func (m *Mix) streamName() string { return fmt.Sprintf("wl-s-%d", m.rng.IntN(m.names)) }
func (m *Mix) topicName() string  { return fmt.Sprintf("wl-t-%d", m.rng.IntN(m.names)) }

// stream addresses a stream by name mostly, by numeric id sometimes.
func (m *Mix) stream() metadata.Identifier {
	if m.rng.IntN(4) == 0 {
		return metadata.ID(uint32(m.rng.IntN(m.names)))
	}
	return metadata.Named(m.streamName())
}

func (m *Mix) topic() metadata.Identifier {
	if m.rng.IntN(4) == 0 {
		return metadata.ID(uint32(m.rng.IntN(m.names)))
	}
	return metadata.Named(m.topicName())
}
