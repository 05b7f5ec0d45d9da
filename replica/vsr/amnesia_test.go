package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestAmnesiacReplicaIsQuorumInvisible: in a group of three, ops 1..3
// commit on r0 and r1 while r2 hears none of them. r1 then restarts with
// its memory journal lost and r0 is cut off. r1 and r2 together are a
// view-change quorum, and both would report an empty log: had r1 voted,
// the new view would start at op 0 and drop three committed ops. An
// amnesiac replica withholds its vote (and so cannot lead), so no view
// starts until r0 is back; the ops survive, and r1 votes again once it has
// applied the log it rejoined.
func TestAmnesiacReplicaIsQuorumInvisible(t *testing.T) {
	c := newTunedCluster(t, 3, 61, func(cfg *Config) { cfg.MemoryJournal = true })
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	c.drop = func(m message) bool {
		cmd := wire.HeaderOf(m.frame).Command()
		return m.to == 2 && (cmd == wire.CommandPrepare || cmd == wire.CommandCommit) ||
			m.from == 2 && cmd == wire.CommandRequestPrepares
	}
	for req := uint64(1); req <= 3; req++ {
		proposeAt(t, r0, req)
		c.settle()
	}
	c.tick(0, 80)
	if r0.group.CommitMin() != 3 || r1.group.CommitMin() != 3 || r2.group.Op() != 0 {
		t.Fatalf("setup: r0 commit %d, r1 commit %d, r2 op %d", r0.group.CommitMin(), r1.group.CommitMin(), r2.group.Op())
	}
	committed := make([]wire.U128, 4)
	for op := uint64(1); op <= 3; op++ {
		f, _ := r0.journal.Frame(op)
		committed[op] = wire.HeaderOf(f).Checksum()
	}
	c.drop = nil
	r1.crash()
	r1.amnesiac = true
	r1.start(false)
	r1.amnesiac = false
	if !r1.group.Amnesiac() || r1.group.Op() != 0 {
		t.Fatalf("r1 restarted amnesiac %v at op %d, want amnesiac at op 0", r1.group.Amnesiac(), r1.group.Op())
	}
	c.isolate(0)
	c.run(60_000)
	for _, r := range []*replica{r1, r2} {
		if r.group.Status() == StatusNormal && r.group.View() > 0 {
			c.dump()
			t.Fatalf("replica %d is Normal in view %d without r0: a view started on an amnesiac vote", r.id, r.group.View())
		}
	}
	if c.probes["amnesiac replica withholds its DoViewChange"] == 0 {
		t.Fatalf("r1 never withheld a vote (probes %v)", c.probes)
	}
	c.unblockAll()
	if !c.runUntil(400_000, func() bool {
		return c.primary() != nil && r1.group.CommitMin() >= 3 && r2.group.CommitMin() >= 3 && !r1.group.Amnesiac()
	}) {
		c.dump()
		t.Fatalf("the group did not recover once r0 was back (probes %v)", c.probes)
	}
	for _, r := range c.replicas {
		for op := uint64(1); op <= 3; op++ {
			f, ok := r.journal.Frame(op)
			if !ok || wire.HeaderOf(f).Checksum() != committed[op] {
				t.Fatalf("replica %d does not hold committed op %d as it was committed", r.id, op)
			}
		}
	}
	if c.probes["amnesiac replica caught up: it votes again"] == 0 {
		t.Fatal("r1's amnesia never ended")
	}
}

// TestAmnesiaEndsWithALaterViewsLog scripts VOPR seed
// 15776400082343665307: an amnesiac replica joins a view whose log ends in
// an uncommitted op, and a later view truncates that op. It has applied
// the later view's log, so it holds everything that may be committed: its
// amnesia ends there (waiting for the first view's head, which is never
// committed, kept it quorum-invisible for good).
func TestAmnesiaEndsWithALaterViewsLog(t *testing.T) {
	c := newCluster(t, 5, 91)
	r0, r2 := c.replicas[0], c.replicas[2]
	commitEverywhere(t, c, 1, 2)
	r2.crash()
	// r0 prepares op 3 and it reaches no one: r0 alone holds it.
	c.drop = func(m message) bool {
		return m.from == 0 && wire.HeaderOf(m.frame).Command() == wire.CommandPrepare
	}
	proposeAt(t, r0, 3)
	c.settle()
	// r2 restarts without its memory journal and joins view 0 from r0's
	// StartView, whose log ends at op 3; its acknowledgements are lost, so
	// op 3 does not commit.
	c.drop = func(m message) bool {
		cmd := wire.HeaderOf(m.frame).Command()
		return m.from == 0 && cmd == wire.CommandPrepare && m.to != 2 || m.from == 2 && cmd == wire.CommandPrepareOk
	}
	r2.amnesiac = true
	r2.start(false)
	r2.amnesiac = false
	if !c.runUntil(200_000, func() bool {
		return r2.group.Status() == StatusNormal && r2.group.Op() == 3 && r2.group.CommitMin() == 2
	}) {
		c.dump()
		t.Fatalf("r2 did not join view 0 at op 3 (probes %v)", c.probes)
	}
	if !r2.group.Amnesiac() || r2.group.CommitMin() != 2 {
		t.Fatalf("r2 amnesiac %v at commit %d: want amnesiac, op 3 uncommitted", r2.group.Amnesiac(), r2.group.CommitMin())
	}
	// r0 is cut off; r1, r3 and r4 start view 1 without op 3 (three nacks).
	c.drop = nil
	c.isolate(0)
	if !c.runUntil(400_000, func() bool {
		return r2.group.View() >= 1 && r2.group.Status() == StatusNormal && r2.group.Op() == 2
	}) {
		c.dump()
		t.Fatalf("no later view truncated op 3 at r2 (probes %v)", c.probes)
	}
	if !c.runUntil(100_000, func() bool { return !r2.group.Amnesiac() }) {
		c.dump()
		t.Fatal("r2 applied the later view's whole log and is still amnesiac")
	}
}

