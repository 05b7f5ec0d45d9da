package transfer

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

const testPartition = 7

// testBatch builds a stamped batch of count messages of partition at base,
// as a primary's journal append leaves it.
func testBatch(partition, base uint64, count int) []byte {
	msgs := make([]wire.Message, count)
	for i := range msgs {
		msgs[i] = wire.Message{ID: wire.U128{Lo: base + uint64(i) + 1}, OffsetDelta: uint32(i), Payload: fmt.Appendf(nil, "message-%06d", base+uint64(i))}
	}
	b := wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 5000 + base}, msgs)
	wire.StampBatch(b, partition, base, 6000+base)
	return b
}

// testPartitionState is a partition of testPartition with batches of the
// given message counts, contiguous from offset 0, and some consumer offsets.
func testPartitionState(counts ...int) PartitionState {
	s := PartitionState{CommitOp: 90, Identity: wire.U128{Lo: 90, Hi: 0xab}, Timestamp: 1_000_090}
	for _, n := range counts {
		s.Batches = append(s.Batches, testBatch(testPartition, s.Offsets.NextOffset, n))
		s.Offsets.NextOffset += uint64(n)
	}
	s.Offsets.PurgeGeneration = 2
	s.Offsets.Consumers = []wire.OffsetEntry{{ID: 1, Offset: 0}, {ID: 4, Offset: s.Offsets.NextOffset}}
	s.Offsets.Groups = []wire.OffsetEntry{{ID: 2, Offset: 1}}
	return s
}

func equalStates(a, b PartitionState) bool {
	return a.CommitOp == b.CommitOp && a.Identity == b.Identity && a.Timestamp == b.Timestamp &&
		slices.EqualFunc(a.Batches, b.Batches, bytes.Equal) && a.Offsets.PurgeGeneration == b.Offsets.PurgeGeneration &&
		a.Offsets.NextOffset == b.Offsets.NextOffset && slices.Equal(a.Offsets.Consumers, b.Offsets.Consumers) &&
		slices.Equal(a.Offsets.Groups, b.Offsets.Groups)
}

// cloneOffer copies o deeply, so that a case can mutate it freely.
func cloneOffer(o Offer) Offer {
	c := Offer{CommitOp: o.CommitOp, Entries: slices.Clone(o.Entries), Identities: slices.Clone(o.Identities),
		Timestamps: slices.Clone(o.Timestamps)}
	for _, a := range o.Artifacts {
		c.Artifacts = append(c.Artifacts, bytes.Clone(a))
	}
	return c
}

// reseal makes every entry describe its artifact again, as a server that
// offered the mutated bytes would have.
func reseal(o *Offer) {
	for i, a := range o.Artifacts {
		o.Entries[i].Len, o.Entries[i].Checksum = uint64(len(a)), checksum64(a)
	}
}

// TestPartitionOfferRoundTrip: an offer decodes back to the state it was
// built from, op CommitOp's identity and timestamp ride the ICO1 entry
// alone, and the batches returned share no memory with the offer.
func TestPartitionOfferRoundTrip(t *testing.T) {
	s := testPartitionState(1, 3, 2, 5)
	o := NewPartitionOffer(s, 1<<20)
	if len(o.Entries) != 2 || o.Entries[0].Kind != wire.ArtifactSegmentLog || o.Entries[1].Kind != wire.ArtifactConsumerOffsets ||
		o.Entries[1].Frontier != s.CommitOp || o.CommitOp != s.CommitOp {
		t.Fatalf("entries %+v", o.Entries)
	}
	if !slices.Equal(o.Identities, []wire.U128{{}, s.Identity}) || !slices.Equal(o.Timestamps, []uint64{0, s.Timestamp}) {
		t.Fatalf("identities %v, timestamps %v", o.Identities, o.Timestamps)
	}
	for i, e := range o.Entries {
		if err := wire.VerifyArtifact(e, o.Artifacts[i]); err != nil {
			t.Fatalf("artifact %d: %v", i, err)
		}
	}
	got, err := DecodePartitionOffer(o, testPartition)
	if err != nil || !equalStates(got, s) {
		t.Fatalf("decoded %+v, %v", got, err)
	}
	clear(o.Artifacts[0])
	if !slices.EqualFunc(got.Batches, s.Batches, bytes.Equal) {
		t.Fatal("the decoded batches alias the offer's artifacts")
	}
	if m := o.Manifest(); m[8] != wire.ManifestEntryLenStamped || !slices.Equal(wire.ManifestTimestamps(m), o.Timestamps) {
		t.Fatalf("manifest entry_len %d", m[8])
	}
}

