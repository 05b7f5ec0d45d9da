package checker

import (
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// identified gives entry i of an offerFrame manifest an identity and
// reseals the manifest's trailer.
func identified(frame []byte, i int) []byte {
	f := append([]byte(nil), frame...)
	body := f[wire.HeaderSize:]
	at := ism1HeaderLen + i*int(body[8]) + 25
	binary.LittleEndian.PutUint64(body[at:], 0xfeed)
	end := len(body) - ism1TrailerLen
	binary.LittleEndian.PutUint64(body[end:], xxh3.Hash(body[:end]))
	return f
}

// TestOfferRefused: a session that refuses an offer its replica could take
// (well formed in its plane's order, with the op's identity, within the
// artifact bound, above what the replica applied) is named; a refusal of an
// offer that breaks any of these is the session's right (issue 26: a
// receiver that refused every partition offer passed 100 seeds).
func TestOfferRefused(t *testing.T) {
	metadata := identified(offerFrame(wire.MetadataGroup, 40, [2]uint64{0, 40}, [2]uint64{1, 40}), 0)
	partition := identified(offerFrame(9, 12, [2]uint64{2, 0}, [2]uint64{2, 30}, [2]uint64{3, 12}), 2)
	unavailable := append([]byte(nil), partition...)
	unavailable[sttAvailableAt] = 0
	for _, tc := range []struct {
		name        string
		frame       []byte
		need, limit uint64
		want        bool
	}{
		{"a metadata offer it could take", metadata, 39, 1000, true},
		{"a partition offer it could take", partition, 11, 1000, true},
		{"an offer of what it applied", partition, 12, 1000, false},
		{"an artifact above its bound", partition, 11, 99, false},
		{"no identity", offerFrame(9, 12, [2]uint64{2, 0}, [2]uint64{2, 30}, [2]uint64{3, 12}), 11, 1000, false},
		{"the identity on another entry", identified(offerFrame(9, 12, [2]uint64{2, 0}, [2]uint64{2, 30}, [2]uint64{3, 12}), 0), 11, 1000, false},
		{"segments out of order", identified(offerFrame(9, 12, [2]uint64{2, 30}, [2]uint64{2, 0}, [2]uint64{3, 12}), 2), 11, 1000, false},
		{"a metadata offer without its client table", identified(offerFrame(wire.MetadataGroup, 40, [2]uint64{0, 40}), 0), 39, 1000, false},
		{"the server had nothing to offer", unavailable, 11, 1000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(3)
			c.offerRefused(1, tc.frame, tc.need, tc.limit, "why")
			switch v := c.Violation(); {
			case tc.want && (v == nil || v.Name != OfferRefused):
				t.Fatalf("violation %v, want %q", v, OfferRefused)
			case !tc.want && v != nil:
				t.Fatalf("unexpected violation: %v", v)
			}
		})
	}
}
