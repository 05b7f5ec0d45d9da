package partition

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/metadata"
)

// ErrOffsetRequest: a StoreConsumerOffset or DeleteConsumerOffset body that
// does not decode (client-ops.md 5.26, 5.27: ResourceNotFound).
var ErrOffsetRequest = errors.New("invalid consumer offset request")

// Ack levels (client-ops.md 1.7).
const (
	AckNone   uint8 = 0 // applied primary-locally and answered at once
	AckQuorum uint8 = 1 // replicated, applied at commit
)

// OffsetRequest is a decoded StoreConsumerOffset (161, with Offset) or
// DeleteConsumerOffset (162) body.
type OffsetRequest struct {
	ConsumerKind  uint8
	Consumer      metadata.Identifier
	Stream, Topic metadata.Identifier
	HasPartition  bool
	Partition     uint32
	Offset        uint64 // StoreConsumerOffset only
	Ack           uint8
}

// EncodeOffsetRequest builds a 161 body (store) or a 162 body.
func EncodeOffsetRequest(r OffsetRequest, store bool) []byte {
	b := append([]byte(nil), r.ConsumerKind)
	b = metadata.AppendIdentifier(b, r.Consumer)
	b = metadata.AppendIdentifier(b, r.Stream)
	b = metadata.AppendIdentifier(b, r.Topic)
	flag := byte(0)
	if r.HasPartition {
		flag = 1
	}
	b = binary.LittleEndian.AppendUint32(append(b, flag), r.Partition)
	if store {
		b = binary.LittleEndian.AppendUint64(b, r.Offset)
	}
	return append(b, r.Ack)
}

// DecodeOffsetRequest decodes a 161 body (store) or a 162 body.
func DecodeOffsetRequest(body []byte, store bool) (OffsetRequest, error) {
	var r OffsetRequest
	if len(body) < 1 {
		return r, fmt.Errorf("partition: %w: empty", ErrOffsetRequest)
	}
	r.ConsumerKind = body[0]
	if r.ConsumerKind != ConsumerSingle && r.ConsumerKind != ConsumerGroup {
		return r, fmt.Errorf("partition: %w: consumer kind %d", ErrOffsetRequest, r.ConsumerKind)
	}
	at := 1
	for _, id := range []*metadata.Identifier{&r.Consumer, &r.Stream, &r.Topic} {
		v, n, err := metadata.ReadIdentifier(body[at:], "consumer offset")
		if err != nil {
			return r, fmt.Errorf("partition: %w: %w", ErrOffsetRequest, err)
		}
		*id, at = v, at+n
	}
	want := 5 + 1
	if store {
		want += 8
	}
	if len(body)-at != want {
		return r, fmt.Errorf("partition: %w: %d bytes after the topic, want %d", ErrOffsetRequest, len(body)-at, want)
	}
	r.HasPartition = body[at] == 1
	r.Partition = binary.LittleEndian.Uint32(body[at+1:])
	at += 5
	if store {
		r.Offset = binary.LittleEndian.Uint64(body[at:])
		at += 8
	}
	r.Ack = body[at]
	if r.Ack != AckNone && r.Ack != AckQuorum {
		return r, fmt.Errorf("partition: %w: ack level %d", ErrOffsetRequest, r.Ack)
	}
	return r, nil
}

// ConsumerKey is the key stored offsets go under (client-ops.md 1.3): a
// numeric id as it is, a name by its XXH32.
func ConsumerKey(id metadata.Identifier) uint32 {
	if id.Kind == metadata.IdentifierNumeric {
		return id.Numeric
	}
	return xxh32([]byte(id.Name))
}

// StoredOffset returns a consumer's stored offset.
func (p *Plane) StoredOffset(consumer uint32) (uint64, bool) {
	v, ok := p.offsets[consumer]
	return v, ok
}

// StoreOffset stores a consumer's offset (a committed 161, or a NoAck one at
// the primary).
func (p *Plane) StoreOffset(consumer uint32, offset uint64) { p.offsets[consumer] = offset }

// DeleteOffset forgets a consumer's offset; false when there was none.
func (p *Plane) DeleteOffset(consumer uint32) bool {
	_, ok := p.offsets[consumer]
	delete(p.offsets, consumer)
	return ok
}
