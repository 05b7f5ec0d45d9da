package metadata

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

func TestPreflight(t *testing.T) {
	valid := CreateStream{Name: "s"}.Encode()
	cases := []struct {
		name   string
		op     wire.Operation
		body   []byte
		kind   RefusalKind
		status uint32
		reason wire.EvictionReason
	}{
		{"register, empty body", wire.OperationRegister, nil, Accepted, 0, 0},
		{"logout, empty body", wire.OperationLogout, []byte{}, Accepted, 0, 0},
		{"logout with a body", wire.OperationLogout, []byte{0}, Deny, CodeInvalidCommand, 0},
		{"create stream", wire.OperationCreateStream, valid, Accepted, 0, 0},
		{"create stream, empty name", wire.OperationCreateStream, []byte{0}, Deny, CodeInvalidCommand, 0},
		{"create stream, bad UTF-8 name", wire.OperationCreateStream, []byte{1, 0xff}, Deny, CodeInvalidCommand, 0},
		{"create stream, name cut", wire.OperationCreateStream, []byte{5, 'a'}, Deny, CodeInvalidCommand, 0},
		{"create stream, bad options", wire.OperationCreateStream, append(append([]byte{}, valid...), 2, 1), Deny, CodeInvalidCommand, 0},
		{"delete stream, numeric of 3 bytes", wire.OperationDeleteStream, []byte{1, 3, 0, 0, 0}, Deny, CodeInvalidCommand, 0},
		{"delete stream, empty string id", wire.OperationDeleteStream, []byte{2, 0}, Deny, CodeInvalidCommand, 0},
		{"delete stream, kind 3", wire.OperationDeleteStream, []byte{3, 4, 0, 0, 0, 0}, Deny, CodeInvalidCommand, 0},
		{"delete stream, trailing bytes", wire.OperationDeleteStream, []byte{1, 4, 0, 0, 0, 0, 9, 9}, Accepted, 0, 0},
		{"delete stream, too long", wire.OperationDeleteStream, append([]byte{1, 4, 0, 0, 0, 0}, make([]byte, RequestBodyMax)...), Deny, CodeInvalidCommand, 0},
		{"create topic, 1000 partitions", wire.OperationCreateTopic, CreateTopic{Stream: ID(0), PartitionsCount: 1000, Name: "t"}.Encode(), Accepted, 0, 0},
		{"create topic, 1001 partitions", wire.OperationCreateTopic, CreateTopic{Stream: ID(0), PartitionsCount: 1001, Name: "t"}.Encode(), Deny, CodeTooManyPartitions, 0},
		{"create partitions, 1001", wire.OperationCreatePartitions, CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 1001}.Encode(), Deny, CodeTooManyPartitions, 0},
		{"delete partitions, 5000", wire.OperationDeletePartitions, DeletePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 5000}.Encode(), Accepted, 0, 0},
		{"internal 64", wire.OperationCreateTopicWithAssignments, nil, Evict, 0, wire.EvictionInvalidRequestOperation},
		{"internal 67", wire.OperationCompleteConsumerGroupRevocation, nil, Evict, 0, wire.EvictionInvalidRequestOperation},
		{"internal 68", wire.OperationTruncatePartition, nil, Evict, 0, wire.EvictionInvalidRequestOperation},
		{"purge stream", wire.OperationPurgeStream, valid, Deny, CodeFeatureUnavailable, 0},
		{"update topic", wire.OperationUpdateTopic, valid, Deny, CodeFeatureUnavailable, 0},
		{"delete segments", wire.OperationDeleteSegments, valid, Deny, CodeFeatureUnavailable, 0},
		{"create user", wire.OperationCreateUser, valid, Deny, CodeFeatureUnavailable, 0},
		{"non-replicated", wire.OperationNonReplicated, nil, Deny, CodeFeatureUnavailable, 0},
		{"send messages", wire.OperationSendMessages, nil, Deny, CodeFeatureUnavailable, 0},
		{"reserved", wire.OperationReserved, nil, Drop, 0, 0},
		{"undefined 99", wire.Operation(99), nil, Drop, 0, 0},
	}
	for _, c := range cases {
		r := Preflight(c.op, c.body)
		if r.Kind != c.kind || r.Status != c.status || r.Reason != c.reason {
			t.Errorf("%s: %v, want %v status %d reason %v", c.name, r, c.kind, c.status, c.reason)
		}
		if r.Refused() != (c.kind != Accepted) || (r.Refused() && r.Err == nil) {
			t.Errorf("%s: Refused %v, Err %v", c.name, r.Refused(), r.Err)
		}
	}
	var de *DecodeError
	if r := Preflight(wire.OperationCreateStream, []byte{0}); !errors.As(r.Err, &de) || !errors.Is(r.Err, ErrName) {
		t.Errorf("an undecodable body's error: %v", r.Err)
	}
}

