package metadata

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// sm wraps a State with a running op counter for the unit tests.
type sm struct {
	t  *testing.T
	st *State
	op uint64
}

func newSM(t *testing.T, l Limits) *sm { return &sm{t: t, st: newState(l)} }

// commit applies a prepare of operation op acting as user and returns the
// result code and payload.
func (m *sm) commit(user uint32, op wire.Operation, body []byte) (uint32, []byte) {
	m.t.Helper()
	m.op++
	h := prepare(m.op, op, 100*m.op)
	h.UserID = user
	reply := m.st.Apply(h, body)
	r, err := ParseResult(reply)
	if err != nil {
		m.t.Fatalf("op %d %v: reply % x: %v", m.op, op, reply, err)
	}
	if !CodeRecognized(op, r.Code()) {
		m.t.Fatalf("op %d %v committed unrecognized code %d", m.op, op, r.Code())
	}
	return r.Code(), r.Payload
}

// request projects a client request (as the primary does) and commits it.
func (m *sm) request(user uint32, op wire.Operation, body []byte) uint32 {
	m.t.Helper()
	p, r := Project(op, body, NewGroupAllocator(m.st.HighestGroupID()))
	if r.Refused() {
		m.t.Fatalf("Project(%v): %v", op, r)
	}
	code, _ := m.commit(user, p.Operation, p.Body)
	return code
}

func (m *sm) expect(want uint32, user uint32, op wire.Operation, body []byte) {
	m.t.Helper()
	before := m.st.Digest()
	if got := m.request(user, op, body); got != want {
		m.t.Fatalf("op %d %v: code %d, want %d", m.op, op, got, want)
	}
	if want != CodeOK && m.st.Digest() != before {
		m.t.Fatalf("op %d %v: rejection %d changed the state", m.op, op, want)
	}
}

const root = RootUserID

func opts(pairs ...wire.Option) []byte { return wire.EncodeOptions(pairs) }

// badLen is an options block whose Uint64 value has 4 bytes: valid TLV,
// unreadable as a stored map (InvalidOptionValue at apply).
var badLen = opts(wire.Option{Key: "k", Kind: wire.OptionUint64, Value: []byte{1, 2, 3, 4}})

func TestStreamRejectionsInOrder(t *testing.T) {
	m := newSM(t, Limits{Streams: 2, TopicsPerStream: 4096, PartitionID: 1_000_000})
	m.expect(CodeOK, root, wire.OperationCreateStream, CreateStream{Name: "a"}.Encode())
	// Name first, then options.
	m.expect(CodeStreamNameAlreadyExists, root, wire.OperationCreateStream, CreateStream{Name: "a", Options: badLen}.Encode())
	m.expect(CodeInvalidOptionValue, root, wire.OperationCreateStream, CreateStream{Name: "b", Options: badLen}.Encode())
	// Unknown value kinds are skipped, not refused.
	m.expect(CodeOK, root, wire.OperationCreateStream, CreateStream{Name: "b",
		Options: opts(wire.Option{Key: "k", Kind: 99, Value: []byte{1, 2, 3}})}.Encode())
	// Options before the ceiling.
	m.expect(CodeInvalidOptionValue, root, wire.OperationCreateStream, CreateStream{Name: "c", Options: badLen}.Encode())
	m.expect(CodeTooManyStreams, root, wire.OperationCreateStream, CreateStream{Name: "c"}.Encode())

	m.expect(CodeStreamIDNotFound, root, wire.OperationUpdateStream, UpdateStream{Stream: ID(7), Name: "a"}.Encode())
	m.expect(CodeStreamIDNotFound, root, wire.OperationUpdateStream, UpdateStream{Stream: Named("zz"), Name: "a"}.Encode())
	m.expect(CodeStreamNameAlreadyExists, root, wire.OperationUpdateStream, UpdateStream{Stream: ID(1), Name: "a", Options: badLen}.Encode())
	m.expect(CodeInvalidOptionValue, root, wire.OperationUpdateStream, UpdateStream{Stream: ID(1), Name: "b", Options: badLen}.Encode())
	m.expect(CodeOK, root, wire.OperationUpdateStream, UpdateStream{Stream: ID(1), Name: "b"}.Encode()) // its own name
	m.expect(CodeOK, root, wire.OperationUpdateStream, UpdateStream{Stream: Named("b"), Name: "c",
		Options: opts(wire.Option{Key: "x", Kind: wire.OptionUint8, Value: []byte{1}})}.Encode())
	if _, ok := m.st.ResolveStream(Named("b")); ok {
		t.Fatal("the old name still resolves")
	}
	if id, ok := m.st.ResolveStream(Named("c")); !ok || id != 1 {
		t.Fatal("the new name does not resolve")
	}
	// The options are a patch: x stays, y joins, x is replaced.
	m.expect(CodeOK, root, wire.OperationUpdateStream, UpdateStream{Stream: ID(1), Name: "c",
		Options: opts(wire.Option{Key: "y", Kind: wire.OptionUint8, Value: []byte{2}})}.Encode())
	st, _ := m.st.streams.get(1)
	if len(st.options) != 2 || st.options[0].Key != "x" || st.options[1].Key != "y" {
		t.Fatalf("patched options %+v", st.options)
	}

	m.expect(CodeStreamIDNotFound, root, wire.OperationDeleteStream, DeleteStream{Stream: ID(5)}.Encode())
	m.expect(CodeOK, root, wire.OperationDeleteStream, DeleteStream{Stream: ID(0)}.Encode())
	m.expect(CodeStreamIDNotFound, root, wire.OperationDeleteStream, DeleteStream{Stream: Named("a")}.Encode())
	// The freed key 0 is handed out again; the old name is free.
	code, payload := m.commit(root, wire.OperationCreateStream, CreateStream{Name: "a"}.Encode())
	if sr, err := DecodeCreateStreamReply(payload); code != CodeOK || err != nil || sr.ID != 0 {
		t.Fatalf("recreate: %d %+v %v", code, sr, err)
	}
}

