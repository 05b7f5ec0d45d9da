package sim

import (
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Scenario tests: a small cluster driven step by step with scripted faults,
// asserting on what the replicas report (events and probes) and what the
// clients see, as etcd raft's interaction tests do. The agreement checker
// watches every commit throughout.

// settleAll runs until the clients finish and every up replica applied
// everything committed anywhere.
func settleAll(t *testing.T, c *Cluster, budgetNs int64) {
	t.Helper()
	if !c.RunUntil(budgetNs, func() bool { return clientsIdle(c) }) {
		dumpCluster(t, c)
		t.Fatal("the clients did not finish")
	}
	top := c.Checker.Committed()
	if !c.RunUntil(budgetNs, func() bool { return c.CommittedEverywhere(top) }) {
		dumpCluster(t, c)
		t.Fatalf("not every up replica applied the %d committed ops", top)
	}
	noViolation(t, c)
}

// noViolation fails on the checker's first violation: after one the checker
// stops recording, so every later count would mislead.
func noViolation(t *testing.T, c *Cluster) {
	t.Helper()
	if v := c.Checker.Violation(); v != nil {
		t.Fatalf("checker: %v", v)
	}
}

// expectAllCommitted checks that every reply a client got is for an op the
// cluster committed, with the same request, and that every request got one.
func expectAllCommitted(t *testing.T, c *Cluster) {
	t.Helper()
	noViolation(t, c)
	for i, cl := range c.Clients {
		hs, _ := replies(cl)
		for _, r := range hs {
			h, ok := c.Checker.Header(r.Op)
			if !ok {
				t.Fatalf("client %d request %d: reply for op %d, which was never committed", i, r.Request, r.Op)
			}
			var p wire.PrepareHeader
			p.Decode(&h)
			if p.Client != r.Client || p.Request != r.Request {
				t.Fatalf("client %d request %d: reply names op %d, which holds client %s request %d",
					i, r.Request, r.Op, p.Client, p.Request)
			}
		}
		if len(cl.Completions) != len(cl.Invocations) {
			t.Fatalf("client %d: %d invocations, %d completions", i, len(cl.Invocations), len(cl.Completions))
		}
	}
	if v := c.Checker.Violation(); v != nil {
		t.Fatalf("checker: %v", v)
	}
}

// watch records, per replica, the probes it fires and the state each of
// its boots recovered (the metadata group's first Recovering status: the
// view from the superblock, the head from the journal). It chains any
// OnEvent already set.
type watch struct {
	probes map[uint8]map[string]int
	boots  map[uint8][]vsr.Event
}

func watchCluster(c *Cluster) *watch {
	w := &watch{probes: map[uint8]map[string]int{}, boots: map[uint8][]vsr.Event{}}
	prev := c.OnEvent
	c.OnEvent = func(e replica.Event) {
		switch {
		case e.Kind == replica.EventProbe:
			w.probe(e.Replica, e.Probe)
		case e.Kind == replica.EventGroup && e.Group.Kind == vsr.EventProbe:
			w.probe(e.Replica, e.Group.Probe)
		case e.Kind == replica.EventGroup && e.Group.Kind == vsr.EventStatus && e.Group.Status == vsr.StatusRecovering:
			w.boots[e.Replica] = append(w.boots[e.Replica], e.Group)
		}
		if prev != nil {
			prev(e)
		}
	}
	return w
}

func (w *watch) probe(r uint8, name string) {
	if w.probes[r] == nil {
		w.probes[r] = map[string]int{}
	}
	w.probes[r][name]++
}

func newScenario(t *testing.T, seed uint64, replicas, clientCount int) *Cluster {
	t.Helper()
	c := NewCluster(DefaultClusterOptions(seed, replicas, clientCount))
	if !c.RunUntil(5*second, func() bool { return c.Primary() != nil && c.CommittedEverywhere(0) }) {
		t.Fatal("the cluster did not come up")
	}
	return c
}

// TestScenarioPrimaryCrash: the primary crashes with requests in flight; a
// view change elects another, the client fails over, nothing committed is
// lost, and the old primary catches up after its restart.
func TestScenarioPrimaryCrash(t *testing.T) {
	c := newScenario(t, 11, 3, 1)
	cl := c.Clients[0]
	submitStreams(cl, "s", 20)
	if !c.RunUntil(10*second, func() bool { return len(cl.Completions) >= 6 }) {
		dumpCluster(t, c)
		t.Fatal("no progress before the crash")
	}
	old := c.Primary()
	committed := c.Checker.Committed()
	old.Crash()
	settleAll(t, c, 60*second)
	if p := c.Primary(); p == nil || p == old || p.Replica().Metadata().View() == 0 {
		t.Fatal("no new primary in a later view")
	}
	if c.Probes["primary suspected"] == 0 {
		t.Fatal("no replica suspected the primary")
	}
	if c.Checker.Committed() < committed {
		t.Fatal("committed ops were lost")
	}
	old.Restart()
	settleAll(t, c, 60*second)
	expectAllCommitted(t, c)
	if got := len(cl.Completions); got != 21 {
		t.Fatalf("%d results, want 21", got)
	}
}

// TestScenarioPartitionedPrimary: the primary is cut off from the others;
// they suspect it and elect another in a later view, which commits the
// client's requests while the old primary, alone, commits nothing; after the
// heal the old primary learns the new view and catches up as a backup.
func TestScenarioPartitionedPrimary(t *testing.T) {
	c := newScenario(t, 12, 3, 1)
	cl := c.Clients[0]
	submitStreams(cl, "p", 10)
	if !c.RunUntil(10*second, func() bool { return len(cl.Completions) >= 4 }) {
		dumpCluster(t, c)
		t.Fatal("no progress before the partition")
	}
	old := c.Primary()
	view, oldCommit := old.Replica().Metadata().View(), old.Replica().Metadata().CommitMax()
	committed := c.Checker.Committed()
	c.Net.Partition([]network.NodeID{network.NodeID(old.ID())}, false)
	if !c.RunUntil(30*second, func() bool { p := c.Primary(); return p != nil && p != old }) {
		dumpCluster(t, c)
		t.Fatal("no new primary while the old one is cut off")
	}
	p := c.Primary()
	if p.Replica().Metadata().View() <= view || c.Probes["primary suspected"] == 0 {
		t.Fatalf("new primary %d in view %d (old view %d), %d suspicions: want a view change away from the cut-off primary",
			p.ID(), p.Replica().Metadata().View(), view, c.Probes["primary suspected"])
	}
	if !c.RunUntil(60*second, func() bool { return cl.Done() }) {
		dumpCluster(t, c)
		t.Fatal("the client did not finish on the new primary")
	}
	noViolation(t, c)
	if c.Checker.Committed() <= committed {
		t.Fatalf("nothing committed during the partition (%d ops before, %d after)", committed, c.Checker.Committed())
	}
	if got := old.Replica().Metadata().CommitMax(); got != oldCommit {
		t.Fatalf("the cut-off primary's commit_max moved from %d to %d: it committed without a quorum", oldCommit, got)
	}
	c.Net.Heal([]network.NodeID{0, 1, 2})
	top := c.Checker.Committed()
	if !c.RunUntil(60*second, func() bool { return c.CommittedEverywhere(top) && !old.Replica().Metadata().IsPrimary() }) {
		dumpCluster(t, c)
		t.Fatal("the old primary did not rejoin")
	}
	if g := old.Replica().Metadata(); g.View() != p.Replica().Metadata().View() || g.Status() != vsr.StatusNormal {
		t.Fatalf("the old primary is %v in view %d, want a backup of view %d", g.Status(), g.View(), p.Replica().Metadata().View())
	}
	// The next view's primary is not the cut-off one, so one view change
	// suffices; a later one would mean the backups suspected a live primary.
	if got := c.Primary().Replica().Metadata().View(); got != view+1 {
		t.Fatalf("the cluster ended in view %d, want %d: a view change after the first", got, view+1)
	}
	expectAllCommitted(t, c)
}

// TestScenarioLaggingBackupRepairs: a backup misses every prepare for a
// while; once they flow again it repairs the hole from its peers.
func TestScenarioLaggingBackupRepairs(t *testing.T) {
	c := newScenario(t, 13, 3, 1)
	cl := c.Clients[0]
	primary := c.Primary()
	lagging := c.Replicas[(int(primary.ID())+2)%3] // not first in the chain
	isPrepare := func(f []byte) bool { return wire.HeaderOf(f).Command() == wire.CommandPrepare }
	id := c.Net.AddFilter(network.Filter{From: network.AnyNode, To: network.NodeID(lagging.ID()), Match: isPrepare, Action: network.Drop})
	submitStreams(cl, "l", 10)
	if !c.RunUntil(30*second, func() bool { return cl.Done() }) {
		dumpCluster(t, c)
		t.Fatal("the cluster did not commit without the lagging backup")
	}
	if lagging.Replica().Metadata().CommitMin() > 1 {
		t.Fatalf("the lagging backup applied %d ops without prepares", lagging.Replica().Metadata().CommitMin())
	}
	c.Net.RemoveFilter(id)
	settleAll(t, c, 30*second)
	if c.Probes["prepare repaired"] == 0 || c.Probes["repair served"] == 0 {
		t.Fatalf("no repair happened: probes %v", c.Probes)
	}
}

// TestScenarioCrashBeforeSync: a backup crashes while its head prepare is
// written but not yet synced. The device loses unsynced writes, so the
// prepare comes back absent (the recovered head is below it); the backup had
// not acknowledged it (PrepareOk waits for the sync), so nothing it promised
// is lost, and the cluster stays safe and converges after the restart.
func TestScenarioCrashBeforeSync(t *testing.T) {
	o := DefaultClusterOptions(14, 3, 1)
	o.Storage.CrashLostProbability = 1
	o.Storage.SyncLatency.MinNs = 20_000_000 // long syncs: the window is wide
	c := NewCluster(o)
	if !c.RunUntil(5*second, func() bool { return c.Primary() != nil }) {
		t.Fatal("the cluster did not come up")
	}
	w := watchCluster(c)
	cl := c.Clients[0]
	submitStreams(cl, "c", 10)
	backup := c.Replicas[(int(c.Primary().ID())+1)%3]
	if !c.RunUntil(30*second, func() bool {
		r := backup.Replica()
		if r == nil {
			return false
		}
		g := r.Metadata()
		return g.Op() >= 5 && g.Op() > g.CommitMax() && r.Journal().InFlight() > 0 && !r.Journal().Durable(g.Op())
	}) {
		t.Fatal("the backup never had its head prepare unsynced")
	}
	head := backup.Replica().Metadata().Op()
	if id, acked := c.Checker.Acknowledged(backup.ID(), head); acked {
		t.Fatalf("the backup acknowledged op %d (%s) before its write was synced", head, id)
	}
	backup.Crash()
	backup.Restart()
	if !c.RunUntil(5*second, func() bool { return len(w.boots[backup.ID()]) > 0 }) {
		t.Fatal("the backup did not boot")
	}
	if got := w.boots[backup.ID()][0].Op; got >= head {
		t.Fatalf("the backup recovered head %d, want below op %d, whose write was never synced", got, head)
	}
	if w.probes[backup.ID()]["replica recovered from a used journal"] != 1 {
		t.Fatalf("the backup's restart did not recover its journal: probes %v", w.probes[backup.ID()])
	}
	settleAll(t, c, 60*second)
	expectAllCommitted(t, c)
	if c.Checker.Committed() < head {
		t.Fatalf("committed %d, below the lost prepare %d: it was never re-replicated", c.Checker.Committed(), head)
	}
}

// TestScenarioTornSuperblock: a backup crashes while its superblock write of
// a new view is in flight, with every unsynced sector torn. Its restart must
// see the torn copy (the probe, on that replica) and open at the view the
// intact copies hold, the last one made durable, then rejoin.
func TestScenarioTornSuperblock(t *testing.T) {
	o := DefaultClusterOptions(15, 3, 1)
	o.Storage.CrashTornProbability = 1
	o.Storage.SyncLatency.MinNs = 20_000_000
	c := NewCluster(o)
	if !c.RunUntil(5*second, func() bool { return c.Primary() != nil }) {
		t.Fatal("the cluster did not come up")
	}
	w := watchCluster(c)
	cl := c.Clients[0]
	submitStreams(cl, "t", 5)
	if !c.RunUntil(10*second, func() bool { return len(cl.Completions) >= 3 }) {
		t.Fatal("no progress")
	}
	// A view change makes every backup write its superblock.
	victim := c.Replicas[(int(c.Primary().ID())+1)%3]
	c.Primary().Crash()
	if !c.RunUntil(30*second, func() bool {
		r := victim.Replica()
		return r != nil && r.Journal().StateWritesWaiting() > 0 && r.Metadata().View() > r.Journal().State().View
	}) {
		t.Fatal("the backup never wrote the superblock of a new view")
	}
	durable := victim.Replica().Journal().State().View
	writing := victim.Replica().Metadata().View()
	victim.Crash()
	victim.Restart()
	if !c.RunUntil(5*second, func() bool { return len(w.boots[victim.ID()]) > 0 }) {
		t.Fatal("the victim did not boot")
	}
	if w.probes[victim.ID()]["superblock copy damaged at recovery"] == 0 {
		t.Fatalf("the victim saw no torn superblock copy at recovery: its probes %v", w.probes[victim.ID()])
	}
	if got := w.boots[victim.ID()][0].View; got != durable {
		t.Fatalf("the victim restarted in view %d, want %d, its last durable view (view %d was being written)", got, durable, writing)
	}
	for _, n := range c.Replicas {
		n.Restart()
	}
	settleAll(t, c, 120*second)
	expectAllCommitted(t, c)
}

// TestScenarioLostDoViewChange: the primary crashes; the first DoViewChange
// on its way to the primary of the next view is lost. Its sender
// retransmits it (the DVC timer, well before the view change would time
// out), so the view change ends in exactly the next view.
func TestScenarioLostDoViewChange(t *testing.T) {
	c := newScenario(t, 16, 3, 1)
	cl := c.Clients[0]
	submitStreams(cl, "d", 4)
	if !c.RunUntil(10*second, func() bool { return cl.Done() }) {
		t.Fatal("the first requests did not finish")
	}
	old := c.Primary()
	view := old.Replica().Metadata().View()
	next := c.Replicas[(int(old.ID())+1)%3] // the primary of view+1
	other := c.Replicas[(int(old.ID())+2)%3]
	seen, dropped := 0, 0 // DoViewChanges from other to next, and how many were lost
	c.Net.AddFilter(network.Filter{From: network.NodeID(other.ID()), To: network.NodeID(next.ID()),
		Match: func(f []byte) bool {
			if wire.HeaderOf(f).Command() != wire.CommandDoViewChange {
				return false
			}
			seen++
			if dropped == 0 {
				dropped++
				return true
			}
			return false
		}, Action: network.Drop})
	old.Crash()
	submitStreams(cl, "d2", 4)
	settleAll(t, c, 60*second)
	if dropped != 1 || seen < 2 {
		t.Fatalf("%d DoViewChange from %d to %d, %d dropped: want one lost and one retransmitted", seen, other.ID(), next.ID(), dropped)
	}
	if p := c.Primary(); p != next || p.Replica().Metadata().View() != view+1 {
		dumpCluster(t, c)
		t.Fatalf("want replica %d primary in view %d, exactly one view after the crashed primary's", next.ID(), view+1)
	}
	if n := c.Probes["view change timed out"]; n != 0 {
		t.Fatalf("the view change timed out %d times: the lost DoViewChange was not retransmitted in time", n)
	}
	expectAllCommitted(t, c)
}

// TestScenarioOneWayPartition: the primary can still send but no longer
// receive. Its heartbeats still reach the backups, but their acks stall on
// the cut direction, so nothing commits, until the TCP timeout resets the
// connections; a new connection cannot finish its handshake across a
// one-way cut, so the heartbeats stop too. The backups suspect the primary
// and elect another, and the client finishes there before the heal. After
// the heal the old primary learns the new view and catches up.
func TestScenarioOneWayPartition(t *testing.T) {
	c := newScenario(t, 17, 3, 1)
	cl := c.Clients[0]
	submitStreams(cl, "w", 2) // connections up and in use before the cut
	if !c.RunUntil(10*second, func() bool { return cl.Done() }) {
		t.Fatal("the first requests did not finish")
	}
	old := c.Primary()
	view, oldCommit := old.Replica().Metadata().View(), old.Replica().Metadata().CommitMax()
	before := c.Net.Stats()
	c.Net.Partition([]network.NodeID{network.NodeID(old.ID())}, true)
	submitStreams(cl, "o", 6)
	if !c.RunUntil(60*second, func() bool { return cl.Done() }) {
		dumpCluster(t, c)
		t.Fatal("the client did not finish while the primary could only send")
	}
	after := c.Net.Stats()
	if after.Resets[network.ResetTimeout] == before.Resets[network.ResetTimeout] || after.DialsFailed == before.DialsFailed {
		t.Fatalf("TCP timeout resets %d, failed dials %d during the cut: want the stalled acks to reset the connections and the redials to fail",
			after.Resets[network.ResetTimeout]-before.Resets[network.ResetTimeout], after.DialsFailed-before.DialsFailed)
	}
	if c.Probes["primary suspected"] == 0 {
		t.Fatal("no backup suspected the primary that could not hear them")
	}
	p := c.Primary()
	if p == nil || p == old || p.Replica().Metadata().View() <= view {
		t.Fatalf("want a new primary in a view above %d before the heal", view)
	}
	if got := old.Replica().Metadata().CommitMax(); got != oldCommit {
		t.Fatalf("the old primary's commit_max moved from %d to %d though it heard no acks", oldCommit, got)
	}
	c.Net.Heal([]network.NodeID{0, 1, 2})
	settleAll(t, c, 120*second)
	if g := old.Replica().Metadata(); g.IsPrimary() || g.View() != p.Replica().Metadata().View() {
		t.Fatalf("the old primary is %v in view %d after the heal, want a backup of view %d", g.Status(), g.View(), p.Replica().Metadata().View())
	}
	expectAllCommitted(t, c)
	if got := len(cl.Completions); got != 9 {
		t.Fatalf("%d results, want 9 (register and 8 requests)", got)
	}
}

// TestScenarioFiveWithTwoDown: a five-replica cluster (q_rep 3, q_vc 3)
// keeps committing with two backups down, without a view change. Then one
// of them comes back and the primary crashes: the three up make a
// view-change quorum, elect another primary, and commit with two down again.
// Finally everyone is back and catches up.
func TestScenarioFiveWithTwoDown(t *testing.T) {
	c := newScenario(t, 18, 5, 2)
	primary := c.Primary()
	view := primary.Replica().Metadata().View()
	var down []*ReplicaNode
	for _, n := range c.Replicas {
		if n != primary && len(down) < 2 {
			n.Crash()
			down = append(down, n)
		}
	}
	committed := c.Checker.Committed()
	submitStreams(c.Clients[0], "f", 8)
	submitStreams(c.Clients[1], "g", 8)
	settleAll(t, c, 60*second)
	// Two registers and sixteen requests.
	if got := c.Checker.Committed() - committed; got != 18 {
		t.Fatalf("%d ops committed with two replicas down, want 18", got)
	}
	if c.Primary() != primary || primary.Replica().Metadata().View() != view || c.Probes["primary suspected"] != 0 {
		t.Fatalf("the view changed with two backups down (view %d, %d suspicions)", primary.Replica().Metadata().View(), c.Probes["primary suspected"])
	}

	// With two down the two backups left are below q_vc: bring one back
	// before the primary goes.
	down[0].Restart()
	primary.Crash()
	committed = c.Checker.Committed()
	submitStreams(c.Clients[0], "h", 4)
	settleAll(t, c, 120*second)
	p := c.Primary()
	if p == nil || p == primary || p.Replica().Metadata().View() <= view {
		t.Fatalf("no new primary in a view above %d after the primary crashed", view)
	}
	if got := c.Checker.Committed() - committed; got != 4 {
		t.Fatalf("%d ops committed after the view change with two down, want 4", got)
	}
	if down[1].Up() || primary.Up() {
		t.Fatal("the scenario lost its two down replicas")
	}

	for _, n := range c.Replicas {
		n.Restart()
	}
	settleAll(t, c, 120*second)
	if !c.CommittedEverywhere(c.Checker.Committed()) {
		t.Fatal("not every replica caught up")
	}
	expectAllCommitted(t, c)
}

// TestScenarioSingleReplicaReplaysEvictions scripts VOPR seeds 636, 669 and
// 740 (at 275df09): a single replica with more clients than client-table
// slots restarts and replays its log from op 1 while its consensus group is
// still being built; a replayed Register evicts a session, and telling the
// evicted client read the group's view before there was a group. Nobody is
// connected during the replay, so there is nobody to tell.
func TestScenarioSingleReplicaReplaysEvictions(t *testing.T) {
	c := newScenario(t, 17, 1, 10) // 10 sessions, 8 slots
	for i, cl := range c.Clients {
		submitStreams(cl, fmt.Sprintf("c%d", i), 1)
	}
	settleAll(t, c, 30*second)
	evicted := 0
	for _, cl := range c.Clients {
		evicted += cl.Workload().Evictions
	}
	if evicted == 0 {
		t.Fatal("no session was evicted: the replay has nothing to prove")
	}
	top := c.Checker.Committed()
	r := c.Replicas[0]
	r.Crash()
	r.Restart()
	if !c.RunUntil(10*second, func() bool { return c.Primary() != nil && c.CommittedEverywhere(top) }) {
		dumpCluster(t, c)
		t.Fatal("the replica did not come back with its log")
	}
	if v := c.Checker.Violation(); v != nil {
		t.Fatalf("checker: %v", v)
	}
}