func TestProjectCreateTopicRefusals(t *testing.T) {
	u64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	evicts := []struct {
		name string
		o    []wire.Option
	}{
		{"unknown key", []wire.Option{{Key: "nope", Kind: wire.OptionBool, Value: []byte{1}}}},
		{"partitions_count is not an option", []wire.Option{{Key: "partitions_count", Kind: wire.OptionUint32, Value: []byte{1, 0, 0, 0}}}},
		{"compression code 3", []wire.Option{{Key: "compression_algorithm", Kind: wire.OptionUint8, Value: []byte{3}}}},
		{"compression as Uint64", []wire.Option{{Key: "compression_algorithm", Kind: wire.OptionUint64, Value: u64(1)}}},
		{"bool 2", []wire.Option{{Key: "enforce_fsync", Kind: wire.OptionBool, Value: []byte{2}}}},
		{"bool text TRUE", []wire.Option{{Key: "enforce_fsync", Kind: wire.OptionString, Value: []byte("TRUE")}}},
		{"messages_required_to_save 0", []wire.Option{{Key: "messages_required_to_save", Kind: wire.OptionUint32, Value: []byte{0, 0, 0, 0}}}},
		{"messages_required_to_save 2^24+1", []wire.Option{{Key: "messages_required_to_save", Kind: wire.OptionUint32, Value: binary.LittleEndian.AppendUint32(nil, 16<<20+1)}}},
		{"size_of_messages above 1 GiB", []wire.Option{{Key: "size_of_messages_required_to_save", Kind: wire.OptionUint64, Value: u64(1<<30 + 1)}}},
		{"segment_size below 1 MiB", []wire.Option{{Key: "segment_size", Kind: wire.OptionUint64, Value: u64(1<<20 - 512)}}},
		{"segment_size above 1 GiB", []wire.Option{{Key: "segment_size", Kind: wire.OptionUint64, Value: u64(1<<30 + 512)}}},
		{"segment_size not a multiple of 512", []wire.Option{{Key: "segment_size", Kind: wire.OptionUint64, Value: u64(1<<20 + 1)}}},
		{"max_topic_size below the default segment", []wire.Option{{Key: "max_topic_size", Kind: wire.OptionUint64, Value: u64(1 << 29)}}},
		{"max_topic_size below the segment", []wire.Option{
			{Key: "segment_size", Kind: wire.OptionUint64, Value: u64(1 << 21)},
			{Key: "max_topic_size", Kind: wire.OptionUint64, Value: u64(1 << 20)}}},
		{"byte size with a unit", []wire.Option{{Key: "segment_size", Kind: wire.OptionString, Value: []byte("128MiB")}}},
		{"expiry without a unit", []wire.Option{{Key: "message_expiry", Kind: wire.OptionString, Value: []byte("100")}}},
	}
	for _, c := range evicts {
		alloc := NewGroupAllocator(7)
		body := CreateTopic{Stream: ID(0), PartitionsCount: 3, Name: "t", Options: opts(c.o...)}.Encode()
		if r := Preflight(wire.OperationCreateTopic, body); r.Refused() {
			t.Errorf("%s: Preflight %v (options are the projection's business)", c.name, r)
		}
		if _, r := Project(wire.OperationCreateTopic, body, alloc); r.Kind != Evict || r.Reason != wire.EvictionInvalidRequestBody {
			t.Errorf("%s: Project %v, want evict InvalidRequestBody", c.name, r)
		}
		if alloc.Highest() != 7 {
			t.Errorf("%s: a refused projection advanced the allocator", c.name)
		}
	}
	accepts := [][]wire.Option{
		{{Key: "max_topic_size", Kind: wire.OptionUint64, Value: u64(1 << 30)}},
		{{Key: "max_topic_size", Kind: wire.OptionUint64, Value: u64(0)}}, // sentinel
		{{Key: "max_topic_size", Kind: wire.OptionString, Value: []byte("unlimited")}},
		{{Key: "segment_size", Kind: wire.OptionUint64, Value: u64(1 << 20)}, {Key: "max_topic_size", Kind: wire.OptionUint64, Value: u64(1 << 20)}},
		{{Key: "compression_algorithm", Kind: wire.OptionString, Value: []byte("GZip")}},
		{{Key: "message_expiry", Kind: wire.OptionString, Value: []byte("1h 30m")}},
		{{Key: "messages_required_to_save", Kind: wire.OptionString, Value: []byte("+16")}},
		{{Key: "preallocate_segments", Kind: wire.OptionBool, Value: []byte{1}}},
	}
	for _, o := range accepts {
		body := CreateTopic{Stream: ID(0), PartitionsCount: 1, Name: "t", Options: opts(o...)}.Encode()
		if _, r := Project(wire.OperationCreateTopic, body, NewGroupAllocator(0)); r.Refused() {
			t.Errorf("%+v: %v", o, r)
		}
	}
}

