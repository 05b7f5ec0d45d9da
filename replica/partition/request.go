package partition

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Rules a SendMessages request body can break (client-ops.md 5.25; each is
// silence on the partition primary: the request is dropped without a reply,
// client-ops.md 10.4).
var (
	ErrShort          = errors.New("body too short")
	ErrMetadataLength = errors.New("metadata_length does not match the routing prefix")
	ErrPartitioning   = errors.New("invalid partitioning")
	ErrMessagesCount  = errors.New("messages_count does not match the batch")
	ErrBatch          = errors.New("invalid batch")
)

// PartitioningKind is the kind byte of a Partitioning (client-ops.md 1.5).
type PartitioningKind uint8

// The partitioning kinds.
const (
	Balanced    PartitioningKind = 1
	PartitionID PartitioningKind = 2
	MessagesKey PartitioningKind = 3
)

// Partitioning says which partition of a topic a send goes to.
type Partitioning struct {
	Kind      PartitioningKind
	Partition uint32 // PartitionID
	Key       []byte // MessagesKey: 1..255 bytes
}

// SendMessages is a decoded SendMessages (160) request body.
type SendMessages struct {
	Stream, Topic metadata.Identifier
	Partitioning  Partitioning
	// Batch is the producer's batch (wire.md 7) as sent, verified; it
	// aliases the request body.
	Batch []byte
}

// EncodeSendMessages builds a request body: the routing prefix, then batch.
func EncodeSendMessages(s SendMessages) []byte {
	h, err := wire.ReadBatchHeader(s.Batch)
	if err != nil {
		panic(fmt.Sprintf("partition: encoding a send of a bad batch: %v", err))
	}
	prefix := metadata.AppendIdentifier(nil, s.Stream)
	prefix = metadata.AppendIdentifier(prefix, s.Topic)
	prefix = appendPartitioning(prefix, s.Partitioning)
	prefix = binary.LittleEndian.AppendUint32(prefix, h.MessageCount)
	b := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(prefix)+len(s.Batch)), uint32(len(prefix)))
	return append(append(b, prefix...), s.Batch...)
}

func appendPartitioning(b []byte, p Partitioning) []byte {
	switch p.Kind {
	case Balanced:
		return append(b, byte(Balanced), 0)
	case PartitionID:
		return binary.LittleEndian.AppendUint32(append(b, byte(PartitionID), 4), p.Partition)
	case MessagesKey:
		if len(p.Key) < 1 || len(p.Key) > 255 {
			panic(fmt.Sprintf("partition: a messages key of %d bytes", len(p.Key)))
		}
		return append(append(b, byte(MessagesKey), byte(len(p.Key))), p.Key...)
	}
	panic(fmt.Sprintf("partition: partitioning of kind %d", p.Kind))
}

// DecodeSendMessages decodes and verifies a SendMessages request body, in
// the order the primary's admission checks it: the routing prefix, then the
// producer's batch exactly as sent (every rule of wire.md 7: lengths,
// reserved bytes, every message checksum and the batch checksum), then that
// messages_count is the batch's and not zero.
func DecodeSendMessages(body []byte) (SendMessages, error) {
	var s SendMessages
	if len(body) < 4 {
		return s, fmt.Errorf("partition: SendMessages: %w: %d bytes", ErrShort, len(body))
	}
	metaLen := int(binary.LittleEndian.Uint32(body))
	if metaLen > len(body)-4 {
		return s, fmt.Errorf("partition: SendMessages: %w: %d bytes claimed, %d left", ErrMetadataLength, metaLen, len(body)-4)
	}
	prefix := body[4 : 4+metaLen]
	at := 0
	var err error
	var n int
	if s.Stream, n, err = metadata.ReadIdentifier(prefix, "SendMessages stream_id"); err != nil {
		return s, fmt.Errorf("partition: %w", err)
	}
	at += n
	if s.Topic, n, err = metadata.ReadIdentifier(prefix[at:], "SendMessages topic_id"); err != nil {
		return s, fmt.Errorf("partition: %w", err)
	}
	at += n
	if s.Partitioning, n, err = readPartitioning(prefix[at:]); err != nil {
		return s, err
	}
	at += n
	if len(prefix)-at != 4 {
		return s, fmt.Errorf("partition: SendMessages: %w: %d bytes after the partitioning, want 4 (messages_count)",
			ErrMetadataLength, len(prefix)-at)
	}
	count := binary.LittleEndian.Uint32(prefix[at:])
	s.Batch = body[4+metaLen:]
	if err := wire.VerifyBatch(s.Batch); err != nil {
		return s, fmt.Errorf("partition: SendMessages: %w: %w", ErrBatch, err)
	}
	h, _ := wire.ReadBatchHeader(s.Batch)
	if count == 0 || count != h.MessageCount {
		return s, fmt.Errorf("partition: SendMessages: %w: messages_count %d, batch holds %d", ErrMessagesCount, count, h.MessageCount)
	}
	return s, nil
}

func readPartitioning(b []byte) (Partitioning, int, error) {
	if len(b) < 2 {
		return Partitioning{}, 0, fmt.Errorf("partition: SendMessages: %w: %d bytes", ErrPartitioning, len(b))
	}
	kind, n := PartitioningKind(b[0]), int(b[1])
	if len(b)-2 < n {
		return Partitioning{}, 0, fmt.Errorf("partition: SendMessages: %w: value of %d bytes, %d left", ErrPartitioning, n, len(b)-2)
	}
	v := b[2 : 2+n]
	switch {
	case kind == Balanced && n == 0:
		return Partitioning{Kind: kind}, 2, nil
	case kind == PartitionID && n == 4:
		return Partitioning{Kind: kind, Partition: binary.LittleEndian.Uint32(v)}, 6, nil
	case kind == MessagesKey && n >= 1:
		return Partitioning{Kind: kind, Key: append([]byte(nil), v...)}, 2 + n, nil
	}
	return Partitioning{}, 0, fmt.Errorf("partition: SendMessages: %w: kind %d with a value of %d bytes", ErrPartitioning, kind, n)
}
