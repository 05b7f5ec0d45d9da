package metadata

import (
	"fmt"
	"math"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Bounds of client request bodies.
const (
	// PartitionsPerRequestMax is the most partitions one CreateTopic or
	// CreatePartitions may create (client-ops.md 5.7, 5.11).
	PartitionsPerRequestMax = 1000
	// RequestBodyMax is the longest request body of the supported set: a
	// CreateTopic with a 255-byte string stream id and name and a full
	// options block (2+255 + 4 + 1+255 + 100 000). Fixed-layout bodies may
	// carry ignored trailing bytes up to this length.
	RequestBodyMax = 2 + NameMax + 4 + 1 + NameMax + wire.OptionBlockMax
)

// RefusalKind is how a request that is not dispatched is answered
// (client-ops.md 2.1).
type RefusalKind uint8

// Refusal kinds. The zero value accepts.
const (
	// Accepted: go on (dispatch, or replicate the projection).
	Accepted RefusalKind = iota
	// Deny is shape C: a Reply with status = Refusal.Status and an empty body.
	Deny
	// Evict is shape D: an Eviction with Refusal.Reason.
	Evict
	// Drop is shape E: no answer.
	Drop
)

var refusalNames = [...]string{"Accepted", "Deny", "Evict", "Drop"}

func (k RefusalKind) String() string {
	if int(k) < len(refusalNames) {
		return refusalNames[k]
	}
	return fmt.Sprintf("RefusalKind(%d)", uint8(k))
}

// Refusal is the answer of Preflight and Project.
type Refusal struct {
	Kind   RefusalKind
	Status uint32              // Deny: the status code
	Reason wire.EvictionReason // Evict: the reason
	Err    error               // why, for traces (a *DecodeError for an undecodable body)
}

// Refused reports whether the request must not go on.
func (r Refusal) Refused() bool { return r.Kind != Accepted }

func (r Refusal) String() string {
	switch r.Kind {
	case Deny:
		return fmt.Sprintf("deny status %d (%v)", r.Status, r.Err)
	case Evict:
		return fmt.Sprintf("evict %v (%v)", r.Reason, r.Err)
	case Drop:
		return fmt.Sprintf("drop (%v)", r.Err)
	}
	return "accepted"
}

func deny(code uint32, err error) Refusal { return Refusal{Kind: Deny, Status: code, Err: err} }
func evict(reason wire.EvictionReason, err error) Refusal {
	return Refusal{Kind: Evict, Reason: reason, Err: err}
}

// Supported reports whether op is a client operation of this slice: Register,
// Logout, CreateStream, UpdateStream, DeleteStream, CreateTopic, DeleteTopic,
// CreatePartitions, DeletePartitions.
func Supported(op wire.Operation) bool {
	switch op {
	case wire.OperationRegister, wire.OperationLogout,
		wire.OperationCreateStream, wire.OperationUpdateStream, wire.OperationDeleteStream,
		wire.OperationCreateTopic, wire.OperationDeleteTopic,
		wire.OperationCreatePartitions, wire.OperationDeletePartitions:
		return true
	}
	return false
}

// Preflight decides, before consensus, whether a client request of
// operation op with this body may be dispatched. Call it after the client
// table's CheckRequest answered New: the table's replays and evictions come
// first, as in Iggy.
//
// Answers, in this order:
//   - an undefined operation byte (wire.Validate already drops those): Drop;
//   - an internal operation 64-68: Evict InvalidRequestOperation (4). Iggy
//     admits 68 (TruncatePartition) from clients; vopr refuses it too
//     (client-ops.md 10 item 11);
//   - an operation outside this slice (NonReplicated, the partition plane,
//     and every metadata operation not listed by Supported): Deny
//     FeatureUnavailable (5);
//   - a body longer than RequestBodyMax, or one that does not decode:
//     Deny InvalidCommand (3). Register and Logout carry an empty body on the
//     raw path, so any byte is undecodable there. (Iggy's raw path decodes
//     nothing before consensus and panics at apply on most of these;
//     client-ops.md 10 item 1 recommends this deny.)
//   - a CreateTopic or CreatePartitions asking for more than
//     PartitionsPerRequestMax partitions: Deny TooManyPartitions (2015), the
//     shell path's pre-consensus answer, so that the projection stays
//     bounded;
//   - otherwise Accepted.
func Preflight(op wire.Operation, body []byte) Refusal {
	if !op.Valid() || op == wire.OperationReserved {
		return Refusal{Kind: Drop, Err: fmt.Errorf("metadata: undefined operation %d", uint8(op))}
	}
	if op >= wire.OperationCreateTopicWithAssignments && op <= wire.OperationTruncatePartition {
		return evict(wire.EvictionInvalidRequestOperation, fmt.Errorf("metadata: internal operation %v from a client", op))
	}
	if !Supported(op) {
		return deny(CodeFeatureUnavailable, fmt.Errorf("metadata: operation %v is not in this slice", op))
	}
	if len(body) > RequestBodyMax {
		return deny(CodeInvalidCommand, &DecodeError{Body: op.String(), Offset: RequestBodyMax, Rule: ErrTooLong,
			Detail: fmt.Sprintf("%d bytes, max %d", len(body), RequestBodyMax)})
	}
	var count uint32
	var err error
	switch op {
	case wire.OperationRegister, wire.OperationLogout:
		if len(body) != 0 {
			err = &DecodeError{Body: op.String(), Rule: ErrTrailing, Detail: fmt.Sprintf("%d bytes in a body that must be empty", len(body))}
		}
	case wire.OperationCreateStream:
		_, err = DecodeCreateStream(body)
	case wire.OperationUpdateStream:
		_, err = DecodeUpdateStream(body)
	case wire.OperationDeleteStream:
		_, err = DecodeDeleteStream(body)
	case wire.OperationCreateTopic:
		var x CreateTopic
		x, err = DecodeCreateTopic(body)
		count = x.PartitionsCount
	case wire.OperationDeleteTopic:
		_, err = DecodeDeleteTopic(body)
	case wire.OperationCreatePartitions:
		var x CreatePartitions
		x, err = DecodeCreatePartitions(body)
		count = x.PartitionsCount
	case wire.OperationDeletePartitions:
		_, err = DecodeDeletePartitions(body)
	}
	if err != nil {
		return deny(CodeInvalidCommand, err)
	}
	if count > PartitionsPerRequestMax {
		return deny(CodeTooManyPartitions, fmt.Errorf("metadata: %d partitions, max %d", count, PartitionsPerRequestMax))
	}
	return Refusal{}
}

// GroupAllocator mints partition consensus group ids on the primary: the
// highest id seen, plus one per partition (client-ops.md 3). Seed it with
// State.HighestGroupID and let it observe every journaled CreateTopic /
// CreatePartitions prepare (ObservePrepare), so that a new primary never
// hands out an id an uncommitted prepare of an older view already carries.
type GroupAllocator struct {
	highest uint64
}

// NewGroupAllocator returns an allocator whose next id is highest + 1.
func NewGroupAllocator(highest uint64) *GroupAllocator { return &GroupAllocator{highest: highest} }

// Highest returns the highest id allocated or observed.
func (a *GroupAllocator) Highest() uint64 { return a.highest }

// Observe records an id in use.
func (a *GroupAllocator) Observe(id uint64) { a.highest = max(a.highest, id) }

// ObservePrepare observes the consensus group ids of a replicated body of
// operation 64 or 65; other operations are ignored. A body of those
// operations that does not decode is an error.
func (a *GroupAllocator) ObservePrepare(op wire.Operation, body []byte) error {
	var ps []PartitionAssignment
	switch op {
	case wire.OperationCreateTopicWithAssignments:
		x, err := DecodeCreateTopicWithAssignments(body)
		if err != nil {
			return err
		}
		ps = x.Partitions
	case wire.OperationCreatePartitionsWithAssignments:
		x, err := DecodeCreatePartitionsWithAssignments(body)
		if err != nil {
			return err
		}
		ps = x.Partitions
	}
	for _, p := range ps {
		a.Observe(p.ConsensusGroupID)
	}
	return nil
}

// allocate returns n fresh assignments with partition ids (or offsets)
// 0..n-1.
func (a *GroupAllocator) allocate(n uint32) []PartitionAssignment {
	if uint64(n) > math.MaxUint64-a.highest {
		panic("metadata: consensus group ids exhausted")
	}
	ps := make([]PartitionAssignment, n)
	for i := range ps {
		a.highest++
		ps[i] = PartitionAssignment{PartitionID: uint32(i), ConsensusGroupID: a.highest}
	}
	return ps
}

// Projection is what the primary replicates for a request.
type Projection struct {
	Operation wire.Operation
	// Body is the prepare body. For operations replicated verbatim it is the
	// request body itself (not copied).
	Body []byte
}

// Project builds, on the primary, the prepare operation and body of a
// request that Preflight accepted (Project runs Preflight again and returns
// its refusal). Every operation replicates its body verbatim except:
//
//   - CreateTopic (132) is replicated as CreateTopicWithAssignments (64)
//     (client-ops.md 5.7): the explicit options re-encoded canonically (typed
//     kinds, key order, zero sentinels dropped), the derived block holding
//     every catalog key the client did not send at its default, and the
//     partitions 0..n-1, each with a new consensus group id from alloc;
//   - CreatePartitions (136) is replicated as
//     CreatePartitionsWithAssignments (65) (client-ops.md 5.11): the request,
//     then offsets 0..n-1 with new consensus group ids.
//
// A CreateTopic whose options the catalog refuses (unknown key, bad value,
// segment_size out of [1 MiB, 1 GiB] or not a multiple of 512, or a
// max_topic_size below the segment size) is refused with Evict
// InvalidRequestBody (5), the [raw] answer. alloc only advances on success.
func Project(op wire.Operation, body []byte, alloc *GroupAllocator) (Projection, Refusal) {
	if r := Preflight(op, body); r.Refused() {
		return Projection{}, r
	}
	switch op {
	case wire.OperationCreateTopic:
		return projectCreateTopic(body, alloc)
	case wire.OperationCreatePartitions:
		x, err := DecodeCreatePartitions(body)
		if err != nil {
			panic(fmt.Sprintf("metadata: a preflighted CreatePartitions fails to decode: %v", err))
		}
		out := CreatePartitionsWithAssignments{Request: x, Partitions: alloc.allocate(x.PartitionsCount)}
		return Projection{Operation: wire.OperationCreatePartitionsWithAssignments, Body: out.Encode()}, Refusal{}
	}
	return Projection{Operation: op, Body: body}, Refusal{}
}

func projectCreateTopic(body []byte, alloc *GroupAllocator) (Projection, Refusal) {
	x, err := DecodeCreateTopic(body)
	if err != nil {
		panic(fmt.Sprintf("metadata: a preflighted CreateTopic fails to decode: %v", err))
	}
	explicit, code := parseTopicOptions(decodePairs(x.Options), true)
	if code != CodeOK {
		return Projection{}, evict(wire.EvictionInvalidRequestBody,
			fmt.Errorf("metadata: CreateTopic options refused with %d", code))
	}
	segment, maxSize := DefaultSegmentSize, DefaultMaxTopicSize
	if explicit.has[keySegmentSize] {
		segment = explicit.segmentSize
		if segment < SegmentSizeMin || segment > SegmentSizeMax || segment%512 != 0 {
			return Projection{}, evict(wire.EvictionInvalidRequestBody,
				fmt.Errorf("metadata: CreateTopic segment_size %d", segment))
		}
	}
	if explicit.has[keyMaxTopicSize] {
		maxSize = explicit.maxTopicSize
	}
	if maxSize < segment {
		return Projection{}, evict(wire.EvictionInvalidRequestBody,
			fmt.Errorf("metadata: CreateTopic max_topic_size %d below the segment size %d", maxSize, segment))
	}
	x.Options = encodePairs(explicit.pairs(true))
	out := CreateTopicWithAssignments{
		Request:    x,
		Derived:    encodePairs(catalogDefaults().pairsWhere(explicit, false)),
		Partitions: alloc.allocate(x.PartitionsCount),
	}
	return Projection{Operation: wire.OperationCreateTopicWithAssignments, Body: out.Encode()}, Refusal{}
}

// pairsWhere returns s's canonical entries for the keys whose presence in
// other equals present, in key order.
func (s topicSettings) pairsWhere(other topicSettings, present bool) []wire.Option {
	var out []wire.Option
	for k := range topicKeyCount {
		if other.has[k] == present {
			out = append(out, s.option(k))
		}
	}
	return out
}

func encodePairs(pairs []wire.Option) []byte {
	if len(pairs) == 0 {
		return []byte{}
	}
	return wire.EncodeOptions(pairs)
}

// DerivedDefaults returns the derived block of a CreateTopic with no client
// options: the 8 catalog keys at their defaults, in key order (274 bytes).
func DerivedDefaults() []byte {
	return encodePairs(catalogDefaults().pairs(true))
}