func TestUpdateStreamRefusesOptionsThatNoLongerFitABlock(t *testing.T) {
	m := newSM(t, DefaultLimits())
	m.expect(CodeOK, root, wire.OperationCreateStream, CreateStream{Name: "s"}.Encode())
	// 1024 keys fit; 1024 more in a second patch do not.
	patch := func(prefix string) []byte {
		pairs := make([]wire.Option, wire.OptionPairsMax)
		for i := range pairs {
			pairs[i] = wire.Option{Key: prefix + string(rune('A'+i/64)) + string(rune('A'+i%64)), Kind: wire.OptionBool, Value: []byte{1}}
		}
		return opts(pairs...)
	}
	m.expect(CodeOK, root, wire.OperationUpdateStream, UpdateStream{Stream: ID(0), Name: "s", Options: patch("p")}.Encode())
	m.expect(CodeInvalidOptionValue, root, wire.OperationUpdateStream, UpdateStream{Stream: ID(0), Name: "s", Options: patch("q")}.Encode())
}

// topicBody builds a replicated CreateTopic body by hand.
func topicBody(stream Identifier, name string, explicit, derived []byte, ps ...PartitionAssignment) []byte {
	if explicit == nil {
		explicit = []byte{}
	}
	if derived == nil {
		derived = DerivedDefaults()
	}
	return CreateTopicWithAssignments{
		Request:    CreateTopic{Stream: stream, PartitionsCount: uint32(len(ps)), Name: name, Options: explicit},
		Derived:    derived,
		Partitions: ps,
	}.Encode()
}

