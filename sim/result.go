package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/checker/linearize"
)

// Outcome is how a run ended.
type Outcome uint8

const (
	// Pass: no violation; the liveness phase converged, was explained, or
	// was skipped (Lite).
	Pass Outcome = iota
	// SimError: the simulator itself failed (a harness bug, not the replica's).
	SimError
	// Liveness: the core did not converge within its budget, and the stall is
	// not one the protocol cannot avoid; or it converged but did not settle
	// (it kept changing views).
	Liveness
	// Correctness: a checker violation, or a panic inside replica code.
	Correctness
)

// ExitCode is vopr's exit status for the outcome (DESIGN.md, "The command").
func (o Outcome) ExitCode() int {
	switch o {
	case SimError:
		return 1
	case Liveness:
		return 128
	case Correctness:
		return 129
	}
	return 0
}

// String is the outcome as the summary line prints it.
func (o Outcome) String() string {
	switch o {
	case SimError:
		return "error"
	case Liveness:
		return "liveness"
	case Correctness:
		return "correctness"
	}
	return "pass"
}

// Worse reports whether o is a worse outcome than p (129 > 128 > 1 > 0).
func (o Outcome) Worse(p Outcome) bool { return o.rank() > p.rank() }

func (o Outcome) rank() int {
	switch o {
	case Correctness:
		return 3
	case Liveness:
		return 2
	case SimError:
		return 1
	}
	return 0
}

// LivenessVerdict is what the liveness phase concluded.
type LivenessVerdict uint8

const (
	LivenessSkipped   LivenessVerdict = iota // Lite, or the run failed before it
	LivenessConverged                        // the core converged and settled in one view
	LivenessExplained                        // a stall the protocol cannot avoid; Explanation says why
	LivenessFailed                           // no convergence, no excuse
)

func (v LivenessVerdict) String() string {
	switch v {
	case LivenessConverged:
		return "converged"
	case LivenessExplained:
		return "explained"
	case LivenessFailed:
		return "failed"
	}
	return "skipped"
}

// Result is what one run reports.
type Result struct {
	Seed        uint64
	Options     Options
	Outcome     Outcome
	Liveness    LivenessVerdict
	Violation   string   // the violation (Correctness) or the stall (Liveness), named
	Explanation string   // why a stall was excused (LivenessExplained)
	Evidence    []string // the events that led to a failure, oldest first
	// ViolationAtNs is when the failure was found, in virtual ns: when the
	// checker recorded its violation, when the panic was caught, or the
	// run's end for a stall or porcupine's verdict (0 for a pass).
	ViolationAtNs int64

	Ticks  uint64
	Events uint64 // loop events fired (kernel.Loop.Processed): a run's size for vopr shrink
	// BranchedAtNs: with Outputs.Branch, the virtual time the fault
	// streams were reseeded at (-1: the run ended before it).
	BranchedAtNs int64
	Requests     uint64 // requests the clients invoked
	Replies      uint64 // requests that got a reply
	Indefinite   uint64 // requests whose outcome is unknown (evicted in flight)
	Commits      uint64 // highest op committed
	ViewChanges  uint64 // views started on the metadata plane
	Groups       uint64 // partition groups created (built by any replica)
	Messages     uint64 // messages committed on the partition planes
	Polls        uint64 // polls answered (the replies the checker read)
	// Checkpoints counts the checkpoints the replicas' superblocks recorded
	// (every replica's, metadata plane); StateTransfersMetadata and
	// StateTransfersPartition the installs a state transfer completed, by
	// plane (the partition planes have none yet).
	Checkpoints             uint64
	StateTransfersMetadata  uint64
	StateTransfersPartition uint64
	// BeyondBound: more than f replicas were without partition memory at
	// once; Losses are what the checker counted since, by name
	// (checker.LossesBeyondBound), with the groups the liveness phase
	// found stalled for it.
	BeyondBound   bool
	Losses        []checker.Loss
	Crashes       uint64
	CrashesMidIO  uint64 // crashes while the replica's device had I/O in flight
	Restarts      uint64
	Pauses        uint64
	Partitions    uint64
	Resets        uint64
	Clogs         uint64
	Corruptions   uint64 // frames corrupted on the wire
	StorageFaults uint64 // sectors made unreadable or corrupt, misdirected writes
	TornSectors   uint64 // sectors torn by crashes
	Evictions     uint64
	// ClockSkewNs is the widest gap between two replicas' realtime clocks at
	// the end of the run (offsets and drift together).
	ClockSkewNs int64
	Frames      uint64 // frames sent on the network
	// FramesByCommand counts the frames sent, by command name (snake_case).
	FramesByCommand map[string]uint64
	// PartitionFrames counts the frames of the partition planes delivered
	// from one replica to another, by command name: the replication cost
	// of the messages (vopr -performance reports it per message).
	PartitionFrames map[string]uint64
	Digest          uint64
	// Probes counts the coverage probes that fired, by name.
	Probes map[string]int
	// Porcupine is porcupine's verdict on the metadata history, nil unless
	// Outputs.Porcupine asked for it.
	Porcupine *linearize.Verdict
}

// Summary is the last line of a run's output: `key=value` words in a fixed
// order, with no wall time (DESIGN.md, "The command").
func (r *Result) Summary() string {
	words := []string{
		fmt.Sprintf("seed=%d", r.Seed),
		"result=" + r.Outcome.String(),
		"liveness=" + r.Liveness.String(),
		fmt.Sprintf("replicas=%d", r.Options.Replicas),
		fmt.Sprintf("clients=%d", r.Options.Clients),
		fmt.Sprintf("ticks=%d", r.Ticks),
		fmt.Sprintf("requests=%d", r.Requests),
		fmt.Sprintf("commits=%d", r.Commits),
		fmt.Sprintf("view_changes=%d", r.ViewChanges),
		fmt.Sprintf("groups=%d", r.Groups),
		fmt.Sprintf("messages=%d", r.Messages),
		fmt.Sprintf("polls=%d", r.Polls),
		fmt.Sprintf("checkpoints=%d", r.Checkpoints),
		fmt.Sprintf("state_transfers=%d", r.StateTransfers()),
		fmt.Sprintf("beyond_f_losses=%d", r.LossTotal()),
		fmt.Sprintf("crashes=%d", r.Crashes),
		fmt.Sprintf("restarts=%d", r.Restarts),
		fmt.Sprintf("partitions=%d", r.Partitions),
		fmt.Sprintf("resets=%d", r.Resets),
		fmt.Sprintf("storage_faults=%d", r.StorageFaults),
		fmt.Sprintf("frames=%d", r.Frames),
		fmt.Sprintf("digest=%016x", r.Digest),
	}
	if r.Porcupine != nil {
		words = append(words, "porcupine="+r.Porcupine.Word())
	}
	return strings.Join(words, " ")
}

// LossTotal returns the losses beyond the memory-loss bound, every kind
// summed.
func (r *Result) LossTotal() uint64 {
	n := uint64(0)
	for _, l := range r.Losses {
		n += l.Count
	}
	return n
}

// ProbeNames returns the names of the probes that fired, sorted.
func (r *Result) ProbeNames() []string {
	names := make([]string, 0, len(r.Probes))
	for n := range r.Probes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// StateTransfers counts the completed state-transfer installs of both
// planes.
func (r *Result) StateTransfers() uint64 { return r.StateTransfersMetadata + r.StateTransfersPartition }