// TestPartitionOfferSegments: batches split into segments where the next
// batch would pass segmentBytesMax; each segment is its batches verbatim
// and its frontier is its first base_offset.
func TestPartitionOfferSegments(t *testing.T) {
	s := testPartitionState(2, 2, 2, 2, 2, 3)
	// The first five batches are of one size; the last, of one more
	// message (62 bytes), spills into a segment of its own.
	size := len(s.Batches[0])
	if len(s.Batches[5]) != size+62 {
		t.Fatalf("batches of %d and %d bytes", size, len(s.Batches[5]))
	}
	cases := []struct {
		name      string
		max       int
		frontiers []uint64
		batches   []int // batches per segment
	}{
		{"one byte: a batch a segment", 1, []uint64{0, 2, 4, 6, 8, 10}, []int{1, 1, 1, 1, 1, 1}},
		{"just under two", 2*size - 1, []uint64{0, 2, 4, 6, 8, 10}, []int{1, 1, 1, 1, 1, 1}},
		{"exactly two", 2 * size, []uint64{0, 4, 8, 10}, []int{2, 2, 1, 1}},
		{"three and a bit", 3*size + 10, []uint64{0, 6, 10}, []int{3, 2, 1}},
		{"exactly everything", 6*size + 62, []uint64{0}, []int{6}},
		{"one byte short of everything", 6*size + 61, []uint64{0, 10}, []int{5, 1}},
		{"everything", 1 << 30, []uint64{0}, []int{6}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := NewPartitionOffer(s, c.max)
			n := len(o.Entries) - 1
			var frontiers []uint64
			next := 0
			for i, e := range o.Entries[:n] {
				frontiers = append(frontiers, e.Frontier)
				want := bytes.Join(s.Batches[next:next+c.batches[i]], nil)
				if e.Kind != wire.ArtifactSegmentLog || !bytes.Equal(o.Artifacts[i], want) || o.Identities[i] != (wire.U128{}) || o.Timestamps[i] != 0 {
					t.Fatalf("segment %d is not batches %d..%d verbatim, or carries an identity", i, next, next+c.batches[i])
				}
				next += c.batches[i]
			}
			if !slices.Equal(frontiers, c.frontiers) || len(o.Entries[:n]) != len(c.batches) {
				t.Fatalf("frontiers %v, want %v", frontiers, c.frontiers)
			}
			if got, err := DecodePartitionOffer(o, testPartition); err != nil || !equalStates(got, s) {
				t.Fatalf("decoded %v", err)
			}
		})
	}
}

// TestPartitionOfferEmpty: a partition never appended to offers its
// consumer offsets alone.
func TestPartitionOfferEmpty(t *testing.T) {
	s := testPartitionState()
	o := NewPartitionOffer(s, 1)
	if len(o.Entries) != 1 || o.Entries[0].Kind != wire.ArtifactConsumerOffsets || o.Entries[0].Frontier != s.CommitOp {
		t.Fatalf("entries %+v", o.Entries)
	}
	got, err := DecodePartitionOffer(o, testPartition)
	if err != nil || !equalStates(got, s) || got.Batches != nil || got.Offsets.NextOffset != 0 {
		t.Fatalf("decoded %+v, %v", got, err)
	}
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", name)
		}
	}()
	f()
}