func TestTopicRejectionsInOrder(t *testing.T) {
	m := newSM(t, Limits{Streams: 8, TopicsPerStream: 2, PartitionID: 10})
	op := wire.OperationCreateTopicWithAssignments
	pa := func(id uint32) PartitionAssignment {
		return PartitionAssignment{PartitionID: id, ConsensusGroupID: uint64(id) + 1}
	}
	if code, _ := m.commit(root, op, topicBody(ID(0), "t", nil, nil)); code != CodeStreamIDNotFound {
		t.Fatalf("no stream: %d", code)
	}
	m.commit(root, wire.OperationCreateStream, CreateStream{Name: "s"}.Encode())
	if code, _ := m.commit(root, op, topicBody(ID(0), "t", nil, nil, pa(0))); code != CodeOK {
		t.Fatalf("create: %d", code)
	}
	// Name before ceiling, ceiling before partition ids, range before
	// duplicates, partition ids before options.
	if code, _ := m.commit(root, op, topicBody(Named("s"), "t", badLen, nil, pa(10))); code != CodeTopicNameAlreadyExists {
		t.Fatalf("dup name: %d", code)
	}
	if code, _ := m.commit(root, op, topicBody(ID(0), "u", badLen, nil, pa(10), pa(10))); code != CodePartitionIDSpaceExhausted {
		t.Fatalf("partition id 10 with ceiling 10: %d", code)
	}
	if code, _ := m.commit(root, op, topicBody(ID(0), "u", badLen, nil, pa(1), pa(1), pa(10))); code != CodeInvalidPartitionsCount {
		t.Fatalf("duplicate partition ids: %d", code)
	}
	if code, _ := m.commit(root, op, topicBody(ID(0), "u", badLen, nil, pa(1))); code != CodeInvalidOptionValue {
		t.Fatalf("unreadable explicit options: %d", code)
	}
	if code, _ := m.commit(root, op, topicBody(ID(0), "u", nil, badLen, pa(1))); code != CodeInvalidOptionValue {
		t.Fatalf("unreadable derived options: %d", code)
	}
	if code, _ := m.commit(root, op, topicBody(ID(0), "u", nil, nil)); code != CodeOK {
		t.Fatalf("second topic: %d", code)
	}
	if code, _ := m.commit(root, op, topicBody(ID(0), "v", badLen, nil, pa(10))); code != CodeTooManyTopics {
		t.Fatalf("third topic with ceiling 2: %d", code)
	}

	del := wire.OperationDeleteTopic
	if code, _ := m.commit(root, del, DeleteTopic{Stream: ID(3), Topic: ID(0)}.Encode()); code != CodeStreamIDNotFound {
		t.Fatal(code)
	}
	if code, _ := m.commit(root, del, DeleteTopic{Stream: ID(0), Topic: Named("nope")}.Encode()); code != CodeTopicIDNotFound {
		t.Fatal(code)
	}
	if code, _ := m.commit(root, del, DeleteTopic{Stream: ID(0), Topic: Named("t")}.Encode()); code != CodeOK {
		t.Fatal(code)
	}
	// Key 0 is free again and the name "t" too.
	code, payload := m.commit(root, op, topicBody(ID(0), "t", nil, nil))
	if th, _, err := DecodeCreateTopicReply(payload); code != CodeOK || err != nil || th.ID != 0 {
		t.Fatalf("recreate: %d %+v %v", code, th, err)
	}
}

func TestPartitions(t *testing.T) {
	m := newSM(t, Limits{Streams: 8, TopicsPerStream: 8, PartitionID: 6})
	m.expect(CodeOK, root, wire.OperationCreateStream, CreateStream{Name: "s"}.Encode())
	m.expect(CodeOK, root, wire.OperationCreateTopic, CreateTopic{Stream: ID(0), PartitionsCount: 2, Name: "t"}.Encode())
	m.expect(CodeOK, root, wire.OperationCreateTopic, CreateTopic{Stream: ID(0), PartitionsCount: 0, Name: "empty"}.Encode())
	ids := func(topic uint32) []uint32 {
		var out []uint32
		for _, p := range m.st.Streams()[0].Topics[topic].Partitions {
			out = append(out, p.ID)
		}
		return out
	}
	create, del := wire.OperationCreatePartitions, wire.OperationDeletePartitions
	m.expect(CodeStreamIDNotFound, root, create, CreatePartitions{Stream: ID(1), Topic: ID(0), PartitionsCount: 1}.Encode())
	m.expect(CodeTopicIDNotFound, root, create, CreatePartitions{Stream: ID(0), Topic: ID(9), PartitionsCount: 1}.Encode())
	m.expect(CodeOK, root, create, CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 3}.Encode())
	if got := ids(0); len(got) != 5 || got[4] != 4 {
		t.Fatalf("partitions %v", got)
	}
	// ids 5 is the last below the ceiling of 6: one more fits, two do not.
	m.expect(CodePartitionIDSpaceExhausted, root, create, CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 2}.Encode())
	m.expect(CodeOK, root, create, CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 0}.Encode())
	// A topic with none starts at 0.
	m.expect(CodeOK, root, create, CreatePartitions{Stream: ID(0), Topic: Named("empty"), PartitionsCount: 2}.Encode())
	if got := ids(1); len(got) != 2 || got[0] != 0 || got[1] != 1 {
		t.Fatalf("empty topic partitions %v", got)
	}
	// Duplicate offsets in a hand-made body.
	dup := CreatePartitionsWithAssignments{Request: CreatePartitions{Stream: ID(0), Topic: ID(1), PartitionsCount: 2},
		Partitions: []PartitionAssignment{{0, 50}, {0, 51}}}.Encode()
	if code, _ := m.commit(root, wire.OperationCreatePartitionsWithAssignments, dup); code != CodeInvalidPartitionsCount {
		t.Fatalf("duplicate offsets: %d", code)
	}

	m.expect(CodeStreamIDNotFound, root, del, DeletePartitions{Stream: ID(4), Topic: ID(0), PartitionsCount: 1}.Encode())
	m.expect(CodeTopicIDNotFound, root, del, DeletePartitions{Stream: ID(0), Topic: ID(4), PartitionsCount: 1}.Encode())
	m.expect(CodeInvalidPartitionsCount, root, del, DeletePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 6}.Encode())
	before := m.st.Digest()
	m.expect(CodeOK, root, del, DeletePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 0}.Encode())
	if m.st.Digest() != before {
		t.Fatal("deleting 0 partitions changed the state")
	}
	m.expect(CodeOK, root, del, DeletePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 2}.Encode())
	if got := ids(0); len(got) != 3 || got[2] != 2 {
		t.Fatalf("after deleting 2: %v", got)
	}
	// The deleted high ids are handed out again.
	m.expect(CodeOK, root, create, CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 1}.Encode())
	if got := ids(0); got[3] != 3 {
		t.Fatalf("after re-adding: %v", got)
	}
	// Group ids never repeat, even after deletes.
	seen := map[uint64]bool{}
	for _, tp := range m.st.Streams()[0].Topics {
		for _, p := range tp.Partitions {
			if seen[p.ConsensusGroupID] {
				t.Fatalf("group id %d twice", p.ConsensusGroupID)
			}
			seen[p.ConsensusGroupID] = true
		}
	}
}

