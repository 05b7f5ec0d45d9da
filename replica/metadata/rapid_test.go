package metadata

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"pgregory.net/rapid"
)

// TestPropertyRequestRoundTrip: decode(encode(x)) == x for every request
// body, and the encoding passes Preflight (modulo the partition bound).
func TestPropertyRequestRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := genRequest(t)
		got, err := DecodeRequest(req.op, req.body)
		if err != nil {
			t.Fatalf("decode of an encoded %v: %v", req.op, err)
		}
		if !reflect.DeepEqual(got, req.typ) {
			t.Fatalf("round trip\n got  %+v\n want %+v", got, req.typ)
		}
		if r := Preflight(req.op, req.body); r.Refused() {
			t.Fatalf("Preflight refused a well-formed body: %v", r)
		}
	})
}

// TestPropertyReplicatedRoundTrip: the replicated bodies of 64 and 65
// round-trip, whatever the assignments.
func TestPropertyReplicatedRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 20).Draw(t, "n")
		ps := make([]PartitionAssignment, n)
		for i := range ps {
			ps[i] = PartitionAssignment{PartitionID: rapid.Uint32().Draw(t, "id"), ConsensusGroupID: rapid.Uint64().Draw(t, "group")}
		}
		if rapid.Bool().Draw(t, "topic") {
			x := CreateTopicWithAssignments{
				Request:    CreateTopic{Stream: genIdentifier(t, "s"), PartitionsCount: rapid.Uint32().Draw(t, "c"), Name: genName(t, "n"), Options: genTopicOptions(t, "o")},
				Derived:    genTopicOptions(t, "d"),
				Partitions: ps,
			}
			got, err := DecodeCreateTopicWithAssignments(x.Encode())
			if err != nil || !reflect.DeepEqual(got, x) {
				t.Fatalf("round trip %+v -> %+v, %v", x, got, err)
			}
		} else {
			x := CreatePartitionsWithAssignments{
				Request:    CreatePartitions{Stream: genIdentifier(t, "s"), Topic: genIdentifier(t, "t"), PartitionsCount: rapid.Uint32().Draw(t, "c")},
				Partitions: ps,
			}
			got, err := DecodeCreatePartitionsWithAssignments(x.Encode())
			if err != nil || !reflect.DeepEqual(got, x) {
				t.Fatalf("round trip %+v -> %+v, %v", x, got, err)
			}
		}
	})
}

// everyDecoder runs every decoder and the pre-consensus entry points on b;
// none may panic.
func everyDecoder(b []byte) {
	for _, op := range wire.Operations() {
		_, _ = DecodeRequest(op, b)
		Preflight(op, b)
		Project(op, b, NewGroupAllocator(0))
		_ = NewGroupAllocator(0).ObservePrepare(op, b)
	}
	Preflight(wire.Operation(250), b)
	_, _ = ParseResult(b)
	_, _ = DecodeCreateStreamReply(b)
	_, _, _ = DecodeCreateTopicReply(b)
	_, _ = DecodeLoginRegisterResponse(b)
}

// TestPropertyDecodersNeverPanic: arbitrary bytes, and mutations of valid
// bodies, give errors, never panics; whatever a decoder accepts re-encodes
// (for bodies that end with an options block: exactly; for fixed layouts: a
// prefix).
func TestPropertyDecodersNeverPanic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b []byte
		if rapid.Bool().Draw(t, "mutate") {
			req := genRequest(t)
			b = append([]byte(nil), req.body...)
			for range rapid.IntRange(1, 4).Draw(t, "flips") {
				if len(b) == 0 {
					break
				}
				i := rapid.IntRange(0, len(b)-1).Draw(t, "at")
				b[i] = rapid.Byte().Draw(t, "byte")
			}
			b = b[:rapid.IntRange(0, len(b)).Draw(t, "cut")]
		} else {
			b = rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, "bytes")
		}
		everyDecoder(b)
		for _, op := range []wire.Operation{wire.OperationCreateStream, wire.OperationUpdateStream, wire.OperationDeleteStream,
			wire.OperationCreateTopic, wire.OperationDeleteTopic, wire.OperationCreatePartitions, wire.OperationDeletePartitions} {
			x, err := DecodeRequest(op, b)
			if err != nil {
				continue
			}
			enc := x.(interface{ Encode() []byte }).Encode()
			if !bytes.HasPrefix(b, enc) {
				t.Fatalf("%v accepted % x but re-encodes to % x", op, b, enc)
			}
		}
	})
}

