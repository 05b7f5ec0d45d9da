package refmodel

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Golden replies for every operation, from client-ops.md (section 8 lists
// the sources) and, where the specification only gives a layout, built by
// hand field by field from section 4.

// unhex parses hex with any spacing.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func prepareOf(op uint64, operation wire.Operation, timestamp uint64) wire.PrepareHeader {
	return wire.PrepareHeader{
		Prefix: wire.Prefix{Command: wire.CommandPrepare}, Client: wire.U128{Lo: 7}, Op: op,
		Timestamp: timestamp, Request: op, Operation: operation, Group: wire.MetadataGroup,
	}
}

// session drives a model with a running op number, as the tests' primary.
// Every prepare is also applied to the replica's state machine, which must
// reply the same bytes: the expected values of the tests come from the
// specification, and the mirror shows the replica agrees with each of them.
type session struct {
	t       *testing.T
	m       *Model
	replica *metadata.State
	op      uint64
}

func newSession(t *testing.T, l Limits) *session {
	return &session{t: t, m: New(l), replica: metadata.NewStateWithLimits(metadata.Limits{
		Streams: l.Streams, TopicsPerStream: l.TopicsPerStream, PartitionID: l.PartitionID, Partitions: l.Partitions,
	})}
}

// commit applies a committed prepare acting as user at timestamp ts.
func (s *session) commit(user uint32, op wire.Operation, body []byte, ts uint64) []byte {
	s.t.Helper()
	s.op++
	h := prepareOf(s.op, op, ts)
	h.UserID = user
	reply, err := s.m.TryApply(h, body)
	if err != nil {
		s.t.Fatalf("op %d %v: %v", s.op, op, err)
	}
	if theirs := s.replica.Apply(h, body); !bytes.Equal(theirs, reply) {
		s.t.Errorf("op %d %v: the replica replied\n% x\nthe model\n% x", s.op, op, theirs, reply)
	}
	return reply
}

// request projects a client request as the primary does, with group ids
// from 1, and commits it.
func (s *session) request(user uint32, op wire.Operation, body []byte, ts uint64) []byte {
	s.t.Helper()
	rop, replicated, ok := Project(op, body, s.m.HighestGroupID()+1)
	if !ok {
		s.t.Fatalf("Project(%v % x) refused: %v", op, body, Admit(op, body))
	}
	return s.commit(user, rop, replicated, ts)
}

// Bodies of the specification's examples.
const (
	goldenDeleteStream1    = "01 04 01 00 00 00"                                                 // 1.2, 5.5
	goldenCreateStreamTest = "04 74 65 73 74"                                                    // 5.3
	goldenUpdateStream     = "02 06 73 74 72 65 61 6d 0d 75 70 64 61 74 65 5f 73 74 72 65 61 6d" // 5.4
	goldenCreateTopic      = "02 06 73 74 72 65 61 6d 02 00 00 00 05 74 6f 70 69 63"             // 5.7
	goldenDeleteTopic01    = "01 04 00 00 00 00 01 04 01 00 00 00"                               // 5.9
	goldenCreatePartitions = "01 04 00 00 00 00 01 04 00 00 00 00 03 00 00 00"                   // 5.11
	goldenDeletePartitions = "01 04 00 00 00 00 01 04 00 00 00 00 01 00 00 00"                   // 5.12
	goldenRejection1012    = "01 00 00 00 00 00 00 00 f4 03 00 00"                               // 2.2
	goldenA5               = "02 0d000000 656e666f7263655f6673796e63 03 01000000 01" +           // wire.md 12 A5:
		"02 0c000000 7365676d656e745f73697a65 0c 08000000 00 00 00 40 00 00 00 00" // enforce_fsync, segment_size
)

