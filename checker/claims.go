package checker

import (
	"fmt"

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
	// commit_max (or the head it recovered): commit_max is never above the
	// highest op committed anywhere, the canonical log's length.
	if c.lastStatus[r] != vsr.StatusNormal || c.next[r]-1 < uint64(len(c.canon)) {
		return
	}
	c.fail(Violation{Name: RefusedWithoutCause, Replicas: []uint8{r}, Ops: []uint64{c.next[r] - 1},
		Detail: fmt.Sprintf("replica %d refused a partition request as replaying its metadata log, but it is Normal and has committed op %d, the head of the canonical log: nothing is left to replay",
			r, c.next[r]-1)})
}
