package metadata

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// unhex parses hex with any spacing.
func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

func prepare(op uint64, operation wire.Operation, timestamp uint64) wire.PrepareHeader {
	return wire.PrepareHeader{
		Prefix: wire.Prefix{Command: wire.CommandPrepare}, Client: wire.U128{Lo: 7}, Op: op, Timestamp: timestamp,
		Request: op, Operation: operation, Group: wire.MetadataGroup,
	}
}

// TestGoldenRequestBodies: every request-body example of client-ops.md that
// this slice consumes decodes to the documented fields and re-encodes to the
// same bytes.
func TestGoldenRequestBodies(t *testing.T) {
	cases := []struct {
		name   string // where the example is
		hex    string
		op     wire.Operation
		want   any
		encode func() []byte
	}{
		{"1.2 identifier numeric 1 (as a DeleteStream body, 5.5)", "01 04 01 00 00 00", wire.OperationDeleteStream,
			DeleteStream{Stream: ID(1)}, DeleteStream{Stream: ID(1)}.Encode},
		{"5.3 CreateStream \"test\"", "04 74 65 73 74", wire.OperationCreateStream,
			CreateStream{Name: "test", Options: []byte{}}, CreateStream{Name: "test"}.Encode},
		{"5.4 UpdateStream \"stream\" -> \"update_stream\"",
			"02 06 73 74 72 65 61 6d 0d 75 70 64 61 74 65 5f 73 74 72 65 61 6d", wire.OperationUpdateStream,
			UpdateStream{Stream: Named("stream"), Name: "update_stream", Options: []byte{}},
			UpdateStream{Stream: Named("stream"), Name: "update_stream"}.Encode},
		{"5.7 CreateTopic \"stream\", 2 partitions, \"topic\"",
			"02 06 73 74 72 65 61 6d 02 00 00 00 05 74 6f 70 69 63", wire.OperationCreateTopic,
			CreateTopic{Stream: Named("stream"), PartitionsCount: 2, Name: "topic", Options: []byte{}},
			CreateTopic{Stream: Named("stream"), PartitionsCount: 2, Name: "topic"}.Encode},
		{"5.9 DeleteTopic stream 0, topic 1", "01 04 00 00 00 00 01 04 01 00 00 00", wire.OperationDeleteTopic,
			DeleteTopic{Stream: ID(0), Topic: ID(1)}, DeleteTopic{Stream: ID(0), Topic: ID(1)}.Encode},
		{"5.11 CreatePartitions stream 0, topic 0, count 3", "01 04 00 00 00 00 01 04 00 00 00 00 03 00 00 00",
			wire.OperationCreatePartitions,
			CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 3},
			CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 3}.Encode},
		{"5.12 DeletePartitions stream 0, topic 0, count 1", "01 04 00 00 00 00 01 04 00 00 00 00 01 00 00 00",
			wire.OperationDeletePartitions,
			DeletePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 1},
			DeletePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 1}.Encode},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := unhex(t, c.hex)
			got, err := decodeBody(c.op, b)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !equalBodies(got, c.want) {
				t.Fatalf("decoded %+v, want %+v", got, c.want)
			}
			if enc := c.encode(); !bytes.Equal(enc, b) {
				t.Fatalf("encoded % x\nwant        % x", enc, b)
			}
			if r := Preflight(c.op, b); r.Refused() {
				t.Fatalf("Preflight refused the golden body: %v", r)
			}
		})
	}
}

// TestGoldenLoginBodiesAreRefusedOnTheRawPath: the Go SDK's LoginRegister
// bodies (5.1) are shell-path bodies; on the raw path a Register body is
// empty, so vopr denies them with InvalidCommand.
func TestGoldenLoginBodiesAreRefusedOnTheRawPath(t *testing.T) {
	password := unhex(t, "00 2c 00 00 06 67 6f 2d 73 64 6b 0c 30 2e 39 2e 30 2d 65 64 67 65 2e 31 04 69 67 67 79 06 73 65 63 72 65 74 00 00 00 00")
	if len(password) != 40 {
		t.Fatalf("the password body is %d bytes, the spec says 40", len(password))
	}
	pat := append(append([]byte{}, password[:24]...), unhex(t, "0b 74 6f 6b 65 6e 2d 76 61 6c 75 65 00 00 00 00")...)
	for _, body := range [][]byte{password, pat} {
		if r := Preflight(wire.OperationRegister, body); r.Kind != Deny || r.Status != CodeInvalidCommand {
			t.Fatalf("Preflight(Register, login body) = %v, want deny 3", r)
		}
	}
	if r := Preflight(wire.OperationRegister, nil); r.Refused() {
		t.Fatalf("Preflight(Register, empty) = %v", r)
	}
}

