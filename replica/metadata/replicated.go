package metadata

import (
	"encoding/binary"
	"fmt"
)

// PartitionAssignment is one partition of a replicated CreateTopic or
// CreatePartitions body: for CreateTopic the partition id itself, for
// CreatePartitions an offset relative to the topic's next id; and the
// partition's consensus group id, minted by the primary (client-ops.md 3).
type PartitionAssignment struct {
	PartitionID      uint32
	ConsensusGroupID uint64
}

const assignmentLen = 12

// AssignmentsMax bounds the assignments of one replicated body: the most
// partitions one request may create (client-ops.md 5.7, 5.11).
const AssignmentsMax = PartitionsPerRequestMax

// CreateTopicWithAssignments is the replicated body of CreateTopic, operation
// 64 (client-ops.md 5.7):
//
//	[req_len u32][CreateTopic body][derived_len u32][derived options][n u32][n x {partition_id u32, consensus_group_id u64}]
//
// Request.Options holds the explicit options re-encoded canonically; Derived
// holds every catalog key the client did not send, with its default.
type CreateTopicWithAssignments struct {
	Request    CreateTopic
	Derived    []byte
	Partitions []PartitionAssignment
}

// CreatePartitionsWithAssignments is the replicated body of CreatePartitions,
// operation 65 (client-ops.md 5.11):
//
//	[req_len u32][CreatePartitions body][n u32][n x {offset u32, consensus_group_id u64}]
type CreatePartitionsWithAssignments struct {
	Request    CreatePartitions
	Partitions []PartitionAssignment
}

// Encode returns the replicated body.
func (x CreateTopicWithAssignments) Encode() []byte {
	req := x.Request.Encode()
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(req)))
	b = append(b, req...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(x.Derived)))
	b = appendOptions(b, x.Derived)
	return appendAssignments(b, x.Partitions)
}

// Encode returns the replicated body.
func (x CreatePartitionsWithAssignments) Encode() []byte {
	req := x.Request.Encode()
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(req)))
	b = append(b, req...)
	return appendAssignments(b, x.Partitions)
}

func appendAssignments(b []byte, ps []PartitionAssignment) []byte {
	if len(ps) > AssignmentsMax {
		panic(fmt.Sprintf("metadata: %d partition assignments, max %d", len(ps), AssignmentsMax))
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ps)))
	for _, p := range ps {
		b = binary.LittleEndian.AppendUint32(b, p.PartitionID)
		b = binary.LittleEndian.AppendUint64(b, p.ConsensusGroupID)
	}
	return b
}

// sub reads a [len u32][bytes] section.
func (r *reader) sub() []byte {
	at := r.at
	n := r.u32()
	if r.err != nil {
		return nil
	}
	if uint64(n) > uint64(len(r.b)-r.at) {
		r.fail(ErrLength, at, "section of %d bytes, %d left", n, len(r.b)-r.at)
		return nil
	}
	return r.take(int(n))
}

func (r *reader) assignments() []PartitionAssignment {
	at := r.at
	n := r.u32()
	if r.err != nil {
		return nil
	}
	if n > AssignmentsMax {
		r.fail(ErrTooLong, at, "%d partition assignments, max %d", n, AssignmentsMax)
		return nil
	}
	if uint64(n)*assignmentLen > uint64(len(r.b)-r.at) {
		r.fail(ErrShort, at, "%d partition assignments need %d bytes, have %d", n, n*assignmentLen, len(r.b)-r.at)
		return nil
	}
	ps := make([]PartitionAssignment, n)
	for i := range ps {
		ps[i] = PartitionAssignment{PartitionID: r.u32(), ConsensusGroupID: r.u64()}
	}
	return ps
}

// nested decodes a sub-section with its own decoder, rebasing its error
// offset onto the outer body.
func (r *reader) nested(section []byte, at int, decode func([]byte) error) {
	if r.err != nil {
		return
	}
	if err := decode(section); err != nil {
		if de, ok := err.(*DecodeError); ok {
			r.fail(de.Rule, at+de.Offset, "%s request: %s", de.Body, de.Detail)
			return
		}
		r.fail(ErrLength, at, "%v", err)
	}
}

// DecodeCreateTopicWithAssignments decodes a replicated CreateTopic body.
// Unlike client bodies it must be consumed exactly: the primary writes it,
// so extra bytes mean a different writer.
func DecodeCreateTopicWithAssignments(b []byte) (CreateTopicWithAssignments, error) {
	r := reader{body: "CreateTopicWithAssignments", b: b}
	var x CreateTopicWithAssignments
	at := r.at + 4
	req := r.sub()
	r.nested(req, at, func(s []byte) (err error) {
		x.Request, err = DecodeCreateTopic(s)
		return err
	})
	if r.err == nil && len(x.Request.Encode()) != len(req) {
		r.fail(ErrTrailing, at, "the request section has bytes after its options")
	}
	at = r.at + 4
	derived := r.sub()
	if r.err == nil {
		dr := reader{body: "CreateTopicWithAssignments derived", b: derived}
		x.Derived = dr.options()
		if dr.err != nil {
			r.fail(ErrOptions, at, "%v", dr.err)
		}
	}
	x.Partitions = r.assignments()
	r.end()
	if r.err != nil {
		return CreateTopicWithAssignments{}, r.err
	}
	return x, nil
}

// DecodeCreatePartitionsWithAssignments decodes a replicated CreatePartitions
// body, which must be consumed exactly, its request section included.
func DecodeCreatePartitionsWithAssignments(b []byte) (CreatePartitionsWithAssignments, error) {
	r := reader{body: "CreatePartitionsWithAssignments", b: b}
	var x CreatePartitionsWithAssignments
	at := r.at + 4
	req := r.sub()
	r.nested(req, at, func(s []byte) (err error) {
		x.Request, err = DecodeCreatePartitions(s)
		return err
	})
	if r.err == nil && len(x.Request.Encode()) != len(req) {
		r.fail(ErrTrailing, at, "the request section has bytes after its fields")
	}
	x.Partitions = r.assignments()
	r.end()
	if r.err != nil {
		return CreatePartitionsWithAssignments{}, r.err
	}
	return x, nil
}

// end requires the body to be consumed.
func (r *reader) end() {
	if r.err == nil && r.at != len(r.b) {
		r.fail(ErrTrailing, r.at, "%d bytes after the last field", len(r.b)-r.at)
	}
}
