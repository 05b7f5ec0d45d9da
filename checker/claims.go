package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/vsr"
)

// A refusal is a claim about the refusing replica's state, and the checker
// can hold some claims to what it knows. A replica that refuses every
// partition request "while its metadata plane replays what it applied
// before its restart" once it has committed the whole canonical log turns
// the partition planes away for good: its clients retry until the budget
// runs out, and the run would end as a stall that names nothing.

// RefusedWithoutCause: a replica refused a request for a reason the
// checker knows is false.
const RefusedWithoutCause = "request refused without cause"

// probeReplaying is the probe of the partition plane's refusal while the
// metadata plane replays (replica/partitions.go admit).
const probeReplaying = "partition plane: request refused: the metadata plane is replaying what it applied before its restart"

// probeClaim holds a refusal's probe to what the checker knows of r.
func (c *Checker) probeClaim(r uint8, probe string) {
	if probe != probeReplaying || int(r) >= c.replicas || c.violation != nil {
		return
	}
	// Replaying ends once r is Normal and its commit_min reaches its
	// commit_max (or the head it recovered). r's commit_max is at most the
	// highest commit any frame announced (a primary may announce an op
	// before it applies it) and the highest op committed anywhere.
	if c.lastStatus[r] != vsr.StatusNormal || c.next[r]-1 < max(uint64(len(c.canon)), c.commitSeen) {
		return
	}
	c.fail(Violation{Name: RefusedWithoutCause, Replicas: []uint8{r}, Ops: []uint64{c.next[r] - 1},
		Detail: fmt.Sprintf("replica %d refused a partition request as replaying its metadata log, but it is Normal and has committed op %d, the head of the canonical log and the highest commit any frame announced: nothing is left to replay",
			r, c.next[r]-1)})
}

// noteCommitSeen follows the highest metadata commit number a replica
// announced in a frame it sent (wire.md 5: a prepare's, an acknowledgement's
// and a Commit's commit, a vote's and a StartView's, an offer's commit_max):
// no replica's commit_max is above it.
func (c *Checker) noteCommitSeen(f []byte) {
	if len(f) < wirespec.HeaderSize {
		return
	}
	var group, commit uint64
	switch f[wirespec.OffCommand] {
	case wirespec.Prepare:
		p := wirespec.ReadPrepare(f)
		group, commit = p.Group, p.Commit
	case wirespec.PrepareOk:
		group, commit = wirespec.U64(f, wirespec.OffPrepareOkGroup), wirespec.U64(f, offPrepareOkCommit)
	case wirespec.Commit:
		group, commit = wirespec.U64(f, wirespec.OffCommitGroup), wirespec.U64(f, wirespec.OffCommitCommit)
	case wirespec.DoViewChange, wirespec.StartView:
		group, commit = wirespec.U64(f, wirespec.OffVoteGroup), wirespec.U64(f, wirespec.OffVoteCommit)
	case wirespec.StateTransferTarget:
		group, commit = wirespec.U64(f, offTargetGroup), wirespec.U64(f, offTargetCommitMax)
	default:
		return
	}
	if group == wirespec.MetadataGroup {
		c.commitSeen = max(c.commitSeen, commit)
	}
}

// Offsets of wire.md 5.2 (PrepareOk's commit) and 8.2 (StateTransferTarget)
// that wirespec names nowhere else.
const (
	offPrepareOkCommit = 168
	offTargetGroup     = 152
	offTargetCommitMax = 168
)
