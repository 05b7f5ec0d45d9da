package checker

import (
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// offerFrame builds an offering StateTransferTarget of group at commitOp
// whose body is an ISM1 manifest of 49-byte entries (kind, frontier) by
// hand from wire.md 5.12 and 8.1.
func offerFrame(group, commitOp uint64, entries ...[2]uint64) []byte {
	h := make([]byte, wire.HeaderSize)
	h[60] = byte(wire.CommandStateTransferTarget)
	binary.LittleEndian.PutUint64(h[sttCommitOpAt:], commitOp)
	binary.LittleEndian.PutUint64(h[sttGroupAt:], group)
	h[sttAvailableAt] = 1
	b := binary.LittleEndian.AppendUint32([]byte("ISM1"), uint32(len(entries)))
	b = append(b, 49)
	for _, e := range entries {
		entry := make([]byte, 49)
		entry[0] = byte(e[0])
		binary.LittleEndian.PutUint64(entry[1:], e[1])
		binary.LittleEndian.PutUint64(entry[9:], 100)
		b = append(b, entry...)
	}
	b = binary.LittleEndian.AppendUint64(b, xxh3.Hash(b))
	return append(h, b...)
}

// TestManifestReadByTheFormat: offers whose manifests list wire.md 8.1's
// kinds in its order pass; one listing a partition's segments as kind 1
// (issue 26: wire/manifest.go:14), a metadata offer without its client
// table, segments out of order, or bytes that do not read as ISM1 fail
// "state manifest off the format".
func TestManifestReadByTheFormat(t *testing.T) {
	for _, tc := range []struct {
		name  string
		frame []byte
		bad   bool
	}{
		{"metadata", offerFrame(wire.MetadataGroup, 40, [2]uint64{0, 40}, [2]uint64{1, 40}), false},
		{"partition", offerFrame(9, 12, [2]uint64{2, 0}, [2]uint64{2, 30}, [2]uint64{3, 12}), false},
		{"partition with no batches", offerFrame(9, 2, [2]uint64{3, 2}), false},
		{"segments as kind 1", offerFrame(9, 12, [2]uint64{1, 0}, [2]uint64{1, 30}, [2]uint64{3, 12}), true},
		{"metadata without its client table", offerFrame(wire.MetadataGroup, 40, [2]uint64{0, 40}), true},
		{"snapshot not at commit_op", offerFrame(wire.MetadataGroup, 40, [2]uint64{0, 32}, [2]uint64{1, 40}), true},
		{"segments out of order", offerFrame(9, 12, [2]uint64{2, 30}, [2]uint64{2, 0}, [2]uint64{3, 12}), true},
		{"a byte short", offerFrame(9, 2, [2]uint64{3, 2})[:wire.HeaderSize+4+4+1+49+7], true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(3)
			c.manifestSent(1, tc.frame)
			switch v := c.Violation(); {
			case tc.bad && (v == nil || v.Name != ManifestWrong):
				t.Fatalf("violation %v, want %q", v, ManifestWrong)
			case !tc.bad && v != nil:
				t.Fatalf("unexpected violation: %v", v)
			}
		})
	}
}
