package wire

import (
	"bytes"
	"slices"
	"testing"

	"github.com/zeebo/xxh3"
	"pgregory.net/rapid"
)

func artOffsetsExample() ConsumerOffsets {
	return ConsumerOffsets{
		PurgeGeneration: 2,
		NextOffset:      1000,
		Consumers:       []OffsetEntry{{ID: 1, Offset: 10}, {ID: 7, Offset: 999}},
		Groups:          []OffsetEntry{{ID: 0, Offset: 500}},
	}
}

func artOffsetsExampleBytes(t *testing.T) []byte {
	var b []byte
	add := func(s string) { b = append(b, mustHex(t, s)...) }
	add("49434f31")                     // magic "ICO1"
	add("01")                           // version 1
	add("0200000000000000")             // purge_generation 2
	add("e803000000000000")             // next_offset 1000
	add("02000000")                     // consumer_count 2
	add("01000000")                     // group_count 1
	add("01000000 0a00000000000000")    // consumer 1 at 10
	add("07000000 e703000000000000")    // consumer 7 at 999
	add("00000000 f401000000000000")    // group 0 at 500
	return artAppend64(b, xxh3.Hash(b)) // trailer
}

func artEqualOffsets(t artTB, got, want ConsumerOffsets) {
	t.Helper()
	// slices.Equal treats nil and empty alike, as the encoding does.
	if got.PurgeGeneration != want.PurgeGeneration || got.NextOffset != want.NextOffset ||
		!slices.Equal(got.Consumers, want.Consumers) || !slices.Equal(got.Groups, want.Groups) {
		t.Fatalf("offsets %+v, want %+v", got, want)
	}
}

func TestConsumerOffsetsExample(t *testing.T) {
	want := artOffsetsExampleBytes(t)
	if len(want) != 29+3*12+8 {
		t.Fatalf("example is %d bytes", len(want))
	}
	if got := EncodeConsumerOffsets(artOffsetsExample()); !bytes.Equal(got, want) {
		t.Fatalf("EncodeConsumerOffsets\n got %x\nwant %x", got, want)
	}
	got, err := DecodeConsumerOffsets(want)
	if err != nil {
		t.Fatalf("DecodeConsumerOffsets: %v", err)
	}
	artEqualOffsets(t, got, artOffsetsExample())

	empty := mustHex(t, "49434f31 01 0000000000000000 0000000000000000 00000000 00000000")
	empty = artAppend64(empty, xxh3.Hash(empty))
	if got := EncodeConsumerOffsets(ConsumerOffsets{}); !bytes.Equal(got, empty) {
		t.Fatalf("empty artifact %x, want %x", got, empty)
	}
	if got, err := DecodeConsumerOffsets(empty); err != nil || got.Consumers != nil || got.Groups != nil {
		t.Fatalf("DecodeConsumerOffsets(empty) = %+v, %v", got, err)
	}
}

func TestConsumerOffsetsRejections(t *testing.T) {
	// reseal recomputes the trailer so a case reaches the rule it names.
	reseal := func(b []byte) []byte {
		n := len(b) - trailerLen
		put64(b[n:], xxh3.Hash(b[:n]))
		return b
	}
	edit := func(f func(b []byte)) func(t *testing.T) []byte {
		return func(t *testing.T) []byte {
			b := artOffsetsExampleBytes(t)
			f(b)
			return reseal(b)
		}
	}
	const entries = 29
	const trailer = entries + 3*12
	cases := []struct {
		name   string
		b      func(t *testing.T) []byte
		rule   Rule
		offset int
	}{
		{"empty", func(t *testing.T) []byte { return nil }, ErrShort, 0},
		{"36 bytes", func(t *testing.T) []byte { return EncodeConsumerOffsets(ConsumerOffsets{})[:36] }, ErrShort, 36},
		{"magic", edit(func(b []byte) { b[3] = '2' }), ErrMagic, 0},
		{"version 0", edit(func(b []byte) { b[4] = 0 }), ErrVersion, 4},
		{"version 2", edit(func(b []byte) { b[4] = 2 }), ErrVersion, 4},
		{"consumer_count above the max", edit(func(b []byte) { put32(b[21:], ConsumerOffsetsSectionMax+1) }), ErrCountTooLarge, 21},
		{"group_count above the max", edit(func(b []byte) { put32(b[25:], 0xffffffff) }), ErrCountTooLarge, 25},
		{"both counts at the max, input tiny", func(t *testing.T) []byte {
			b := EncodeConsumerOffsets(ConsumerOffsets{})
			put32(b[21:], ConsumerOffsetsSectionMax)
			put32(b[25:], ConsumerOffsetsSectionMax)
			return reseal(b)
		}, ErrShort, 37},
		{"count above the entries", edit(func(b []byte) { put32(b[25:], 2) }), ErrShort, trailer + 8},
		{"count below the entries", edit(func(b []byte) { put32(b[25:], 0) }), ErrTrailingBytes, trailer - 12},
		{"trailer cut", func(t *testing.T) []byte { b := artOffsetsExampleBytes(t); return b[:len(b)-1] }, ErrShort, trailer + 7},
		{"byte before the trailer", func(t *testing.T) []byte {
			b := artOffsetsExampleBytes(t)
			return reseal(slices.Insert(b, trailer, 0))
		}, ErrTrailingBytes, trailer},
		{"consumer ids equal", edit(func(b []byte) { put32(b[entries+12:], 1) }), ErrIDOrder, entries + 12},
		{"consumer ids descending", edit(func(b []byte) { put32(b[entries:], 8) }), ErrIDOrder, entries + 12},
		{"group ids descending", func(t *testing.T) []byte {
			return reseal(slices.Concat(EncodeConsumerOffsets(ConsumerOffsets{})[:21],
				mustHex(t, "00000000 02000000 05000000 0000000000000000 04000000 0000000000000000 0000000000000000")))
		}, ErrIDOrder, entries + 12},
		{"sections are ordered separately", func(t *testing.T) []byte {
			// A group id below the last consumer id is fine; an
			// equal pair inside the groups is not.
			return reseal(slices.Concat(EncodeConsumerOffsets(ConsumerOffsets{})[:21],
				mustHex(t, "01000000 02000000 09000000 0000000000000000 03000000 0000000000000000 03000000 0000000000000000 0000000000000000")))
		}, ErrIDOrder, entries + 24},
		{"trailer", func(t *testing.T) []byte { b := artOffsetsExampleBytes(t); b[trailer] ^= 1; return b }, ErrTrailerMismatch, trailer},
		{"offset value", func(t *testing.T) []byte { b := artOffsetsExampleBytes(t); b[entries+4] ^= 1; return b }, ErrTrailerMismatch, trailer},
		{"next_offset", func(t *testing.T) []byte { b := artOffsetsExampleBytes(t); b[13] ^= 1; return b }, ErrTrailerMismatch, trailer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeConsumerOffsets(c.b(t))
			fe := artExpectRule(t, err, "ICO1", c.rule)
			if fe.Offset != c.offset {
				t.Errorf("offset %d, want %d (%v)", fe.Offset, c.offset, fe)
			}
		})
	}
}

