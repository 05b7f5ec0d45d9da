package partition

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestPollGolden: the Go SDK's TestSerialize_TcpFetchMessagesRequest
// (client-ops.md 5.28): consumer 42, stream "test_stream_id", topic
// "test_topic_id", partition 123, First, count 100, auto-commit.
func TestPollGolden(t *testing.T) {
	p := Poll{ConsumerKind: ConsumerSingle, Consumer: metadata.ID(42), Stream: metadata.Named("test_stream_id"),
		Topic: metadata.Named("test_topic_id"), HasPartition: true, Partition: 123, Strategy: PollFirst, Count: 100, AutoCommit: true}
	want := "010104" + "2a000000" + "020e" + hex.EncodeToString([]byte("test_stream_id")) + "020d" +
		hex.EncodeToString([]byte("test_topic_id")) + "017b000000" + "030000000000000000" + "64000000" + "01"
	if got := hex.EncodeToString(EncodePoll(p)); got != want {
		t.Fatalf("encoded\n%s\nwant\n%s", got, want)
	}
	back, err := DecodePoll(EncodePoll(p))
	if err != nil || back != p {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	bad := EncodePoll(p)
	bad[len(bad)-14] = 9 // strategy 9: the kind byte before value (8), count (4) and auto-commit (1)
	if _, err := DecodePoll(bad); !errors.Is(err, ErrPoll) {
		t.Fatalf("strategy 9: %v", err)
	}
	if _, err := DecodePoll(bad[:10]); !errors.Is(err, ErrPoll) {
		t.Fatalf("a short body: %v", err)
	}
}

type noJournal struct{}

func (noJournal) Frame(uint64) ([]byte, bool) { return nil, false }

// committedPlane commits batches of the given sizes, the k-th stamped at
// timestamp 100*(k+1).
func committedPlane(t *testing.T, sizes ...int) *Plane {
	t.Helper()
	p := NewPlane(0, noJournal{}, func() uint64 { return 0 })
	id := uint64(1)
	for k, n := range sizes {
		msgs := make([]wire.Message, n)
		for i := range msgs {
			msgs[i] = wire.Message{ID: wire.U128{Lo: id}, OffsetDelta: uint32(i), Payload: []byte{byte(id)}}
			id++
		}
		ts := uint64(100 * (k + 1))
		b := Stamp(wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 1}, msgs), 0, p.NextOffset(), ts)
		p.Apply(&wire.PrepareHeader{Op: uint64(k + 1), Timestamp: ts, Operation: wire.OperationSendMessages}, b, 0, 0)
	}
	return p
}

// TestPollStrategies: each strategy starts where client-ops.md 1.6 says
// and returns the whole committed batches from there, up to the count.
func TestPollStrategies(t *testing.T) {
	p := committedPlane(t, 3, 2, 4, 1) // offsets 0-2, 3-4, 5-8, 9
	bases := func(bs [][]byte) []uint64 {
		var out []uint64
		for _, b := range bs {
			h, _ := wire.ReadBatchHeader(b)
			out = append(out, h.BaseOffset)
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		strategy uint8
		value    uint64
		count    uint32
		want     []uint64
	}{
		{"first, one message", PollFirst, 0, 1, []uint64{0}},
		{"first, four messages", PollFirst, 0, 4, []uint64{0, 3}},
		{"offset inside a batch", PollOffset, 4, 2, []uint64{3, 5}},
		{"offset at a batch start", PollOffset, 5, 4, []uint64{5}},
		{"offset past the end", PollOffset, 10, 5, nil},
		{"last two", PollLast, 0, 2, []uint64{5, 9}},
		{"last, more than there are", PollLast, 0, 50, []uint64{0, 3, 5, 9}},
		{"timestamp between batches", PollTimestamp, 250, 1, []uint64{5}},
		{"timestamp after every batch", PollTimestamp, 999, 10, nil},
		{"next without a stored offset", PollNext, 0, 3, []uint64{0}},

		{"count zero", PollFirst, 0, 0, nil},
	} {
		current, got := p.Poll(tc.strategy, tc.value, tc.count, 1<<20, 9)
		if current != 9 {
			t.Fatalf("%s: current offset %d, want 9", tc.name, current)
		}
		if g := bases(got); !equal(g, tc.want) {
			t.Fatalf("%s: batches at %v, want %v", tc.name, g, tc.want)
		}
	}
	p.StoreOffset(9, 4)
	if _, got := p.Poll(PollNext, 0, 1, 1<<20, 9); !equal(bases(got), []uint64{5}) {
		t.Fatalf("next after a stored offset 4: batches at %v, want [5]", bases(got))
	}
	if _, got := p.Poll(PollFirst, 0, 100, PollReplyHeaderSize+len(p.Batches()[0]), 9); len(got) != 1 {
		t.Fatalf("a reply limited to one batch's bytes held %d batches", len(got))
	}
	empty := committedPlane(t)
	if current, got := empty.Poll(PollFirst, 0, 10, 1<<20, 9); current != 0 || len(got) != 0 {
		t.Fatalf("an empty partition polled %d batches at current %d", len(got), current)
	}
}

func equal(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