// derivedDefaults is the 274-byte derived block of 5.7, written out key by
// key in the documented order.
func derivedDefaults(t *testing.T) []byte {
	t.Helper()
	entry := func(kind wire.OptionKind, data []byte) []byte {
		return append(append([]byte{byte(kind)}, binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...), data...)
	}
	k := func(s string) []byte { return entry(wire.OptionString, []byte(s)) }
	u64 := func(v uint64) []byte { return entry(wire.OptionUint64, binary.LittleEndian.AppendUint64(nil, v)) }
	var b []byte
	b = append(append(b, k("compression_algorithm")...), entry(wire.OptionString, []byte("none"))...)
	b = append(append(b, k("enforce_fsync")...), entry(wire.OptionBool, []byte{0})...)
	b = append(append(b, k("max_topic_size")...), u64(math.MaxUint64)...)
	b = append(append(b, k("message_expiry")...), u64(math.MaxUint64)...)
	b = append(append(b, k("messages_required_to_save")...), entry(wire.OptionUint32, binary.LittleEndian.AppendUint32(nil, 1024))...)
	b = append(append(b, k("preallocate_segments")...), entry(wire.OptionBool, []byte{0})...)
	b = append(append(b, k("segment_size")...), u64(1<<30)...)
	b = append(append(b, k("size_of_messages_required_to_save")...), u64(1<<20)...)
	if len(b) != 274 {
		t.Fatalf("the derived defaults are %d bytes, 5.7 says 274", len(b))
	}
	return b
}

func TestGoldenRequestBodiesAreAdmitted(t *testing.T) {
	for _, c := range []struct {
		op   wire.Operation
		body string
	}{
		{wire.OperationDeleteStream, goldenDeleteStream1},
		{wire.OperationCreateStream, goldenCreateStreamTest},
		{wire.OperationUpdateStream, goldenUpdateStream},
		{wire.OperationCreateTopic, goldenCreateTopic},
		{wire.OperationDeleteTopic, goldenDeleteTopic01},
		{wire.OperationCreatePartitions, goldenCreatePartitions},
		{wire.OperationDeletePartitions, goldenDeletePartitions},
		{wire.OperationRegister, ""},
		{wire.OperationLogout, ""},
	} {
		if r := Admit(c.op, unhex(t, c.body)); r.Kind != Accepted {
			t.Errorf("%v % x: %v", c.op, c.body, r)
		}
	}
	// The shell path's login bodies (5.1) are not empty, so the raw path
	// denies them.
	login := unhex(t, "00 2c 00 00 06 67 6f 2d 73 64 6b 0c 30 2e 39 2e 30 2d 65 64 67 65 2e 31 04 69 67 67 79 06 73 65 63 72 65 74 00 00 00 00")
	if r := Admit(wire.OperationRegister, login); r.Kind != Deny || r.Status != StatusInvalidCommand {
		t.Errorf("Register with a login body: %v", r)
	}
}

func TestGoldenCreateStream(t *testing.T) {
	s := newSession(t, DefaultLimits())
	// 5.3's derived reply body for id 0, created_at 1, name "s".
	got := s.request(rootUser, wire.OperationCreateStream, unhex(t, "01 73"), 1)
	want := unhex(t, "00000000 00000000 0100000000000000 00000000 0000000000000000 0000000000000000 01 73 00000000")
	if !bytes.Equal(got, want) {
		t.Fatalf("CreateStream reply\n% x\nwant\n% x", got, want)
	}
	// 5.3's example body "test" gets the next id, 1, and its block echoed.
	got = s.request(rootUser, wire.OperationCreateStream, unhex(t, goldenCreateStreamTest), 0x0102)
	want = unhex(t, "00000000 01000000 0201000000000000 00000000 0000000000000000 0000000000000000 04 74657374 00000000")
	if !bytes.Equal(got, want) {
		t.Fatalf("CreateStream \"test\" reply\n% x\nwant\n% x", got, want)
	}
	// A second "s" is 2.2's rejection golden.
	if got := s.request(rootUser, wire.OperationCreateStream, unhex(t, "01 73"), 3); !bytes.Equal(got, unhex(t, goldenRejection1012)) {
		t.Fatalf("duplicate CreateStream % x", got)
	}
	// The options block is echoed as sent, an entry of a kind with no
	// meaning included.
	block := rawBlock(key("x"), entry{kind: 99, data: []byte{1, 2, 3}})
	got = s.request(rootUser, wire.OperationCreateStream, append(unhex(t, "01 78"), block...), 4)
	want = unhex(t, "00000000 02000000 0400000000000000 00000000 0000000000000000 0000000000000000 01 78")
	want = binary.LittleEndian.AppendUint32(want, uint32(len(block)))
	if want = append(want, block...); !bytes.Equal(got, want) {
		t.Fatalf("CreateStream with options\n% x\nwant\n% x", got, want)
	}
}