func TestAuthorization(t *testing.T) {
	const alice = 1
	m := newSM(t, DefaultLimits())
	m.expect(CodeUnauthorized, alice, wire.OperationCreateStream, CreateStream{Name: "s"}.Encode())
	m.expect(CodeOK, root, wire.OperationCreateStream, CreateStream{Name: "s"}.Encode())
	m.expect(CodeOK, root, wire.OperationCreateTopic, CreateTopic{Stream: ID(0), PartitionsCount: 1, Name: "t"}.Encode())
	// NotFound beats Unauthorized.
	m.expect(CodeStreamIDNotFound, alice, wire.OperationUpdateStream, UpdateStream{Stream: ID(3), Name: "x"}.Encode())
	m.expect(CodeStreamIDNotFound, alice, wire.OperationDeleteStream, DeleteStream{Stream: Named("x")}.Encode())
	m.expect(CodeStreamIDNotFound, alice, wire.OperationCreateTopic, CreateTopic{Stream: ID(3), Name: "x"}.Encode())
	m.expect(CodeTopicIDNotFound, alice, wire.OperationDeleteTopic, DeleteTopic{Stream: ID(0), Topic: ID(3)}.Encode())
	m.expect(CodeTopicIDNotFound, alice, wire.OperationCreatePartitions, CreatePartitions{Stream: ID(0), Topic: ID(3)}.Encode())
	m.expect(CodeTopicIDNotFound, alice, wire.OperationDeletePartitions, DeletePartitions{Stream: ID(0), Topic: ID(3)}.Encode())
	// A resolved target is refused, before the op's own rejections.
	m.expect(CodeUnauthorized, alice, wire.OperationUpdateStream, UpdateStream{Stream: ID(0), Name: "s", Options: badLen}.Encode())
	m.expect(CodeUnauthorized, alice, wire.OperationDeleteStream, DeleteStream{Stream: ID(0)}.Encode())
	m.expect(CodeUnauthorized, alice, wire.OperationCreateTopic, CreateTopic{Stream: ID(0), Name: "t"}.Encode())
	m.expect(CodeUnauthorized, alice, wire.OperationDeleteTopic, DeleteTopic{Stream: ID(0), Topic: ID(0)}.Encode())
	m.expect(CodeUnauthorized, alice, wire.OperationCreatePartitions, CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 1}.Encode())
	m.expect(CodeUnauthorized, alice, wire.OperationDeletePartitions, DeletePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 9}.Encode())
}

func TestRegisterAndLogoutReplies(t *testing.T) {
	st := NewState()
	before := st.Digest()
	for _, op := range []wire.Operation{wire.OperationRegister, wire.OperationLogout} {
		if got := st.Apply(prepare(1, op, 1), nil); len(got) != 0 {
			t.Fatalf("%v reply % x", op, got)
		}
	}
	if st.Digest() != before {
		t.Fatal("Register/Logout changed the metadata state")
	}
}