// TestGoldenResults: the result section examples (2.2, 4, 5.1).
func TestGoldenResults(t *testing.T) {
	if got, want := ResultRejection(1012), unhex(t, "01 00 00 00 00 00 00 00 f4 03 00 00"); !bytes.Equal(got, want) {
		t.Fatalf("rejection 1012 = % x, want % x", got, want)
	}
	r, err := ParseResult(unhex(t, "01 00 00 00 00 00 00 00 f4 03 00 00"))
	if err != nil || r.Code() != CodeStreamNameAlreadyExists || len(r.Payload) != 0 {
		t.Fatalf("parse rejection: %+v %v", r, err)
	}
	if got := ResultOK(nil); !bytes.Equal(got, []byte{0, 0, 0, 0}) {
		t.Fatalf("empty success = % x", got)
	}

	login := LoginRegisterResponse{UserID: 0x01020304, Session: 0x05060708090A0B0C, ServerProtocolVersion: 0x0D0E0F10, ServerVersion: "v"}
	want := unhex(t, "04 03 02 01 0c 0b 0a 09 08 07 06 05 10 0f 0e 0d 01 76")
	if got := login.Append(nil); !bytes.Equal(got, want) {
		t.Fatalf("LoginRegisterResponse = % x, want % x", got, want)
	}
	if back, err := DecodeLoginRegisterResponse(want); err != nil || back != login {
		t.Fatalf("decode LoginRegisterResponse: %+v %v", back, err)
	}

	root := LoginRegisterResponse{UserID: 0, Session: 1, ServerProtocolVersion: ProtocolVersion, ServerVersion: "0.9.0-edge.5"}
	want = unhex(t, "00000000 00000000 0100000000000000 002c0000 0c 302e392e302d656467652e35")
	if got := ResultOK(root.Append(nil)); !bytes.Equal(got, want) {
		t.Fatalf("Register reply body = % x, want % x", got, want)
	}
}

// derivedDefaultsHex is the 274-byte derived block of 5.7, written out key
// by key.
func derivedDefaultsHex(t *testing.T) []byte {
	entry := func(kind wire.OptionKind, data []byte) []byte {
		return append(append([]byte{byte(kind)}, binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...), data...)
	}
	key := func(s string) []byte { return entry(wire.OptionString, []byte(s)) }
	u64 := func(v uint64) []byte { return entry(wire.OptionUint64, binary.LittleEndian.AppendUint64(nil, v)) }
	var b []byte
	b = append(append(b, key("compression_algorithm")...), entry(wire.OptionString, []byte("none"))...)
	b = append(append(b, key("enforce_fsync")...), entry(wire.OptionBool, []byte{0})...)
	b = append(append(b, key("max_topic_size")...), u64(math.MaxUint64)...)
	b = append(append(b, key("message_expiry")...), u64(math.MaxUint64)...)
	b = append(append(b, key("messages_required_to_save")...), entry(wire.OptionUint32, binary.LittleEndian.AppendUint32(nil, 1024))...)
	b = append(append(b, key("preallocate_segments")...), entry(wire.OptionBool, []byte{0})...)
	b = append(append(b, key("segment_size")...), u64(1<<30)...)
	b = append(append(b, key("size_of_messages_required_to_save")...), u64(1<<20)...)
	return b
}

// TestGoldenDerivedBlock: with no client options the derived block holds the
// 8 catalog keys in key order, 274 bytes (5.7).
func TestGoldenDerivedBlock(t *testing.T) {
	want := derivedDefaultsHex(t)
	if len(want) != 274 {
		t.Fatalf("hand-built derived block is %d bytes", len(want))
	}
	if got := DerivedDefaults(); !bytes.Equal(got, want) {
		t.Fatalf("DerivedDefaults = % x\nwant % x", got, want)
	}
	// The projection of the 5.7 golden request carries exactly that block.
	body := unhex(t, "02 06 73 74 72 65 61 6d 02 00 00 00 05 74 6f 70 69 63")
	p, r := Project(wire.OperationCreateTopic, body, NewGroupAllocator(41))
	if r.Refused() || p.Operation != wire.OperationCreateTopicWithAssignments {
		t.Fatalf("Project = %v, %v", p.Operation, r)
	}
	x, err := DecodeCreateTopicWithAssignments(p.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x.Derived, want) || len(x.Request.Options) != 0 || !bytes.Equal(x.Request.Encode(), body) {
		t.Fatalf("projection: %+v", x)
	}
	if len(x.Partitions) != 2 || x.Partitions[0] != (PartitionAssignment{0, 42}) || x.Partitions[1] != (PartitionAssignment{1, 43}) {
		t.Fatalf("partitions %+v", x.Partitions)
	}
	// Layout: [req_len][request][derived_len][derived][n][n x 12].
	wantBody := binary.LittleEndian.AppendUint32(nil, uint32(len(body)))
	wantBody = append(wantBody, body...)
	wantBody = binary.LittleEndian.AppendUint32(wantBody, 274)
	wantBody = append(wantBody, want...)
	wantBody = binary.LittleEndian.AppendUint32(wantBody, 2)
	wantBody = binary.LittleEndian.AppendUint32(wantBody, 0)
	wantBody = binary.LittleEndian.AppendUint64(wantBody, 42)
	wantBody = binary.LittleEndian.AppendUint32(wantBody, 1)
	wantBody = binary.LittleEndian.AppendUint64(wantBody, 43)
	if !bytes.Equal(p.Body, wantBody) {
		t.Fatalf("replicated body\n% x\nwant\n% x", p.Body, wantBody)
	}
}