func TestGoldenUpdateAndDeleteStream(t *testing.T) {
	s := newSession(t, DefaultLimits())
	s.request(rootUser, wire.OperationCreateStream, unhex(t, "06 73747265616d"), 1) // "stream"
	ok := unhex(t, "00000000")
	if got := s.request(rootUser, wire.OperationUpdateStream, unhex(t, goldenUpdateStream), 2); !bytes.Equal(got, ok) {
		t.Fatalf("UpdateStream (5.4 golden) % x", got)
	}
	if got := s.request(rootUser, wire.OperationUpdateStream, unhex(t, goldenUpdateStream), 3); !bytes.Equal(got, unhex(t, "01000000 00000000 f1030000")) {
		t.Fatalf("UpdateStream of the old name % x, want 1009", got)
	}
	if got := s.request(rootUser, wire.OperationDeleteStream, unhex(t, goldenDeleteStream1), 4); !bytes.Equal(got, unhex(t, "01000000 00000000 f1030000")) {
		t.Fatalf("DeleteStream 1 (1.2 golden) % x, want 1009", got)
	}
	if got := s.request(rootUser, wire.OperationDeleteStream, unhex(t, "02 0d 7570646174655f73747265616d"), 5); !bytes.Equal(got, ok) {
		t.Fatalf("DeleteStream \"update_stream\" % x", got)
	}
}

func TestGoldenCreateTopic(t *testing.T) {
	s := newSession(t, DefaultLimits())
	s.request(rootUser, wire.OperationCreateStream, unhex(t, "06 73747265616d"), 5)
	body := unhex(t, goldenCreateTopic)

	// The projection: [req_len][request][274][derived][2][{0, 42}, {1, 43}].
	op, replicated, ok := Project(wire.OperationCreateTopic, body, 42)
	if !ok || op != wire.OperationCreateTopicWithAssignments {
		t.Fatalf("Project: %v %v", op, ok)
	}
	le := binary.LittleEndian
	want := le.AppendUint32(nil, uint32(len(body)))
	want = append(want, body...)
	want = le.AppendUint32(want, 274)
	want = append(want, derivedDefaults(t)...)
	want = le.AppendUint32(want, 2)
	want = le.AppendUint64(le.AppendUint32(want, 0), 42)
	want = le.AppendUint64(le.AppendUint32(want, 1), 43)
	if !bytes.Equal(replicated, want) {
		t.Fatalf("replicated body\n% x\nwant\n% x", replicated, want)
	}

	// The reply: result · TopicHeader · 2 x PartitionResponse (section 4).
	reply := s.commit(rootUser, op, replicated, 9)
	want = []byte{0, 0, 0, 0}
	want = le.AppendUint32(want, 0)              // id
	want = le.AppendUint64(want, 9)              // created_at
	want = le.AppendUint32(want, 2)              // partitions_count
	want = le.AppendUint64(want, math.MaxUint64) // message_expiry: never
	want = append(want, 1)                       // compression: none
	want = le.AppendUint64(want, math.MaxUint64) // max_topic_size: unlimited
	want = le.AppendUint64(want, 0)              // size_bytes
	want = le.AppendUint64(want, 0)              // messages_count
	want = append(want, 5, 't', 'o', 'p', 'i', 'c')
	want = le.AppendUint32(want, 0) // explicit block
	want = le.AppendUint32(want, 274)
	want = append(want, derivedDefaults(t)...)
	for id := range uint32(2) {
		want = le.AppendUint32(want, id)
		want = le.AppendUint64(want, 9)
		want = append(want, make([]byte, 4+8+8+8)...)
	}
	if !bytes.Equal(reply, want) {
		t.Fatalf("CreateTopic reply\n% x\nwant\n% x", reply, want)
	}
	if s.m.HighestGroupID() != 43 || s.m.LivePartitions() != 2 {
		t.Fatalf("highest group %d, live %d", s.m.HighestGroupID(), s.m.LivePartitions())
	}
	// The same name again: 2013.
	if got := s.request(rootUser, wire.OperationCreateTopic, body, 10); !bytes.Equal(got, unhex(t, "01000000 00000000 dd070000")) {
		t.Fatalf("duplicate topic % x", got)
	}
}