// applyAll applies a history to a fresh state and returns the replies.
func applyAll(st *State, h []committed) [][]byte {
	replies := make([][]byte, len(h))
	for i, c := range h {
		replies[i] = st.Apply(c.header, c.body)
	}
	return replies
}

// TestPropertyApplyDeterministic: two state machines applying the same
// history end with the same digest and send identical reply bytes; a clone
// taken midway continues identically too.
func TestPropertyApplyDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limits := genLimits(t)
		h := genHistory(t, NewGroupAllocator(0))
		a, b := newState(limits), newState(limits)
		ra := applyAll(a, h)
		rb := applyAll(b, h)
		if a.Digest() != b.Digest() || !reflect.DeepEqual(ra, rb) {
			t.Fatalf("same history, different outcome")
		}
		cut := rapid.IntRange(0, len(h)).Draw(t, "cut")
		c := newState(limits)
		applyAll(c, h[:cut])
		d := c.Clone()
		rc := applyAll(c, h[cut:])
		rd := applyAll(d, h[cut:])
		if c.Digest() != a.Digest() || d.Digest() != a.Digest() || !reflect.DeepEqual(rc, rd) || !reflect.DeepEqual(rc, ra[cut:]) {
			t.Fatalf("clone at %d diverged", cut)
		}
	})
}

// TestPropertyRepliesAreResults: every committed reply is a valid result
// section whose code the operation may commit, and a success carries the
// operation's payload shape.
func TestPropertyRepliesAreResults(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, NewGroupAllocator(0))
		m := &Model{state: newState(genLimits(t))}
		for _, c := range h {
			reply := m.Apply(c.header, c.body) // panics on an unrecognized code
			r, err := ParseResult(reply)
			if err != nil {
				t.Fatalf("%v reply % x: %v", c.header.Operation, reply, err)
			}
			if r.Code() != CodeOK {
				if len(reply) != 12 {
					t.Fatalf("rejection of %d bytes", len(reply))
				}
				continue
			}
			switch c.header.Operation {
			case wire.OperationCreateStream:
				_, err = DecodeCreateStreamReply(r.Payload)
			case wire.OperationCreateTopicWithAssignments:
				_, _, err = DecodeCreateTopicReply(r.Payload)
			default:
				if len(r.Payload) != 0 {
					t.Fatalf("%v success with payload % x", c.header.Operation, r.Payload)
				}
			}
			if err != nil {
				t.Fatalf("%v payload: %v", c.header.Operation, err)
			}
		}
	})
}

// TestPropertyRejectionsChangeNothing: a committed rejection leaves the
// digest unchanged; a success other than a no-op changes it.
func TestPropertyRejectionsChangeNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := newState(genLimits(t))
		for _, c := range genHistory(t, NewGroupAllocator(0)) {
			before := st.Digest()
			reply := st.Apply(c.header, c.body)
			r, _ := ParseResult(reply)
			if r.Code() != CodeOK && st.Digest() != before {
				t.Fatalf("rejection %d of %v changed the state", r.Code(), c.header.Operation)
			}
		}
	})
}

