package metadata

import (
	"encoding/binary"
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"
	"math"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// Limits are the id ceilings of the state machine (client-ops.md 3). Every
// replica must use the same ones; production uses DefaultLimits.
type Limits struct {
	Streams         int    // a new stream's key must be below this: TooManyStreams
	TopicsPerStream int    // a new topic's key must be below this: TooManyTopics
	PartitionID     uint32 // a partition id must be below this: PartitionIdSpaceExhausted
	// Partitions bounds the live partitions of the whole cluster: a
	// CreateTopic or CreatePartitions that would pass it commits
	// TooManyPartitions (2015) and creates nothing. Iggy has no such
	// ceiling; a replica's device has a superblock slot per partition it
	// runs (replica.Profile.PartitionSlots), and every replica runs every
	// partition (DEVIATIONS.md 54). 0: no ceiling.
	Partitions int
}

// DefaultLimits returns Iggy's ceilings.
func DefaultLimits() Limits {
	return Limits{Streams: 1 << 20, TopicsPerStream: 4096, PartitionID: 1_000_000}
}

// RootUserID is the root user, slab 0, created at boot with every
// permission. It is the only user in this slice.
const RootUserID uint32 = 0

type partition struct {
	id              uint32
	groupID         uint64
	createdAt       uint64
	createdRevision uint64
}

type topic struct {
	name          string
	createdAt     uint64
	messageExpiry uint64
	compression   uint8
	maxTopicSize  uint64
	options       optionMap
	partitions    []partition // in creation order
}

type stream struct {
	name        string
	createdAt   uint64
	options     optionMap
	topics      slab[topic]
	topicByName map[string]uint32 // lookups only
}

// State is the metadata state machine of this slice: streams, their topics
// and partitions (client-ops.md 3 and 5). Apply it to committed prepares in
// log order; it is deterministic, and Digest summarizes it.
type State struct {
	limits       Limits
	streams      slab[stream]
	streamByName map[string]uint32 // lookups only
	// revision counts the applies that changed the partition set (Iggy's
	// StreamsInner.revision); new partitions record it.
	revision uint64
	// highestGroupID is the highest consensus group id of any partition a
	// successful CreateTopic or CreatePartitions added, deleted or not. It
	// seeds a GroupAllocator (client-ops.md 3).
	highestGroupID uint64
}

// NewState returns an empty state with DefaultLimits.
func NewState() *State { return newState(DefaultLimits()) }

// NewStateWithLimits returns an empty state with smaller ceilings, so that a
// simulation reaches them; every replica and the checker's model must use the
// same. Each limit must be within Iggy's.
func NewStateWithLimits(l Limits) *State { return newState(l) }

func newState(l Limits) *State {
	if l.Streams < 1 || l.Streams > 1<<20 || l.TopicsPerStream < 1 || l.TopicsPerStream > 4096 ||
		l.PartitionID < 1 || l.PartitionID > 1_000_000 || l.Partitions < 0 {
		panic(fmt.Sprintf("metadata: limits %+v outside Iggy's", l))
	}
	return &State{limits: l, streamByName: map[string]uint32{}}
}

// HighestGroupID returns the highest consensus group id committed so far.
func (s *State) HighestGroupID() uint64 { return s.highestGroupID }

// Revision returns the partition-set revision.
func (s *State) Revision() uint64 { return s.revision }

// Clone returns an independent copy.
func (s *State) Clone() *State {
	c := &State{limits: s.limits, revision: s.revision, highestGroupID: s.highestGroupID,
		streamByName: make(map[string]uint32, len(s.streamByName))}
	for k, v := range s.streamByName {
		c.streamByName[k] = v
	}
	c.streams = s.streams.clone(func(st *stream) *stream {
		cs := &stream{name: st.name, createdAt: st.createdAt, options: st.options.clone(),
			topicByName: make(map[string]uint32, len(st.topicByName))}
		for k, v := range st.topicByName {
			cs.topicByName[k] = v
		}
		cs.topics = st.topics.clone(func(t *topic) *topic {
			ct := *t
			ct.options = t.options.clone()
			ct.partitions = append([]partition(nil), t.partitions...)
			return &ct
		})
		return cs
	})
	return c
}

func (s *State) resolveStream(id Identifier) (uint32, *stream, bool) {
	var key uint32
	switch id.Kind {
	case IdentifierNumeric:
		key = id.Numeric
	case IdentifierString:
		k, ok := s.streamByName[id.Name]
		if !ok {
			return 0, nil, false
		}
		key = k
	default:
		return 0, nil, false
	}
	st, ok := s.streams.get(key)
	return key, st, ok
}

func (st *stream) resolveTopic(id Identifier) (uint32, *topic, bool) {
	var key uint32
	switch id.Kind {
	case IdentifierNumeric:
		key = id.Numeric
	case IdentifierString:
		k, ok := st.topicByName[id.Name]
		if !ok {
			return 0, nil, false
		}
		key = k
	default:
		return 0, nil, false
	}
	t, ok := st.topics.get(key)
	return key, t, ok
}

// ResolveStream returns the id of the stream id addresses.
func (s *State) ResolveStream(id Identifier) (uint32, bool) {
	key, _, ok := s.resolveStream(id)
	return key, ok
}

// ResolveTopic returns the ids of the stream and topic addressed.
func (s *State) ResolveTopic(streamID, topicID Identifier) (uint32, uint32, bool) {
	sk, st, ok := s.resolveStream(streamID)
	if !ok {
		return 0, 0, false
	}
	tk, _, ok := st.resolveTopic(topicID)
	return sk, tk, ok
}

// Apply applies one committed metadata prepare and returns its reply body
// (client-ops.md 2.1 shape A): for every result-framed op a result section,
// then the payload of a success; for Register and Logout the empty body,
// which is the [raw] consensus-plane reply (their effects are on the client
// table, not here). The reply header's operation is the prepare's, so
// CreateTopic and CreatePartitions answers carry 64 and 65.
//
// Apply checks, in order, the in-apply authorization (authorize) and then
// the op's committed rejections in the order of client-ops.md 5.3-5.12; a
// rejection changes nothing. New ids are the lowest free keys; created_at is
// the prepare timestamp.
//
// The prepare body must be one Preflight accepted and Project produced: an
// operation outside the supported set, or a body that does not decode, is a
// corrupt log and panics (as Iggy's commit path does).
func (s *State) Apply(h wire.PrepareHeader, body []byte) []byte {
	switch h.Operation {
	case wire.OperationRegister, wire.OperationLogout:
		return []byte{}
	}
	code, payload := s.apply(h, body)
	if code != CodeOK {
		return ResultRejection(code)
	}
	return ResultOK(payload)
}

func mustDecode[T any](op wire.Operation, body []byte, decode func([]byte) (T, error)) T {
	x, err := decode(body)
	if err != nil {
		panic(fmt.Sprintf("metadata: committed %v body does not decode: %v", op, err))
	}
	return x
}

func (s *State) apply(h wire.PrepareHeader, body []byte) (uint32, []byte) {
	op := h.Operation
	switch op {
	case wire.OperationCreateStream:
		x := mustDecode(op, body, DecodeCreateStream)
		if code := s.authorize(h.UserID, op, nil, nil); code != CodeOK {
			return code, nil
		}
		return s.createStream(x, h.Timestamp)
	case wire.OperationUpdateStream:
		x := mustDecode(op, body, DecodeUpdateStream)
		if code := s.authorize(h.UserID, op, &x.Stream, nil); code != CodeOK {
			return code, nil
		}
		return s.updateStream(x)
	case wire.OperationDeleteStream:
		x := mustDecode(op, body, DecodeDeleteStream)
		if code := s.authorize(h.UserID, op, &x.Stream, nil); code != CodeOK {
			return code, nil
		}
		return s.deleteStream(x)
	case wire.OperationCreateTopicWithAssignments:
		x := mustDecode(op, body, DecodeCreateTopicWithAssignments)
		if code := s.authorize(h.UserID, op, &x.Request.Stream, nil); code != CodeOK {
			return code, nil
		}
		return s.createTopic(x, h.Timestamp)
	case wire.OperationDeleteTopic:
		x := mustDecode(op, body, DecodeDeleteTopic)
		if code := s.authorize(h.UserID, op, &x.Stream, &x.Topic); code != CodeOK {
			return code, nil
		}
		return s.deleteTopic(x)
	case wire.OperationCreatePartitionsWithAssignments:
		x := mustDecode(op, body, DecodeCreatePartitionsWithAssignments)
		if code := s.authorize(h.UserID, op, &x.Request.Stream, &x.Request.Topic); code != CodeOK {
			return code, nil
		}
		return s.createPartitions(x, h.Timestamp)
	case wire.OperationDeletePartitions:
		x := mustDecode(op, body, DecodeDeletePartitions)
		if code := s.authorize(h.UserID, op, &x.Stream, &x.Topic); code != CodeOK {
			return code, nil
		}
		return s.deletePartitions(x)
	}
	panic(fmt.Sprintf("metadata: a committed %v prepare (not in this slice's replicated set)", op))
}

// authorize is the in-apply gate (client-ops.md 2.5). Root (user 0) is
// always allowed. In this slice root is the only user and no other user has
// any permission, so every rule of the gate comes down to: CreateStream is
// refused; an op scoped to a stream (UpdateStream, DeleteStream, CreateTopic)
// or to a topic (DeleteTopic, CreatePartitions, DeletePartitions) is refused
// when its stream (and topic) resolve, and passes to apply otherwise, so that
// NotFound beats Unauthorized. A refusal commits as Unauthorized (41).
func (s *State) authorize(user uint32, op wire.Operation, streamID, topicID *Identifier) uint32 {
	if user == RootUserID {
		return CodeOK
	}
	if streamID == nil {
		return CodeUnauthorized
	}
	_, st, ok := s.resolveStream(*streamID)
	if !ok {
		return CodeOK
	}
	if topicID != nil {
		if _, _, ok := st.resolveTopic(*topicID); !ok {
			return CodeOK
		}
	}
	return CodeUnauthorized
}

// decodePairs decodes an options block that decoded once already.
func decodePairs(block []byte) []wire.Option {
	pairs, err := wire.DecodeOptions(block)
	if err != nil {
		panic(fmt.Sprintf("metadata: a decoded options block fails to decode again: %v", err))
	}
	return pairs
}

// createStream: client-ops.md 5.3.
func (s *State) createStream(x CreateStream, now uint64) (uint32, []byte) {
	if _, taken := s.streamByName[x.Name]; taken {
		return CodeStreamNameAlreadyExists, nil
	}
	options, ok := optionMapFromPairs(decodePairs(x.Options), true)
	if !ok {
		return CodeInvalidOptionValue, nil
	}
	key := s.streams.vacant()
	if key >= s.limits.Streams {
		return CodeTooManyStreams, nil
	}
	st := &stream{name: x.Name, createdAt: now, options: options, topicByName: map[string]uint32{}}
	if got := s.streams.insert(st); got != key {
		panic(fmt.Sprintf("metadata: stream inserted at %d, vacant was %d", got, key))
	}
	s.streamByName[x.Name] = uint32(key)
	// The GetStream shape: the stream, then its (zero) topics.
	return CodeOK, StreamResponse{ID: uint32(key), CreatedAt: now, Name: x.Name, Options: x.Options}.Append(nil)
}

// updateStream: client-ops.md 5.4. The options are a patch. vopr also
// refuses, with InvalidOptionValue, a patch after which the stream's options
// would no longer fit one options block (1024 pairs, 100 000 bytes).
func (s *State) updateStream(x UpdateStream) (uint32, []byte) {
	key, st, ok := s.resolveStream(x.Stream)
	if !ok {
		return CodeStreamIDNotFound, nil
	}
	if other, taken := s.streamByName[x.Name]; taken && other != key {
		return CodeStreamNameAlreadyExists, nil
	}
	patch, ok := optionMapFromPairs(decodePairs(x.Options), true)
	if !ok {
		return CodeInvalidOptionValue, nil
	}
	merged := st.options.clone().extend(patch)
	if !merged.fitsBlock() {
		return CodeInvalidOptionValue, nil
	}
	if !bug.RenameKeepsOldName { // canary_rename_keeps_old_name: the old name stays bound to the stream
		delete(s.streamByName, st.name)
	}
	st.name = x.Name
	st.options = merged
	s.streamByName[x.Name] = key
	return CodeOK, nil
}

// deleteStream: client-ops.md 5.5.
func (s *State) deleteStream(x DeleteStream) (uint32, []byte) {
	key, st, ok := s.resolveStream(x.Stream)
	if !ok {
		return CodeStreamIDNotFound, nil
	}
	if !bug.DeleteKeepsName { // canary_delete_keeps_name: the deleted stream's name stays taken
		delete(s.streamByName, st.name)
	}
	s.streams.remove(int(key))
	s.revision++
	return CodeOK, nil
}

// createTopic applies a replicated CreateTopic (64): client-ops.md 5.7.
func (s *State) createTopic(x CreateTopicWithAssignments, now uint64) (uint32, []byte) {
	_, st, ok := s.resolveStream(x.Request.Stream)
	if !ok {
		return CodeStreamIDNotFound, nil
	}
	if _, taken := st.topicByName[x.Request.Name]; taken {
		return CodeTopicNameAlreadyExists, nil
	}
	if bug.TopicNameGlobal && s.topicNameAnywhere(x.Request.Name) {
		return CodeTopicNameAlreadyExists, nil // canary_topic_name_global: topic names unique across streams
	}
	key := st.topics.vacant()
	if key >= s.limits.TopicsPerStream {
		return CodeTooManyTopics, nil
	}
	if s.limits.Partitions > 0 && s.livePartitions()+len(x.Partitions) > s.limits.Partitions {
		return CodeTooManyPartitions, nil
	}
	seen := make(map[uint32]bool, len(x.Partitions))
	for _, p := range x.Partitions {
		if p.PartitionID >= s.limits.PartitionID {
			return CodePartitionIDSpaceExhausted, nil
		}
		if seen[p.PartitionID] {
			return CodeInvalidPartitionsCount, nil
		}
		seen[p.PartitionID] = true
	}
	// Both blocks were resolved by the primary; apply reads the typed
	// values leniently (Iggy's parse_committed).
	explicitPairs, derivedPairs := decodePairs(x.Request.Options), decodePairs(x.Derived)
	explicit, _ := parseTopicOptions(explicitPairs, false)
	derived, _ := parseTopicOptions(derivedPairs, false)
	explicitMap, ok1 := optionMapFromPairs(explicitPairs, true)
	derivedMap, ok2 := optionMapFromPairs(derivedPairs, false)
	if !ok1 || !ok2 {
		return CodeInvalidOptionValue, nil
	}
	resolved := explicit.resolvedOver(derived)
	options := derivedMap.extend(explicitMap)
	// A key the client sent as a sentinel reports the resolved value;
	// provenance stays as sent.
	for _, o := range resolved.pairs(true) {
		if i, found := options.get(o.Key); found {
			options[i].Kind, options[i].Value = o.Kind, o.Value
		}
	}
	t := &topic{
		name: x.Request.Name, createdAt: now, compression: CompressionNone, options: options,
		partitions: make([]partition, 0, len(x.Partitions)),
	}
	if resolved.has[keyMessageExpiry] {
		t.messageExpiry = resolved.messageExpiry
	}
	if resolved.has[keyCompression] {
		t.compression = resolved.compression
	}
	if resolved.has[keyMaxTopicSize] {
		t.maxTopicSize = resolved.maxTopicSize
	}
	s.revision++
	for _, p := range x.Partitions {
		t.partitions = append(t.partitions, partition{id: p.PartitionID, groupID: p.ConsensusGroupID,
			createdAt: now, createdRevision: s.revision})
		s.highestGroupID = max(s.highestGroupID, p.ConsensusGroupID)
	}
	if got := st.topics.insert(t); got != key {
		panic(fmt.Sprintf("metadata: topic inserted at %d, vacant was %d", got, key))
	}
	st.topicByName[t.name] = uint32(key)
	return CodeOK, t.createReply(uint32(key))
}

// createReply is the GetTopic shape: the TopicHeader, then one
// PartitionResponse per partition. As in Iggy, a topic whose options no
// longer fit an options block gets an empty payload.
func (t *topic) createReply(key uint32) []byte {
	if !t.options.fitsSplit() {
		return nil
	}
	b := TopicHeader{
		ID: key, CreatedAt: t.createdAt, PartitionsCount: uint32(len(t.partitions)),
		MessageExpiry: t.messageExpiry, Compression: t.compression, MaxTopicSize: t.maxTopicSize,
		Name: t.name, Explicit: t.options.block(false, true), Derived: t.options.block(false, false),
	}.Append(nil)
	for _, p := range t.partitions {
		b = PartitionResponse{ID: p.id, CreatedAt: p.createdAt}.Append(b)
	}
	return b
}

// deleteTopic: client-ops.md 5.9.
func (s *State) deleteTopic(x DeleteTopic) (uint32, []byte) {
	_, st, ok := s.resolveStream(x.Stream)
	if !ok {
		return CodeStreamIDNotFound, nil
	}
	key, t, ok := st.resolveTopic(x.Topic)
	if !ok {
		return CodeTopicIDNotFound, nil
	}
	delete(st.topicByName, t.name)
	st.topics.remove(int(key))
	s.revision++
	return CodeOK, nil
}

// createPartitions applies a replicated CreatePartitions (65): client-ops.md
// 5.11. The new ids are base + offset, base = highest id + 1 (0 for none).
func (s *State) createPartitions(x CreatePartitionsWithAssignments, now uint64) (uint32, []byte) {
	_, st, ok := s.resolveStream(x.Request.Stream)
	if !ok {
		return CodeStreamIDNotFound, nil
	}
	_, t, ok := st.resolveTopic(x.Request.Topic)
	if !ok {
		return CodeTopicIDNotFound, nil
	}
	if s.limits.Partitions > 0 && s.livePartitions()+len(x.Partitions) > s.limits.Partitions {
		return CodeTooManyPartitions, nil
	}
	var base uint32
	if n := len(t.partitions); n > 0 {
		highest := t.partitions[0].id
		for _, p := range t.partitions[1:] {
			highest = max(highest, p.id)
		}
		if highest == math.MaxUint32 {
			return CodeInvalidPartitionsCount, nil
		}
		base = highest + 1
	}
	ids := make([]uint32, len(x.Partitions))
	seen := make(map[uint32]bool, len(x.Partitions))
	for i, p := range x.Partitions {
		if p.PartitionID > math.MaxUint32-base {
			return CodeInvalidPartitionsCount, nil
		}
		id := base + p.PartitionID
		if id >= s.limits.PartitionID {
			return CodePartitionIDSpaceExhausted, nil
		}
		if seen[id] {
			return CodeInvalidPartitionsCount, nil
		}
		seen[id] = true
		ids[i] = id
	}
	s.revision++
	for i, p := range x.Partitions {
		t.partitions = append(t.partitions, partition{id: ids[i], groupID: p.ConsensusGroupID,
			createdAt: now, createdRevision: s.revision})
		s.highestGroupID = max(s.highestGroupID, p.ConsensusGroupID)
	}
	return CodeOK, nil
}

// deletePartitions: client-ops.md 5.12. The last count partitions of the
// list go (the highest ids, since the primary assigns offsets in ascending
// order); a count of 0 is a successful no-op.
func (s *State) deletePartitions(x DeletePartitions) (uint32, []byte) {
	_, st, ok := s.resolveStream(x.Stream)
	if !ok {
		return CodeStreamIDNotFound, nil
	}
	_, t, ok := st.resolveTopic(x.Topic)
	if !ok {
		return CodeTopicIDNotFound, nil
	}
	if uint64(x.PartitionsCount) > uint64(len(t.partitions)) {
		return CodeInvalidPartitionsCount, nil
	}
	if x.PartitionsCount > 0 {
		t.partitions = t.partitions[:len(t.partitions)-int(x.PartitionsCount)]
		s.revision++
	}
	return CodeOK, nil
}

// fitsBlock reports whether the map encodes as one options block.
func (m optionMap) fitsBlock() bool {
	if len(m) > wire.OptionPairsMax {
		return false
	}
	size := 0
	for _, e := range m {
		size += 10 + len(e.Key) + len(e.Value)
	}
	return size <= wire.OptionBlockMax
}

// fitsSplit reports whether the explicit and the derived entries each encode
// as one options block.
func (m optionMap) fitsSplit() bool {
	var explicit, derived optionMap
	for _, e := range m {
		if e.Explicit {
			explicit = append(explicit, e)
		} else {
			derived = append(derived, e)
		}
	}
	return explicit.fitsBlock() && derived.fitsBlock()
}

// Digest returns XXH3 of the canonical encoding of the whole state: the
// revision, the highest group id, then every stream in id order with its
// name, created_at and options, and its topics in id order with their typed
// fields, options (with provenance) and partitions. Two states digest equal
// exactly when every committed fact (and so every later reply) is equal.
func (s *State) Digest() uint64 { return xxh3.Hash(s.canonical()) }

func (s *State) canonical() []byte {
	le := binary.LittleEndian
	b := le.AppendUint64(nil, s.revision)
	b = le.AppendUint64(b, s.highestGroupID)
	b = le.AppendUint32(b, uint32(s.streams.len()))
	appendStr := func(b []byte, v string) []byte { return append(le.AppendUint32(b, uint32(len(v))), v...) }
	appendOpts := func(b []byte, m optionMap) []byte {
		b = le.AppendUint32(b, uint32(len(m)))
		for _, e := range m {
			b = appendStr(b, e.Key)
			b = append(b, byte(e.Kind))
			b = appendStr(b, string(e.Value))
			if e.Explicit {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
		return b
	}
	s.streams.each(func(sk int, st *stream) {
		b = le.AppendUint32(b, uint32(sk))
		b = appendStr(b, st.name)
		b = le.AppendUint64(b, st.createdAt)
		b = appendOpts(b, st.options)
		b = le.AppendUint32(b, uint32(st.topics.len()))
		st.topics.each(func(tk int, t *topic) {
			b = le.AppendUint32(b, uint32(tk))
			b = appendStr(b, t.name)
			b = le.AppendUint64(b, t.createdAt)
			b = le.AppendUint64(b, t.messageExpiry)
			b = append(b, t.compression)
			b = le.AppendUint64(b, t.maxTopicSize)
			b = appendOpts(b, t.options)
			b = le.AppendUint32(b, uint32(len(t.partitions)))
			for _, p := range t.partitions {
				b = le.AppendUint32(b, p.id)
				b = le.AppendUint64(b, p.groupID)
				b = le.AppendUint64(b, p.createdAt)
				b = le.AppendUint64(b, p.createdRevision)
			}
		})
	})
	return b
}

// PartitionRef names one live partition: its place in the namespace and the
// consensus group that replicates it.
type PartitionRef struct {
	Stream, Topic, Partition uint32
	Group                    uint64 // the never-reused consensus group id (DEVIATIONS.md 15)
}

// Partitions returns every live partition, by ascending group id. Every
// replica that applied the same log lists the same partitions.
func (s *State) Partitions() []PartitionRef {
	var out []PartitionRef
	s.streams.each(func(sk int, st *stream) {
		st.topics.each(func(tk int, t *topic) {
			for _, p := range t.partitions {
				out = append(out, PartitionRef{Stream: uint32(sk), Topic: uint32(tk), Partition: p.id, Group: p.groupID})
			}
		})
	})
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Group < out[j-1].Group; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// topicNameAnywhere reports whether any stream has a topic named name
// (canary_topic_name_global's bug: names are unique per stream).
func (s *State) topicNameAnywhere(name string) bool {
	found := false
	s.streams.each(func(_ int, st *stream) {
		if _, ok := st.topicByName[name]; ok {
			found = true
		}
	})
	return found
}

// livePartitions counts the partitions of every topic of every stream.
func (s *State) livePartitions() int {
	n := 0
	s.streams.each(func(_ int, st *stream) {
		st.topics.each(func(_ int, t *topic) { n += len(t.partitions) })
	})
	return n
}

// ChangesPartitions reports whether committing op may add or remove
// partitions (the only operations after which a replica diffs Partitions
// against the groups it runs).
func ChangesPartitions(op wire.Operation) bool {
	switch op {
	case wire.OperationCreateTopicWithAssignments, wire.OperationCreatePartitionsWithAssignments,
		wire.OperationDeleteStream, wire.OperationDeleteTopic, wire.OperationDeletePartitions:
		return true
	}
	return false
}

// TopicPartitions returns the partitions of the topic streamKey/topicKey in
// creation order (the order Balanced and MessagesKey index), and false
// when the topic does not exist.
func (s *State) TopicPartitions(streamKey, topicKey uint32) ([]PartitionRef, bool) {
	st, ok := s.streams.get(streamKey)
	if !ok {
		return nil, false
	}
	t, ok := st.topics.get(topicKey)
	if !ok {
		return nil, false
	}
	out := make([]PartitionRef, len(t.partitions))
	for i, p := range t.partitions {
		out[i] = PartitionRef{Stream: streamKey, Topic: topicKey, Partition: p.id, Group: p.groupID}
	}
	return out, true
}
