package wire

import (
	"bytes"
	"errors"
	"runtime"
	"slices"
	"testing"

	"github.com/zeebo/xxh3"
	"pgregory.net/rapid"
)

// artManifestSample is the state_manifest.rs test sample of vector B8.
func artManifestSample() []ManifestEntry {
	return []ManifestEntry{
		{Kind: ArtifactMetadataSnapshot, Frontier: 192, Len: 14, Checksum: xxh3.HashString("snapshot-bytes")},
		{Kind: ArtifactClientTable, Frontier: 195, Len: 11, Checksum: xxh3.HashString("table-bytes")},
	}
}

const artManifestSampleHex = `49534d31 02000000 19
	00 c000000000000000 0e00000000000000 0b9f080384ac8e29
	01 c300000000000000 0b00000000000000 3d79dd7c4daebef5
	93d5b845d4548338`

func TestManifestVectorB8(t *testing.T) {
	cases := []struct {
		name    string
		entries []ManifestEntry
		hex     string
	}{
		{"sample", artManifestSample(), artManifestSampleHex},
		{"empty", nil, `49534d31 00000000 19 c4c2c6afa4031121`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := mustHex(t, c.hex)
			got := EncodeManifest(c.entries)
			if !bytes.Equal(got, want) {
				t.Fatalf("EncodeManifest\n got %x\nwant %x", got, want)
			}
			back, err := DecodeManifest(want)
			if err != nil {
				t.Fatalf("DecodeManifest: %v", err)
			}
			if !slices.Equal(back, c.entries) {
				t.Fatalf("decoded %+v, want %+v", back, c.entries)
			}
		})
	}
	// The artifacts of the sample verify against their entries.
	sample := artManifestSample()
	for i, art := range []string{"snapshot-bytes", "table-bytes"} {
		if err := VerifyArtifact(sample[i], []byte(art)); err != nil {
			t.Errorf("VerifyArtifact(%q): %v", art, err)
		}
	}
}

// artManifestLongEntries hand-builds the sample with entry_len 26: each entry
// carries one extra tail byte, as a later version's longer entry would.
func artManifestLongEntries(t *testing.T) []byte {
	b := mustHex(t, `49534d31 02000000 1a
		00 c000000000000000 0e00000000000000 0b9f080384ac8e29 ee
		01 c300000000000000 0b00000000000000 3d79dd7c4daebef5 ff`)
	return artAppend64(b, xxh3.Hash(b))
}

func artAppend64(b []byte, v uint64) []byte {
	var x [8]byte
	put64(x[:], v)
	return append(b, x[:]...)
}

func TestManifestLongerEntriesSkipTails(t *testing.T) {
	b := artManifestLongEntries(t)
	got, err := DecodeManifest(b)
	if err != nil {
		t.Fatalf("DecodeManifest(entry_len 26): %v", err)
	}
	if !slices.Equal(got, artManifestSample()) {
		t.Fatalf("decoded %+v, want %+v", got, artManifestSample())
	}
	// Re-encoding writes the canonical 25-byte entries: B8 exactly.
	if again := EncodeManifest(got); !bytes.Equal(again, mustHex(t, artManifestSampleHex)) {
		t.Fatalf("re-encoded %x", again)
	}
}

