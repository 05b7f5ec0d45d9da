package workload

import (
	"bytes"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestEncodeBatchAgreesWithTheCodec: the workload's own batch encoder and
// the replica's codec are two readings of wire.md 7; a batch one writes the
// other verifies and decodes to the same messages, and both write the same
// bytes.
func TestEncodeBatchAgreesWithTheCodec(t *testing.T) {
	msgs := []wire.Message{
		{ID: wire.U128{Hi: 1, Lo: 2}, Payload: []byte("first")},
		{ID: wire.U128{Lo: 3}, OffsetDelta: 1, TimestampDelta: 7, Payload: []byte{}, UserHeaders: []byte("h")},
		{ID: wire.U128{Hi: ^uint64(0), Lo: 4}, OffsetDelta: 2, Payload: bytes.Repeat([]byte{0xab}, 300), UserHeaders: []byte("hh")},
	}
	b := encodeBatch(5, msgs)
	h, got, err := wire.DecodeBatch(b)
	if err != nil {
		t.Fatalf("the codec refuses the workload's batch: %v", err)
	}
	if h.OriginTimestamp != 5 || h.MessageCount != 3 || h.BatchLength != uint64(len(b)) {
		t.Fatalf("header %+v", h)
	}
	for i := range msgs {
		if got[i].ID != msgs[i].ID || !bytes.Equal(got[i].Payload, msgs[i].Payload) || !bytes.Equal(got[i].UserHeaders, msgs[i].UserHeaders) ||
			got[i].OffsetDelta != msgs[i].OffsetDelta || got[i].TimestampDelta != msgs[i].TimestampDelta {
			t.Fatalf("message %d decodes as %+v, want %+v", i, got[i], msgs[i])
		}
	}
	if want := wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 5}, msgs); !bytes.Equal(b, want) {
		t.Fatalf("the workload's batch differs from the codec's:\n%x\n%x", b, want)
	}
}
