package wire

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/zeebo/xxh3"
	"pgregory.net/rapid"
)

// artVsrA6 is the state of vector A6: distinct values per field, so that a
// swap of two same-width fields shows.
func artVsrA6() VsrState {
	return VsrState{
		Cluster: U128{Lo: 1}, ReplicaID: 2, ReplicaCount: 5, View: 4, LogView: 3,
		CommitMax: 6, CheckpointOp: 7, CheckpointChecksum: U128{Lo: 8}, OffsetFrontier: 9,
	}
}

func TestVsrStateVectorA6(t *testing.T) {
	b := artVsrA6().Encode()
	if len(b) != VsrStateSize {
		t.Fatalf("%d bytes, want %d", len(b), VsrStateSize)
	}
	// The low byte of each field at its offset, and nothing else set.
	want := make([]byte, VsrStateSize)
	for off, v := range map[int]byte{0: 1, 16: 2, 17: 5, 18: 4, 22: 3, 26: 6, 34: 7, 42: 8, 58: 9} {
		want[off] = v
	}
	if !bytes.Equal(b, want) {
		t.Fatalf("Encode\n got %x\nwant %x", b, want)
	}
	got, err := DecodeVsrState(b)
	if err != nil || got != artVsrA6() {
		t.Fatalf("DecodeVsrState = %+v, %v; want %+v", got, err, artVsrA6())
	}

	// The 58-byte legacy form decodes with offset_frontier 0.
	legacy, err := DecodeVsrState(b[:VsrStateLegacySize])
	wantLegacy := artVsrA6()
	wantLegacy.OffsetFrontier = 0
	if err != nil || legacy != wantLegacy {
		t.Fatalf("legacy DecodeVsrState = %+v, %v; want %+v", legacy, err, wantLegacy)
	}

	// Wide values land in the right halves.
	wide := VsrState{
		Cluster: U128{Lo: 0x0807060504030201, Hi: 0x100f0e0d0c0b0a09}, View: 0xfffffffe, LogView: 0xfffffffe,
		CommitMax: 1 << 63, CheckpointChecksum: U128{Hi: 1 << 63}, OffsetFrontier: 0xffffffffffffffff,
	}
	if got, err := DecodeVsrState(wide.Encode()); err != nil || got != wide {
		t.Fatalf("wide state = %+v, %v", got, err)
	}
}

func TestVsrStateRejections(t *testing.T) {
	logViewAbove := artVsrA6().Encode()
	logViewAbove[22] = 5 // log_view 5, view 4
	cases := []struct {
		name   string
		b      []byte
		rule   Rule
		offset int
	}{
		{"empty", nil, ErrPayloadLen, 0},
		{"57 bytes", make([]byte, 57), ErrPayloadLen, 0},
		{"59 bytes", make([]byte, 59), ErrPayloadLen, 0},
		{"65 bytes", make([]byte, 65), ErrPayloadLen, 0},
		{"67 bytes", make([]byte, 67), ErrPayloadLen, 0},
		{"log_view above view", logViewAbove, ErrLogViewAboveViewState, 22},
		{"log_view above view, legacy", logViewAbove[:VsrStateLegacySize], ErrLogViewAboveViewState, 22},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeVsrState(c.b)
			fe := artExpectRule(t, err, "VsrState", c.rule)
			if fe.Offset != c.offset {
				t.Errorf("offset %d, want %d", fe.Offset, c.offset)
			}
		})
	}
	artMustPanic(t, "Encode with log_view above view", func() { VsrState{View: 1, LogView: 2}.Encode() })
}

func TestSuperblockExample(t *testing.T) {
	payload := artVsrA6().Encode()
	var want []byte
	add := func(s string) { want = append(want, mustHex(t, s)...) }
	add("4b4c4253")         // magic 0x53424C4B
	add("0100")             // version 1
	add("0000")             // reserved
	add("2a00000000000000") // sequence 42
	add("0000000000000000") // parent_checksum, unused
	add("42000000")         // payload_len 66
	want = append(want, payload...)
	want = artAppend64(want, xxh3.Hash(want)) // trailer

	got := EncodeSuperblock(42, payload)
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeSuperblock\n got %x\nwant %x", got, want)
	}
	seq, p, err := DecodeSuperblock(want)
	if err != nil || seq != 42 || !bytes.Equal(p, payload) {
		t.Fatalf("DecodeSuperblock = %d, %x, %v", seq, p, err)
	}
	if s, err := DecodeVsrState(p); err != nil || s != artVsrA6() {
		t.Fatalf("payload decodes to %+v, %v", s, err)
	}

	empty := EncodeSuperblock(0, nil)
	if len(empty) != SuperblockRecordMin {
		t.Fatalf("empty record is %d bytes", len(empty))
	}
	if seq, p, err := DecodeSuperblock(empty); err != nil || seq != 0 || len(p) != 0 {
		t.Fatalf("DecodeSuperblock(empty) = %d, %x, %v", seq, p, err)
	}
}

