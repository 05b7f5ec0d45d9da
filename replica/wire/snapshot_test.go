package wire_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"pgregory.net/rapid"
)

// TestSnapshotTrailerGolden: the trailer of an empty payload is the magic's
// bytes 50 4E 53 49 and XXH3-128("") = 0x99aa06d3014798d86001c324468d497f,
// low half first (wire.md 8.2).
func TestSnapshotTrailerGolden(t *testing.T) {
	got := hex.EncodeToString(wire.SealSnapshot(nil))
	want := "504e5349" + "7f498d4624c30160" + "d8984701d306aa99"
	if got != want {
		t.Fatalf("sealed empty snapshot %s, want %s", got, want)
	}
}

// TestOpenSnapshotRules: each broken rule is named.
func TestOpenSnapshotRules(t *testing.T) {
	sealed := wire.SealSnapshot([]byte{0x97, 0x03, 0x00, 0x01}) // a msgpack array's first bytes
	n := len(sealed) - wire.SnapshotTrailerLen
	flip := func(i int) []byte {
		b := bytes.Clone(sealed)
		b[i] ^= 0x01
		return b
	}
	for _, c := range []struct {
		name   string
		stored []byte
		rule   wire.Rule
	}{
		{"shorter than the trailer", sealed[:wire.SnapshotTrailerLen-1], wire.ErrShort},
		{"empty", nil, wire.ErrShort},
		{"magic", flip(n), wire.ErrMagic},
		{"checksum", flip(n + 4), wire.ErrTrailerMismatch},
		{"payload", flip(0), wire.ErrTrailerMismatch},
		{"payload cut", sealed[1:], wire.ErrTrailerMismatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := wire.OpenSnapshot(c.stored)
			if !errors.Is(err, c.rule) {
				t.Fatalf("OpenSnapshot: %v, want rule %v", err, c.rule)
			}
		})
	}
}

// TestSnapshotRoundTrip: whatever the payload, OpenSnapshot returns it from
// SealSnapshot's output, and any one flipped bit is refused.
func TestSnapshotRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		payload := rapid.SliceOfN(rapid.Byte(), 0, 512).Draw(t, "payload")
		sealed := wire.SealSnapshot(payload)
		got, err := wire.OpenSnapshot(sealed)
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("OpenSnapshot(SealSnapshot(%x)) = %x, %v", payload, got, err)
		}
		bit := rapid.IntRange(0, len(sealed)*8-1).Draw(t, "bit")
		sealed[bit/8] ^= 1 << (bit % 8)
		if _, err := wire.OpenSnapshot(sealed); err == nil {
			t.Fatalf("bit %d flipped: accepted", bit)
		}
	})
}
