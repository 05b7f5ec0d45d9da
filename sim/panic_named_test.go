package sim

import (
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/bus"
	"github.com/iggy-vopr/vopr/replica/vsr"
)

// TestCheckerNamesBeforeAPanic: when the checker names a broken promise and
// the replica's own assertion trips over it in the same event, the run
// fails with the checker's name, not "replica panic" (issue 26: a
// checkpoint whose header's timestamp is misread is named "checkpoint
// misread at recovery" as the restart reads it, before restore panics on
// the snapshot it does not match). Here the hook tells the checker of a
// checkpoint of an op never applied, then re-enters the primary's bus from
// inside its commit, which panics in the replica's code.
func TestCheckerNamesBeforeAPanic(t *testing.T) {
	o := Swarm(21)
	o.NoFaults()
	o.Replicas, o.Clients, o.Requests, o.Lite = 3, 3, 60, true
	hook := func(c *Cluster) {
		prev := c.OnEvent
		c.OnEvent = func(e replica.Event) {
			prev(e)
			if e.Kind != replica.EventGroup || e.Group.Kind != vsr.EventCommitted || e.Group.Op != 5 {
				return
			}
			if r := c.Replicas[e.Replica].Replica(); r != nil && r.Metadata().IsPrimary() {
				c.Checker.Replica(c.Loop.Now(), replica.Event{Kind: replica.EventCheckpoint, Replica: e.Replica, Op: 1000})
				r.PeerClosed(bus.ConnID(1 << 40)) // re-enters the bus: the replica panics
			}
		}
	}
	r := runVOPR(o, Outputs{}, hook)
	if r.Outcome != Correctness || !strings.HasPrefix(r.Violation, "checkpoint of an op not applied") {
		t.Fatalf("outcome %v: %s; want the checker's violation", r.Outcome, r.Violation)
	}
}
