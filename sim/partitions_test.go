package sim

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// groupsEverywhere reports whether every up replica runs exactly the
// partition groups ids, each Normal.
func groupsEverywhere(c *Cluster, ids []uint64) bool {
	for _, n := range c.Replicas {
		if !n.up {
			continue
		}
		r := n.Replica()
		if r == nil {
			return false
		}
		got := r.PartitionGroups()
		if len(got) != len(ids) {
			return false
		}
		for i, id := range ids {
			g, _ := r.PartitionGroup(id)
			if got[i] != id || g.Status() != vsr.StatusNormal {
				return false
			}
		}
	}
	return true
}

// TestScenarioPartitionGroupsFollowTheMetadata: a CreateTopic with three
// partitions builds three groups on every replica, each Normal in view 0
// under replica 0; a DeletePartitions drops the last one everywhere; a
// backup that crashes and restarts rebuilds the remaining groups from its
// partition superblocks and rejoins their current views, after a view
// change moved one of them.
func TestScenarioPartitionGroupsFollowTheMetadata(t *testing.T) {
	c := newScenario(t, 31, 3, 1)
	w := watchCluster(c)
	cl := c.Clients[0]
	cl.Submit(workload.Op{Operation: wire.OperationCreateStream, Body: createStream("ps")})
	cl.Submit(workload.Op{Operation: wire.OperationCreateTopic, Body: metadata.CreateTopic{Stream: metadata.Named("ps"),
		PartitionsCount: 3, Name: "pt"}.Encode()})
	settleAll(t, c, 30*second)
	ids := c.Primary().Replica().PartitionGroups()
	if len(ids) != 3 {
		t.Fatalf("the primary runs %d partition groups, want 3", len(ids))
	}
	if !c.RunUntil(10*second, func() bool { return groupsEverywhere(c, ids) }) {
		t.Fatal("not every replica runs the three groups, Normal")
	}
	for _, n := range c.Replicas {
		g, _ := n.Replica().PartitionGroup(ids[0])
		if g.View() != 0 || g.Primary() != 0 {
			t.Fatalf("replica %d: group %d in view %d led by %d, want view 0 under replica 0", n.ID(), ids[0], g.View(), g.Primary())
		}
	}
	cl.Submit(workload.Op{Operation: wire.OperationDeletePartitions, Body: metadata.DeletePartitions{Stream: metadata.Named("ps"),
		Topic: metadata.Named("pt"), PartitionsCount: 1}.Encode()})
	settleAll(t, c, 30*second)
	if !c.RunUntil(10*second, func() bool { return groupsEverywhere(c, ids[:2]) }) {
		t.Fatal("the deleted partition's group is still running somewhere")
	}
	// Replica 0 leads every group; crash it so both groups change view,
	// then restart backup 2 and watch it rebuild both groups.
	c.Replicas[0].Crash()
	moved := func() bool {
		for _, id := range ids[:2] {
			g, _ := c.Replicas[2].Replica().PartitionGroup(id)
			if g.View() == 0 || g.Status() != vsr.StatusNormal {
				return false
			}
		}
		return true
	}
	if !c.RunUntil(30*second, moved) {
		t.Fatal("the groups did not move past view 0 without their primary")
	}
	g1, _ := c.Replicas[2].Replica().PartitionGroup(ids[1])
	view := g1.View()
	c.Replicas[2].Crash()
	c.Replicas[0].Restart()
	c.Replicas[2].Restart()
	if !c.RunUntil(60*second, func() bool { return groupsEverywhere(c, ids[:2]) }) {
		t.Fatal("the restarted replicas did not rebuild and rejoin both groups")
	}
	if got := w.probes[2]["partition plane: group rebuilt from its superblock"]; got < 2 {
		t.Fatalf("replica 2 rebuilt %d groups from their superblocks, want both", got)
	}
	g, _ := c.Replicas[2].Replica().PartitionGroup(ids[1])
	if g.View() < view {
		t.Fatalf("replica 2 rejoined group %d in view %d, below the view %d it had reached", ids[1], g.View(), view)
	}
	noViolation(t, c)
}
