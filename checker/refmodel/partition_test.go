package refmodel

import (
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	partplane "github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/wire"
	"pgregory.net/rapid"
)

// The partition plane's request bodies, drawn valid and then bent (a byte
// changed, the body cut or extended, a length or count off by one), are
// decoded alike by this model and by the replica's admission decoders
// (partplane.DecodeSendMessages, partplane.DecodeOffsetRequest): the same
// verdict, and for a body both decode, the same target.

func genPartitionIdentifier(t *rapid.T, label string) metadata.Identifier {
	if rapid.Bool().Draw(t, label+"_numeric") {
		return metadata.ID(rapid.Uint32Range(0, 3).Draw(t, label))
	}
	return metadata.Named(rapid.SampledFrom([]string{"s", "t", "orders", "é"}).Draw(t, label))
}

// bend changes a valid body the way the workload's bad requests do.
func bend(t *rapid.T, b []byte) []byte {
	switch rapid.IntRange(0, 5).Draw(t, "bend") {
	case 1:
		if len(b) > 0 {
			i := rapid.IntRange(0, len(b)-1).Draw(t, "at")
			b[i] = rapid.Byte().Draw(t, "byte")
		}
	case 2:
		b = b[:rapid.IntRange(0, len(b)).Draw(t, "cut")]
	case 3:
		b = append(b, rapid.SliceOfN(rapid.Byte(), 1, 8).Draw(t, "tail")...)
	case 4:
		if len(b) >= 4 { // a length prefix (SendMessages' metadata_length) off by a little
			n := binary.LittleEndian.Uint32(b)
			binary.LittleEndian.PutUint32(b, n+uint32(rapid.IntRange(-2, 2).Draw(t, "off")))
		}
	case 5:
		if len(b) > 0 { // the last byte: an offset request's ack level
			b[len(b)-1] = rapid.SampledFrom([]byte{0, 1, 2, 255}).Draw(t, "ack")
		}
	}
	return b
}

func TestDifferentialSendMessages(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		msgs := make([]wire.Message, rapid.IntRange(1, 3).Draw(t, "messages"))
		for i := range msgs {
			msgs[i] = wire.Message{ID: wire.U128{Lo: uint64(i + 1)}, OffsetDelta: uint32(i), Payload: rapid.SliceOfN(rapid.Byte(), 0, 4).Draw(t, "payload")}
		}
		batch := wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 1}, msgs)
		var p partplane.Partitioning
		switch rapid.IntRange(0, 2).Draw(t, "partitioning") {
		case 0:
			p = partplane.Partitioning{Kind: partplane.Balanced}
		case 1:
			p = partplane.Partitioning{Kind: partplane.PartitionID, Partition: rapid.Uint32Range(0, 3).Draw(t, "partition")}
		default:
			p = partplane.Partitioning{Kind: partplane.MessagesKey, Key: rapid.SliceOfN(rapid.Byte(), 1, 255).Draw(t, "key")}
		}
		body := partplane.EncodeSendMessages(partplane.SendMessages{Stream: genPartitionIdentifier(t, "stream"),
			Topic: genPartitionIdentifier(t, "topic"), Partitioning: p, Batch: batch})
		body = bend(t, body)
		got, err := DecodeSendMessages(body)
		want, werr := partplane.DecodeSendMessages(body)
		if (err == nil) != (werr == nil) {
			t.Fatalf("body %x: model %v, replica %v", body, err, werr)
		}
		if err == nil && (got.partitioning != uint8(want.Partitioning.Kind) || got.partition != want.Partitioning.Partition ||
			got.stream != identifierOf(want.Stream) || got.topic != identifierOf(want.Topic)) {
			t.Fatalf("body %x: model %v, replica %+v", body, got, want)
		}
	})
}

func TestDifferentialOffsetRequests(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		store := rapid.Bool().Draw(t, "store")
		q := partplane.OffsetRequest{ConsumerKind: rapid.SampledFrom([]uint8{1, 1, 2, 0, 3}).Draw(t, "kind"),
			Consumer: genPartitionIdentifier(t, "consumer"), Stream: genPartitionIdentifier(t, "stream"),
			Topic: genPartitionIdentifier(t, "topic"), HasPartition: rapid.Bool().Draw(t, "has"),
			Partition: rapid.Uint32Range(0, 3).Draw(t, "partition"), Offset: rapid.Uint64().Draw(t, "offset"),
			Ack: rapid.SampledFrom([]uint8{0, 1, 2}).Draw(t, "ack")}
		body := bend(t, partplane.EncodeOffsetRequest(q, store))
		got, err := DecodeOffsetRequest(body, store)
		want, werr := partplane.DecodeOffsetRequest(body, store)
		if (err == nil) != (werr == nil) {
			t.Fatalf("body %x: model %v, replica %v", body, err, werr)
		}
		if err != nil {
			return
		}
		if got.consumerKind != want.ConsumerKind || got.hasPartition != want.HasPartition || got.partition != want.Partition ||
			got.Quorum != (want.Ack == partplane.AckQuorum) || got.stream != identifierOf(want.Stream) || got.topic != identifierOf(want.Topic) {
			t.Fatalf("body %x: model %+v, replica %+v", body, got, want)
		}
	})
}

