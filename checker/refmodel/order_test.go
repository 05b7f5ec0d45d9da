package refmodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Table tests for the decision order of every operation: each row breaks
// several rules at once, and the first in the specification's order must be
// the answer (client-ops.md 2.4, 2.5 and the numbered rejections of 5.3-5.12;
// replica/metadata doc.go for the admission). A rejection must change
// nothing.

// dump renders the whole model deterministically, for "changed nothing".
func (m *Model) dump() string {
	var b strings.Builder
	fmt.Fprintf(&b, "highest=%d live=%d\n", m.highestGroup, m.live)
	for k, s := range m.streams {
		if s == nil {
			continue
		}
		fmt.Fprintf(&b, "stream %d %q %d %v\n", k, s.name, s.createdAt, s.options)
		for tk, t := range s.topics {
			if t != nil {
				fmt.Fprintf(&b, "  topic %d %q %d %d %d %d %v %v\n", tk, t.name, t.createdAt, t.messageExpiry,
					t.compression, t.maxTopicSize, t.options, t.partitions)
			}
		}
	}
	return b.String()
}

const alice = 1 // a user other than root

// code returns a reply body's result code, failing on a malformed one.
func code(t *testing.T, reply []byte) uint32 {
	t.Helper()
	if len(reply) < 4 {
		t.Fatalf("reply % x is no result section", reply)
	}
	if binary.LittleEndian.Uint32(reply) == 0 {
		return 0
	}
	if len(reply) != 12 || binary.LittleEndian.Uint32(reply) != 1 || binary.LittleEndian.Uint32(reply[4:]) != 0 {
		t.Fatalf("rejection % x is not 01000000 00000000 <code>", reply)
	}
	return binary.LittleEndian.Uint32(reply[8:])
}

// step is one row: a committed prepare and the code it must commit.
type step struct {
	name string
	user uint32
	op   wire.Operation
	body []byte
	want uint32
}

// run commits the rows in order; a rejection must leave the state as it was.
func (s *session) run(rows []step) {
	s.t.Helper()
	for _, r := range rows {
		before := s.m.dump()
		got := code(s.t, s.commit(r.user, r.op, r.body, 100+s.op))
		if got != r.want {
			s.t.Errorf("%s: committed %d, want %d", r.name, got, r.want)
		}
		if got != 0 && s.m.dump() != before {
			s.t.Errorf("%s: the rejection %d changed the state", r.name, got)
		}
	}
}

func num(id uint32) identifier  { return identifier{numeric: true, id: id} }
func named(s string) identifier { return identifier{name: s} }

func createStream(name string, block []byte) []byte {
	return append(appendName(nil, name), block...)
}

func updateStream(id identifier, name string, block []byte) []byte {
	return append(appendName(appendIdentifier(nil, id), name), block...)
}

func streamID(id identifier) []byte { return appendIdentifier(nil, id) }

func topicID(sid, tid identifier) []byte { return appendIdentifier(appendIdentifier(nil, sid), tid) }

func partitions(sid, tid identifier, n uint32) []byte {
	return partitionsBody{stream: sid, topic: tid, count: n}.encode()
}

// topic64 builds a replicated CreateTopic body by hand.
func topic64(sid identifier, name string, explicit, derived []byte, ids ...uint32) []byte {
	var parts []assignment
	for i, id := range ids {
		parts = append(parts, assignment{id: id, group: uint64(100 + i)})
	}
	if derived == nil {
		derived = encodeBlock(catalog{}.withDefaults().canonical())
	}
	return createTopicReplicated{
		request: createTopicBody{stream: sid, count: uint32(len(ids)), name: name, options: explicit},
		derived: derived,
		parts:   parts,
	}.encode()
}

// partitions65 builds a replicated CreatePartitions body by hand.
func partitions65(sid, tid identifier, offsets ...uint32) []byte {
	var parts []assignment
	for i, o := range offsets {
		parts = append(parts, assignment{id: o, group: uint64(200 + i)})
	}
	return createPartitionsReplicated{
		request: partitionsBody{stream: sid, topic: tid, count: uint32(len(offsets))}, parts: parts,
	}.encode()
}

// unreadable is a valid block whose Uint64 value has 4 bytes: it cannot be
// read as a stored map (InvalidOptionValue at apply).
var unreadable = rawBlock(key("k"), entry{kind: uint8(wire.OptionUint64), data: []byte{1, 2, 3, 4}})