// TestTwoReplicaAmnesiacVote: in a group of two, ops 1..3 commit on both;
// r0, the primary of view 0, restarts with its memory journal lost. r1's
// vote alone meets every replication quorum, so r0 votes as one that knows
// nothing (amnesiacVoteSafe), never merging as primary itself: the view it
// leads times out, and r1 leads the next with r1's log. Without the vote,
// r1 never gets a second DoViewChange and the group never elects (VOPR
// seeds 5004, 5039, 5104).
func TestTwoReplicaAmnesiacVote(t *testing.T) {
	c := newTunedCluster(t, 2, 62, func(cfg *Config) { cfg.MemoryJournal = true })
	r0, r1 := c.replicas[0], c.replicas[1]
	for req := uint64(1); req <= 3; req++ {
		proposeAt(t, r0, req)
		c.settle()
	}
	c.tick(0, 80)
	if r0.group.CommitMin() != 3 || r1.group.CommitMin() != 3 {
		t.Fatalf("setup: r0 commit %d, r1 commit %d", r0.group.CommitMin(), r1.group.CommitMin())
	}
	committed := make([]wire.U128, 4)
	for op := uint64(1); op <= 3; op++ {
		f, _ := r1.journal.Frame(op)
		committed[op] = wire.HeaderOf(f).Checksum()
	}
	r0.crash()
	r0.amnesiac = true
	r0.start(false)
	r0.amnesiac = false
	if !r0.group.Amnesiac() {
		t.Fatal("r0 did not restart amnesiac")
	}
	if !c.runUntil(400_000, func() bool {
		p := c.primary()
		return p == r1 && r0.group.Status() == StatusNormal && r0.group.CommitMin() >= 3 && !r0.group.Amnesiac()
	}) {
		c.dump()
		t.Fatalf("the group did not elect r1 and catch r0 up (probes %v)", c.probes)
	}
	if c.probes["amnesiac replica votes knowing nothing"] == 0 {
		t.Fatalf("r0 never voted as amnesiac (probes %v)", c.probes)
	}
	for op := uint64(1); op <= 3; op++ {
		f, ok := r0.journal.Frame(op)
		if !ok || wire.HeaderOf(f).Checksum() != committed[op] {
			t.Fatalf("r0 does not hold committed op %d as it was committed", op)
		}
	}
}

// TestTwoReplicaAmnesiacVoteNacksNothing scripts VOPR seed
// 6455057784201346205: op 1 commits on r0 while r1, which acknowledged it,
// never hears of the commit; both are in log_view 0. r0 restarts amnesiac
// and votes its empty log; r1 merges it with its own. The empty vote must
// not count as a nack (q_nack is 1 at n = 2): op 1 is committed, and r1
// must keep it.
func TestTwoReplicaAmnesiacVoteNacksNothing(t *testing.T) {
	c := newTunedCluster(t, 2, 63, func(cfg *Config) { cfg.MemoryJournal = true })
	r0, r1 := c.replicas[0], c.replicas[1]
	c.drop = func(m message) bool {
		return m.to == 1 && wire.HeaderOf(m.frame).Command() == wire.CommandCommit
	}
	proposeAt(t, r0, 1)
	c.settle()
	if r0.group.CommitMin() != 1 || r1.group.Op() != 1 || r1.group.CommitMax() != 0 {
		t.Fatalf("setup: r0 commit %d, r1 op %d commit_max %d", r0.group.CommitMin(), r1.group.Op(), r1.group.CommitMax())
	}
	f, _ := r1.journal.Frame(1)
	committed := wire.HeaderOf(f).Checksum()
	c.drop = nil
	r0.crash()
	r0.amnesiac = true
	r0.start(false)
	r0.amnesiac = false
	if !c.runUntil(400_000, func() bool {
		return c.primary() == r1 && r0.group.Status() == StatusNormal && !r0.group.Amnesiac()
	}) {
		c.dump()
		t.Fatalf("the group did not elect r1 and catch r0 up (probes %v)", c.probes)
	}
	for _, r := range c.replicas {
		f, ok := r.journal.Frame(1)
		if !ok || wire.HeaderOf(f).Checksum() != committed || r.group.Op() < 1 {
			t.Fatalf("replica %d lost committed op 1 (op %d, probes %v)", r.id, r.group.Op(), c.probes)
		}
	}
}