// TestGoldenExplicitOptions: options sent as text and out of order are
// replicated as wire.md's A5 block; the derived block holds the other six
// keys, and the reply splits the stored map by provenance.
func TestGoldenExplicitOptions(t *testing.T) {
	sent := rawBlock(key("segment_size"), entry{kind: 2, data: []byte("1073741824")},
		key("enforce_fsync"), entry{kind: 2, data: []byte("true")})
	body := append(unhex(t, "01 04 00000000 01000000 01 74"), sent...) // stream 0, 1 partition, "t"
	_, replicated, ok := Project(wire.OperationCreateTopic, body, 1)
	if !ok {
		t.Fatal(Admit(wire.OperationCreateTopic, body))
	}
	x, err := decodeCreateTopicReplicated(replicated)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x.request.options, unhex(t, goldenA5)) {
		t.Fatalf("explicit block % x\nwant A5 % x", x.request.options, unhex(t, goldenA5))
	}
	pairs, _ := decodeBlock(x.derived)
	var keys []string
	for _, p := range pairs {
		keys = append(keys, p.key)
	}
	if got := strings.Join(keys, ","); got != "compression_algorithm,max_topic_size,message_expiry,messages_required_to_save,preallocate_segments,size_of_messages_required_to_save" {
		t.Fatalf("derived keys %s", got)
	}

	s := newSession(t, DefaultLimits())
	s.request(rootUser, wire.OperationCreateStream, unhex(t, "01 73"), 1)
	reply := s.commit(rootUser, wire.OperationCreateTopicWithAssignments, replicated, 2)
	// The explicit block follows the name "t" in the TopicHeader.
	at := 4 + 4 + 8 + 4 + 8 + 1 + 8 + 8 + 8 + 2
	n := int(binary.LittleEndian.Uint32(reply[at:]))
	if !bytes.Equal(reply[at+4:at+4+n], unhex(t, goldenA5)) {
		t.Fatalf("reply's explicit block % x", reply[at+4:at+4+n])
	}
	at += 4 + n
	n = int(binary.LittleEndian.Uint32(reply[at:]))
	if !bytes.Equal(reply[at+4:at+4+n], x.derived) {
		t.Fatalf("reply's derived block % x", reply[at+4:at+4+n])
	}
}

func TestGoldenDeleteTopic(t *testing.T) {
	s := newSession(t, DefaultLimits())
	s.request(rootUser, wire.OperationCreateStream, unhex(t, "01 73"), 1)
	body := unhex(t, goldenDeleteTopic01) // stream 0, topic 1
	if got := s.request(rootUser, wire.OperationDeleteTopic, body, 2); !bytes.Equal(got, unhex(t, "01000000 00000000 da070000")) {
		t.Fatalf("DeleteTopic of no topic % x, want 2010", got)
	}
	s.request(rootUser, wire.OperationCreateTopic, unhex(t, "01 04 00000000 01000000 01 61"), 3)
	s.request(rootUser, wire.OperationCreateTopic, unhex(t, "01 04 00000000 02000000 01 62"), 4)
	if got := s.request(rootUser, wire.OperationDeleteTopic, body, 5); !bytes.Equal(got, unhex(t, "00000000")) {
		t.Fatalf("DeleteTopic % x", got)
	}
	if s.m.LivePartitions() != 1 {
		t.Fatalf("%d live partitions after deleting a topic of 2", s.m.LivePartitions())
	}
}

