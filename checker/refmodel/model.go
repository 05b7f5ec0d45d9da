package refmodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Result codes a committed metadata op may carry (client-ops.md 2.7).
const (
	codeUnauthorized              uint32 = 41
	codeStreamIDNotFound          uint32 = 1009
	codeStreamNameAlreadyExists   uint32 = 1012
	codeTooManyStreams            uint32 = 1020
	codeTopicIDNotFound           uint32 = 2010
	codeTopicNameAlreadyExists    uint32 = 2013
	codeTooManyPartitions         uint32 = 2015
	codeInvalidPartitionsCount    uint32 = 2019
	codeTooManyTopics             uint32 = 2021
	codePartitionIDSpaceExhausted uint32 = 3013
	codeInvalidOptionValue        uint32 = 4042
)

// rootUser is the root user, slab 0 (section 3), the only user allowed to
// do anything in this slice (2.5, replica/metadata doc.go).
const rootUser = 0

// Limits mirror the replica's ceilings (section 3; DEVIATIONS 54); the
// checker passes the same values the replicas use.
type Limits struct {
	// Streams: a new stream's key must be below it, else TooManyStreams.
	Streams int
	// TopicsPerStream: a new topic's key within its stream must be below
	// it, else TooManyTopics.
	TopicsPerStream int
	// PartitionID: every partition id must be below it, else
	// PartitionIdSpaceExhausted.
	PartitionID uint32
	// Partitions bounds the live partitions of the whole cluster: a
	// CreateTopic or CreatePartitions that would take the count past it
	// commits TooManyPartitions and creates nothing. 0: no ceiling.
	Partitions int
}

// DefaultLimits returns Iggy's ceilings: 2^20 streams, 4096 topics per
// stream, partition ids below 1 000 000, and no ceiling on live partitions.
func DefaultLimits() Limits {
	return Limits{Streams: 1 << 20, TopicsPerStream: 4096, PartitionID: 1_000_000}
}

// Model is the reference model of the metadata state machine: streams,
// their topics and partitions. Apply it to committed prepares in commit
// order.
type Model struct {
	limits  Limits
	streams []*stream // slab: index = key, nil = vacant
	// highestGroup is the highest consensus group id any successful create
	// committed, deleted or not (DEVIATIONS 15).
	highestGroup uint64
	live         int // live partitions, for Limits.Partitions
}

type stream struct {
	name      string
	createdAt uint64
	options   []stored // ordered by key
	topics    []*topic // slab
}

type topic struct {
	name          string
	createdAt     uint64
	messageExpiry uint64
	compression   uint8
	maxTopicSize  uint64
	options       []stored    // ordered by key, with provenance
	partitions    []partition // list order
}

type partition struct {
	id        uint32
	group     uint64
	createdAt uint64
}

// New returns the model of an empty cluster with the given ceilings.
func New(l Limits) *Model { return &Model{limits: l} }

// HighestGroupID returns the highest consensus group id a successful
// CreateTopic or CreatePartitions committed, whether its partition still
// exists or not; a new primary mints ids above it (replica/metadata doc.go).
func (m *Model) HighestGroupID() uint64 { return m.highestGroup }

// LivePartitions returns the number of partitions that exist.
func (m *Model) LivePartitions() int { return m.live }

// lowestVacant returns the lowest vacant key of a slab (section 3: a pure
// function of the occupied set).
func lowestVacant[T any](slab []*T) int {
	for i, x := range slab {
		if x == nil {
			return i
		}
	}
	return len(slab)
}

func put[T any](slab []*T, key int, x *T) []*T {
	for len(slab) <= key {
		slab = append(slab, nil)
	}
	slab[key] = x
	return slab
}

// trim drops vacant keys at the end, so that equal occupied sets have equal
// slabs.
func trim[T any](slab []*T) []*T {
	for len(slab) > 0 && slab[len(slab)-1] == nil {
		slab = slab[:len(slab)-1]
	}
	return slab
}