func identifierOf(x metadata.Identifier) identifier {
	if x.Kind == metadata.IdentifierNumeric {
		return identifier{numeric: true, id: x.Numeric}
	}
	return identifier{name: x.Name}
}

// Resolves: a send or an offset request reaches a partition of the model's
// state exactly when its stream, topic and partition exist.
func TestResolves(t *testing.T) {
	s := newSession(t, DefaultLimits())
	s.request(0, wire.OperationCreateStream, createStream("s", nil), 1)
	s.request(0, wire.OperationCreateTopic, metadata.CreateTopic{Stream: metadata.Named("s"), PartitionsCount: 2, Name: "t"}.Encode(), 2)
	send := func(p partplane.Partitioning, topic string) Target {
		batch := wire.EncodeBatch(wire.BatchHeader{}, []wire.Message{{ID: wire.U128{Lo: 1}}})
		x, err := DecodeSendMessages(partplane.EncodeSendMessages(partplane.SendMessages{Stream: metadata.Named("s"),
			Topic: metadata.Named(topic), Partitioning: p, Batch: batch}))
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	for _, c := range []struct {
		t    Target
		want bool
	}{
		{send(partplane.Partitioning{Kind: partplane.PartitionID, Partition: 1}, "t"), true},
		{send(partplane.Partitioning{Kind: partplane.PartitionID, Partition: 2}, "t"), false},
		{send(partplane.Partitioning{Kind: partplane.Balanced}, "t"), true},
		{send(partplane.Partitioning{Kind: partplane.Balanced}, "u"), false},
	} {
		if got := s.m.Resolves(c.t); got != c.want {
			t.Errorf("%v: resolves %v, want %v", c.t, got, c.want)
		}
	}
}

// xxh32 agrees with the xxHash reference vectors and with the replica's
// key index (replica/partition KeyIndex), on every length around its
// 16-byte stripes.
func TestXXH32(t *testing.T) {
	for _, v := range []struct {
		in   string
		want uint32
	}{{"", 0x02cc5d05}, {"a", 0x550d7456}, {"abc", 0x32d153ff}} {
		if got := xxh32([]byte(v.in)); got != v.want {
			t.Errorf("xxh32(%q) = %#x, want %#x", v.in, got, v.want)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.SliceOfN(rapid.Byte(), 0, 70).Draw(t, "key")
		n := rapid.IntRange(1, 9).Draw(t, "partitions")
		if got, want := int(xxh32(key)%uint32(n)), partplane.KeyIndex(key, n); got != want {
			t.Fatalf("key %x over %d: index %d, the replica's %d", key, n, got, want)
		}
	})
}

// DecodePoll agrees with the replica's poll decoder on bent bodies.
func TestDifferentialPolls(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		q := partplane.Poll{ConsumerKind: rapid.SampledFrom([]uint8{1, 1, 2, 0, 3}).Draw(t, "kind"),
			Consumer: genPartitionIdentifier(t, "consumer"), Stream: genPartitionIdentifier(t, "stream"),
			Topic: genPartitionIdentifier(t, "topic"), HasPartition: rapid.Bool().Draw(t, "has"),
			Partition: rapid.Uint32Range(0, 3).Draw(t, "partition"), Strategy: rapid.SampledFrom([]uint8{1, 2, 3, 4, 5, 0, 6}).Draw(t, "strategy"),
			Count: rapid.Uint32Range(0, 20).Draw(t, "count")}
		body := bend(t, partplane.EncodePoll(q))
		got, err := DecodePoll(body)
		want, werr := partplane.DecodePoll(body)
		if (err == nil) != (werr == nil) {
			t.Fatalf("body %x: model %v, replica %v", body, err, werr)
		}
		if err == nil && (got.partition != want.Partition || got.consumerKind != want.ConsumerKind ||
			got.stream != identifierOf(want.Stream) || got.topic != identifierOf(want.Topic)) {
			t.Fatalf("body %x: model %+v, replica %+v", body, got, want)
		}
	})
}