// TestPartitionOfferAssertions: a state that is not a partition's, or an
// offer that is not complete, is a programming error.
func TestPartitionOfferAssertions(t *testing.T) {
	for name, mutate := range map[string]func(*PartitionState){
		"commit_op 0":            func(s *PartitionState) { s.CommitOp = 0 },
		"no identity":            func(s *PartitionState) { s.Identity = wire.U128{} },
		"a gap":                  func(s *PartitionState) { s.Batches[1] = testBatch(testPartition, 3, 2) },
		"not from 0":             func(s *PartitionState) { s.Batches[0] = testBatch(testPartition, 1, 1) },
		"next_offset short":      func(s *PartitionState) { s.Offsets.NextOffset-- },
		"next_offset past":       func(s *PartitionState) { s.Offsets.NextOffset++ },
		"a partial batch":        func(s *PartitionState) { s.Batches[1] = s.Batches[1][:300] },
		"bytes after a batch":    func(s *PartitionState) { s.Batches[1] = append(s.Batches[1], 0) },
		"shorter than a header":  func(s *PartitionState) { s.Batches[0] = s.Batches[0][:100] },
		"consumer ids unordered": func(s *PartitionState) { s.Offsets.Consumers[0].ID = 9 },
	} {
		s := testPartitionState(1, 2, 3)
		mutate(&s)
		mustPanic(t, name, func() { NewPartitionOffer(s, 1<<20) })
	}
	mustPanic(t, "segments of 0 bytes", func() { NewPartitionOffer(testPartitionState(1), 0) })
	o := NewPartitionOffer(testPartitionState(1, 2), 1)
	for name, mutate := range map[string]func(*Offer){
		"no timestamps":       func(o *Offer) { o.Timestamps = nil },
		"an identity missing": func(o *Offer) { o.Identities = o.Identities[:1] },
		"an artifact missing": func(o *Offer) { o.Artifacts = o.Artifacts[:2] },
		"a short artifact":    func(o *Offer) { o.Artifacts[1] = o.Artifacts[1][:10] },
	} {
		c := cloneOffer(o)
		mutate(&c)
		mustPanic(t, name, func() { _, _ = DecodePartitionOffer(c, testPartition) })
	}
}