// resolveStream resolves an identifier (1.2): a numeric one is the slab key,
// a string one an exact match on a current name.
func (m *Model) resolveStream(id identifier) (uint32, *stream, bool) {
	if id.numeric {
		if int64(id.id) < int64(len(m.streams)) && m.streams[id.id] != nil {
			return id.id, m.streams[id.id], true
		}
		return 0, nil, false
	}
	for k, s := range m.streams {
		if s != nil && s.name == id.name {
			return uint32(k), s, true
		}
	}
	return 0, nil, false
}

func (s *stream) resolveTopic(id identifier) (uint32, *topic, bool) {
	if id.numeric {
		if int64(id.id) < int64(len(s.topics)) && s.topics[id.id] != nil {
			return id.id, s.topics[id.id], true
		}
		return 0, nil, false
	}
	for k, t := range s.topics {
		if t != nil && t.name == id.name {
			return uint32(k), t, true
		}
	}
	return 0, nil, false
}

func (m *Model) streamNamed(name string) (int, bool) {
	for k, s := range m.streams {
		if s != nil && s.name == name {
			return k, true
		}
	}
	return 0, false
}

// Apply applies a committed prepare (ops in commit order) and returns the
// reply body every replica must have sent for it: a result section (2.2)
// then the payload of a success for the metadata ops, the empty body for
// Register and Logout. It panics on a prepare no correct primary builds (an
// operation outside the committed set, a body that does not decode), as a
// replica's commit path does; TryApply returns that as an error instead.
func (m *Model) Apply(h wire.PrepareHeader, body []byte) []byte {
	reply, err := m.TryApply(h, body)
	if err != nil {
		panic(err)
	}
	return reply
}

// TryApply is Apply with a corrupt prepare reported as an error; the model
// is then unchanged.
func (m *Model) TryApply(h wire.PrepareHeader, body []byte) ([]byte, error) {
	// The stored options keep slices of the body: a copy, so that the
	// caller may reuse its buffer.
	body = bytes.Clone(body)
	switch h.Operation {
	case wire.OperationRegister, wire.OperationLogout:
		// Their effects are on the client table; on the raw path the body is
		// empty (5.1, 5.2).
		if len(body) != 0 {
			return nil, fmt.Errorf("%w: %v with a %d-byte body", errBody, h.Operation, len(body))
		}
		return []byte{}, nil
	case wire.OperationCreateStream:
		x, err := decodeCreateStream(body)
		if err != nil {
			return nil, err
		}
		return m.createStream(h, x), nil
	case wire.OperationUpdateStream:
		x, err := decodeUpdateStream(body)
		if err != nil {
			return nil, err
		}
		return m.updateStream(h, x), nil
	case wire.OperationDeleteStream:
		x, err := decodeStream(body)
		if err != nil {
			return nil, err
		}
		return m.deleteStream(h, x), nil
	case wire.OperationCreateTopicWithAssignments:
		x, err := decodeCreateTopicReplicated(body)
		if err != nil {
			return nil, err
		}
		return m.createTopic(h, x), nil
	case wire.OperationDeleteTopic:
		x, err := decodeTopic(body)
		if err != nil {
			return nil, err
		}
		return m.deleteTopic(h, x), nil
	case wire.OperationCreatePartitionsWithAssignments:
		x, err := decodeCreatePartitionsReplicated(body)
		if err != nil {
			return nil, err
		}
		return m.createPartitions(h, x), nil
	case wire.OperationDeletePartitions:
		x, err := decodePartitions("DeletePartitions", body)
		if err != nil {
			return nil, err
		}
		return m.deletePartitions(h, x), nil
	}
	return nil, fmt.Errorf("refmodel: operation %v is never committed", h.Operation)
}

// resultOK is a success: count 0, then the payload (2.2).
func resultOK(payload []byte) []byte {
	return append([]byte{0, 0, 0, 0}, payload...)
}

