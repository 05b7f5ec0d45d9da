package metadata

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// The fuzz targets: one per body decoder, plus one for the result section
// and one that drives arbitrary requests through Preflight, Project and
// Apply. Whatever a decoder accepts must re-encode to its input (a prefix of
// it for fixed layouts) and decode back to the same value. The seed corpora
// live in testdata/fuzz/<target>/ and are written by TestWriteFuzzCorpus.

var writeCorpus = flag.Bool("write-corpus", false, "rewrite the seed corpora under testdata/fuzz")

type encoder interface{ Encode() []byte }

// checkDecoded is the shared oracle of the decoder targets.
func checkDecoded(t *testing.T, in []byte, x encoder, exact bool) {
	enc := x.Encode()
	if exact && !bytes.Equal(enc, in) || !exact && !bytes.HasPrefix(in, enc) {
		t.Fatalf("accepted % x, re-encodes to % x", in, enc)
	}
}

func fuzzDecoder[T encoder](f *testing.F, decode func([]byte) (T, error), exact bool) {
	f.Fuzz(func(t *testing.T, in []byte) {
		x, err := decode(in)
		if err != nil {
			var zero T
			if !reflect.DeepEqual(x, zero) {
				t.Fatalf("an error with a non-zero value %+v", x)
			}
			return
		}
		checkDecoded(t, in, x, exact)
		y, err := decode(x.Encode())
		if err != nil || !reflect.DeepEqual(x, y) {
			t.Fatalf("re-decode: %+v, %v; want %+v", y, err, x)
		}
	})
}

func FuzzDecodeCreateStream(f *testing.F) { fuzzDecoder(f, DecodeCreateStream, true) }
func FuzzDecodeUpdateStream(f *testing.F) { fuzzDecoder(f, DecodeUpdateStream, true) }
func FuzzDecodeDeleteStream(f *testing.F) { fuzzDecoder(f, DecodeDeleteStream, false) }
func FuzzDecodeCreateTopic(f *testing.F)  { fuzzDecoder(f, DecodeCreateTopic, true) }
func FuzzDecodeDeleteTopic(f *testing.F)  { fuzzDecoder(f, DecodeDeleteTopic, false) }
func FuzzDecodeCreatePartitions(f *testing.F) {
	fuzzDecoder(f, DecodeCreatePartitions, false)
}
func FuzzDecodeDeletePartitions(f *testing.F) {
	fuzzDecoder(f, DecodeDeletePartitions, false)
}
func FuzzDecodeCreateTopicWithAssignments(f *testing.F) {
	fuzzDecoder(f, DecodeCreateTopicWithAssignments, true)
}
func FuzzDecodeCreatePartitionsWithAssignments(f *testing.F) {
	fuzzDecoder(f, DecodeCreatePartitionsWithAssignments, true)
}

// FuzzParseResult: a parsed result re-encodes to its input (for the shapes
// Iggy writes) and never reads as success unless count is 0.
func FuzzParseResult(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ParseResult(in)
		if err != nil {
			return
		}
		if (r.Code() == CodeOK) != (len(in) >= 4 && in[0]|in[1]|in[2]|in[3] == 0) {
			t.Fatalf("code %d for count % x", r.Code(), in[:4])
		}
		if r.Code() == CodeOK && !bytes.Equal(ResultOK(r.Payload), in) {
			t.Fatal("success does not re-encode")
		}
		if len(r.Entries) == 1 && r.Entries[0].Index == 0 && len(r.Payload) == 0 &&
			!bytes.Equal(ResultRejection(r.Code()), in) {
			t.Fatal("rejection does not re-encode")
		}
	})
}

