package metadata

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// The request bodies of the supported operations (client-ops.md 5.3-5.12).
// Options blocks are kept as the bytes sent (validated by wire.DecodeOptions
// when decoded). Fixed-layout bodies ignore trailing bytes, as Iggy's
// decode_from does (client-ops.md 1.10); a body that ends with an options
// block gives every remaining byte to the block.

// CreateStream is the body of CreateStream (128): name, options block.
type CreateStream struct {
	Name    string
	Options []byte
}

// UpdateStream is the body of UpdateStream (129): stream, new name, options
// block (a patch).
type UpdateStream struct {
	Stream  Identifier
	Name    string
	Options []byte
}

// DeleteStream is the body of DeleteStream (130).
type DeleteStream struct {
	Stream Identifier
}

// CreateTopic is the body of CreateTopic (132): stream, partitions_count,
// name, options block.
type CreateTopic struct {
	Stream          Identifier
	PartitionsCount uint32
	Name            string
	Options         []byte
}

// DeleteTopic is the body of DeleteTopic (134).
type DeleteTopic struct {
	Stream Identifier
	Topic  Identifier
}

// CreatePartitions is the body of CreatePartitions (136).
type CreatePartitions struct {
	Stream          Identifier
	Topic           Identifier
	PartitionsCount uint32
}

// DeletePartitions is the body of DeletePartitions (137).
type DeletePartitions struct {
	Stream          Identifier
	Topic           Identifier
	PartitionsCount uint32
}

// DecodeCreateStream decodes a CreateStream body.
func DecodeCreateStream(b []byte) (CreateStream, error) {
	r := reader{body: "CreateStream", b: b}
	x := CreateStream{Name: r.name(), Options: r.options()}
	if r.err != nil {
		return CreateStream{}, r.err
	}
	return x, nil
}

// Encode returns the body.
func (x CreateStream) Encode() []byte {
	return appendOptions(appendName(nil, x.Name), x.Options)
}

// DecodeUpdateStream decodes an UpdateStream body.
func DecodeUpdateStream(b []byte) (UpdateStream, error) {
	r := reader{body: "UpdateStream", b: b}
	x := UpdateStream{Stream: r.identifier(), Name: r.name(), Options: r.options()}
	if r.err != nil {
		return UpdateStream{}, r.err
	}
	return x, nil
}

// Encode returns the body.
func (x UpdateStream) Encode() []byte {
	return appendOptions(appendName(appendIdentifier(nil, x.Stream), x.Name), x.Options)
}

// DecodeDeleteStream decodes a DeleteStream body.
func DecodeDeleteStream(b []byte) (DeleteStream, error) {
	r := reader{body: "DeleteStream", b: b}
	x := DeleteStream{Stream: r.identifier()}
	if r.err != nil {
		return DeleteStream{}, r.err
	}
	return x, nil
}

// Encode returns the body.
func (x DeleteStream) Encode() []byte { return appendIdentifier(nil, x.Stream) }

// DecodeCreateTopic decodes a CreateTopic body.
func DecodeCreateTopic(b []byte) (CreateTopic, error) {
	r := reader{body: "CreateTopic", b: b}
	x := CreateTopic{Stream: r.identifier(), PartitionsCount: r.u32(), Name: r.name(), Options: r.options()}
	if r.err != nil {
		return CreateTopic{}, r.err
	}
	return x, nil
}

// Encode returns the body.
func (x CreateTopic) Encode() []byte {
	b := appendIdentifier(nil, x.Stream)
	b = binary.LittleEndian.AppendUint32(b, x.PartitionsCount)
	return appendOptions(appendName(b, x.Name), x.Options)
}

// DecodeDeleteTopic decodes a DeleteTopic body.
func DecodeDeleteTopic(b []byte) (DeleteTopic, error) {
	r := reader{body: "DeleteTopic", b: b}
	x := DeleteTopic{Stream: r.identifier(), Topic: r.identifier()}
	if r.err != nil {
		return DeleteTopic{}, r.err
	}
	return x, nil
}

// Encode returns the body.
func (x DeleteTopic) Encode() []byte {
	return appendIdentifier(appendIdentifier(nil, x.Stream), x.Topic)
}

// DecodeCreatePartitions decodes a CreatePartitions body.
func DecodeCreatePartitions(b []byte) (CreatePartitions, error) {
	r := reader{body: "CreatePartitions", b: b}
	x := CreatePartitions{Stream: r.identifier(), Topic: r.identifier(), PartitionsCount: r.u32()}
	if r.err != nil {
		return CreatePartitions{}, r.err
	}
	return x, nil
}

// Encode returns the body.
func (x CreatePartitions) Encode() []byte {
	b := appendIdentifier(appendIdentifier(nil, x.Stream), x.Topic)
	return binary.LittleEndian.AppendUint32(b, x.PartitionsCount)
}

// DecodeDeletePartitions decodes a DeletePartitions body.
func DecodeDeletePartitions(b []byte) (DeletePartitions, error) {
	r := reader{body: "DeletePartitions", b: b}
	x := DeletePartitions{Stream: r.identifier(), Topic: r.identifier(), PartitionsCount: r.u32()}
	if r.err != nil {
		return DeletePartitions{}, r.err
	}
	return x, nil
}

// Encode returns the body.
func (x DeletePartitions) Encode() []byte {
	b := appendIdentifier(appendIdentifier(nil, x.Stream), x.Topic)
	return binary.LittleEndian.AppendUint32(b, x.PartitionsCount)
}

// DecodeRequest decodes the request body of a supported operation other
// than Register and Logout (whose bodies are empty) into its typed value:
// CreateStream, UpdateStream, DeleteStream, CreateTopic, DeleteTopic,
// CreatePartitions or DeletePartitions. It also decodes the replicated
// bodies of 64 (CreateTopicWithAssignments) and 65
// (CreatePartitionsWithAssignments).
func DecodeRequest(op wire.Operation, body []byte) (any, error) {
	switch op {
	case wire.OperationCreateStream:
		return DecodeCreateStream(body)
	case wire.OperationUpdateStream:
		return DecodeUpdateStream(body)
	case wire.OperationDeleteStream:
		return DecodeDeleteStream(body)
	case wire.OperationCreateTopic:
		return DecodeCreateTopic(body)
	case wire.OperationDeleteTopic:
		return DecodeDeleteTopic(body)
	case wire.OperationCreatePartitions:
		return DecodeCreatePartitions(body)
	case wire.OperationDeletePartitions:
		return DecodeDeletePartitions(body)
	case wire.OperationCreateTopicWithAssignments:
		return DecodeCreateTopicWithAssignments(body)
	case wire.OperationCreatePartitionsWithAssignments:
		return DecodeCreatePartitionsWithAssignments(body)
	}
	return nil, fmt.Errorf("metadata: no body decoder for operation %v", op)
}