// rejection is a committed rejection: count 1, index 0, the code (2.2).
func rejection(code uint32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 1)
	b = binary.LittleEndian.AppendUint32(b, 0)
	return binary.LittleEndian.AppendUint32(b, code)
}

// allowed is the in-apply gate (2.5) once the op's target resolved: root
// is always allowed, and no other user holds a permission in this slice.
func allowed(h wire.PrepareHeader) bool { return h.UserID == rootUser }

// createStream: 5.3. Unscoped, so the gate comes first; then the name, the
// options, the ceiling.
func (m *Model) createStream(h wire.PrepareHeader, x createStreamBody) []byte {
	if !allowed(h) {
		return rejection(codeUnauthorized)
	}
	if _, taken := m.streamNamed(x.name); taken {
		return rejection(codeStreamNameAlreadyExists)
	}
	options, ok := readStored(x.options, true)
	if !ok {
		return rejection(codeInvalidOptionValue)
	}
	key := lowestVacant(m.streams)
	if key >= m.limits.Streams {
		return rejection(codeTooManyStreams)
	}
	m.streams = put(m.streams, key, &stream{name: x.name, createdAt: h.Timestamp, options: options})
	// A StreamResponse (section 4) with every count 0 and the request's
	// block echoed as sent, then zero TopicHeaders: the GetStream shape.
	b := binary.LittleEndian.AppendUint32(nil, uint32(key))
	b = binary.LittleEndian.AppendUint64(b, h.Timestamp)
	b = binary.LittleEndian.AppendUint32(b, 0) // topics_count
	b = binary.LittleEndian.AppendUint64(b, 0) // size_bytes
	b = binary.LittleEndian.AppendUint64(b, 0) // messages_count
	b = appendName(b, x.name)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(x.options)))
	b = append(b, x.options...)
	return resultOK(b)
}

// updateStream: 5.4. A rename to the stream's own name is no conflict; the
// options are a patch that must still fit one block (DEVIATIONS 16).
func (m *Model) updateStream(h wire.PrepareHeader, x updateStreamBody) []byte {
	key, s, ok := m.resolveStream(x.stream)
	if !ok {
		return rejection(codeStreamIDNotFound)
	}
	if !allowed(h) {
		return rejection(codeUnauthorized)
	}
	if other, taken := m.streamNamed(x.name); taken && other != int(key) {
		return rejection(codeStreamNameAlreadyExists)
	}
	with, ok := readStored(x.options, true)
	if !ok {
		return rejection(codeInvalidOptionValue)
	}
	options := patch(s.options, with)
	if !fitsOneBlock(options) {
		return rejection(codeInvalidOptionValue)
	}
	s.name, s.options = x.name, options
	return resultOK(nil)
}

// deleteStream: 5.5. The stream's topics and partitions go with it and its
// key becomes free.
func (m *Model) deleteStream(h wire.PrepareHeader, x streamBody) []byte {
	key, s, ok := m.resolveStream(x.stream)
	if !ok {
		return rejection(codeStreamIDNotFound)
	}
	if !allowed(h) {
		return rejection(codeUnauthorized)
	}
	for _, t := range s.topics {
		if t != nil {
			m.live -= len(t.partitions)
		}
	}
	m.streams[key] = nil
	m.streams = trim(m.streams)
	return resultOK(nil)
}

// exceedsLive reports whether adding n partitions passes the ceiling on live
// partitions (DEVIATIONS 54).
func (m *Model) exceedsLive(n int) bool {
	return m.limits.Partitions > 0 && m.live+n > m.limits.Partitions
}