const (
	opCreateStream = wire.OperationCreateStream
	opUpdateStream = wire.OperationUpdateStream
	opDeleteStream = wire.OperationDeleteStream
	op64           = wire.OperationCreateTopicWithAssignments
	opDeleteTopic  = wire.OperationDeleteTopic
	op65           = wire.OperationCreatePartitionsWithAssignments
	opDelParts     = wire.OperationDeletePartitions
)

func TestOrderCreateStream(t *testing.T) {
	s := newSession(t, Limits{Streams: 2, TopicsPerStream: 8, PartitionID: 100})
	s.run([]step{
		{"unscoped gate first, even before the name", alice, opCreateStream, createStream("a", unreadable), codeUnauthorized},
		{"create", rootUser, opCreateStream, createStream("a", nil), 0},
		{"name before options", rootUser, opCreateStream, createStream("a", unreadable), codeStreamNameAlreadyExists},
		{"options before the ceiling", rootUser, opCreateStream, createStream("b", unreadable), codeInvalidOptionValue},
		{"a kind with no meaning is skipped", rootUser, opCreateStream, createStream("b", rawBlock(key("k"), entry{kind: 99, data: []byte{1}})), 0},
		{"name before the ceiling", rootUser, opCreateStream, createStream("b", nil), codeStreamNameAlreadyExists},
		{"the ceiling", rootUser, opCreateStream, createStream("c", nil), codeTooManyStreams},
		{"free key 0", rootUser, opDeleteStream, streamID(num(0)), 0},
		{"the lowest free key is reused", rootUser, opCreateStream, createStream("c", nil), 0},
	})
	if s.m.streams[0].name != "c" {
		t.Fatalf("stream 0 is %q, want the recreated \"c\"", s.m.streams[0].name)
	}
}

func TestOrderUpdateStream(t *testing.T) {
	s := newSession(t, DefaultLimits())
	// 1024 pairs fit one block; the same again under other keys do not.
	big := func(prefix string) []byte {
		var es []entry
		for i := range optionPairsMax {
			es = append(es, key(fmt.Sprintf("%s%04d", prefix, i)), entry{kind: uint8(wire.OptionBool), data: []byte{1}})
		}
		return rawBlock(es...)
	}
	// A pair costs 10 bytes plus its key and value: 300 pairs of 5-byte keys
	// and 255-byte values are 81 000 bytes, 70 more 99 900.
	wide := func(prefix string, n int) []byte {
		var es []entry
		for i := range n {
			es = append(es, key(fmt.Sprintf("%s%04d", prefix, i)), entry{kind: uint8(wire.OptionRaw), data: make([]byte, 255)})
		}
		return rawBlock(es...)
	}
	s.run([]step{
		{"create a", rootUser, opCreateStream, createStream("a", nil), 0},
		{"create b", rootUser, opCreateStream, createStream("b", nil), 0},
		{"NotFound before the gate", alice, opUpdateStream, updateStream(num(7), "a", unreadable), codeStreamIDNotFound},
		{"NotFound by name", rootUser, opUpdateStream, updateStream(named("zz"), "a", nil), codeStreamIDNotFound},
		{"a numeric id never matches a name", rootUser, opUpdateStream, updateStream(named("0"), "x", nil), codeStreamIDNotFound},
		{"gate before the name", alice, opUpdateStream, updateStream(num(1), "a", unreadable), codeUnauthorized},
		{"name before options", rootUser, opUpdateStream, updateStream(num(1), "a", unreadable), codeStreamNameAlreadyExists},
		{"own name, unreadable options", rootUser, opUpdateStream, updateStream(num(1), "b", unreadable), codeInvalidOptionValue},
		{"own name is no conflict", rootUser, opUpdateStream, updateStream(num(1), "b", nil), 0},
		{"rename by name", rootUser, opUpdateStream, updateStream(named("b"), "c", nil), 0},
		{"the old name is gone", rootUser, opUpdateStream, updateStream(named("b"), "d", nil), codeStreamIDNotFound},
		{"1024 pairs", rootUser, opUpdateStream, updateStream(num(1), "c", big("p")), 0},
		{"the same keys again: a patch, still 1024", rootUser, opUpdateStream, updateStream(num(1), "c", big("p")), 0},
		{"1024 more pairs do not fit one block", rootUser, opUpdateStream, updateStream(num(1), "c", big("q")), codeInvalidOptionValue},
		{"300 wide pairs", rootUser, opUpdateStream, updateStream(num(0), "a", wide("w", 300)), 0},
		{"70 more: 99 900 bytes", rootUser, opUpdateStream, updateStream(num(0), "a", wide("v", 70)), 0},
		{"exactly 100 000 bytes", rootUser, opUpdateStream, updateStream(num(0), "a", rawBlock(key("x"), entry{kind: 1, data: make([]byte, 89)})), 0},
		{"one byte more", rootUser, opUpdateStream, updateStream(num(0), "a", rawBlock(key("x"), entry{kind: 1, data: make([]byte, 90)})), codeInvalidOptionValue},
		{"replacing values in place fits", rootUser, opUpdateStream, updateStream(num(0), "a", wide("w", 300)), 0},
	})
}