func TestGoldenPartitions(t *testing.T) {
	s := newSession(t, DefaultLimits())
	s.request(rootUser, wire.OperationCreateStream, unhex(t, "01 73"), 1)
	s.request(rootUser, wire.OperationCreateTopic, unhex(t, "01 04 00000000 00000000 01 74"), 2) // no partitions

	// 5.11's example: stream 0, topic 0, count 3, replicated with relative
	// offsets 0..2.
	body := unhex(t, goldenCreatePartitions)
	op, replicated, ok := Project(wire.OperationCreatePartitions, append(body, 0xAA), 7) // a trailing byte is not carried over
	want := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	want = append(want, body...)
	want = append(want, unhex(t, "03000000  00000000 0700000000000000  01000000 0800000000000000  02000000 0900000000000000")...)
	if !ok || op != wire.OperationCreatePartitionsWithAssignments || !bytes.Equal(replicated, want) {
		t.Fatalf("Project: %v %v\n% x\nwant\n% x", op, ok, replicated, want)
	}
	if got := s.commit(rootUser, op, replicated, 3); !bytes.Equal(got, unhex(t, "00000000")) {
		t.Fatalf("CreatePartitions % x", got)
	}
	ids := func() []uint32 {
		var out []uint32
		for _, p := range s.m.streams[0].topics[0].partitions {
			out = append(out, p.id)
		}
		return out
	}
	if got := ids(); len(got) != 3 || got[0] != 0 || got[2] != 2 {
		t.Fatalf("partition ids %v, want 0..2 for a topic that had none", got)
	}

	// 5.12's example removes the highest id; the next create hands it out
	// again.
	if got := s.request(rootUser, wire.OperationDeletePartitions, unhex(t, goldenDeletePartitions), 4); !bytes.Equal(got, unhex(t, "00000000")) {
		t.Fatalf("DeletePartitions % x", got)
	}
	s.request(rootUser, wire.OperationCreatePartitions, unhex(t, "01 04 00000000 01 04 00000000 02000000"), 5)
	if got := ids(); len(got) != 4 || got[2] != 2 || got[3] != 3 {
		t.Fatalf("partition ids %v, want 0..3", got)
	}
	// More than there are: 2019.
	if got := s.request(rootUser, wire.OperationDeletePartitions, unhex(t, "01 04 00000000 01 04 00000000 05000000"), 6); !bytes.Equal(got, unhex(t, "01000000 00000000 e3070000")) {
		t.Fatalf("DeletePartitions of 5 out of 4 % x", got)
	}
	// Group ids are never reused (DEVIATIONS 15).
	if s.m.HighestGroupID() != 11 {
		t.Fatalf("highest group id %d, want 11 (7..9, then 10, 11)", s.m.HighestGroupID())
	}
}

func TestGoldenRegisterAndLogout(t *testing.T) {
	for _, op := range []wire.Operation{wire.OperationRegister, wire.OperationLogout} {
		s := newSession(t, DefaultLimits())
		if got := s.request(rootUser, op, nil, 1); len(got) != 0 {
			t.Fatalf("%v reply body % x, want empty (5.1, 5.2 [raw])", op, got)
		}
		if got := s.request(5, op, nil, 1); len(got) != 0 {
			t.Fatalf("%v is not gated (2.5): % x", op, got)
		}
	}
}

// TestGoldenReplyFrame: the cached reply's header fields at the offsets of
// wire.md 5.20, read as raw bytes.
func TestGoldenReplyFrame(t *testing.T) {
	h := wire.PrepareHeader{
		Prefix: wire.Prefix{Cluster: wire.U128{Lo: 0x1111, Hi: 0x2222}, View: 9, Release: 5, Command: wire.CommandPrepare, Replica: 2},
		Client: wire.U128{Lo: 0x33, Hi: 0x44}, Parent: wire.U128{Lo: 0x55}, RequestChecksum: wire.U128{Lo: 0x66, Hi: 0x77},
		Op: 42, Commit: 40, Timestamp: 1042, Request: 7, Operation: wire.OperationCreateTopicWithAssignments,
		Group: wire.MetadataGroup, UserID: 3,
	}
	body := []byte{1, 2, 3}
	frame := Reply(h, body)
	if err := wire.Validate(frame); err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	u128 := func(at int) wire.U128 { return wire.U128{Lo: le.Uint64(frame[at:]), Hi: le.Uint64(frame[at+8:])} }
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"cluster", u128(32), h.Cluster},
		{"size", le.Uint32(frame[48:]), uint32(wire.HeaderSize + 3)},
		{"view", le.Uint32(frame[52:]), uint32(0)},
		{"release", le.Uint32(frame[56:]), uint32(5)},
		{"command", frame[60], byte(wire.CommandReply)},
		{"replica", frame[61], byte(2)},
		{"request_checksum", u128(128), h.RequestChecksum},
		{"context", u128(144), wire.U128{}},
		{"client", u128(160), h.Client},
		{"op", le.Uint64(frame[176:]), uint64(42)},
		{"commit", le.Uint64(frame[184:]), uint64(42)},
		{"timestamp", le.Uint64(frame[192:]), uint64(1042)},
		{"request", le.Uint64(frame[200:]), uint64(7)},
		{"operation", frame[208], byte(wire.OperationCreateTopicWithAssignments)},
		{"status", le.Uint32(frame[216:]), uint32(0)},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	if !bytes.Equal(frame[wire.HeaderSize:], body) {
		t.Errorf("body % x", frame[wire.HeaderSize:])
	}
	// A re-stamped view (a retransmission) does not change the bytes.
	h.View = 1
	if !bytes.Equal(Reply(h, body), frame) {
		t.Error("the reply depends on the prepare's view")
	}
}