// createTopic: 5.7, the committed form 64. The gate is stream-scoped (2.5).
func (m *Model) createTopic(h wire.PrepareHeader, x createTopicReplicated) []byte {
	_, s, ok := m.resolveStream(x.request.stream)
	if !ok {
		return rejection(codeStreamIDNotFound)
	}
	if !allowed(h) {
		return rejection(codeUnauthorized)
	}
	if _, _, taken := s.resolveTopic(identifier{name: x.request.name}); taken {
		return rejection(codeTopicNameAlreadyExists)
	}
	key := lowestVacant(s.topics)
	if key >= m.limits.TopicsPerStream {
		return rejection(codeTooManyTopics)
	}
	// The ceiling on live partitions (DEVIATIONS 54, which does not place
	// it): next to the other ceiling, before the checks a correct primary
	// cannot fail, as the replica orders it.
	if m.exceedsLive(len(x.parts)) {
		return rejection(codeTooManyPartitions)
	}
	// Partition ids, in order: each in range, then unique so far.
	seen := make(map[uint32]bool, len(x.parts))
	for _, p := range x.parts {
		if p.id >= m.limits.PartitionID {
			return rejection(codePartitionIDSpaceExhausted)
		}
		if seen[p.id] {
			return rejection(codeInvalidPartitionsCount)
		}
		seen[p.id] = true
	}
	explicit, ok1 := readStored(x.request.options, true)
	derived, ok2 := readStored(x.derived, false)
	if !ok1 || !ok2 {
		return rejection(codeInvalidOptionValue)
	}

	// The stored map: the derived entries, the explicit ones over them. The
	// typed values are the explicit block read over the derived one, and a
	// catalog key the map holds reports its resolved value, so that a 0
	// sentinel a client named is not what the map keeps (provenance stays).
	resolved := readCatalog(x.request.options).over(readCatalog(x.derived))
	options := patch(derived, explicit)
	for _, r := range resolved.canonical() {
		i, found := slices.BinarySearchFunc(options, r.key, func(s stored, k string) int { return strings.Compare(s.key, k) })
		if found {
			options[i].kind, options[i].value = r.kind, r.value
		}
	}
	t := &topic{
		name:          x.request.name,
		createdAt:     h.Timestamp,
		messageExpiry: resolved.messageExpiry.or(0), // 0: server default
		compression:   resolved.compression.or(compressionNone),
		maxTopicSize:  resolved.maxTopicSize.or(0),
		options:       options,
	}
	for _, p := range x.parts {
		t.partitions = append(t.partitions, partition{id: p.id, group: p.group, createdAt: h.Timestamp})
		m.highestGroup = max(m.highestGroup, p.group)
	}
	s.topics = put(s.topics, key, t)
	m.live += len(t.partitions)

	// One TopicHeader then a PartitionResponse per partition (section 4):
	// the GetTopic shape.
	b := binary.LittleEndian.AppendUint32(nil, uint32(key))
	b = binary.LittleEndian.AppendUint64(b, t.createdAt)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.partitions)))
	b = binary.LittleEndian.AppendUint64(b, t.messageExpiry)
	b = append(b, t.compression)
	b = binary.LittleEndian.AppendUint64(b, t.maxTopicSize)
	b = binary.LittleEndian.AppendUint64(b, 0) // size_bytes
	b = binary.LittleEndian.AppendUint64(b, 0) // messages_count
	b = appendName(b, t.name)
	for _, explicit := range []bool{true, false} {
		block := encodeStored(t.options, explicit)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(block)))
		b = append(b, block...)
	}
	for _, p := range t.partitions {
		b = binary.LittleEndian.AppendUint32(b, p.id)
		b = binary.LittleEndian.AppendUint64(b, p.createdAt)
		b = binary.LittleEndian.AppendUint32(b, 0) // segments_count
		b = binary.LittleEndian.AppendUint64(b, 0) // current_offset
		b = binary.LittleEndian.AppendUint64(b, 0) // size_bytes
		b = binary.LittleEndian.AppendUint64(b, 0) // messages_count
	}
	return resultOK(b)
}