func TestApplyPanicsOnACorruptLog(t *testing.T) {
	for _, c := range []struct {
		op   wire.Operation
		body []byte
	}{
		{wire.OperationCreateTopic, CreateTopic{Stream: ID(0), Name: "t"}.Encode()}, // never replicated as 132
		{wire.OperationPurgeStream, DeleteStream{Stream: ID(0)}.Encode()},           // not in the slice
		{wire.OperationCreateStream, []byte{0}},                                     // undecodable
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Apply(%v, % x) did not panic", c.op, c.body)
				}
			}()
			NewState().Apply(prepare(1, c.op, 1), c.body)
		}()
	}
}

func TestCreateTopicSentinels(t *testing.T) {
	// A client sending message_expiry = 0 (server default): the projection
	// drops it from the explicit block and the derived block resolves it.
	sent := opts(wire.Option{Key: "message_expiry", Kind: wire.OptionUint64, Value: make([]byte, 8)},
		wire.Option{Key: "compression_algorithm", Kind: wire.OptionUint8, Value: []byte{2}})
	p, r := Project(wire.OperationCreateTopic, CreateTopic{Stream: ID(0), Name: "t", Options: sent}.Encode(), NewGroupAllocator(0))
	if r.Refused() {
		t.Fatal(r)
	}
	x, _ := DecodeCreateTopicWithAssignments(p.Body)
	wantExplicit := opts(wire.Option{Key: "compression_algorithm", Kind: wire.OptionString, Value: []byte("gzip")})
	if !bytes.Equal(x.Request.Options, wantExplicit) {
		t.Fatalf("explicit % x", x.Request.Options)
	}

	// A hand-made prepare that keeps the sentinel in the explicit block:
	// the stored value is the resolved one, provenance stays explicit.
	m := newSM(t, DefaultLimits())
	m.commit(root, wire.OperationCreateStream, CreateStream{Name: "s"}.Encode())
	explicit := opts(wire.Option{Key: "message_expiry", Kind: wire.OptionUint64, Value: make([]byte, 8)})
	code, payload := m.commit(root, wire.OperationCreateTopicWithAssignments, topicBody(ID(0), "t", explicit, nil))
	th, _, err := DecodeCreateTopicReply(payload)
	if code != CodeOK || err != nil {
		t.Fatal(code, err)
	}
	never := binary.LittleEndian.AppendUint64(nil, math.MaxUint64)
	if !bytes.Equal(th.Explicit, opts(wire.Option{Key: "message_expiry", Kind: wire.OptionUint64, Value: never})) {
		t.Fatalf("explicit % x", th.Explicit)
	}
	pairs, _ := wire.DecodeOptions(th.Derived)
	if len(pairs) != 7 || th.MessageExpiry != math.MaxUint64 || th.MaxTopicSize != math.MaxUint64 || th.Compression != CompressionNone {
		t.Fatalf("topic header %+v", th)
	}
}

// TestLivePartitionsCeiling: with a ceiling of three live partitions, a
// CreateTopic or CreatePartitions that would pass it commits
// TooManyPartitions and creates nothing; a delete makes room again.
func TestLivePartitionsCeiling(t *testing.T) {
	m := newSM(t, Limits{Streams: 8, TopicsPerStream: 8, PartitionID: 100, Partitions: 3})
	create, del := wire.OperationCreatePartitions, wire.OperationDeletePartitions
	m.expect(CodeOK, root, wire.OperationCreateStream, CreateStream{Name: "s"}.Encode())
	m.expect(CodeOK, root, wire.OperationCreateTopic, CreateTopic{Stream: ID(0), PartitionsCount: 2, Name: "t"}.Encode())
	m.expect(CodeTooManyPartitions, root, wire.OperationCreateTopic, CreateTopic{Stream: ID(0), PartitionsCount: 2, Name: "u"}.Encode())
	if n := len(m.st.Streams()[0].Topics); n != 1 {
		t.Fatalf("%d topics after the refused create, want 1", n)
	}
	m.expect(CodeOK, root, create, CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 1}.Encode())
	m.expect(CodeTooManyPartitions, root, create, CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 1}.Encode())
	if n := len(m.st.Partitions()); n != 3 {
		t.Fatalf("%d live partitions, want 3", n)
	}
	m.expect(CodeOK, root, del, DeletePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 1}.Encode())
	m.expect(CodeOK, root, wire.OperationCreateTopic, CreateTopic{Stream: ID(0), PartitionsCount: 1, Name: "u"}.Encode())
}
