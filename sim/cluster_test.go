package sim

import (
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

func createStream(name string) []byte { return metadata.CreateStream{Name: name}.Encode() }

// submitStreams gives client cl n CreateStream requests.
func submitStreams(cl *Client, prefix string, n int) {
	for i := range n {
		cl.Submit(wire.OperationCreateStream, createStream(fmt.Sprintf("%s-%d", prefix, i)))
	}
}

// clientsIdle reports whether every client has registered and finished.
func clientsIdle(c *Cluster) bool {
	for _, cl := range c.Clients {
		if !cl.Idle() {
			return false
		}
	}
	return true
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
		t.Logf("client %d: session %d results %d pending %v queue %d evictions %d", i, cl.Session(), len(cl.Results),
			cl.pending != nil, len(cl.queue), cl.Evictions)
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
				for _, r := range cl.Results[1:] {
					if r.Reply.Status != 0 || len(r.Body) < 4 || r.Body[0] != 0 {
						t.Fatalf("client %d request %d: status %d body %x", i, r.Request, r.Reply.Status, r.Body)
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