// resolveTopic resolves a stream and one of its topics, with the NotFound
// code of the first miss.
func (m *Model) resolveTopic(sid, tid identifier) (*stream, uint32, *topic, uint32) {
	_, s, ok := m.resolveStream(sid)
	if !ok {
		return nil, 0, nil, codeStreamIDNotFound
	}
	key, t, ok := s.resolveTopic(tid)
	if !ok {
		return nil, 0, nil, codeTopicIDNotFound
	}
	return s, key, t, 0
}

// deleteTopic: 5.9. The gate is topic-scoped, so both NotFounds come first.
func (m *Model) deleteTopic(h wire.PrepareHeader, x topicBody) []byte {
	s, key, t, code := m.resolveTopic(x.stream, x.topic)
	if code != 0 {
		return rejection(code)
	}
	if !allowed(h) {
		return rejection(codeUnauthorized)
	}
	m.live -= len(t.partitions)
	s.topics[key] = nil
	s.topics = trim(s.topics)
	return resultOK(nil)
}

// createPartitions: 5.11, the committed form 65. The offsets are relative
// to base, one past the highest id (0 for a topic with none).
func (m *Model) createPartitions(h wire.PrepareHeader, x createPartitionsReplicated) []byte {
	_, _, t, code := m.resolveTopic(x.request.stream, x.request.topic)
	if code != 0 {
		return rejection(code)
	}
	if !allowed(h) {
		return rejection(codeUnauthorized)
	}
	// The ceiling on live partitions first, before the checks a correct
	// primary cannot fail (the replica's order; DEVIATIONS 54 gives none).
	if m.exceedsLive(len(x.parts)) {
		return rejection(codeTooManyPartitions)
	}
	base := uint64(0)
	for _, p := range t.partitions {
		base = max(base, uint64(p.id)+1)
	}
	if base > 1<<32-1 {
		return rejection(codeInvalidPartitionsCount)
	}
	ids := make([]uint32, 0, len(x.parts))
	seen := make(map[uint32]bool, len(x.parts))
	for _, p := range x.parts {
		id := base + uint64(p.id)
		if id > 1<<32-1 {
			return rejection(codeInvalidPartitionsCount)
		}
		if uint32(id) >= m.limits.PartitionID {
			return rejection(codePartitionIDSpaceExhausted)
		}
		if seen[uint32(id)] {
			return rejection(codeInvalidPartitionsCount)
		}
		seen[uint32(id)] = true
		ids = append(ids, uint32(id))
	}
	for i, id := range ids {
		t.partitions = append(t.partitions, partition{id: id, group: x.parts[i].group, createdAt: h.Timestamp})
		m.highestGroup = max(m.highestGroup, x.parts[i].group)
	}
	m.live += len(ids)
	return resultOK(nil)
}

// deletePartitions: 5.12. The last count partitions of the list go (the
// highest ids, from a correct primary); 0 is a successful no-op.
func (m *Model) deletePartitions(h wire.PrepareHeader, x partitionsBody) []byte {
	_, _, t, code := m.resolveTopic(x.stream, x.topic)
	if code != 0 {
		return rejection(code)
	}
	if !allowed(h) {
		return rejection(codeUnauthorized)
	}
	if uint64(x.count) > uint64(len(t.partitions)) {
		return rejection(codeInvalidPartitionsCount)
	}
	t.partitions = t.partitions[:len(t.partitions)-int(x.count)]
	m.live -= int(x.count)
	return resultOK(nil)
}