func TestProjectCreatePartitionsAndVerbatim(t *testing.T) {
	alloc := NewGroupAllocator(100)
	body := CreatePartitions{Stream: Named("s"), Topic: ID(2), PartitionsCount: 3}.Encode()
	body = append(body, 0xAA) // ignored trailing byte: not replicated in the 65 body
	p, r := Project(wire.OperationCreatePartitions, body, alloc)
	if r.Refused() || p.Operation != wire.OperationCreatePartitionsWithAssignments {
		t.Fatal(p.Operation, r)
	}
	x, err := DecodeCreatePartitionsWithAssignments(p.Body)
	if err != nil || x.Request != (CreatePartitions{Stream: Named("s"), Topic: ID(2), PartitionsCount: 3}) {
		t.Fatal(x, err)
	}
	for i, a := range x.Partitions {
		if a != (PartitionAssignment{PartitionID: uint32(i), ConsensusGroupID: 101 + uint64(i)}) {
			t.Fatalf("assignment %d = %+v", i, a)
		}
	}
	if alloc.Highest() != 103 {
		t.Fatal(alloc.Highest())
	}
	// Another replica's allocator catches up from the journaled prepare.
	other := NewGroupAllocator(0)
	if err := other.ObservePrepare(p.Operation, p.Body); err != nil || other.Highest() != 103 {
		t.Fatal(other.Highest(), err)
	}
	if err := other.ObservePrepare(wire.OperationCreateTopicWithAssignments, []byte{1}); err == nil {
		t.Fatal("an undecodable 64 body observed without error")
	}

	del := DeleteStream{Stream: ID(1)}.Encode()
	del = append(del, 1, 2, 3)
	p, r = Project(wire.OperationDeleteStream, del, alloc)
	if r.Refused() || p.Operation != wire.OperationDeleteStream || &p.Body[0] != &del[0] {
		t.Fatal("DeleteStream is not replicated verbatim")
	}
}