// TestDecodePartitionOfferRejections: each rule of DecodePartitionOffer
// fails on its own, with an error that names it. The offer is three
// segments of two equal batches each (frontiers 0, 4, 8), then the ICO1.
func TestDecodePartitionOfferRejections(t *testing.T) {
	s := testPartitionState(2, 2, 2, 2, 2, 2)
	size := len(s.Batches[0])
	base := NewPartitionOffer(s, 2*size)
	if len(base.Entries) != 4 || base.Entries[2].Frontier != 8 {
		t.Fatalf("the base offer: %+v", base.Entries)
	}
	if _, err := DecodePartitionOffer(base, testPartition); err != nil {
		t.Fatalf("the base offer: %v", err)
	}
	// restamp rewrites batch i (segment i/2) in place.
	restamp := func(o *Offer, i int, partition, offset uint64) {
		seg := o.Artifacts[i/2]
		wire.StampBatch(seg[i%2*size:][:size], partition, offset, 6000+offset)
	}
	ico := func(o *Offer, c wire.ConsumerOffsets) { o.Artifacts[3] = wire.EncodeConsumerOffsets(c) }
	cases := []struct {
		name      string
		partition uint64
		mutate    func(o *Offer)
		want      string
	}{
		{"no artifacts", testPartition, func(o *Offer) { *o = Offer{CommitOp: 90} }, "not segments then one consumer-offsets artifact last"},
		{"consumer offsets not last", testPartition, func(o *Offer) {
			o.Entries[3].Kind = wire.ArtifactSegmentLog
		}, "not segments then one consumer-offsets artifact last"},
		{"two consumer offsets", testPartition, func(o *Offer) {
			o.Entries[1].Kind = wire.ArtifactConsumerOffsets
		}, "artifact 1 of kind 3, not a segment log"},
		{"a metadata artifact", testPartition, func(o *Offer) {
			o.Entries[0].Kind = wire.ArtifactMetadataSnapshot
		}, "artifact 0 of kind 0, not a segment log"},
		{"frontiers equal", testPartition, func(o *Offer) { o.Entries[1].Frontier = 0 }, "not strictly ascending"},
		{"frontiers descending", testPartition, func(o *Offer) { o.Entries[2].Frontier = 3 }, "not strictly ascending"},
		{"first segment not at 0", testPartition, func(o *Offer) { o.Entries[0].Frontier = 1 }, "starts at offset 1, not 0"},
		{"an empty segment", testPartition, func(o *Offer) { o.Artifacts[1] = nil; reseal(o) }, "segment 1 (frontier 4): an empty segment"},
		{"a batch that does not verify", testPartition, func(o *Offer) {
			o.Artifacts[1][size+wire.BatchHeaderSize+60] ^= 1
			reseal(o)
		}, "batch at byte " + fmt.Sprint(size) + " does not verify"},
		{"batch_length below the header", testPartition, func(o *Offer) {
			clear(o.Artifacts[0][32:40])
			reseal(o)
		}, "segment 0 (frontier 0): batch at byte 0 does not verify"},
		{"message_count 0", testPartition, func(o *Offer) {
			clear(o.Artifacts[2][48:52])
			reseal(o)
		}, "segment 2 (frontier 8): batch at byte 0: message_count 0"},
		{"another partition", testPartition, func(o *Offer) { restamp(o, 3, testPartition+1, 6); reseal(o) }, "partition_id 8, not 7"},
		{"asked for another partition", testPartition + 1, func(o *Offer) {}, "partition_id 7, not 8"},
		{"first base_offset not the frontier", testPartition, func(o *Offer) { o.Entries[1].Frontier = 5 }, "first base_offset 4, not the frontier"},
		{"a gap inside a segment", testPartition, func(o *Offer) { restamp(o, 1, testPartition, 3); reseal(o) }, "base_offset 3, offsets not contiguous (want 2)"},
		{"a gap between segments", testPartition, func(o *Offer) {
			restamp(o, 2, testPartition, 5)
			restamp(o, 3, testPartition, 7)
			o.Entries[1].Frontier = 5
			reseal(o)
		}, "segment 1 (frontier 5): batch at byte 0: base_offset 5, offsets not contiguous (want 4)"},
		{"an overlap between segments", testPartition, func(o *Offer) {
			restamp(o, 2, testPartition, 3)
			restamp(o, 3, testPartition, 5)
			o.Entries[1].Frontier = 3
			reseal(o)
		}, "base_offset 3, offsets not contiguous (want 4)"},
		{"trailing bytes", testPartition, func(o *Offer) {
			o.Artifacts[0] = append(o.Artifacts[0], make([]byte, 100)...)
			reseal(o)
		}, "trailing bytes shorter than a batch: 100 at byte " + fmt.Sprint(2*size)},
		{"a truncated batch", testPartition, func(o *Offer) {
			o.Artifacts[2] = o.Artifacts[2][:2*size-1]
			reseal(o)
		}, "trailing bytes shorter than a batch: batch_length"},
		{"consumer offsets do not decode", testPartition, func(o *Offer) { o.Artifacts[3][0] = 'X'; reseal(o) }, "consumer offsets: "},
		{"next_offset past the batches", testPartition, func(o *Offer) {
			c := s.Offsets
			c.NextOffset++
			ico(o, c)
			reseal(o)
		}, "next_offset 13, the batches end at 12"},
		{"next_offset short of the batches", testPartition, func(o *Offer) {
			c := s.Offsets
			c.NextOffset--
			ico(o, c)
			reseal(o)
		}, "next_offset 11, the batches end at 12"},
		{"consumer offsets frontier", testPartition, func(o *Offer) { o.Entries[3].Frontier = 89 }, "frontier 89, not commit_op"},
		{"consumer offsets identity", testPartition, func(o *Offer) { o.Identities[3] = wire.U128{} }, "no identity of commit_op"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := cloneOffer(base)
			c.mutate(&o)
			got, err := DecodePartitionOffer(o, c.partition)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming %q", err, c.want)
			}
			if got.CommitOp != 0 || got.Batches != nil {
				t.Fatalf("a state returned with the error")
			}
		})
	}
}
