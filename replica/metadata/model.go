package metadata

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// CodeRecognized reports whether code may be the committed result of a
// prepare of operation op: 0, Unauthorized (41), or one of the op's declared
// rejections (client-ops.md 2.6; Iggy's result_code_recognized).
func CodeRecognized(op wire.Operation, code uint32) bool {
	if code == CodeOK || code == CodeUnauthorized {
		return true
	}
	var declared []uint32
	switch op {
	case wire.OperationCreateStream:
		declared = []uint32{CodeStreamNameAlreadyExists, CodeTooManyStreams, CodeInvalidOptionValue}
	case wire.OperationUpdateStream:
		declared = []uint32{CodeStreamIDNotFound, CodeStreamNameAlreadyExists, CodeInvalidOptionValue}
	case wire.OperationDeleteStream:
		declared = []uint32{CodeStreamIDNotFound}
	case wire.OperationCreateTopicWithAssignments:
		declared = []uint32{CodeStreamIDNotFound, CodeTopicNameAlreadyExists, CodeInvalidPartitionsCount,
			CodeTooManyTopics, CodePartitionIDSpaceExhausted, CodeInvalidOptionValue, CodeTooManyPartitions}
	case wire.OperationDeleteTopic:
		declared = []uint32{CodeStreamIDNotFound, CodeTopicIDNotFound}
	case wire.OperationCreatePartitionsWithAssignments:
		declared = []uint32{CodeStreamIDNotFound, CodeTopicIDNotFound, CodeInvalidPartitionsCount,
			CodePartitionIDSpaceExhausted, CodeTooManyPartitions}
	case wire.OperationDeletePartitions:
		declared = []uint32{CodeStreamIDNotFound, CodeTopicIDNotFound, CodeInvalidPartitionsCount}
	}
	for _, c := range declared {
		if c == code {
			return true
		}
	}
	return false
}

// ResultFramed reports whether a committed reply of operation op carries a
// result section: every replicated metadata op of this slice except
// Register and Logout, whose [raw] reply bodies are empty.
func ResultFramed(op wire.Operation) bool {
	switch op {
	case wire.OperationCreateStream, wire.OperationUpdateStream, wire.OperationDeleteStream,
		wire.OperationCreateTopicWithAssignments, wire.OperationDeleteTopic,
		wire.OperationCreatePartitionsWithAssignments, wire.OperationDeletePartitions:
		return true
	}
	return false
}

// Model is the reference model of the metadata plane for a checker: the
// same State, applied to the committed prepares in canonical order. It adds
// the checks a model owes its history: the ops arrive in order without gaps,
// and every committed code is one the op may commit.
type Model struct {
	state *State
	last  uint64 // op of the last applied prepare; 0 before the first
}

// NewModel returns a model of an empty cluster.
func NewModel() *Model { return &Model{state: NewState()} }

// NewModelWithLimits returns a model whose state has the given ceilings (see
// NewStateWithLimits).
func NewModelWithLimits(l Limits) *Model { return &Model{state: newState(l)} }

// Apply applies the prepare of op last+1 (any op first) and returns the
// reply body every replica must have sent. It panics on a gap, on an
// operation outside the replicated set, and on an unrecognized code.
func (m *Model) Apply(h wire.PrepareHeader, body []byte) []byte {
	if m.last != 0 && h.Op != m.last+1 {
		panic(fmt.Sprintf("metadata: model applies op %d after op %d", h.Op, m.last))
	}
	reply := m.state.Apply(h, body)
	if ResultFramed(h.Operation) {
		r, err := ParseResult(reply)
		if err != nil || !CodeRecognized(h.Operation, r.Code()) {
			panic(fmt.Sprintf("metadata: op %d (%v) committed an unrecognized result %x (%v)", h.Op, h.Operation, reply, err))
		}
	}
	m.last = h.Op
	return reply
}

// LastOp returns the op of the last applied prepare (0 before the first).
func (m *Model) LastOp() uint64 { return m.last }

// State returns the model's state; treat it as read-only.
func (m *Model) State() *State { return m.state }

// Digest returns the state's digest.
func (m *Model) Digest() uint64 { return m.state.Digest() }

// Clone returns an independent copy.
func (m *Model) Clone() *Model { return &Model{state: m.state.Clone(), last: m.last} }

// StreamInfo, TopicInfo and PartitionInfo are read-only views of the state
// (for workloads, checkers and tests).
type StreamInfo struct {
	ID        uint32
	Name      string
	CreatedAt uint64
	Topics    []TopicInfo // ascending id
}

// TopicInfo describes a topic.
type TopicInfo struct {
	ID            uint32
	Name          string
	CreatedAt     uint64
	MessageExpiry uint64
	Compression   uint8
	MaxTopicSize  uint64
	Partitions    []PartitionInfo // list order (ascending ids from a correct primary)
}

// PartitionInfo describes a partition.
type PartitionInfo struct {
	ID               uint32
	ConsensusGroupID uint64
	CreatedAt        uint64
}

// Streams returns every stream in ascending id order.
func (s *State) Streams() []StreamInfo {
	var out []StreamInfo
	s.streams.each(func(sk int, st *stream) {
		si := StreamInfo{ID: uint32(sk), Name: st.name, CreatedAt: st.createdAt}
		st.topics.each(func(tk int, t *topic) {
			ti := TopicInfo{ID: uint32(tk), Name: t.name, CreatedAt: t.createdAt, MessageExpiry: t.messageExpiry,
				Compression: t.compression, MaxTopicSize: t.maxTopicSize}
			for _, p := range t.partitions {
				ti.Partitions = append(ti.Partitions, PartitionInfo{ID: p.id, ConsensusGroupID: p.groupID, CreatedAt: p.createdAt})
			}
			si.Topics = append(si.Topics, ti)
		})
		out = append(out, si)
	})
	return out
}