// TestPropertyLowestFreeIDs: stream ids, topic ids and partition ids follow
// a plain set model: a new stream or topic takes the lowest id not in use,
// CreatePartitions appends highest+1.., DeletePartitions drops the highest.
func TestPropertyLowestFreeIDs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := NewState()
		streams := map[uint32]map[uint32][]uint32{} // stream -> topic -> partition ids
		lowestFree := func(used func(uint32) bool) uint32 {
			for id := uint32(0); ; id++ {
				if !used(id) {
					return id
				}
			}
		}
		alloc := NewGroupAllocator(0)
		for i := range rapid.IntRange(1, 80).Draw(t, "n") {
			h := prepare(uint64(i+1), 0, uint64(i+1))
			var ids []uint32
			for id := range streams {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			switch action := rapid.IntRange(0, 5).Draw(t, "action"); {
			case action == 0 || len(ids) == 0:
				want := lowestFree(func(id uint32) bool { _, ok := streams[id]; return ok })
				h.Operation = wire.OperationCreateStream
				reply := st.Apply(h, CreateStream{Name: "s" + string(rune('a'+i%26)) + string(rune('a'+i/26))}.Encode())
				r, _ := ParseResult(reply)
				sr, err := DecodeCreateStreamReply(r.Payload)
				if err != nil || sr.ID != want {
					t.Fatalf("new stream got id %d (%v), want %d", sr.ID, err, want)
				}
				streams[want] = map[uint32][]uint32{}
			case action == 1:
				sid := rapid.SampledFrom(ids).Draw(t, "stream")
				h.Operation = wire.OperationDeleteStream
				if r, _ := ParseResult(st.Apply(h, DeleteStream{Stream: ID(sid)}.Encode())); r.Code() != CodeOK {
					t.Fatalf("delete stream %d: %d", sid, r.Code())
				}
				delete(streams, sid)
			case action == 2:
				sid := rapid.SampledFrom(ids).Draw(t, "stream")
				topics := streams[sid]
				want := lowestFree(func(id uint32) bool { _, ok := topics[id]; return ok })
				n := rapid.Uint32Range(0, 3).Draw(t, "partitions")
				p, ref := Project(wire.OperationCreateTopic, CreateTopic{Stream: ID(sid), PartitionsCount: n,
					Name: "t" + string(rune('a'+i%26)) + string(rune('a'+i/26))}.Encode(), alloc)
				if ref.Refused() {
					t.Fatal(ref)
				}
				h.Operation = p.Operation
				r, _ := ParseResult(st.Apply(h, p.Body))
				th, parts, err := DecodeCreateTopicReply(r.Payload)
				if err != nil || th.ID != want || len(parts) != int(n) {
					t.Fatalf("new topic got %+v (%v), want id %d", th, err, want)
				}
				topics[want] = nil
				for id := range n {
					topics[want] = append(topics[want], id)
				}
			case action == 3 || action == 4 || action == 5:
				sid := rapid.SampledFrom(ids).Draw(t, "stream")
				var tids []uint32
				for id := range streams[sid] {
					tids = append(tids, id)
				}
				slices.Sort(tids)
				if len(tids) == 0 {
					continue
				}
				tid := rapid.SampledFrom(tids).Draw(t, "topic")
				parts := streams[sid][tid]
				switch action {
				case 3:
					h.Operation = wire.OperationDeleteTopic
					st.Apply(h, DeleteTopic{Stream: ID(sid), Topic: ID(tid)}.Encode())
					delete(streams[sid], tid)
				case 4:
					n := rapid.Uint32Range(0, 3).Draw(t, "add")
					p, _ := Project(wire.OperationCreatePartitions, CreatePartitions{Stream: ID(sid), Topic: ID(tid), PartitionsCount: n}.Encode(), alloc)
					h.Operation = p.Operation
					st.Apply(h, p.Body)
					base := uint32(0)
					if len(parts) > 0 {
						base = slices.Max(parts) + 1
					}
					for k := range n {
						parts = append(parts, base+k)
					}
					streams[sid][tid] = parts
				case 5:
					n := rapid.Uint32Range(0, uint32(len(parts))).Draw(t, "drop")
					h.Operation = wire.OperationDeletePartitions
					st.Apply(h, DeletePartitions{Stream: ID(sid), Topic: ID(tid), PartitionsCount: n}.Encode())
					streams[sid][tid] = parts[:len(parts)-int(n)]
				}
			}
			// Compare the whole state with the model.
			got := st.Streams()
			if len(got) != len(streams) {
				t.Fatalf("%d streams, model has %d", len(got), len(streams))
			}
			for _, s := range got {
				topics, ok := streams[s.ID]
				if !ok || len(s.Topics) != len(topics) {
					t.Fatalf("stream %d: %d topics, model %v", s.ID, len(s.Topics), topics)
				}
				for _, tp := range s.Topics {
					var pids []uint32
					for _, p := range tp.Partitions {
						pids = append(pids, p.ID)
					}
					if want, ok := topics[tp.ID]; !ok || !slices.Equal(pids, want) {
						t.Fatalf("stream %d topic %d partitions %v, model %v", s.ID, tp.ID, pids, want)
					}
				}
			}
		}
	})
}
