package refmodel

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Status codes of the refusals before consensus (client-ops.md 2.7).
const (
	StatusInvalidCommand     uint32 = 3    // an undecodable body
	StatusFeatureUnavailable uint32 = 5    // an operation outside this slice
	StatusTooManyPartitions  uint32 = 2015 // more than 1000 partitions in one request
)

// RefusalKind is how the primary answers a request it does not replicate
// (client-ops.md 2.1).
type RefusalKind uint8

// Refusal kinds. The zero value accepts.
const (
	// Accepted: the request is replicated.
	Accepted RefusalKind = iota
	// Deny: shape C, a Reply with the status and an empty body.
	Deny
	// Evict: shape D, an Eviction with the reason.
	Evict
	// Drop: shape E, no answer.
	Drop
)

// String names the kind.
func (k RefusalKind) String() string {
	switch k {
	case Accepted:
		return "accepted"
	case Deny:
		return "deny"
	case Evict:
		return "evict"
	case Drop:
		return "drop"
	}
	return fmt.Sprintf("RefusalKind(%d)", uint8(k))
}

// Refusal is the primary's decision on a client request before consensus.
type Refusal struct {
	Kind   RefusalKind
	Status uint32              // Deny
	Reason wire.EvictionReason // Evict
	Err    error               // why (for messages), nil when Accepted
}

// String describes the refusal for messages.
func (r Refusal) String() string {
	switch r.Kind {
	case Deny:
		return fmt.Sprintf("deny %d (%v)", r.Status, r.Err)
	case Evict:
		return fmt.Sprintf("evict %v (%v)", r.Reason, r.Err)
	case Drop:
		return fmt.Sprintf("drop (%v)", r.Err)
	}
	return r.Kind.String()
}

// supported reports whether op is a client operation this slice dispatches.
func supported(op wire.Operation) bool {
	switch op {
	case wire.OperationRegister, wire.OperationLogout,
		wire.OperationCreateStream, wire.OperationUpdateStream, wire.OperationDeleteStream,
		wire.OperationCreateTopic, wire.OperationDeleteTopic,
		wire.OperationCreatePartitions, wire.OperationDeletePartitions:
		return true
	}
	return false
}

// Admit decides, as a correct primary does before consensus, whether a
// client request of operation op with this body is replicated, after the
// client table found it new (replica/metadata doc.go, "The path of a
// request"). In this order:
//   - an operation byte that is Reserved or undefined: Drop;
//   - an internal operation 64-68: Evict InvalidRequestOperation (68
//     included: client-ops.md 10 item 11);
//   - a valid operation outside this slice: Deny FeatureUnavailable;
//   - a body longer than the longest request of the slice, or one that does
//     not decode (Register and Logout bodies must be empty): Deny
//     InvalidCommand (10 item 1);
//   - a CreateTopic or CreatePartitions of more than 1000 partitions: Deny
//     TooManyPartitions (the shell answer of 5.7 and 5.11);
//   - a CreateTopic whose options the catalog refuses (1.8: an unknown key,
//     a bad value; 5.7: an explicit segment_size outside [1 MiB, 1 GiB] or
//     not a multiple of 512, or a max_topic_size below the segment size):
//     Evict InvalidRequestBody (the projection's failure, 2.4 step 6.4);
//   - otherwise Accepted.
func Admit(op wire.Operation, body []byte) Refusal {
	r, _ := admit(op, body)
	return r
}

// admit is Admit, also returning the decoded request.
func admit(op wire.Operation, body []byte) (Refusal, any) {
	switch {
	case op == wire.OperationReserved || !op.Valid():
		return Refusal{Kind: Drop, Err: fmt.Errorf("operation %d", op)}, nil
	case op >= wire.OperationCreateTopicWithAssignments && op <= wire.OperationTruncatePartition:
		return Refusal{Kind: Evict, Reason: wire.EvictionInvalidRequestOperation,
			Err: fmt.Errorf("internal operation %v", op)}, nil
	case !supported(op):
		return Refusal{Kind: Deny, Status: StatusFeatureUnavailable, Err: fmt.Errorf("%v is not in this slice", op)}, nil
	case len(body) > requestBodyMax:
		return Refusal{Kind: Deny, Status: StatusInvalidCommand, Err: fmt.Errorf("%w: %d bytes", errBody, len(body))}, nil
	}
	x, err := decodeRequest(op, body)
	if err != nil {
		return Refusal{Kind: Deny, Status: StatusInvalidCommand, Err: err}, nil
	}
	switch x := x.(type) {
	case createTopicBody:
		if x.count > partitionsMax {
			return Refusal{Kind: Deny, Status: StatusTooManyPartitions, Err: fmt.Errorf("%d partitions", x.count)}, nil
		}
		if _, err := topicOptions(x.options); err != nil {
			return Refusal{Kind: Evict, Reason: wire.EvictionInvalidRequestBody, Err: err}, nil
		}
	case partitionsBody:
		if op == wire.OperationCreatePartitions && x.count > partitionsMax {
			return Refusal{Kind: Deny, Status: StatusTooManyPartitions, Err: fmt.Errorf("%d partitions", x.count)}, nil
		}
	}
	return Refusal{}, x
}