// TestGoldenExplicitOptions: the explicit block is re-encoded canonically;
// for enforce_fsync=true and segment_size=1 GiB that is wire.md 12.A5's
// 54-byte block, and the derived block holds the other six keys.
func TestGoldenExplicitOptions(t *testing.T) {
	a5 := unhex(t, "02 0d000000 656e666f7263655f6673796e63 03 01000000 01 02 0c000000 7365676d656e745f73697a65 0c 08000000 00 00 00 40 00 00 00 00")
	if len(a5) != 54 {
		t.Fatalf("A5 is %d bytes", len(a5))
	}
	// Sent unsorted, segment_size as text, enforce_fsync as text.
	sent := wire.EncodeOptions([]wire.Option{
		{Key: "segment_size", Kind: wire.OptionString, Value: []byte("1073741824")},
		{Key: "enforce_fsync", Kind: wire.OptionString, Value: []byte("true")},
	})
	body := CreateTopic{Stream: ID(0), PartitionsCount: 1, Name: "t", Options: sent}.Encode()
	p, r := Project(wire.OperationCreateTopic, body, NewGroupAllocator(0))
	if r.Refused() {
		t.Fatal(r)
	}
	x, err := DecodeCreateTopicWithAssignments(p.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x.Request.Options, a5) {
		t.Fatalf("explicit block % x\nwant % x", x.Request.Options, a5)
	}
	pairs, _ := wire.DecodeOptions(x.Derived)
	var keys []string
	for _, p := range pairs {
		keys = append(keys, p.Key)
	}
	if got := strings.Join(keys, ","); got != "compression_algorithm,max_topic_size,message_expiry,messages_required_to_save,preallocate_segments,size_of_messages_required_to_save" {
		t.Fatalf("derived keys %s", got)
	}

	// Applied, the reply splits the stored map by provenance.
	st := NewState()
	st.Apply(prepare(1, wire.OperationCreateStream, 10), CreateStream{Name: "s"}.Encode())
	reply := st.Apply(prepare(2, p.Operation, 20), p.Body)
	res, err := ParseResult(reply)
	if err != nil || res.Code() != CodeOK {
		t.Fatalf("reply % x: %v", reply, err)
	}
	th, parts, err := DecodeCreateTopicReply(res.Payload)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(th.Explicit, a5) || !bytes.Equal(th.Derived, x.Derived) || len(parts) != 1 {
		t.Fatalf("topic header %+v", th)
	}
}

// TestGoldenCreateStreamReply: the derived reply body of 5.3 for id 0,
// created_at 1, name "s".
func TestGoldenCreateStreamReply(t *testing.T) {
	want := unhex(t, "00000000 00000000 0100000000000000 00000000 0000000000000000 0000000000000000 01 73 00000000")
	st := NewState()
	got := st.Apply(prepare(1, wire.OperationCreateStream, 1), CreateStream{Name: "s"}.Encode())
	if !bytes.Equal(got, want) {
		t.Fatalf("CreateStream reply\n% x\nwant\n% x", got, want)
	}
	res, _ := ParseResult(got)
	sr, err := DecodeCreateStreamReply(res.Payload)
	if err != nil || sr.ID != 0 || sr.CreatedAt != 1 || sr.Name != "s" || len(sr.Options) != 0 {
		t.Fatalf("decoded %+v %v", sr, err)
	}
	// A second "s" is the committed rejection 1012 of 2.2.
	if got := st.Apply(prepare(2, wire.OperationCreateStream, 2), CreateStream{Name: "s"}.Encode()); !bytes.Equal(got, unhex(t, "01 00 00 00 00 00 00 00 f4 03 00 00")) {
		t.Fatalf("duplicate CreateStream reply % x", got)
	}
}

// TestGoldenCreateTopicReply: the GetTopic shape of 5.7 with no options.
func TestGoldenCreateTopicReply(t *testing.T) {
	st := NewState()
	st.Apply(prepare(1, wire.OperationCreateStream, 5), CreateStream{Name: "stream"}.Encode())
	p, r := Project(wire.OperationCreateTopic, unhex(t, "02 06 73 74 72 65 61 6d 02 00 00 00 05 74 6f 70 69 63"), NewGroupAllocator(0))
	if r.Refused() {
		t.Fatal(r)
	}
	reply := st.Apply(prepare(2, p.Operation, 9), p.Body)
	// result · TopicHeader · 2 x PartitionResponse, built by hand.
	want := []byte{0, 0, 0, 0}
	le := binary.LittleEndian
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
	want = append(want, derivedDefaultsHex(t)...)
	for id := range uint32(2) {
		want = le.AppendUint32(want, id)
		want = le.AppendUint64(want, 9)
		want = append(want, make([]byte, 4+8+8+8)...)
	}
	if !bytes.Equal(reply, want) {
		t.Fatalf("CreateTopic reply\n% x\nwant\n% x", reply, want)
	}
}
