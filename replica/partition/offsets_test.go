package partition

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
)

// TestOffsetRequestGoldens: client-ops.md 5.26 and 5.27's derived bodies
// (consumer 7, stream 0, topic 0, partition Some(0); a store of offset 5 at
// Quorum, a delete at NoAck), and their decoding.
func TestOffsetRequestGoldens(t *testing.T) {
	q := OffsetRequest{ConsumerKind: ConsumerSingle, Consumer: metadata.ID(7), Stream: metadata.ID(0), Topic: metadata.ID(0),
		HasPartition: true, Partition: 0, Offset: 5, Ack: AckQuorum}
	store := "0101040700000001040000000001040000000001000000000500000000000000" + "01"
	if got := hex.EncodeToString(EncodeOffsetRequest(q, true)); got != store {
		t.Fatalf("store body\n%s\nwant\n%s", got, store)
	}
	q.Ack, q.Offset = AckNone, 0
	del := "010104070000000104000000000104000000000100000000" + "00"
	if got := hex.EncodeToString(EncodeOffsetRequest(q, false)); got != del {
		t.Fatalf("delete body\n%s\nwant\n%s", got, del)
	}
	for _, tc := range []struct {
		body  string
		store bool
	}{{store, true}, {del, false}} {
		b, _ := hex.DecodeString(tc.body)
		r, err := DecodeOffsetRequest(b, tc.store)
		if err != nil || r.Consumer != metadata.ID(7) || !r.HasPartition {
			t.Fatalf("decoded %+v, %v", r, err)
		}
		if _, err := DecodeOffsetRequest(b[:len(b)-1], tc.store); !errors.Is(err, ErrOffsetRequest) {
			t.Fatalf("a short body: %v", err)
		}
		bad := append([]byte(nil), b...)
		bad[len(bad)-1] = 2 // ack level 2
		if _, err := DecodeOffsetRequest(bad, tc.store); !errors.Is(err, ErrOffsetRequest) {
			t.Fatalf("ack level 2: %v", err)
		}
	}
	if ConsumerKey(metadata.ID(7)) != 7 || ConsumerKey(metadata.Named("abc")) != 0x32d153ff {
		t.Fatal("consumer keys: a numeric id as it is, a name by its XXH32")
	}
}
