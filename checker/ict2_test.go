package checker_test

import (
	"encoding/binary"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// ict2Of encodes a client table artifact by hand from wire.md 8.3, each
// entry's ring its given replies (oldest first).
func ict2Of(es []tableEntryOf, rings map[wire.U128][][]byte) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32([]byte("ICT2"), uint32(len(es)))
	for _, e := range es {
		b = le.AppendUint64(b, e.client.Lo)
		b = le.AppendUint64(b, e.client.Hi)
		b = le.AppendUint64(b, e.epoch)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, e.watermark)
		b = append(b, e.reply[128:144]...) // the watermark request's request_checksum, as its reply holds it
		ring := rings[e.client]
		if ring == nil {
			ring = [][]byte{e.reply}
		}
		b = append(b, byte(len(ring)))
		for _, r := range ring {
			b = le.AppendUint32(b, uint32(len(r)))
			b = append(b, r...)
		}
	}
	return le.AppendUint64(b, xxh3.Hash(b))
}

// TestClientTableArtifactAgainstTheModel: the ICT2 a replica offers with
// its checkpoint holds the model's sessions at the op (any order), each
// with the model's epoch and watermark and its newest reply last; one
// with an epoch off (issue 26: wire/clienttable.go:98, the epoch a byte
// late), a session missing, another reply newest, or a watermark_checksum
// other than the watermark request's fails "client table
// artifact differs from the model", and so do bytes that do not read as
// ICT2.
func TestClientTableArtifactAgainstTheModel(t *testing.T) {
	run := func(edit func(f *fakeCluster, es []tableEntryOf) []byte) *fakeCluster {
		f, st, es := twoSessionCheckpoint(t)
		payload := st.EncodeSnapshot(metadata.SnapshotMeta{CreatedAt: f.log[3].x.Timestamp, SequenceNumber: 4,
			ClientTable: clientTableOf(t, 4, es...)})
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventCheckpoint, Replica: 1, Op: 4, Frame: payload,
			Disk: replica.DiskReport{ClientTable: edit(f, es)}})
		return f
	}
	wantPass(t, run(func(f *fakeCluster, es []tableEntryOf) []byte {
		// Slot order, and client 0's whole ring: its Register's reply, then its request's.
		return ict2Of([]tableEntryOf{es[1], es[0]}, map[wire.U128][][]byte{es[0].client: {f.log[0].reply, f.log[2].reply}})
	}))
	for name, edit := range map[string]func(f *fakeCluster, es []tableEntryOf) []byte{
		"epoch":      func(_ *fakeCluster, es []tableEntryOf) []byte { es[0].epoch++; return ict2Of(es, nil) },
		"missing":    func(_ *fakeCluster, es []tableEntryOf) []byte { return ict2Of(es[:1], nil) },
		"newest":     func(f *fakeCluster, es []tableEntryOf) []byte { es[0].reply = f.log[0].reply; return ict2Of(es, nil) },
		"off format": func(_ *fakeCluster, es []tableEntryOf) []byte { b := ict2Of(es, nil); b[0] = 'X'; return b },
		"watermark checksum": func(_ *fakeCluster, es []tableEntryOf) []byte {
			// The first entry's watermark_checksum (bytes 44..60) never
			// written (issue 26: clients/table.go:412), the trailer resealed.
			b := ict2Of(es, nil)
			b = b[:len(b)-8]
			clear(b[44:60])
			return binary.LittleEndian.AppendUint64(b, xxh3.Hash(b))
		},
	} {
		t.Run(name, func(t *testing.T) {
			wantViolation(t, run(edit), checker.ClientTableWrong)
		})
	}
}