func TestOrderDeleteStream(t *testing.T) {
	s := newSession(t, DefaultLimits())
	s.run([]step{
		{"create", rootUser, opCreateStream, createStream("a", nil), 0},
		{"NotFound before the gate", alice, opDeleteStream, streamID(named("b")), codeStreamIDNotFound},
		{"gate", alice, opDeleteStream, streamID(named("a")), codeUnauthorized},
		{"delete", rootUser, opDeleteStream, streamID(named("a")), 0},
		{"gone", rootUser, opDeleteStream, streamID(num(0)), codeStreamIDNotFound},
	})
}

func TestOrderCreateTopic(t *testing.T) {
	s := newSession(t, Limits{Streams: 8, TopicsPerStream: 2, PartitionID: 10, Partitions: 4})
	s.run([]step{
		{"NotFound before the gate", alice, op64, topic64(num(0), "t", unreadable, nil, 10), codeStreamIDNotFound},
		{"create the stream", rootUser, opCreateStream, createStream("s", nil), 0},
		{"create t", rootUser, op64, topic64(num(0), "t", nil, nil, 0), 0},
		{"gate before the name", alice, op64, topic64(num(0), "t", unreadable, nil, 10), codeUnauthorized},
		{"name before the live ceiling, ids and options", rootUser, op64, topic64(named("s"), "t", unreadable, nil, 10, 10, 11, 12, 13), codeTopicNameAlreadyExists},
		{"live ceiling before ids and options", rootUser, op64, topic64(num(0), "u", unreadable, nil, 10, 10, 11, 12), codeTooManyPartitions},
		{"range before duplicates", rootUser, op64, topic64(num(0), "u", unreadable, nil, 10, 10), codePartitionIDSpaceExhausted},
		{"in order: a duplicate before a later id out of range", rootUser, op64, topic64(num(0), "u", unreadable, nil, 1, 1, 10), codeInvalidPartitionsCount},
		{"ids before options", rootUser, op64, topic64(num(0), "u", unreadable, nil, 1), codeInvalidOptionValue},
		{"an unreadable derived block", rootUser, op64, topic64(num(0), "u", nil, unreadable, 1), codeInvalidOptionValue},
		{"a second topic fills the stream", rootUser, op64, topic64(num(0), "u", nil, nil, 0, 1, 2), 0},
		{"the topic ceiling before the live ceiling", rootUser, op64, topic64(num(0), "v", nil, nil, 0, 1), codeTooManyTopics},
	})
}

func TestOrderDeleteTopic(t *testing.T) {
	s := newSession(t, DefaultLimits())
	s.run([]step{
		{"no stream", alice, opDeleteTopic, topicID(num(0), num(0)), codeStreamIDNotFound},
		{"create the stream", rootUser, opCreateStream, createStream("s", nil), 0},
		{"no topic, before the gate", alice, opDeleteTopic, topicID(num(0), named("t")), codeTopicIDNotFound},
		{"create t", rootUser, op64, topic64(num(0), "t", nil, nil, 0, 1), 0},
		{"gate", alice, opDeleteTopic, topicID(num(0), named("t")), codeUnauthorized},
		{"delete", rootUser, opDeleteTopic, topicID(named("s"), num(0)), 0},
		{"gone", rootUser, opDeleteTopic, topicID(num(0), num(0)), codeTopicIDNotFound},
		{"key 0 and the name are free again", rootUser, op64, topic64(num(0), "t", nil, nil), 0},
	})
	if s.m.live != 0 {
		t.Fatalf("%d live partitions", s.m.live)
	}
}

