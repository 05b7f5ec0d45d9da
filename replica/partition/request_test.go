package partition

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// producerBatch is a batch as a producer sends it: nothing stamped.
func producerBatch(t testing.TB, n int) []byte {
	t.Helper()
	msgs := make([]wire.Message, n)
	for i := range msgs {
		msgs[i] = wire.Message{ID: wire.U128{Lo: uint64(i + 1)}, OffsetDelta: uint32(i), Payload: []byte{byte(i), 'p'}}
	}
	return wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 1000}, msgs)
}

// TestSendMessagesPrefixGolden: the routing prefix of client-ops.md 5.25's
// golden (Go SDK message_test.go): stream 1, topic 2, Balanced, 2 messages.
func TestSendMessagesPrefixGolden(t *testing.T) {
	batch := producerBatch(t, 2)
	body := EncodeSendMessages(SendMessages{Stream: metadata.ID(1), Topic: metadata.ID(2),
		Partitioning: Partitioning{Kind: Balanced}, Batch: batch})
	want := "120000000104010000000104020000000100" + "02000000"
	if got := hex.EncodeToString(body[:22]); got != want {
		t.Fatalf("prefix %s, want %s", got, want)
	}
	s, err := DecodeSendMessages(body)
	if err != nil {
		t.Fatal(err)
	}
	if s.Stream != metadata.ID(1) || s.Topic != metadata.ID(2) || s.Partitioning.Kind != Balanced || string(s.Batch) != string(batch) {
		t.Fatalf("decoded %+v", s)
	}
}

// TestSendMessagesRoundTrip: every partitioning kind survives the codec.
func TestSendMessagesRoundTrip(t *testing.T) {
	for _, p := range []Partitioning{{Kind: Balanced}, {Kind: PartitionID, Partition: 7}, {Kind: MessagesKey, Key: []byte("k1")}} {
		in := SendMessages{Stream: metadata.Named("s"), Topic: metadata.ID(3), Partitioning: p, Batch: producerBatch(t, 3)}
		out, err := DecodeSendMessages(EncodeSendMessages(in))
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		if out.Stream != in.Stream || out.Topic != in.Topic || out.Partitioning.Kind != p.Kind ||
			out.Partitioning.Partition != p.Partition || string(out.Partitioning.Key) != string(p.Key) {
			t.Fatalf("%+v came back as %+v", in, out)
		}
	}
}

// TestSendMessagesRefusals: each rule of client-ops.md 5.25 that drops a
// request at the primary, broken on its own, with the rule named.
func TestSendMessagesRefusals(t *testing.T) {
	good := func() []byte {
		return EncodeSendMessages(SendMessages{Stream: metadata.ID(1), Topic: metadata.ID(2),
			Partitioning: Partitioning{Kind: PartitionID, Partition: 0}, Batch: producerBatch(t, 2)})
	}
	// The prefix is 4 + 6 + 6 + 6 + 4 bytes; the batch starts at 26.
	cases := []struct {
		name  string
		bend  func(b []byte) []byte
		rule  error
		inner error
	}{
		{"short", func(b []byte) []byte { return b[:3] }, ErrShort, nil},
		{"metadata_length past the body", func(b []byte) []byte { b[0] = 0xff; b[1] = 0xff; return b }, ErrMetadataLength, nil},
		{"metadata_length one too long", func(b []byte) []byte { b[0]++; return b }, ErrMetadataLength, nil},
		{"bad partitioning kind", func(b []byte) []byte { b[16] = 9; return b }, ErrPartitioning, nil},
		{"bad stream identifier", func(b []byte) []byte { b[4] = 7; return b }, metadata.ErrIdentifier, nil},
		{"messages_count off", func(b []byte) []byte { b[22] = 3; return b }, ErrMessagesCount, nil},
		{"messages_count zero", func(b []byte) []byte { b[22] = 0; return b }, ErrMessagesCount, nil},
		{"a message's payload rotted", func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, ErrBatch, wire.ErrMessageChecksum},
		{"batch reserved byte", func(b []byte) []byte { b[26+100] = 1; return b }, ErrBatch, nil},
		{"batch truncated", func(b []byte) []byte { return b[:len(b)-1] }, ErrBatch, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeSendMessages(tc.bend(good()))
			if !errors.Is(err, tc.rule) || tc.inner != nil && !errors.Is(err, tc.inner) {
				t.Fatalf("error %v, want %v (%v)", err, tc.rule, tc.inner)
			}
		})
	}
}

// TestStampThenCheck: the primary's stamp is what its backups accept, and
// only at their own next offset and the prepare's timestamp.
func TestStampThenCheck(t *testing.T) {
	stamped := Stamp(producerBatch(t, 3), 5, 40, 777)
	if err := CheckStamp(stamped, 5, 40, 777); err != nil {
		t.Fatalf("a correct stamp refused: %v", err)
	}
	if got := NextOffset(stamped); got != 43 {
		t.Fatalf("next offset %d, want 43", got)
	}
	for _, tc := range []struct {
		name                  string
		partition, next, time uint64
	}{
		{"another next offset", 5, 41, 777},
		{"another timestamp", 5, 40, 778},
		{"another partition", 6, 40, 777},
	} {
		if err := CheckStamp(stamped, tc.partition, tc.next, tc.time); !errors.Is(err, ErrStamp) {
			t.Fatalf("%s: %v, want ErrStamp", tc.name, err)
		}
	}
	rotten := append([]byte(nil), stamped...)
	rotten[wire.BatchHeaderSize+wire.MessageHeaderSize] ^= 1
	if err := CheckStamp(rotten, 5, 40, 777); !errors.Is(err, ErrBatch) {
		t.Fatalf("a rotten message: %v, want ErrBatch", err)
	}
	// Stamping copies: the producer's bytes stay as sent.
	sent := producerBatch(t, 3)
	Stamp(sent, 5, 40, 777)
	if h, _ := wire.ReadBatchHeader(sent); h.BaseOffset != 0 || h.PartitionID != 0 {
		t.Fatal("Stamp changed the batch it was given")
	}
}

// FuzzDecodeSendMessages: no body makes the decoder panic, and what it
// accepts encodes back to the same bytes.
func FuzzDecodeSendMessages(f *testing.F) {
	f.Add(EncodeSendMessages(SendMessages{Stream: metadata.ID(1), Topic: metadata.Named("t"),
		Partitioning: Partitioning{Kind: MessagesKey, Key: []byte("key")}, Batch: producerBatch(f, 2)}))
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := DecodeSendMessages(body)
		if err != nil {
			return
		}
		if again := EncodeSendMessages(s); string(again) != string(body) {
			t.Fatalf("accepted %x, re-encodes as %x", body, again)
		}
	})
}