func TestSuperblockInPaddedSlot(t *testing.T) {
	rec := EncodeSuperblock(9, []byte("state"))
	slot := make([]byte, SuperblockRecordMax)
	copy(slot, rec)
	// The whole slot is not a record...
	_, _, err := DecodeSuperblock(slot)
	artExpectRule(t, err, "superblock", ErrTrailingBytes)
	// ...but the record it frames is.
	n, err := SuperblockRecordLen(slot)
	if err != nil || n != len(rec) {
		t.Fatalf("SuperblockRecordLen = %d, %v; want %d", n, err, len(rec))
	}
	seq, p, err := DecodeSuperblock(slot[:n])
	if err != nil || seq != 9 || string(p) != "state" {
		t.Fatalf("DecodeSuperblock(slot[:n]) = %d, %q, %v", seq, p, err)
	}
	if !allZero(slot[n:]) {
		t.Fatalf("padding not zero")
	}
	// A record of the largest payload fills the largest slot exactly.
	full := EncodeSuperblock(1, make([]byte, SuperblockPayloadMax))
	if len(full) != SuperblockRecordMax {
		t.Fatalf("largest record is %d bytes, SuperblockRecordMax %d", len(full), SuperblockRecordMax)
	}
	if _, _, err := DecodeSuperblock(full); err != nil {
		t.Fatalf("largest record: %v", err)
	}
}

func TestSuperblockRejections(t *testing.T) {
	rec := func() []byte { return EncodeSuperblock(5, []byte("payload")) }
	const end = superblockHeaderLen + 7
	reseal := func(b []byte) []byte {
		n := len(b) - trailerLen
		put64(b[n:], xxh3.Hash(b[:n]))
		return b
	}
	edit := func(f func(b []byte)) []byte { b := rec(); f(b); return reseal(b) }
	cases := []struct {
		name   string
		b      []byte
		rule   Rule
		offset int
	}{
		{"empty", nil, ErrShort, 0},
		{"35 bytes", EncodeSuperblock(0, nil)[:35], ErrShort, 35},
		{"magic", edit(func(b []byte) { b[0] = 'S' }), ErrMagic, 0},
		{"magic big-endian", edit(func(b []byte) { copy(b, "SBLK") }), ErrMagic, 0},
		{"version 0", edit(func(b []byte) { put16(b[4:], 0) }), ErrVersion, 4},
		{"version 2", edit(func(b []byte) { put16(b[4:], 2) }), ErrVersion, 4},
		{"payload_len 4097", edit(func(b []byte) { put32(b[24:], SuperblockPayloadMax+1) }), ErrPayloadTooLarge, 24},
		{"payload_len huge", edit(func(b []byte) { put32(b[24:], 0xffffffff) }), ErrPayloadTooLarge, 24},
		{"payload_len past the end", edit(func(b []byte) { put32(b[24:], 8) }), ErrShort, end + 8},
		{"payload_len short of the end", edit(func(b []byte) { put32(b[24:], 6) }), ErrTrailingBytes, end + 7},
		{"byte after the trailer", append(rec(), 0), ErrTrailingBytes, end + 8},
		{"truncated", rec()[:end+7], ErrShort, end + 7},
		{"trailer", func() []byte { b := rec(); b[end] ^= 1; return b }(), ErrTrailerMismatch, end},
		{"sequence", func() []byte { b := rec(); b[8] ^= 1; return b }(), ErrTrailerMismatch, end},
		{"payload", func() []byte { b := rec(); b[end-1] ^= 1; return b }(), ErrTrailerMismatch, end},
		{"reserved", func() []byte { b := rec(); b[7] = 1; return b }(), ErrTrailerMismatch, end},
		{"reserved, resealed", edit(func(b []byte) { b[7] = 1 }), ErrReservedNonzero, 6},
		{"parent_checksum, resealed", edit(func(b []byte) { b[23] = 1 }), ErrReservedNonzero, 16},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, p, err := DecodeSuperblock(c.b)
			fe := artExpectRule(t, err, "superblock", c.rule)
			if fe.Offset != c.offset {
				t.Errorf("offset %d, want %d (%v)", fe.Offset, c.offset, fe)
			}
			if p != nil {
				t.Errorf("payload returned with an error")
			}
		})
	}
	artMustPanic(t, "EncodeSuperblock with 4097 bytes", func() { EncodeSuperblock(1, make([]byte, SuperblockPayloadMax+1)) })
}

func TestSuperblockRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seq := rapid.Uint64().Draw(t, "sequence")
		n := rapid.OneOf(rapid.IntRange(0, 100), rapid.IntRange(0, SuperblockPayloadMax)).Draw(t, "len")
		payload := rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, "payload")
		b := EncodeSuperblock(seq, payload)
		gotSeq, got, err := DecodeSuperblock(b)
		if err != nil || gotSeq != seq || !bytes.Equal(got, payload) {
			t.Fatalf("DecodeSuperblock(EncodeSuperblock(%d, %d bytes)) = %d, %d bytes, %v", seq, n, gotSeq, len(got), err)
		}
	})
}

func artGenVsrState() *rapid.Generator[VsrState] {
	return rapid.Custom(func(t *rapid.T) VsrState {
		view := rapid.Uint32().Draw(t, "view")
		return VsrState{
			Cluster:            U128{Lo: rapid.Uint64().Draw(t, "cluster_lo"), Hi: rapid.Uint64().Draw(t, "cluster_hi")},
			ReplicaID:          rapid.Uint8().Draw(t, "replica_id"),
			ReplicaCount:       rapid.Uint8().Draw(t, "replica_count"),
			View:               view,
			LogView:            rapid.Uint32Range(0, view).Draw(t, "log_view"),
			CommitMax:          rapid.Uint64().Draw(t, "commit_max"),
			CheckpointOp:       rapid.Uint64().Draw(t, "checkpoint_op"),
			CheckpointChecksum: U128{Lo: rapid.Uint64().Draw(t, "cc_lo"), Hi: rapid.Uint64().Draw(t, "cc_hi")},
			OffsetFrontier:     rapid.Uint64().Draw(t, "offset_frontier"),
		}
	})
}

func TestVsrStateRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := artGenVsrState().Draw(t, "state")
		got, err := DecodeVsrState(s.Encode())
		if err != nil || got != s {
			t.Fatalf("DecodeVsrState(Encode(%+v)) = %+v, %v", s, got, err)
		}
	})
}

// artCheckSuperblockInput is the oracle of the property test and the fuzz
// target. The record is canonical, so a decoded record re-encodes to its
// input; if its payload is a VsrState, that re-encodes too (a legacy
// 58-byte payload gains a zero offset_frontier).
func artCheckSuperblockInput(t artTB, b []byte) {
	t.Helper()
	type record struct {
		seq     uint64
		payload []byte
	}
	decode := func(b []byte) (record, error) {
		seq, payload, err := DecodeSuperblock(b)
		return record{seq, payload}, err
	}
	encode := func(r record) []byte { return EncodeSuperblock(r.seq, r.payload) }
	r, ok := artCheckCanonical(t, b, "superblock", decode, encode)
	if !ok {
		return
	}
	payload := r.payload
	s, err := DecodeVsrState(payload)
	if err != nil {
		if !errors.Is(err, ErrPayloadLen) && !errors.Is(err, ErrLogViewAboveViewState) {
			t.Fatalf("DecodeVsrState: unexpected %v", err)
		}
		return
	}
	want := slices.Concat(payload, make([]byte, VsrStateSize-len(payload)))
	if again := s.Encode(); !bytes.Equal(again, want) {
		t.Fatalf("VsrState re-encodes differently\n in %x\nout %x", payload, again)
	}
}

func TestDecodeSuperblockNeverPanicsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b []byte
		if rapid.Bool().Draw(t, "from_valid") {
			var payload []byte
			if rapid.Bool().Draw(t, "vsr") {
				payload = artGenVsrState().Draw(t, "state").Encode()
			} else {
				payload = rapid.SliceOfN(rapid.Byte(), 0, 100).Draw(t, "payload")
			}
			b = EncodeSuperblock(rapid.Uint64().Draw(t, "sequence"), payload)
			for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(b)-1), 0, 3).Draw(t, "bytes") {
				b[i] = rapid.Byte().Draw(t, "value")
			}
			if rapid.Bool().Draw(t, "reseal") && len(b) >= SuperblockRecordMin {
				put64(b[len(b)-8:], xxh3.Hash(b[:len(b)-8]))
			}
			b = b[:rapid.IntRange(0, len(b)).Draw(t, "cut")]
		} else {
			b = rapid.SliceOfN(rapid.Byte(), 0, 200).Draw(t, "noise")
		}
		artCheckSuperblockInput(t, b)
	})
}
