package sim

import (
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

func createStream(name string) []byte { return metadata.CreateStream{Name: name}.Encode() }

// submitStreams gives client cl n CreateStream requests.
func submitStreams(cl *ClientNode, prefix string, n int) {
	for i := range n {
		cl.Submit(workload.Op{Operation: wire.OperationCreateStream, Body: createStream(fmt.Sprintf("%s-%d", prefix, i))})
	}
}

// clientsIdle reports whether every client has registered and finished.
func clientsIdle(c *Cluster) bool {
	for _, cl := range c.Clients {
		if !cl.Done() {
			return false
		}
	}
	return true
}

// replies returns the Reply headers and bodies of a client's completions
// that got one.
func replies(cl *ClientNode) (hs []wire.ReplyHeader, bodies [][]byte) {
	for _, d := range cl.Completions {
		if d.Kind != workload.Replied {
			continue
		}
		var h wire.ReplyHeader
		h.Decode(wire.HeaderOf(d.Frame))
		hs = append(hs, h)
		bodies = append(bodies, d.Frame[wire.HeaderSize:])
	}
	return hs, bodies
}

func dumpCluster(t *testing.T, c *Cluster) {
	t.Helper()
	for _, n := range c.Replicas {
		if r := n.Replica(); r != nil {
			g := r.Metadata()
			t.Logf("replica %d: %v view %d log_view %d op %d commit %d/%d pipeline %d", n.ID(), g.Status(), g.View(),
				g.LogView(), g.Op(), g.CommitMin(), g.CommitMax(), g.PipelineLen())
		} else {
			t.Logf("replica %d: down (up=%v)", n.ID(), n.Up())
		}
	}
	for i, cl := range c.Clients {
		w := cl.Workload()
		t.Logf("client %d: session %d invocations %d completions %d pending %v evictions %d timeouts %d", i, w.Session(),
			len(cl.Invocations), len(cl.Completions), w.Pending(), w.Evictions, w.Timeouts)
	}
	t.Logf("probes %v", c.Probes)
}

const second = int64(1_000_000_000)

// TestClusterNormalOperation: a fault-free cluster of each size commits a
// client's requests on every replica, and every reply is a success.
func TestClusterNormalOperation(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprintf("replicas=%d", n), func(t *testing.T) {
			c := NewCluster(DefaultClusterOptions(1, n, 2))
			submitStreams(c.Clients[0], "a", 10)
			submitStreams(c.Clients[1], "b", 10)
			if !c.RunUntil(60*second, func() bool { return clientsIdle(c) }) {
				dumpCluster(t, c)
				t.Fatal("the clients did not finish")
			}
			top := c.Checker.Committed()
			if top != 22 { // two registers, twenty streams
				t.Fatalf("%d ops committed, want 22", top)
			}
			if !c.RunUntil(10*second, func() bool { return c.CommittedEverywhere(top) }) {
				dumpCluster(t, c)
				t.Fatal("not every replica applied every op")
			}
			for i, cl := range c.Clients {
				hs, bodies := replies(cl)
				for k := 1; k < len(hs); k++ {
					if hs[k].Status != 0 || len(bodies[k]) < 4 || bodies[k][0] != 0 {
						t.Fatalf("client %d request %d: status %d body %x", i, hs[k].Request, hs[k].Status, bodies[k])
					}
				}
			}
			d := c.Replicas[0].Replica().State().Digest()
			for _, rn := range c.Replicas[1:] {
				if rn.Replica().State().Digest() != d || rn.Replica().Clients().Digest() != c.Replicas[0].Replica().Clients().Digest() {
					t.Fatalf("replica %d's state differs from replica 0's", rn.ID())
				}
			}
		})
	}
}

// TestCrashDuringFormat: a replica that crashes while it is being formatted
// is formatted again when it restarts, as an operator would, instead of
// opening a half-written superblock (VOPR seeds 117 and 209 crashed the
// harness that way). The cluster then commits on every replica.
func TestCrashDuringFormat(t *testing.T) {
	c := NewCluster(DefaultClusterOptions(3, 3, 1))
	victim := c.Replicas[2]
	for steps := 0; victim.dev.InFlight() == 0 && !victim.formatted; steps++ {
		if steps > 10_000 || !c.Loop.Step() {
			t.Fatal("replica 2's format never issued an I/O")
		}
	}
	// Let some of the format land, but not all of it.
	for i := 0; i < 5 && !victim.formatted; i++ {
		c.Loop.Step()
	}
	if victim.formatted {
		t.Fatal("replica 2 finished formatting before the test could crash it")
	}
	victim.Crash()
	victim.Restart()
	submitStreams(c.Clients[0], "a", 5)
	if !c.RunUntil(60*second, func() bool { return clientsIdle(c) }) {
		dumpCluster(t, c)
		t.Fatal("the client did not finish")
	}
	if !victim.formatted || victim.Replica() == nil {
		t.Fatal("replica 2 was not formatted again and booted")
	}
	top := c.Checker.Committed()
	if !c.RunUntil(30*second, func() bool { return c.CommittedEverywhere(top) }) {
		dumpCluster(t, c)
		t.Fatal("replica 2 did not apply every op")
	}
	if v := c.Checker.Violation(); v != nil {
		t.Fatal(v)
	}
}