// Reply returns the whole reply frame a replica caches for a committed
// prepare with the given reply body (wire.md 5.20): a Reply header whose
// cluster, release and replica are the prepare's, request_checksum, client,
// op, timestamp, request and operation copied, commit = op, status and
// context 0, and view 0, not the prepare's (DEVIATIONS 12: a retransmitted
// prepare is re-stamped with a new view, and every replica must cache the
// same bytes).
//
// The bytes are laid out here from wire.md 2 and 5.20, not by the replica's
// encoder: a reply encoder that drops or moves a field would otherwise
// build the model's reply the same wrong way.
func Reply(h wire.PrepareHeader, body []byte) []byte {
	le := binary.LittleEndian
	f := make([]byte, wire.HeaderSize+len(body))
	put128 := func(off int, x wire.U128) {
		le.PutUint64(f[off:], x.Lo)
		le.PutUint64(f[off+8:], x.Hi)
	}
	// checksum and checksum_body stay 0: a Reply is not sealed (wire.md
	// 3.2, 3.4); context and status are 0, and so is the view.
	put128(32, h.Cluster)
	le.PutUint32(f[48:], uint32(len(f)))
	le.PutUint32(f[56:], h.Release)
	f[60] = byte(wire.CommandReply)
	f[61] = h.Replica
	put128(128, h.RequestChecksum)
	put128(160, h.Client)
	le.PutUint64(f[176:], h.Op)
	le.PutUint64(f[184:], h.Op) // commit = op
	le.PutUint64(f[192:], h.Timestamp)
	le.PutUint64(f[200:], h.Request)
	f[208] = byte(h.Operation)
	copy(f[wire.HeaderSize:], body)
	return f
}

// Clone returns a deep copy of the model: applying to one leaves the other
// as it was (a linearizability search steps many copies from one state).
func (m *Model) Clone() *Model {
	c := &Model{limits: m.limits, highestGroup: m.highestGroup, live: m.live}
	c.streams = make([]*stream, len(m.streams))
	for i, s := range m.streams {
		if s == nil {
			continue
		}
		cs := &stream{name: s.name, createdAt: s.createdAt, options: cloneStored(s.options)}
		cs.topics = make([]*topic, len(s.topics))
		for j, t := range s.topics {
			if t == nil {
				continue
			}
			ct := *t
			ct.options = cloneStored(t.options)
			ct.partitions = append([]partition(nil), t.partitions...)
			cs.topics[j] = &ct
		}
		c.streams[i] = cs
	}
	return c
}

func cloneStored(o []stored) []stored {
	out := make([]stored, len(o))
	for i, s := range o {
		out[i] = s
		out[i].value = append([]byte(nil), s.value...)
	}
	return out
}

// Fingerprint returns the model's state as bytes: equal states, and only
// they, have equal fingerprints.
func (m *Model) Fingerprint() []byte {
	b := binary.LittleEndian.AppendUint64(nil, m.highestGroup)
	b = binary.LittleEndian.AppendUint64(b, uint64(m.live))
	str := func(s string) {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	opts := func(o []stored) {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(o)))
		for _, s := range o {
			str(s.key)
			b = append(b, s.kind)
			str(string(s.value))
			if s.explicit {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	}
	for i, s := range m.streams {
		if s == nil {
			continue
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(i))
		str(s.name)
		b = binary.LittleEndian.AppendUint64(b, s.createdAt)
		opts(s.options)
		for j, t := range s.topics {
			if t == nil {
				continue
			}
			b = append(b, 't')
			b = binary.LittleEndian.AppendUint32(b, uint32(j))
			str(t.name)
			b = binary.LittleEndian.AppendUint64(b, t.createdAt)
			b = binary.LittleEndian.AppendUint64(b, t.messageExpiry)
			b = append(b, t.compression)
			b = binary.LittleEndian.AppendUint64(b, t.maxTopicSize)
			opts(t.options)
			b = binary.LittleEndian.AppendUint32(b, uint32(len(t.partitions)))
			for _, p := range t.partitions {
				b = binary.LittleEndian.AppendUint32(b, p.id)
				b = binary.LittleEndian.AppendUint64(b, p.group)
				b = binary.LittleEndian.AppendUint64(b, p.createdAt)
			}
		}
		b = append(b, 's')
	}
	return b
}