func TestOrderCreatePartitions(t *testing.T) {
	s := newSession(t, Limits{Streams: 8, TopicsPerStream: 8, PartitionID: 6, Partitions: 5})
	s.run([]step{
		{"no stream", alice, op65, partitions65(num(0), num(0), 0), codeStreamIDNotFound},
		{"create the stream", rootUser, opCreateStream, createStream("s", nil), 0},
		{"no topic, before the gate", alice, op65, partitions65(num(0), num(0), 0), codeTopicIDNotFound},
		{"create t", rootUser, op64, topic64(num(0), "t", nil, nil, 0, 1), 0},
		{"gate before the ceilings", alice, op65, partitions65(num(0), num(0), 9, 9, 9, 9), codeUnauthorized},
		{"live ceiling before ids", rootUser, op65, partitions65(num(0), num(0), 9, 9, 9, 9), codeTooManyPartitions},
		{"range: base 2 + offset 4 = 6", rootUser, op65, partitions65(num(0), num(0), 0, 4), codePartitionIDSpaceExhausted},
		{"in order: a duplicate before a later id out of range", rootUser, op65, partitions65(num(0), num(0), 1, 1, 9), codeInvalidPartitionsCount},
		{"an offset that overflows u32", rootUser, op65, partitions65(num(0), num(0), 1<<32-1), codeInvalidPartitionsCount},
		{"add 2..4", rootUser, op65, partitions65(num(0), num(0), 0, 1, 2), 0},
		{"none is a success that adds nothing", rootUser, op65, partitions65(num(0), num(0)), 0},
		{"the live ceiling", rootUser, op65, partitions65(num(0), num(0), 0), codeTooManyPartitions},
	})
	var ids []uint32
	for _, p := range s.m.streams[0].topics[0].partitions {
		ids = append(ids, p.id)
	}
	if fmt.Sprint(ids) != "[0 1 2 3 4]" {
		t.Fatalf("partition ids %v", ids)
	}
}

func TestOrderDeletePartitions(t *testing.T) {
	s := newSession(t, Limits{Streams: 8, TopicsPerStream: 8, PartitionID: 100, Partitions: 3})
	s.run([]step{
		{"no stream", alice, opDelParts, partitions(num(0), num(0), 9), codeStreamIDNotFound},
		{"create the stream", rootUser, opCreateStream, createStream("s", nil), 0},
		{"no topic, before the gate", alice, opDelParts, partitions(num(0), named("t"), 9), codeTopicIDNotFound},
		{"create t", rootUser, op64, topic64(num(0), "t", nil, nil, 0, 1, 2), 0},
		{"gate before the count", alice, opDelParts, partitions(num(0), named("t"), 9), codeUnauthorized},
		{"more than there are", rootUser, opDelParts, partitions(num(0), num(0), 4), codeInvalidPartitionsCount},
		{"0 is a successful no-op", rootUser, opDelParts, partitions(num(0), num(0), 0), 0},
		{"the last two", rootUser, opDelParts, partitions(num(0), num(0), 2), 0},
		{"room again under the live ceiling", rootUser, op65, partitions65(num(0), num(0), 0, 1), 0},
	})
	if s.m.live != 3 || s.m.highestGroup != 201 {
		t.Fatalf("live %d, highest group %d", s.m.live, s.m.highestGroup)
	}
}