func TestConsumerOffsetsAssertions(t *testing.T) {
	artMustPanic(t, "consumers out of order", func() {
		EncodeConsumerOffsets(ConsumerOffsets{Consumers: []OffsetEntry{{ID: 2}, {ID: 1}}})
	})
	artMustPanic(t, "groups repeated", func() {
		EncodeConsumerOffsets(ConsumerOffsets{Groups: []OffsetEntry{{ID: 2}, {ID: 2}}})
	})
	artMustPanic(t, "too many consumers", func() {
		s := make([]OffsetEntry, ConsumerOffsetsSectionMax+1)
		for i := range s {
			s[i].ID = uint32(i)
		}
		EncodeConsumerOffsets(ConsumerOffsets{Consumers: s})
	})
}

// artGenOffsetSection draws a section with strictly ascending ids.
func artGenOffsetSection(label string) *rapid.Generator[[]OffsetEntry] {
	return rapid.Custom(func(t *rapid.T) []OffsetEntry {
		ids := rapid.SliceOfNDistinct(rapid.Uint32(), 0, 20, rapid.ID[uint32]).Draw(t, label+"_ids")
		slices.Sort(ids)
		s := make([]OffsetEntry, len(ids))
		for i, id := range ids {
			s[i] = OffsetEntry{ID: id, Offset: rapid.Uint64().Draw(t, label+"_offset")}
		}
		return s
	})
}

func artGenConsumerOffsets() *rapid.Generator[ConsumerOffsets] {
	return rapid.Custom(func(t *rapid.T) ConsumerOffsets {
		return ConsumerOffsets{
			PurgeGeneration: rapid.Uint64().Draw(t, "purge_generation"),
			NextOffset:      rapid.Uint64().Draw(t, "next_offset"),
			Consumers:       artGenOffsetSection("consumer").Draw(t, "consumers"),
			Groups:          artGenOffsetSection("group").Draw(t, "groups"),
		}
	})
}

func TestConsumerOffsetsRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := artGenConsumerOffsets().Draw(t, "offsets")
		got, err := DecodeConsumerOffsets(EncodeConsumerOffsets(c))
		if err != nil {
			t.Fatalf("DecodeConsumerOffsets(EncodeConsumerOffsets(...)): %v", err)
		}
		artEqualOffsets(t, got, c)
	})
}

// artCheckConsumerOffsetsInput is the oracle of the property test and the
// fuzz target: ICO1 has one encoding per value, so whatever decodes must
// re-encode to exactly its input.
func artCheckConsumerOffsetsInput(t artTB, b []byte) {
	t.Helper()
	artCheckCanonical(t, b, "ICO1", DecodeConsumerOffsets, EncodeConsumerOffsets)
}

func TestDecodeConsumerOffsetsNeverPanicsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b []byte
		if rapid.Bool().Draw(t, "from_valid") {
			b = EncodeConsumerOffsets(artGenConsumerOffsets().Draw(t, "offsets"))
			for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(b)-1), 0, 3).Draw(t, "bytes") {
				b[i] = rapid.Byte().Draw(t, "value")
			}
			if rapid.Bool().Draw(t, "reseal") {
				put64(b[len(b)-8:], xxh3.Hash(b[:len(b)-8]))
			}
			b = b[:rapid.IntRange(0, len(b)).Draw(t, "cut")]
		} else {
			b = rapid.SliceOfN(rapid.Byte(), 0, 200).Draw(t, "noise")
		}
		artCheckConsumerOffsetsInput(t, b)
	})
}
