package checker

import (
	"fmt"
	"strings"
)

// Names of the violations, in the field's vocabulary.
const (
	DivergentCommit      = "divergent commit"      // two replicas committed different prepares at one op
	CommittedOpReplaced  = "committed op replaced" // an op committed earlier was committed again as another prepare (lost write)
	HashChainBreak       = "hash chain break"      // a committed prepare's parent is not the identity of the op before it
	LogGap               = "log gap"               // a replica committed an op out of order
	CorruptBodyApplied   = "corrupt body applied"  // a replica applied a prepare whose body does not match its checksum_body
	TimestampRegression  = "timestamp regression"  // prepare timestamps do not strictly increase along the log
	ConflictingPrepares  = "two prepares for one view and op"
	ConflictingStartView = "conflicting StartView" // two StartViews of one view with different logs
	ViewRegression       = "view regression after restart"
	PhantomCommit        = "phantom commit"            // a committed client op no client sent
	DuplicateApply       = "duplicate apply"           // a request committed twice (exactly-once broken)
	WrongReply           = "non-linearizable reply"    // a reply that the model in canonical order does not give
	RealTimeOrder        = "real-time order violation" // an op ordered before one that completed before it was invoked
	ReplicaPanic         = "replica panic"
	AckedBeforeDurable   = "acknowledged before durable"            // a PrepareOk (or a primary's own ack) for a prepare its disk does not hold
	AckedOtherPrepare    = "acknowledged another prepare"           // a PrepareOk (or own ack) of an op whose durable prepare on its disk is a different one
	SentBeforeDurable    = "sent before durable"                    // a message implying a view (log_view) its disk would not restart in
	NackOfAcknowledged   = "nack of an acknowledged op"             // a DoViewChange nacked an op its sender acknowledged, and the op is committed
	CommittedOpLost      = "committed op lost"                      // a replica's disk lost a committed prepare it acknowledged (lost write)
	LogShorterThanView   = "log_view without its log"               // a DoViewChange of log_view L ends below the log its sender adopted for L
	AckedOpTruncated     = "acknowledged op truncated"              // a replica adopted a log of view V ending below an op it acknowledged in V
	CheckpointDiverged   = "checkpoints differ"                     // two replicas' snapshots of the state at one op are not the same bytes
	CheckpointAhead      = "checkpoint of an op not applied"        // a replica checkpointed or restored a state at an op it never applied
	SnapshotWrong        = "snapshot differs from the model"        // a checkpoint's snapshot does not hold the state the checker's model had at its op
	InstallBehind        = "state installed below the applied op"   // a state transfer installed a state at or below an op the replica had applied
	InstallUncommitted   = "state installed above the commit"       // a state transfer installed a state at an op no replica committed
	InstallDiverged      = "installed state differs from the model" // a partition state transfer installed a segment log or consumer offsets other than the canonical log's at its op
	SlotReusedEarly      = "journal slot reused early"              // a replica acknowledged an op whose slot held an op its durable checkpoint does not cover
)

// Violation is one broken invariant with its evidence.
type Violation struct {
	Name string
	// Liveness: a promise only a quiet cluster is held to (liveness.go):
	// the run fails as a liveness failure, named.
	Liveness bool
	Detail   string
	AtNs     int64
	Replicas []uint8
	Ops      []uint64
}

// Error renders the violation for people: the name first, then the detail.
func (v *Violation) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s (at %.3f s", v.Name, v.Detail, float64(v.AtNs)/1e9)
	if len(v.Replicas) > 0 {
		fmt.Fprintf(&b, ", replicas %v", v.Replicas)
	}
	if len(v.Ops) > 0 {
		fmt.Fprintf(&b, ", ops %v", v.Ops)
	}
	b.WriteString(")")
	return b.String()
}