func TestReplicatedBodyStrictness(t *testing.T) {
	good := CreatePartitionsWithAssignments{Request: CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 1},
		Partitions: []PartitionAssignment{{0, 1}}}.Encode()
	if _, err := DecodeCreatePartitionsWithAssignments(append(good, 0)); !errors.Is(err, ErrTrailing) {
		t.Fatalf("trailing byte: %v", err)
	}
	// A request section with bytes after its fields.
	req := append(CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 1}.Encode(), 0)
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(req)))
	b = append(b, req...)
	b = binary.LittleEndian.AppendUint32(b, 0)
	if _, err := DecodeCreatePartitionsWithAssignments(b); !errors.Is(err, ErrTrailing) {
		t.Fatalf("trailing byte in the request section: %v", err)
	}
	// An assignment count past the bound.
	b = binary.LittleEndian.AppendUint32(nil, uint32(len(req)-1))
	b = append(b, req[:len(req)-1]...)
	b = binary.LittleEndian.AppendUint32(b, AssignmentsMax+1)
	if _, err := DecodeCreatePartitionsWithAssignments(b); !errors.Is(err, ErrTooLong) {
		t.Fatalf("too many assignments: %v", err)
	}
	b = binary.LittleEndian.AppendUint32(nil, math.MaxUint32)
	if _, err := DecodeCreateTopicWithAssignments(b); !errors.Is(err, ErrLength) {
		t.Fatalf("request length past the end: %v", err)
	}
}

func TestParseResultRules(t *testing.T) {
	for _, b := range [][]byte{nil, {0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {2, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0}} {
		if _, err := ParseResult(b); !errors.Is(err, ErrMalformedResult) {
			t.Errorf("ParseResult(% x) = %v", b, err)
		}
	}
	r, err := ParseResult([]byte{0, 0, 0, 0, 7})
	if err != nil || r.Code() != 0 || len(r.Payload) != 1 {
		t.Fatal(r, err)
	}
}

func TestHumantime(t *testing.T) {
	ok := map[string][2]uint64{ // secs, nanos
		"10s": {10, 0}, "1h 30m": {5400, 0}, "1h30m": {5400, 0}, "1 h": {3600, 0}, "1 2s": {12, 0},
		" 2 days ": {172_800, 0}, "5µs": {0, 5000}, "1500ms": {1, 500_000_000}, "1ms 999999999ns": {1, 999_999},
		"1M": {2_630_016, 0}, "1y": {31_557_600, 0}, "2 weeks": {1_209_600, 0}, "3min": {180, 0}, "7nanos": {0, 7},
		// humantime 2.4.0's grammar (DEVIATIONS.md 57): "0", fractions, wk and yr.
		"0": {0, 0}, "1.5h": {5400, 0}, "0.5s": {0, 500_000_000}, "0.000000001s": {0, 1}, "1.5 min": {90, 0},
		"2wk": {1_209_600, 0}, "1wks": {604_800, 0}, "1yr": {31_557_600, 0}, "2yrs": {63_115_200, 0},
		"1.25ms 1µs": {0, 1_251_000}, "0.05d": {4320, 0},
	}
	for in, want := range ok {
		s, n, good := parseHumantime(in)
		if !good || s != want[0] || uint64(n) != want[1] {
			t.Errorf("parseHumantime(%q) = %d s %d ns %v, want %v", in, s, n, good, want)
		}
	}
	for _, in := range []string{"", " ", "100", "h", "1x", "1h,", "-1s", "18446744073709551616s", "600000000000000000y", "1s 2",
		"1.h", ".5s", "1.5ns", "1.33333h", "0.0000000001s", "1.5", "1.2.3s", "00", "20000000000000000us",
		// Fractions whose product with the unit wraps a u64 to an exact
		// multiple of the denominator: one per branch of the scaling.
		"0.288230376151711744ms", "0.036028797018963968s", "0.256482556579299328h"} {
		if s, n, good := parseHumantime(in); good {
			t.Errorf("parseHumantime(%q) = %d s %d ns, want a failure", in, s, n)
		}
	}
	exp := map[string]uint64{"unlimited": math.MaxUint64, "never_expire": math.MaxUint64, "server_default": 0,
		"1s": 1_000_000, "4294967295s": 4294967295 * 1_000_000}
	for in, want := range exp {
		if got, good := parseExpiry(in); !good || got != want {
			t.Errorf("parseExpiry(%q) = %d %v, want %d", in, got, good, want)
		}
	}
	if _, good := parseExpiry("4294967296s"); good {
		t.Error("an expiry above u32::MAX seconds was accepted")
	}
}