func TestManifestRejections(t *testing.T) {
	sample := func(t *testing.T) []byte { return mustHex(t, artManifestSampleHex) }
	// reseal recomputes the trailer, so that a case reaches the rule it
	// names instead of stopping at the trailer.
	reseal := func(b []byte) []byte {
		n := len(b) - trailerLen
		put64(b[n:], xxh3.Hash(b[:n]))
		return b
	}
	cases := []struct {
		name   string
		b      func(t *testing.T) []byte
		rule   Rule
		offset int
	}{
		{"empty", func(t *testing.T) []byte { return nil }, ErrShort, 0},
		{"one byte short of the smallest", func(t *testing.T) []byte {
			return EncodeManifest(nil)[:16]
		}, ErrShort, 16},
		{"magic", func(t *testing.T) []byte { b := sample(t); b[3] = '2'; return reseal(b) }, ErrMagic, 0},
		{"magic lowercase", func(t *testing.T) []byte { b := sample(t); b[0] = 'i'; return reseal(b) }, ErrMagic, 0},
		{"count above the max", func(t *testing.T) []byte {
			b := sample(t)
			put32(b[4:], ManifestEntriesMax+1)
			return reseal(b)
		}, ErrCountTooLarge, 4},
		{"count huge, input tiny", func(t *testing.T) []byte {
			b := EncodeManifest(nil)
			put32(b[4:], 0xffffffff)
			return b
		}, ErrCountTooLarge, 4},
		{"count at the max, input tiny", func(t *testing.T) []byte {
			// Must fail on length without allocating 65536 entries.
			b := EncodeManifest(nil)
			put32(b[4:], ManifestEntriesMax)
			return reseal(b)
		}, ErrShort, 17},
		{"entry_len 24", func(t *testing.T) []byte { b := sample(t); b[8] = 24; return reseal(b) }, ErrEntryLenTooSmall, 8},
		{"entry_len 0", func(t *testing.T) []byte { b := sample(t); b[8] = 0; return reseal(b) }, ErrEntryLenTooSmall, 8},
		{"count above the entries", func(t *testing.T) []byte {
			b := sample(t)
			put32(b[4:], 3)
			return reseal(b)
		}, ErrShort, 67},
		{"entry_len above the entries", func(t *testing.T) []byte { b := sample(t); b[8] = 26; return reseal(b) }, ErrShort, 67},
		{"truncated trailer", func(t *testing.T) []byte { return sample(t)[:66] }, ErrShort, 66},
		{"byte between the last entry and the trailer", func(t *testing.T) []byte {
			b := sample(t)
			b = slices.Insert(b, 59, 0)
			return reseal(b)
		}, ErrTrailingBytes, 59},
		{"count below the entries", func(t *testing.T) []byte {
			b := sample(t)
			put32(b[4:], 1)
			return reseal(b)
		}, ErrTrailingBytes, 34},
		{"trailer", func(t *testing.T) []byte { b := sample(t); b[len(b)-1] ^= 0x80; return b }, ErrTrailerMismatch, 59},
		{"entry byte", func(t *testing.T) []byte { b := sample(t); b[10] ^= 1; return b }, ErrTrailerMismatch, 59},
		{"second entry kind", func(t *testing.T) []byte { b := sample(t); b[34] = ArtifactSegmentLog; return b }, ErrTrailerMismatch, 59},
		{"zeroed trailer", func(t *testing.T) []byte { b := sample(t); clear(b[59:]); return b }, ErrTrailerMismatch, 59},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entries, err := DecodeManifest(c.b(t))
			fe := artExpectRule(t, err, "ISM1", c.rule)
			if fe.Offset != c.offset {
				t.Errorf("offset %d, want %d (%v)", fe.Offset, c.offset, fe)
			}
			if entries != nil {
				t.Errorf("entries returned with an error")
			}
		})
	}
}

func TestVerifyArtifactRejections(t *testing.T) {
	e := artManifestSample()[0]
	artExpectRule(t, VerifyArtifact(e, []byte("snapshot-byte")), "artifact", ErrArtifactLen)
	artExpectRule(t, VerifyArtifact(e, []byte("snapshot-bytes!")), "artifact", ErrArtifactLen)
	artExpectRule(t, VerifyArtifact(e, []byte("snapshot-bytez")), "artifact", ErrArtifactChecksum)
	artExpectRule(t, VerifyArtifact(ManifestEntry{Len: 0, Checksum: 0}, nil), "artifact", ErrArtifactChecksum)
	if err := VerifyArtifact(ManifestEntry{Len: 0, Checksum: 0x2d06800538d394c2}, nil); err != nil {
		t.Errorf("empty artifact with XXH3(\"\"): %v", err)
	}
}

func TestManifestAssertions(t *testing.T) {
	artMustPanic(t, "EncodeManifest above the max", func() { EncodeManifest(make([]ManifestEntry, ManifestEntriesMax+1)) })
}

func TestManifestMaxEntries(t *testing.T) {
	entries := make([]ManifestEntry, ManifestEntriesMax)
	for i := range entries {
		entries[i] = ManifestEntry{Kind: ArtifactSegmentLog, Frontier: uint64(i) << 20, Len: uint64(i), Checksum: uint64(i) * 0x9e3779b97f4a7c15}
	}
	got, err := DecodeManifest(EncodeManifest(entries))
	if err != nil || !slices.Equal(got, entries) {
		t.Fatalf("max-size manifest did not round-trip: %v", err)
	}
}

func artGenManifestEntry() *rapid.Generator[ManifestEntry] {
	return rapid.Custom(func(t *rapid.T) ManifestEntry {
		return ManifestEntry{
			Kind:     rapid.Uint8().Draw(t, "kind"),
			Frontier: rapid.Uint64().Draw(t, "frontier"),
			Len:      rapid.Uint64().Draw(t, "len"),
			Checksum: rapid.Uint64().Draw(t, "checksum"),
		}
	})
}

func TestManifestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		entries := rapid.SliceOfN(artGenManifestEntry(), 0, 40).Draw(t, "entries")
		b := EncodeManifest(entries)
		got, err := DecodeManifest(b)
		if err != nil {
			t.Fatalf("DecodeManifest(EncodeManifest(...)): %v", err)
		}
		if !slices.Equal(got, entries) {
			t.Fatalf("decoded %+v, want %+v", got, entries)
		}
	})
}