// fuzzState is a small state to apply fuzzed requests to: a stream "s"
// (id 0) with a topic "t" (id 0) of two partitions, and a stream "x" (id 1).
func fuzzState() *State {
	st := newState(Limits{Streams: 4, TopicsPerStream: 3, PartitionID: 20})
	alloc := NewGroupAllocator(0)
	for i, req := range []struct {
		op   wire.Operation
		body []byte
	}{
		{wire.OperationCreateStream, CreateStream{Name: "s"}.Encode()},
		{wire.OperationCreateStream, CreateStream{Name: "x"}.Encode()},
		{wire.OperationCreateTopic, CreateTopic{Stream: ID(0), PartitionsCount: 2, Name: "t"}.Encode()},
	} {
		p, r := Project(req.op, req.body, alloc)
		if r.Refused() {
			panic(r)
		}
		st.Apply(prepare(uint64(i+1), p.Operation, uint64(i+1)), p.Body)
	}
	return st
}

// FuzzRequest drives an arbitrary (operation, user, body) through the
// primary's path: Preflight and Project never panic, and whatever Project
// accepts applies without panicking, to a committed result the operation may
// commit; a rejection changes nothing.
func FuzzRequest(f *testing.F) {
	f.Fuzz(func(t *testing.T, op uint8, user uint32, in []byte) {
		operation := wire.Operation(op)
		alloc := NewGroupAllocator(10)
		p, r := Project(operation, in, alloc)
		if pre := Preflight(operation, in); pre.Kind != r.Kind && pre.Refused() {
			t.Fatalf("Preflight %v but Project %v", pre, r)
		}
		if r.Refused() {
			if alloc.Highest() != 10 {
				t.Fatal("a refused projection allocated group ids")
			}
			return
		}
		st := fuzzState()
		before := st.Digest()
		h := prepare(10, p.Operation, 10)
		h.UserID = user % 3
		reply := st.Apply(h, p.Body)
		if !ResultFramed(p.Operation) {
			if len(reply) != 0 {
				t.Fatalf("%v reply % x", p.Operation, reply)
			}
			return
		}
		res, err := ParseResult(reply)
		if err != nil || !CodeRecognized(p.Operation, res.Code()) {
			t.Fatalf("%v reply % x: %v", p.Operation, reply, err)
		}
		if res.Code() != CodeOK && st.Digest() != before {
			t.Fatalf("rejection %d changed the state", res.Code())
		}
	})
}

