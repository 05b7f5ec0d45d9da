package metadata

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// TestPropertySnapshotRoundTrip: a state taken midway through a history
// survives its snapshot: the payload decodes to a state of the same digest
// that re-encodes to the same bytes, and the decoded state goes on applying
// the rest of the history exactly as the original does.
func TestPropertySnapshotRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limits := genLimits(t)
		h := genHistory(t, NewGroupAllocator(0))
		cut := rapid.IntRange(0, len(h)).Draw(t, "cut")
		a := newState(limits)
		applyAll(a, h[:cut])
		meta := SnapshotMeta{CreatedAt: rapid.Uint64().Draw(t, "created_at"), SequenceNumber: uint64(cut)}
		if rapid.Bool().Draw(t, "client_table") {
			meta.ClientTable = []byte{0x92, 0x01, 0xa1, 'x'} // any one MessagePack value
		}
		payload := a.EncodeSnapshot(meta)
		b, got, err := DecodeSnapshot(payload, limits)
		if err != nil {
			t.Fatalf("decode of an encoded snapshot: %v", err)
		}
		if !reflect.DeepEqual(got, meta) {
			t.Fatalf("meta %+v came back as %+v", meta, got)
		}
		if b.Digest() != a.Digest() || !bytes.Equal(b.EncodeSnapshot(meta), payload) {
			t.Fatalf("the decoded state differs")
		}
		ra, rb := applyAll(a, h[cut:]), applyAll(b, h[cut:])
		if !reflect.DeepEqual(ra, rb) || a.Digest() != b.Digest() {
			t.Fatalf("the decoded state applies the rest of the history differently")
		}
	})
}

// TestPropertySnapshotAcceptsOnlyCanonical: whatever bytes DecodeSnapshot
// accepts, it accepts as the exact encoding of what it decoded, so a flipped
// or cut payload is either refused or still names one state in one form.
func TestPropertySnapshotAcceptsOnlyCanonical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limits := genLimits(t)
		s := newState(limits)
		applyAll(s, genHistory(t, NewGroupAllocator(0)))
		payload := s.EncodeSnapshot(SnapshotMeta{CreatedAt: 7, SequenceNumber: 9})
		bad := append([]byte(nil), payload...)
		switch rapid.IntRange(0, 2).Draw(t, "mutation") {
		case 0:
			i := rapid.IntRange(0, len(bad)-1).Draw(t, "at")
			bad[i] ^= 1 << rapid.IntRange(0, 7).Draw(t, "bit")
		case 1:
			bad = bad[:rapid.IntRange(0, len(bad)-1).Draw(t, "cut")]
		case 2:
			bad = append(bad, rapid.Byte().Draw(t, "extra"))
		}
		got, meta, err := DecodeSnapshot(bad, limits)
		if err != nil {
			return
		}
		if again := got.EncodeSnapshot(meta); !bytes.Equal(again, bad) {
			t.Fatalf("accepted % x, which re-encodes to % x", bad, again)
		}
	})
}

// TestSnapshotEmptyGolden pins the canonical bytes of the empty state:
// 97 (array of 7), ce 00000003 (version u32), cf created_at, cf sequence,
// c0 (users), 93 cf revision cf highest 90 (streams), c0 (client table),
// ce 00000000 (writer_release). Every integer in its field's width.
func TestSnapshotEmptyGolden(t *testing.T) {
	got := NewState().EncodeSnapshot(SnapshotMeta{CreatedAt: 0x0102030405060708, SequenceNumber: 42})
	want := "97" + "ce00000003" + "cf0102030405060708" + "cf000000000000002a" + "c0" +
		"93" + "cf0000000000000000" + "cf0000000000000000" + "90" + "c0" + "ce00000000"
	if hex.EncodeToString(got) != want {
		t.Fatalf("empty snapshot\n got  %x\n want %s", got, want)
	}
}

// TestSnapshotRules: each malformed payload is refused with the rule it
// breaks.
func TestSnapshotRules(t *testing.T) {
	empty := "97ce00000003cf0000000000000001cf0000000000000002c093cf0000000000000000cf000000000000000090c0ce00000000"
	cases := []struct {
		name, payload string
		rule          error
	}{
		{"empty input", "", ErrSnapshotShape},
		{"a map, not an array", "80", ErrSnapshotShape},
		{"six fields", "96ce00000003cf0000000000000001cf0000000000000002c093cf0000000000000000cf000000000000000090c0", ErrSnapshotShape},
		{"version 2", "97ce00000002" + empty[12:], ErrSnapshotVersion},
		{"compact version", "9703" + empty[12:], ErrSnapshotNonCanonical},
		{"users present", empty[:48] + "90" + empty[50:], ErrSnapshotShape},
		{"another writer release", empty[:len(empty)-8] + "00000001", ErrSnapshotShape},
		{"trailing byte", empty + "00", ErrSnapshotShape},
		// A stream at key 0 named "a" with no options or topics, then a second one named "a".
		{"a stream name twice", "97ce00000003cf0000000000000001cf0000000000000002c093cf0000000000000000cf000000000000000092" +
			"95ce00000000a161cf00000000000000009090" + "95ce00000001a161cf00000000000000009090" + "c0ce00000000", ErrSnapshotState},
		{"stream keys out of order", "97ce00000003cf0000000000000001cf0000000000000002c093cf0000000000000000cf000000000000000092" +
			"95ce00000001a161cf00000000000000009090" + "95ce00000000a162cf00000000000000009090" + "c0ce00000000", ErrSnapshotState},
		{"a partition above the highest group", "97ce00000003cf0000000000000001cf0000000000000002c093cf0000000000000001cf000000000000000091" +
			"95ce00000000a161cf000000000000000090" + "91" + "98ce00000000a174cf0000000000000000cf0000000000000000cc00cf000000000000000090" +
			"91" + "94ce00000000cf0000000000000005cf0000000000000000cf0000000000000001" + "c0ce00000000", ErrSnapshotState},
	}
	for _, c := range cases {
		b, err := hex.DecodeString(c.payload)
		if err != nil {
			t.Fatalf("%s: bad hex: %v", c.name, err)
		}
		_, _, err = DecodeSnapshot(b, DefaultLimits())
		if !errors.Is(err, c.rule) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.rule)
		}
	}
	b, _ := hex.DecodeString(empty)
	if _, _, err := DecodeSnapshot(b, DefaultLimits()); err != nil {
		t.Fatalf("the valid base case is refused: %v", err)
	}
}