// artCheckManifestInput is the oracle of the property test and the fuzz
// target. A manifest with entry_len 25 is canonical and must re-encode to its
// input; a longer entry_len is not (its tails are dropped), so there the
// decoded entries must survive another encode/decode unchanged.
func artCheckManifestInput(t artTB, b []byte) {
	t.Helper()
	entries, err := DecodeManifest(b)
	if err != nil {
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Format != "ISM1" || fe.Offset < 0 || fe.Offset > len(b) {
			t.Fatalf("error %v is not an ISM1 *FormatError inside the input", err)
		}
		return
	}
	again := EncodeManifest(entries)
	if b[8] == ManifestEntryLen {
		if !bytes.Equal(again, b) {
			t.Fatalf("canonical manifest re-encodes differently\n in %x\nout %x", b, again)
		}
		return
	}
	back, err := DecodeManifest(again)
	if err != nil || !slices.Equal(back, entries) {
		t.Fatalf("decode(encode(decoded)) = %+v, %v; want %+v", back, err, entries)
	}
}

func TestDecodeManifestNeverPanicsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b []byte
		if rapid.Bool().Draw(t, "from_valid") {
			b = EncodeManifest(rapid.SliceOfN(artGenManifestEntry(), 0, 5).Draw(t, "entries"))
			if rapid.Bool().Draw(t, "long") {
				b = artStretchManifest(b, rapid.IntRange(26, 255).Draw(t, "entry_len"))
			}
			for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(b)-1), 0, 3).Draw(t, "bytes") {
				b[i] = rapid.Byte().Draw(t, "value")
			}
			b = b[:rapid.IntRange(0, len(b)).Draw(t, "cut")]
		} else {
			b = rapid.SliceOfN(rapid.Byte(), 0, 200).Draw(t, "noise")
		}
		artCheckManifestInput(t, b)
	})
}

// artStretchManifest rewrites a canonical manifest with a longer entry_len,
// filling each entry's tail with a pattern, and reseals it.
func artStretchManifest(b []byte, entryLen int) []byte {
	count := int(u32(b[4:]))
	out := slices.Clone(b[:manifestHeaderLen])
	out[8] = byte(entryLen)
	for i := 0; i < count; i++ {
		e := b[manifestHeaderLen+i*ManifestEntryLen:][:ManifestEntryLen]
		out = append(out, e...)
		for j := ManifestEntryLen; j < entryLen; j++ {
			out = append(out, byte(i*31+j))
		}
	}
	return artAppend64(out, xxh3.Hash(out))
}

func TestManifestStretchedDecodesLikeCanonical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		entries := rapid.SliceOfN(artGenManifestEntry(), 0, 8).Draw(t, "entries")
		long := artStretchManifest(EncodeManifest(entries), rapid.IntRange(25, 255).Draw(t, "entry_len"))
		got, err := DecodeManifest(long)
		if err != nil || !slices.Equal(got, entries) {
			t.Fatalf("stretched manifest decoded to %+v, %v; want %+v", got, err, entries)
		}
	})
}

func TestArtifactDecodersBoundAllocationByInput(t *testing.T) {
	// Each input claims the largest count its format allows but holds no
	// entries. Decoders must check the input's length before sizing
	// anything by the count: 100 rejections must allocate far less than one
	// table of the claimed size would (65536 manifest entries are 2 MiB).
	manifest := EncodeManifest(nil)
	put32(manifest[4:], ManifestEntriesMax)
	table := artRawClientTable(ClientTableSlotsMax)
	offsets := EncodeConsumerOffsets(ConsumerOffsets{})
	put32(offsets[21:], ConsumerOffsetsSectionMax)
	put32(offsets[25:], ConsumerOffsetsSectionMax)
	decoders := []struct {
		name   string
		decode func() error
	}{
		{"ISM1", func() error { _, err := DecodeManifest(manifest); return err }},
		{"ICT2", func() error { _, err := DecodeClientTable(table); return err }},
		{"ICO1", func() error { _, err := DecodeConsumerOffsets(offsets); return err }},
	}
	for _, d := range decoders {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 100 {
			if err := d.decode(); !errors.Is(err, ErrShort) {
				t.Fatalf("%s: got %v, want ErrShort", d.name, err)
			}
		}
		runtime.ReadMemStats(&after)
		if n := after.TotalAlloc - before.TotalAlloc; n > 256<<10 {
			t.Errorf("%s: 100 rejections allocated %d bytes", d.name, n)
		}
	}
}