// decodeRequest decodes the client body of a supported operation.
func decodeRequest(op wire.Operation, body []byte) (any, error) {
	switch op {
	case wire.OperationRegister, wire.OperationLogout:
		if len(body) != 0 {
			return nil, fmt.Errorf("%w: %v with a %d-byte body", errBody, op, len(body))
		}
		return nil, nil
	case wire.OperationCreateStream:
		return decodeCreateStream(body)
	case wire.OperationUpdateStream:
		return decodeUpdateStream(body)
	case wire.OperationDeleteStream:
		return decodeStream(body)
	case wire.OperationCreateTopic:
		return decodeCreateTopic(body)
	case wire.OperationDeleteTopic:
		return decodeTopic(body)
	case wire.OperationCreatePartitions:
		return decodePartitions("CreatePartitions", body)
	case wire.OperationDeletePartitions:
		return decodePartitions("DeletePartitions", body)
	}
	return nil, fmt.Errorf("refmodel: %v has no request body here", op)
}

// topicOptions reads a CreateTopic's client block as the primary's
// projection does and returns the explicit keys (sentinels dropped); the
// bounds of 5.7 hold.
func topicOptions(block []byte) (catalog, error) {
	explicit, err := parseCatalog(block)
	if err != nil {
		return catalog{}, err
	}
	if explicit.segmentSize.set {
		v := explicit.segmentSize.v
		if v < segmentSizeMin || v > segmentSizeMax || v%segmentSizeAlign != 0 {
			return catalog{}, fmt.Errorf("%w: segment_size %d", errBadValue, v)
		}
	}
	segment := explicit.segmentSize.or(defaultSegmentSize)
	if limit := explicit.maxTopicSize.or(defaultMaxTopicSize); limit < segment {
		return catalog{}, fmt.Errorf("%w: max_topic_size %d below the segment size %d", errBadValue, limit, segment)
	}
	return explicit, nil
}

// Project returns the replicated operation and body a correct primary
// builds from a client's request, taking consensus group ids nextGroup,
// nextGroup+1, ... (section 3). CreateTopic (132) becomes
// CreateTopicWithAssignments (64): the request with its explicit options
// re-encoded canonically (typed kinds, key order, sentinels dropped), a
// derived block holding every catalog key the client did not send at its
// default, and the partitions 0..n-1 (5.7). CreatePartitions (136) becomes
// CreatePartitionsWithAssignments (65): the request, then the offsets
// 0..n-1 (5.11); trailing bytes the decoder ignores are not carried over.
// Every other operation is replicated verbatim: replicated is then body
// itself, not a copy. ok is false when the primary must refuse the request
// before consensus (Admit).
func Project(op wire.Operation, body []byte, nextGroup uint64) (replicatedOp wire.Operation, replicated []byte, ok bool) {
	r, x := admit(op, body)
	if r.Kind != Accepted {
		return 0, nil, false
	}
	assign := func(n uint32) []assignment {
		parts := make([]assignment, n)
		for i := range parts {
			parts[i] = assignment{id: uint32(i), group: nextGroup + uint64(i)}
		}
		return parts
	}
	switch x := x.(type) {
	case createTopicBody:
		explicit, _ := topicOptions(x.options) // Admit checked it
		x.options = encodeBlock(explicit.canonical())
		derived := explicit.unset(explicit.withDefaults())
		return wire.OperationCreateTopicWithAssignments, createTopicReplicated{
			request: x,
			derived: encodeBlock(derived.canonical()),
			parts:   assign(x.count),
		}.encode(), true
	case partitionsBody:
		if op == wire.OperationCreatePartitions {
			return wire.OperationCreatePartitionsWithAssignments, createPartitionsReplicated{
				request: x, parts: assign(x.count),
			}.encode(), true
		}
	}
	return op, body, true
}

// SameRequest reports whether a committed prepare's operation and body are
// what a correct primary builds from the client's request (op, body),
// ignoring the consensus group ids it chose. Everything else must be equal
// byte for byte: the operation, the re-encoded request, the derived
// options, and the number and partition ids (or offsets) of the
// assignments.
func SameRequest(op wire.Operation, body []byte, committedOp wire.Operation, committed []byte) bool {
	wantOp, want, ok := Project(op, body, 0)
	if !ok || committedOp != wantOp {
		return false
	}
	switch committedOp {
	case wire.OperationCreateTopicWithAssignments, wire.OperationCreatePartitionsWithAssignments:
		got, ok := withoutGroups(committedOp, committed)
		return ok && bytes.Equal(got, want) // Project(…, 0) numbers them 0, 1, …
	}
	return bytes.Equal(committed, want)
}

// withoutGroups returns a replicated 64 or 65 body with the consensus group
// ids renumbered 0, 1, …, as Project(…, 0) builds them; false if it does not
// decode.
func withoutGroups(op wire.Operation, body []byte) ([]byte, bool) {
	var parts []assignment
	switch op {
	case wire.OperationCreateTopicWithAssignments:
		x, err := decodeCreateTopicReplicated(body)
		if err != nil {
			return nil, false
		}
		parts = x.parts
	case wire.OperationCreatePartitionsWithAssignments:
		x, err := decodeCreatePartitionsReplicated(body)
		if err != nil {
			return nil, false
		}
		parts = x.parts
	default:
		return nil, false
	}
	// The assignments are the body's tail: n x 12 bytes.
	out := bytes.Clone(body)
	tail := out[len(out)-len(parts)*assignmentSize:]
	for i := range parts {
		binary.LittleEndian.PutUint64(tail[i*assignmentSize+4:], uint64(i))
	}
	return out, true
}