// seedCorpora returns the seed inputs of every target (one []byte each,
// except FuzzRequest: operation, user, body).
func seedCorpora() map[string][][]any {
	one := func(bs ...[]byte) [][]any {
		var out [][]any
		for _, b := range bs {
			out = append(out, []any{b})
		}
		return out
	}
	identifierCut := []byte{1, 4, 1, 0}
	topicOpts := opts(wire.Option{Key: "segment_size", Kind: wire.OptionString, Value: []byte("1048576")},
		wire.Option{Key: "message_expiry", Kind: wire.OptionString, Value: []byte("1h 30m")})
	p64, _ := Project(wire.OperationCreateTopic, CreateTopic{Stream: Named("stream"), PartitionsCount: 2, Name: "topic", Options: topicOpts}.Encode(), NewGroupAllocator(0))
	p65, _ := Project(wire.OperationCreatePartitions, CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 3}.Encode(), NewGroupAllocator(5))
	return map[string][][]any{
		"FuzzDecodeCreateStream": one(CreateStream{Name: "test"}.Encode(),
			CreateStream{Name: "s", Options: badLen}.Encode(), []byte{0}, []byte{2, 0xc3, 0x28}),
		"FuzzDecodeUpdateStream": one(UpdateStream{Stream: Named("stream"), Name: "update_stream"}.Encode(),
			UpdateStream{Stream: ID(1), Name: "n", Options: opts(wire.Option{Key: "k", Kind: wire.OptionRaw, Value: []byte("v")})}.Encode(),
			identifierCut),
		"FuzzDecodeDeleteStream": one(DeleteStream{Stream: ID(1)}.Encode(), DeleteStream{Stream: Named("orders")}.Encode(),
			identifierCut, []byte{3, 4, 0, 0, 0, 0}),
		"FuzzDecodeCreateTopic": one(CreateTopic{Stream: Named("stream"), PartitionsCount: 2, Name: "topic"}.Encode(),
			CreateTopic{Stream: ID(0), PartitionsCount: 1, Name: "t", Options: topicOpts}.Encode(), identifierCut),
		"FuzzDecodeDeleteTopic": one(DeleteTopic{Stream: ID(0), Topic: ID(1)}.Encode(),
			DeleteTopic{Stream: Named("orders"), Topic: ID(0)}.Encode(), identifierCut),
		"FuzzDecodeCreatePartitions": one(CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 3}.Encode(),
			CreatePartitions{Stream: Named("s"), Topic: Named("t"), PartitionsCount: 1001}.Encode(), identifierCut),
		"FuzzDecodeDeletePartitions": one(DeletePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 1}.Encode(),
			DeletePartitions{Stream: Named("s"), Topic: ID(7), PartitionsCount: 0}.Encode(), identifierCut),
		"FuzzDecodeCreateTopicWithAssignments":      one(p64.Body, p64.Body[:40]),
		"FuzzDecodeCreatePartitionsWithAssignments": one(p65.Body, p65.Body[:20]),
		"FuzzParseResult": one(ResultRejection(CodeStreamNameAlreadyExists), ResultOK(nil),
			ResultOK(StreamResponse{Name: "s", Options: []byte{}}.Append(nil)), []byte{2, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}),
		"FuzzRequest": {
			{uint8(wire.OperationCreateStream), uint32(0), CreateStream{Name: "n"}.Encode()},
			{uint8(wire.OperationCreateStream), uint32(1), CreateStream{Name: "s"}.Encode()},
			{uint8(wire.OperationUpdateStream), uint32(0), UpdateStream{Stream: ID(1), Name: "s"}.Encode()},
			{uint8(wire.OperationDeleteStream), uint32(0), DeleteStream{Stream: Named("x")}.Encode()},
			{uint8(wire.OperationCreateTopic), uint32(0), CreateTopic{Stream: ID(0), PartitionsCount: 3, Name: "u", Options: topicOpts}.Encode()},
			{uint8(wire.OperationDeleteTopic), uint32(2), DeleteTopic{Stream: ID(0), Topic: Named("t")}.Encode()},
			{uint8(wire.OperationCreatePartitions), uint32(0), CreatePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 2}.Encode()},
			{uint8(wire.OperationDeletePartitions), uint32(0), DeletePartitions{Stream: ID(0), Topic: ID(0), PartitionsCount: 3}.Encode()},
			{uint8(wire.OperationRegister), uint32(0), []byte{}},
			{uint8(wire.OperationCreateTopicWithAssignments), uint32(0), p64.Body},
		},
	}
}

// TestWriteFuzzCorpus writes the seed corpora with -write-corpus. Without the
// flag it checks that they are present and current.
func TestWriteFuzzCorpus(t *testing.T) {
	for name, inputs := range seedCorpora() {
		dir := filepath.Join("testdata", "fuzz", name)
		for i, values := range inputs {
			content := "go test fuzz v1\n"
			for _, v := range values {
				switch v := v.(type) {
				case []byte:
					content += fmt.Sprintf("[]byte(%q)\n", v)
				case uint8:
					content += fmt.Sprintf("byte(%q)\n", v)
				case uint32:
					content += fmt.Sprintf("uint32(%d)\n", v)
				default:
					t.Fatalf("corpus value of type %T", v)
				}
			}
			path := filepath.Join(dir, fmt.Sprintf("seed-%02d", i))
			if *writeCorpus {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != content {
				t.Errorf("%s is missing or stale (go test ./replica/metadata -run WriteFuzzCorpus -write-corpus): %v", path, err)
			}
		}
	}
}