// TestManifestIdentifiedRoundTrip: a manifest whose entries carry identity
// tails decodes to the same entries as the canonical one (the tails are
// skipped), and ManifestIdentities reads the tails back; a canonical
// manifest has none.
func TestManifestIdentifiedRoundTrip(t *testing.T) {
	entries := artManifestSample()
	ids := []U128{{Lo: 0x1122, Hi: 0x3344}, {}}
	b := EncodeManifestIdentified(entries, ids)
	got, err := DecodeManifest(b)
	if err != nil || !slices.Equal(got, entries) {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, entries)
	}
	if back := ManifestIdentities(b); !slices.Equal(back, ids) {
		t.Fatalf("identities %v, want %v", back, ids)
	}
	if back := ManifestIdentities(EncodeManifest(entries)); !slices.Equal(back, []U128{{}, {}}) {
		t.Fatalf("a canonical manifest has identities %v", back)
	}
}

// TestManifestStampedRoundTrip: a manifest whose entries carry identity
// and timestamp tails decodes to the same entries as the canonical form,
// and ManifestIdentities and ManifestTimestamps read the tails back at
// entry_len 49; shorter forms have no timestamps.
func TestManifestStampedRoundTrip(t *testing.T) {
	cases := []struct {
		name       string
		entries    []ManifestEntry
		identities []U128
		timestamps []uint64
	}{
		{"empty", nil, nil, nil},
		{"sample", artManifestSample(), []U128{{}, {Lo: 0x1122, Hi: 0x3344}}, []uint64{0, 0x0102030405060708}},
		{"partition", []ManifestEntry{
			{Kind: ArtifactSegmentLog, Frontier: 0, Len: 300, Checksum: 1},
			{Kind: ArtifactSegmentLog, Frontier: 7, Len: 900, Checksum: 2},
			{Kind: ArtifactConsumerOffsets, Frontier: 44, Len: 41, Checksum: 3},
		}, []U128{{}, {}, {Lo: 44, Hi: 9}}, []uint64{0, 0, 1_700_000_000_000_000}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := EncodeManifestStamped(c.entries, c.identities, c.timestamps)
			if b[8] != ManifestEntryLenStamped || len(b) != manifestHeaderLen+len(c.entries)*ManifestEntryLenStamped+trailerLen {
				t.Fatalf("entry_len %d, %d bytes", b[8], len(b))
			}
			got, err := DecodeManifest(b)
			if err != nil {
				t.Fatalf("DecodeManifest: %v", err)
			}
			canonical, err := DecodeManifest(EncodeManifest(c.entries))
			if err != nil || !slices.Equal(got, canonical) || !slices.Equal(got, c.entries) {
				t.Fatalf("decoded %+v, canonical %+v (%v), want %+v", got, canonical, err, c.entries)
			}
			wantIDs, wantTs := c.identities, c.timestamps
			if wantIDs == nil {
				wantIDs, wantTs = []U128{}, []uint64{}
			}
			if back := ManifestIdentities(b); !slices.Equal(back, wantIDs) {
				t.Fatalf("identities %v, want %v", back, wantIDs)
			}
			if back := ManifestTimestamps(b); !slices.Equal(back, wantTs) {
				t.Fatalf("timestamps %v, want %v", back, wantTs)
			}
			zeros := make([]uint64, len(c.entries))
			if back := ManifestTimestamps(EncodeManifestIdentified(c.entries, wantIDs)); !slices.Equal(back, zeros) {
				t.Fatalf("an identified manifest has timestamps %v", back)
			}
			if back := ManifestTimestamps(EncodeManifest(c.entries)); !slices.Equal(back, zeros) {
				t.Fatalf("a canonical manifest has timestamps %v", back)
			}
		})
	}
}

// TestManifestStampedTailsAtTheirOffsets pins the layout of a stamped
// entry: the identity at byte 25, the timestamp at byte 41, little-endian.
func TestManifestStampedTailsAtTheirOffsets(t *testing.T) {
	b := EncodeManifestStamped(artManifestSample()[:1], []U128{{Lo: 0x0807060504030201, Hi: 0x100f0e0d0c0b0a09}}, []uint64{0x1817161514131211})
	e := b[manifestHeaderLen:][:ManifestEntryLenStamped]
	for i := range 24 {
		if e[ManifestEntryLen+i] != byte(i+1) {
			t.Fatalf("tail byte %d is %#x, want %#x", i, e[ManifestEntryLen+i], i+1)
		}
	}
}

func TestManifestStampedAssertions(t *testing.T) {
	e := artManifestSample()
	artMustPanic(t, "fewer timestamps", func() { EncodeManifestStamped(e, make([]U128, 2), make([]uint64, 1)) })
	artMustPanic(t, "fewer identities", func() { EncodeManifestStamped(e, make([]U128, 1), make([]uint64, 2)) })
	n := ManifestEntriesMax + 1
	artMustPanic(t, "above the max", func() { EncodeManifestStamped(make([]ManifestEntry, n), make([]U128, n), make([]uint64, n)) })
}