// TestOrderAdmit: the primary's answers before consensus, in order.
func TestOrderAdmit(t *testing.T) {
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	topic := func(count uint32, block []byte) []byte {
		return append(createTopicBody{stream: num(0), count: count, name: "t"}.encode(), block...)
	}
	evict := Refusal{Kind: Evict, Reason: wire.EvictionInvalidRequestBody}
	deny := func(status uint32) Refusal { return Refusal{Kind: Deny, Status: status} }
	for _, c := range []struct {
		name string
		op   wire.Operation
		body []byte
		want Refusal
	}{
		{"Reserved", wire.OperationReserved, nil, Refusal{Kind: Drop}},
		{"undefined", wire.Operation(99), nil, Refusal{Kind: Drop}},
		{"internal 64, whatever the body", op64, []byte{0xff}, Refusal{Kind: Evict, Reason: wire.EvictionInvalidRequestOperation}},
		{"internal 68 too (10 item 11)", wire.OperationTruncatePartition, nil, Refusal{Kind: Evict, Reason: wire.EvictionInvalidRequestOperation}},
		{"outside the slice, whatever the body", wire.OperationPurgeStream, []byte{0xff}, deny(StatusFeatureUnavailable)},
		{"NonReplicated", wire.OperationNonReplicated, nil, deny(StatusFeatureUnavailable)},
		{"a Register with a body", wire.OperationRegister, []byte{0}, deny(StatusInvalidCommand)},
		{"an empty name", opCreateStream, []byte{0}, deny(StatusInvalidCommand)},
		{"a name of bad UTF-8", opCreateStream, []byte{1, 0xff}, deny(StatusInvalidCommand)},
		{"a numeric id of 3 bytes", opDeleteStream, []byte{1, 3, 0, 0, 0}, deny(StatusInvalidCommand)},
		{"identifier kind 3", opDeleteStream, []byte{3, 4, 0, 0, 0, 0}, deny(StatusInvalidCommand)},
		{"trailing bytes of a fixed layout are ignored", opDeleteStream, []byte{1, 4, 0, 0, 0, 0, 9, 9}, Refusal{}},
		{"trailing bytes after a block are a bad block", opCreateStream, []byte{1, 'a', 2}, deny(StatusInvalidCommand)},
		{"too long", opDeleteStream, append([]byte{1, 4, 0, 0, 0, 0}, make([]byte, requestBodyMax)...), deny(StatusInvalidCommand)},
		{"1000 partitions", wire.OperationCreateTopic, topic(1000, nil), Refusal{}},
		{"1001 partitions before bad options", wire.OperationCreateTopic, topic(1001, rawBlock(key("nope"), entry{kind: 3, data: []byte{1}})), deny(StatusTooManyPartitions)},
		{"1001 new partitions", wire.OperationCreatePartitions, partitions(num(0), num(0), 1001), deny(StatusTooManyPartitions)},
		{"deleting 5000 is for apply", opDelParts, partitions(num(0), num(0), 5000), Refusal{}},
		{"an unknown key", wire.OperationCreateTopic, topic(1, rawBlock(key("nope"), entry{kind: 3, data: []byte{1}})), evict},
		{"partitions_count is no option", wire.OperationCreateTopic, topic(1, rawBlock(key("partitions_count"), entry{kind: 11, data: []byte{1, 0, 0, 0}})), evict},
		{"segment_size below 1 MiB", wire.OperationCreateTopic, topic(1, rawBlock(key("segment_size"), entry{kind: 12, data: u64(1<<20 - 512)})), evict},
		{"segment_size not a multiple of 512", wire.OperationCreateTopic, topic(1, rawBlock(key("segment_size"), entry{kind: 12, data: u64(1<<20 + 1)})), evict},
		{"segment_size 0 is absent", wire.OperationCreateTopic, topic(1, rawBlock(key("segment_size"), entry{kind: 12, data: u64(0)})), Refusal{}},
		{"max_topic_size below the default segment", wire.OperationCreateTopic, topic(1, rawBlock(key("max_topic_size"), entry{kind: 12, data: u64(1 << 29)})), evict},
		{"max_topic_size 0 is the server default", wire.OperationCreateTopic, topic(1, rawBlock(key("max_topic_size"), entry{kind: 12, data: u64(0)})), Refusal{}},
		{"max_topic_size equal to the segment", wire.OperationCreateTopic, topic(1, rawBlock(key("segment_size"), entry{kind: 12, data: u64(1 << 20)},
			key("max_topic_size"), entry{kind: 12, data: u64(1 << 20)})), Refusal{}},
		{"preallocation is not bounded on the raw path", wire.OperationCreateTopic, topic(1000, rawBlock(key("preallocate_segments"), entry{kind: 3, data: []byte{1}})), Refusal{}},
		{"a unit suffix on a byte size", wire.OperationCreateTopic, topic(1, rawBlock(key("segment_size"), entry{kind: 2, data: []byte("128MiB")})), evict},
		{"a sign on a byte size", wire.OperationCreateTopic, topic(1, rawBlock(key("size_of_messages_required_to_save"), entry{kind: 2, data: []byte("+7")})), evict},
		{"a sign on a count", wire.OperationCreateTopic, topic(1, rawBlock(key("messages_required_to_save"), entry{kind: 2, data: []byte("+16")})), Refusal{}},
		{"an expiry without a unit", wire.OperationCreateTopic, topic(1, rawBlock(key("message_expiry"), entry{kind: 2, data: []byte("100")})), evict},
		{"an expiry above u32::MAX seconds", wire.OperationCreateTopic, topic(1, rawBlock(key("message_expiry"), entry{kind: 2, data: []byte("4294967296s")})), evict},
		{"Bool 2", wire.OperationCreateTopic, topic(1, rawBlock(key("enforce_fsync"), entry{kind: 3, data: []byte{2}})), evict},
		{"compression code 3", wire.OperationCreateTopic, topic(1, rawBlock(key("compression_algorithm"), entry{kind: 9, data: []byte{3}})), evict},
		{"compression in any case", wire.OperationCreateTopic, topic(1, rawBlock(key("compression_algorithm"), entry{kind: 2, data: []byte("GZip")})), Refusal{}},
	} {
		got := Admit(c.op, c.body)
		if got.Kind != c.want.Kind || got.Status != c.want.Status || got.Reason != c.want.Reason {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if (got.Kind == Accepted) != (got.Err == nil) {
			t.Errorf("%s: %v with error %v", c.name, got.Kind, got.Err)
		}
		if _, _, ok := Project(c.op, c.body, 1); ok != (got.Kind == Accepted) {
			t.Errorf("%s: Project ok=%v, Admit %v", c.name, ok, got)
		}
	}
}

// TestCorruptPrepares: a prepare no correct primary builds is an error from
// TryApply, which leaves the model unchanged, and a panic from Apply (as a
// replica's commit path panics on a corrupt log).
func TestCorruptPrepares(t *testing.T) {
	s := newSession(t, DefaultLimits())
	s.commit(rootUser, opCreateStream, createStream("s", nil), 1)
	good := topic64(num(0), "t", nil, nil, 0)
	for _, c := range []struct {
		name string
		op   wire.Operation
		body []byte
	}{
		{"CreateTopic is never committed unprojected", wire.OperationCreateTopic, createTopicBody{stream: num(0), name: "t"}.encode()},
		{"CreatePartitions neither", wire.OperationCreatePartitions, partitions(num(0), num(0), 1)},
		{"an operation outside the slice", wire.OperationPurgeStream, streamID(num(0))},
		{"an undecodable body", opCreateStream, []byte{0}},
		{"a Register with a body", wire.OperationRegister, []byte{1}},
		{"a 64 body with a trailing byte", op64, append(bytes.Clone(good), 0)},
		{"a 64 body cut short", op64, good[:len(good)-1]},
		{"a 64 body with a bad derived block", op64, topic64(num(0), "t", nil, []byte{2, 1}, 0)},
		{"a 65 body whose request has trailing bytes", op65, func() []byte {
			req := append(partitions(num(0), num(0), 0), 9)
			b := binary.LittleEndian.AppendUint32(nil, uint32(len(req)))
			return binary.LittleEndian.AppendUint32(append(b, req...), 0)
		}()},
		{"more than 1000 assignments", op65, func() []byte {
			req := partitions(num(0), num(0), 1001)
			b := binary.LittleEndian.AppendUint32(nil, uint32(len(req)))
			b = binary.LittleEndian.AppendUint32(append(b, req...), 1001)
			return append(b, make([]byte, 1001*assignmentSize)...)
		}()},
	} {
		before := s.m.dump()
		if _, err := s.m.TryApply(prepareOf(99, c.op, 1), c.body); err == nil {
			t.Errorf("%s: TryApply accepted it", c.name)
		}
		if s.m.dump() != before {
			t.Errorf("%s: TryApply changed the model", c.name)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Apply did not panic", c.name)
				}
			}()
			s.m.Apply(prepareOf(99, c.op, 1), c.body)
		}()
	}
}

// TestApplyKeepsNoReferenceToTheBody: the caller may reuse a prepare's
// buffer after Apply.
func TestApplyKeepsNoReferenceToTheBody(t *testing.T) {
	s := newSession(t, DefaultLimits())
	body := createStream("s", rawBlock(key("k"), entry{kind: uint8(wire.OptionRaw), data: []byte("v")}))
	s.commit(rootUser, opCreateStream, body, 1)
	before := s.m.dump()
	for i := range body {
		body[i] = 0
	}
	if s.m.dump() != before {
		t.Fatal("the model changed with the caller's buffer")
	}
}
