package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Scripted tests for the traps of consensus.md ("Corrections and safety
// notes") and DESIGN.md, one interleaving each. Each pins one rule of the
// package doc and fails by name when that rule is broken: the canary suite's
// replica/vsr canaries (canary/README.md) must each fail at least one of them.

// commitEverywhere proposes requests first..last at the primary one at a
// time and lets a heartbeat carry the commit to every backup.
func commitEverywhere(t *testing.T, c *cluster, first, last uint64) {
	t.Helper()
	p := c.primary()
	if p == nil {
		t.Fatal("no primary")
	}
	for req := first; req <= last; req++ {
		proposeAt(t, p, req)
		c.settle()
	}
	c.tick(p.id, 80) // a heartbeat tells the backups
	if !c.committedEverywhere(last) {
		c.dump()
		t.Fatalf("ops up to %d not committed everywhere", last)
	}
}

// sentBy collects the frames of one command that replica from sends.
type sentBy struct {
	from   uint8
	cmd    wire.Command
	frames [][]byte
}

func (s *sentBy) observe(m message) {
	if m.from == s.from && wire.HeaderOf(m.frame).Command() == s.cmd {
		s.frames = append(s.frames, m.frame)
	}
}

// TestPrepareOkOnlyOnceDurable: a replica acknowledges a prepare, or counts
// its own acknowledgement as primary, only once its journal's done says the
// prepare is durable. A crash between the write and the done loses the
// prepare; an ack sent before would have promised a copy that is gone.
func TestPrepareOkOnlyOnceDurable(t *testing.T) {
	for _, tc := range []struct {
		name string
		slow uint8 // the replica whose journal does not complete
	}{
		{"backup", 1},
		{"primary", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, 3, 21)
			r0, slow := c.replicas[0], c.replicas[tc.slow]
			commitEverywhere(t, c, 1, 1)
			acks := &sentBy{from: tc.slow, cmd: wire.CommandPrepareOk}
			c.observe = acks.observe

			proposeAt(t, r0, 2)
			c.settleExcept(tc.slow) // its write of op 2 never completes
			if _, held := slow.journal.Frame(2); !held {
				t.Fatalf("replica %d did not even write op 2", tc.slow)
			}
			if tc.slow != 0 && len(acks.frames) != 0 {
				t.Fatalf("backup %d sent %d PrepareOk for op 2 before its journal made it durable", tc.slow, len(acks.frames))
			}
			if tc.slow == 0 && r0.group.CommitMax() != 1 {
				// Both backups acked: a quorum without the primary, but the
				// primary's own bit must stand for a durable copy.
				t.Fatalf("the primary committed op 2 (commit_max %d) before its own copy was durable", r0.group.CommitMax())
			}

			// The crash lands between the write and the done: op 2 is gone
			// from that journal, and nothing promised it.
			slow.crash()
			slow.start(false)
			if h := slow.journal.head(); h != 1 {
				t.Fatalf("replica %d recovered head %d, want 1: op 2's write was never durable", tc.slow, h)
			}
			if !c.runUntil(200_000, func() bool { return c.committedEverywhere(1) && c.primary() != nil }) {
				c.dump()
				t.Fatal("the cluster did not recover")
			}
			// Op 2 may have survived on the others (the backup case) or be
			// replaced; either way the harness checked every commit agrees.
			c.propose(1, 50_000)
			if !c.runUntil(200_000, func() bool { return c.committedEverywhere(2) }) {
				c.dump()
				t.Fatal("op 2 did not commit after the restart")
			}
		})
	}
}

// TestDoViewChangeOnlyOnceItsViewIsDurable: a replica votes for a view only
// once the view is durable (consensus.md correction 1). If it voted first and
// crashed before its superblock write completed, it would come back in the
// older view with its vote counted, free to vote again differently.
func TestDoViewChangeOnlyOnceItsViewIsDurable(t *testing.T) {
	c := newCluster(t, 3, 22)
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	commitEverywhere(t, c, 1, 1)
	dvcs := &sentBy{from: 2, cmd: wire.CommandDoViewChange}
	c.observe = dvcs.observe
	r0.crash()

	// r1 suspects the primary; r2 joins on its StartViewChange, but r2's
	// superblock write of view 1 is slow.
	for i := 0; i < 1000 && r2.group.Status() != StatusViewChange; i++ {
		c.tickHolding(1, 1, 2)
	}
	c.settleExcept(2)
	if r2.group.View() != 1 || r2.journal.durableState.View != 0 {
		c.dump()
		t.Fatalf("r2 in view %d with durable view %d, want view 1 with its write held", r2.group.View(), r2.journal.durableState.View)
	}
	if len(dvcs.frames) != 0 {
		t.Fatalf("r2 sent %d DoViewChange for view 1 while its durable view was still 0", len(dvcs.frames))
	}
	if r1.group.Status() != StatusViewChange {
		t.Fatalf("r1 is %v in view %d: view 1 started without r2's vote", r1.group.Status(), r1.group.View())
	}

	// Once the write completes the vote goes out and view 1 starts.
	c.settle()
	if len(dvcs.frames) == 0 {
		t.Fatal("r2 never voted once view 1 was durable")
	}
	if !c.runUntil(50_000, func() bool { return r1.group.IsPrimary() && r1.group.View() == 1 }) {
		c.dump()
		t.Fatal("r1 did not start view 1")
	}
}

// TestCorruptSlotIsSentBlankWithoutANack: a replica that acknowledged op 2
// and later cannot read its slot reports op 2 in its DoViewChange without a
// nack (DEVIATIONS.md 1): blank when nothing is readable, by header when only
// the body is bad. A nack there, with one lagging replica that never had op
// 2, would make a nack quorum and truncate a committed op.
func TestCorruptSlotIsSentBlankWithoutANack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(j *durableJournal, h wire.Header)
		blank  bool // the vote's entry for op 2 is a blank (else the header)
	}{
		{"unreadable slot", func(j *durableJournal, h wire.Header) { j.faulty[2] = true }, true},
		{"corrupt body", func(j *durableJournal, h wire.Header) { j.durableHdrs[2] = h }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, 3, 23)
			r0, r1 := c.replicas[0], c.replicas[1]
			commitEverywhere(t, c, 1, 1)

			// Op 2 reaches r1 only; r0 commits it on r1's ack and applies it.
			c.drop = func(m message) bool { return m.to == 2 && wire.HeaderOf(m.frame).Command() == wire.CommandPrepare }
			proposeAt(t, r0, 2)
			c.settle()
			if r0.group.CommitMin() != 2 {
				t.Fatalf("r0 did not commit op 2 (commit_min %d)", r0.group.CommitMin())
			}
			committed := c.canon[2]
			f, _ := r1.journal.Frame(2)
			header := *wire.HeaderOf(f)

			// r0 goes down; r1 restarts with its slot of op 2 damaged.
			r0.crash()
			r1.crash()
			delete(r1.journal.durable, 2)
			tc.damage(r1.journal, header)
			r1.start(false)
			c.drop = nil
			if k := r1.journal.Knowledge(2); k != KnowledgeNone && k != KnowledgeHeader {
				t.Fatalf("r1's op 2 is %v, want an unreadable or corrupt slot", k)
			}

			votes := &sentBy{from: 1, cmd: wire.CommandDoViewChange}
			c.observe = votes.observe
			if !c.runUntil(400_000, func() bool { return len(votes.frames) > 0 }) {
				c.dump()
				t.Fatal("r1 never voted")
			}
			for _, v := range votes.frames {
				var x wire.DoViewChangeHeader
				x.Decode(wire.HeaderOf(v))
				entries, err := wire.DecodeSuffix(v[wire.HeaderSize:], x.Op)
				if err != nil || x.Op != 2 {
					t.Fatalf("r1's vote for view %d: op %d, suffix error %v", x.View, x.Op, err)
				}
				e := entries[0] // op 2
				if x.NackBitset.Bit(0) {
					t.Fatalf("r1 nacked op 2 in its vote for view %d: a slot it cannot read is no proof it never prepared op 2", x.View)
				}
				if x.PresentBitset.Bit(0) || wire.IsBlank(&e) != tc.blank {
					t.Fatalf("r1's vote reports op 2 as present=%v blank=%v, want present=false blank=%v",
						x.PresentBitset.Bit(0), wire.IsBlank(&e), tc.blank)
				}
			}
			// Without r0 nobody holds op 2's body: the view change waits
			// rather than truncate it.
			c.run(20_000)
			if n := c.probes["view change truncated an op on a nack quorum"]; n != 0 {
				t.Fatalf("a view change truncated an op (%d times) without r0", n)
			}
			r0.start(false)
			if !c.runUntil(1_000_000, func() bool { return c.committedEverywhere(2) }) {
				c.dump()
				t.Fatalf("op 2 not committed everywhere once r0 was back (probes %v)", c.probes)
			}
			if c.canon[2] != committed {
				t.Fatal("the cluster committed another op 2")
			}
		})
	}
}

// TestNoTruncationBelowANackQuorum: a view change truncates an op only when
// q_nack voters prove they never prepared it. Here r0 committed op 2 on r1's
// ack and crashed; r2 never had op 2. One nack (r2's) is below q_nack = 2 at
// n = 3, so op 2 survives into the new view.
func TestNoTruncationBelowANackQuorum(t *testing.T) {
	c := newCluster(t, 3, 24)
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	commitEverywhere(t, c, 1, 1)
	c.drop = func(m message) bool { return m.to == 2 && wire.HeaderOf(m.frame).Command() == wire.CommandPrepare }
	proposeAt(t, r0, 2)
	c.settle()
	if r0.group.CommitMin() != 2 || r2.group.Op() != 1 {
		t.Fatalf("op 2: r0 commit_min %d, r2 op %d; want committed at r0 and missing at r2", r0.group.CommitMin(), r2.group.Op())
	}
	committed := c.canon[2]
	r0.crash()
	c.drop = nil

	if !c.runUntil(200_000, func() bool { p := c.primary(); return p != nil && p.group.View() > 0 }) {
		c.dump()
		t.Fatal("no new view")
	}
	if n := c.probes["view change truncated an op on a nack quorum"]; n != 0 {
		t.Fatalf("the view change truncated an op on one nack, below q_nack %d (%d truncations)", QuorumNack(3), n)
	}
	p := c.primary()
	if h, ok := p.group.canonicalHeader(2); !ok || h.Checksum() != committed || p.group.Op() < 2 {
		t.Fatalf("the new primary %d (view %d) lost committed op 2: op %d", p.id, p.group.View(), p.group.Op())
	}
	if !c.runUntil(200_000, func() bool { return r1.group.CommitMin() >= 2 && r2.group.CommitMin() >= 2 }) {
		c.dump()
		t.Fatal("op 2 did not commit in the new view")
	}
}

// stalePrepare builds a validly sealed prepare for op that is not the
// cluster's: what a replica's slot could hold from a view whose log was
// later truncated and replaced.
func stalePrepare(op uint64, parent wire.U128, view uint32) []byte {
	x := wire.PrepareHeader{
		Prefix: wire.Prefix{Cluster: wire.ClusterID("vsr-test"), View: view, Command: wire.CommandPrepare},
		Client: wire.U128From64(77), Parent: parent, Op: op, Request: 1, Operation: wire.OperationCreateStream,
		Group: wire.MetadataGroup, Timestamp: 1,
	}
	return wire.BuildFrame(&x, []byte("stale"))
}

// TestRepairedPrepareOffTheChainIsRejected: a repaired prepare whose identity
// is checked by the hash chain (its op's canonical header is unknown, the op
// above's is known) is journaled only if it is the parent the op above
// names. Here r2 restarted without op 1's body, knows op 2's header, and its
// repair from the primary stalls; it asks r1 next, and r1's slot holds a
// stale op 1 (no protocol path produces one today, canary/README.md: this
// is the defence for when one does). r2 must reject it, not journal it.
func TestRepairedPrepareOffTheChainIsRejected(t *testing.T) {
	c := newCluster(t, 3, 25)
	r1, r2 := c.replicas[1], c.replicas[2]
	commitEverywhere(t, c, 1, 3)
	stale := stalePrepare(1, wire.U128{}, 0)
	r1.journal.frames[1] = stale

	r2.crash()
	delete(r2.journal.durable, 1)
	r2.journal.durableState.CommitMax = 3 // the StartView's headers then start at op 3
	r2.start(false)
	// The primary's repair answers to r2 are lost, so r2 turns to r1.
	fromPrimary := func(m message) bool {
		cmd := wire.HeaderOf(m.frame).Command()
		return m.from == 0 && m.to == 2 && (cmd == wire.CommandRepairPrepare || cmd == wire.CommandRepairDone)
	}
	c.drop = fromPrimary
	for i := 0; i < 1000 && r2.group.Status() != StatusNormal; i++ {
		c.tick(2, 1)
	}
	if r2.group.Status() != StatusNormal {
		c.dump()
		t.Fatal("r2 did not rejoin")
	}
	// Whenever r2 journals a repaired prepare, every op it holds as
	// canonical must be the cluster's: checked at that moment, before r2
	// could apply a wrong one.
	c.onEvent = func(r *replica, e Event) {
		if r != r2 || e.Kind != EventProbe || e.Probe != "prepare repaired" {
			return
		}
		for op := uint64(1); op <= 3; op++ {
			if h, ok := r2.group.canon[op]; ok && h.Checksum() != c.canon[op] {
				t.Fatalf("r2 accepted a repaired op %d that is not the parent op %d names: a repair off the hash chain", op, op+1)
			}
		}
	}
	for i := 0; i < 1000 && c.probes["repaired prepare rejected: not canonical"] == 0; i++ {
		c.tick(2, 1)
	}
	if c.probes["repaired prepare rejected: not canonical"] == 0 {
		t.Fatalf("r2 never rejected the stale op 1 (probes %v)", c.probes)
	}
	if f, ok := r2.journal.Frame(1); ok && wire.HeaderOf(f).Checksum() == wire.HeaderOf(stale).Checksum() {
		t.Fatal("r2 journaled r1's stale op 1")
	}

	c.drop = nil
	r1.journal.frames[1] = r1.journal.durable[1]
	c.settle()
	if !c.runUntil(200_000, func() bool { return r2.group.CommitMin() >= 3 }) {
		c.dump()
		t.Fatal("r2 did not repair op 1 from the primary")
	}
	if f, _ := r2.journal.Frame(1); wire.HeaderOf(f).Checksum() != c.canon[1] {
		t.Fatal("r2 holds another op 1 than the cluster committed")
	}
}

// TestJournalFrameOffTheChainIsNotCanonical: below a canonical op, a
// replica's own journaled frame is taken as canonical only when it is the
// parent the op above names. r2 journaled op 2 = A in view 0 (it reached
// only r2); the others never had A, truncated it and committed B2, B3 in
// view 1. r2 restarts with A in its journal and rejoins from a StartView
// whose headers start at op 3: A must stay non-canonical, or r2 applies it.
func TestJournalFrameOffTheChainIsNotCanonical(t *testing.T) {
	c := newCluster(t, 3, 26)
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	commitEverywhere(t, c, 1, 1)

	// A reaches r2 only, by the primary's retransmission; r0's own write of
	// A never completes and r0 crashes.
	c.block(link{0, 1}, link{2, 0})
	proposeAt(t, r0, 2)
	c.settleExcept(0)
	c.tickHolding(0, 200, 0)
	c.settleExcept(0)
	fa, durable := r2.journal.durable[2]
	if !durable {
		t.Fatal("r2 did not journal A durably")
	}
	a := wire.HeaderOf(fa).Checksum()
	r0.crash()
	r2.crash()
	c.unblockAll()

	// r0 and r1 start view 1 without A and commit B2 and B3.
	r0.start(false)
	if !c.runUntil(200_000, func() bool { p := c.primary(); return p != nil && p.group.View() > 0 && p.group.stateDurable() }) {
		c.dump()
		t.Fatal("no new view without r2")
	}
	p := c.primary()
	for req := uint64(12); req <= 13; req++ {
		proposeAt(t, p, req)
		c.settle()
	}
	c.tick(p.id, 80)
	if r0.group.CommitMin() != 3 || r1.group.CommitMin() != 3 {
		t.Fatalf("B2, B3 not committed on r0 and r1 (%d, %d)", r0.group.CommitMin(), r1.group.CommitMin())
	}
	if c.canon[2] == a {
		t.Fatal("A was committed: the scenario did not replace it")
	}

	// r2 comes back with A at op 2. Its completions are held so that what
	// the StartView made canonical is looked at before anything is applied.
	r2.start(false)
	for i := 0; i < 1000 && r2.group.View() != p.group.View(); i++ {
		c.tickHolding(2, 1, 2)
	}
	if r2.group.View() != p.group.View() {
		c.dump()
		t.Fatal("r2 did not install the view")
	}
	if h, ok := r2.group.canon[2]; ok && h.Checksum() == a {
		t.Fatal("r2 took its journal's A as canonical op 2 below op 3, but op 3's parent is B2: off the hash chain")
	}
	c.settle()
	if !c.runUntil(200_000, func() bool { return r2.group.CommitMin() >= 3 }) {
		c.dump()
		t.Fatal("r2 did not catch up")
	}
	// The harness compared every commit of r2 with the others'.
	if f, _ := r2.journal.Frame(2); wire.HeaderOf(f).Checksum() == a {
		t.Fatal("r2 still holds A at op 2")
	}
}

// TestNewPrimaryContinuesTheHeartbeatToken: the Commit heartbeat's token is
// one counter per group (wire.md correction 0.1), and a backup resets its
// heartbeat timer only on a strictly newer token. A new primary therefore
// continues from the highest token it saw; restarting from zero, its
// heartbeats would be ignored and its backups would start view change after
// view change against a live primary.
func TestNewPrimaryContinuesTheHeartbeatToken(t *testing.T) {
	c := newCluster(t, 3, 27)
	r0 := c.replicas[0]
	commitEverywhere(t, c, 1, 1)
	tokens := map[uint8]uint64{} // the highest token each replica sent
	c.observe = func(m message) {
		if wire.HeaderOf(m.frame).Command() == wire.CommandCommit {
			var x wire.CommitHeader
			x.Decode(wire.HeaderOf(m.frame))
			tokens[m.from] = max(tokens[m.from], x.TimestampMonotonic)
		}
	}
	c.tickAll(300) // several heartbeats of view 0
	old := tokens[0]
	if old < 4 {
		t.Fatalf("the primary of view 0 sent heartbeats up to token %d, want several", old)
	}

	r0.crash()
	if !c.runUntil(200_000, func() bool { p := c.primary(); return p != nil && p.group.View() > 0 }) {
		c.dump()
		t.Fatal("no new primary")
	}
	p := c.primary()
	view, suspected := p.group.View(), c.probes["primary suspected"]

	// Three heartbeat timeouts with the new primary alive and every link up.
	c.tickAll(3 * testConfig(0, 3).Timeouts.NormalHeartbeatTicks)
	if tokens[p.id] <= old {
		t.Fatalf("the new primary %d sent heartbeat tokens up to %d, not above the old primary's %d", p.id, tokens[p.id], old)
	}
	if n := c.probes["primary suspected"] - suspected; n != 0 {
		t.Fatalf("backups suspected the live primary of view %d %d times: they ignored its heartbeats", view, n)
	}
	for _, r := range c.replicas {
		if r.up && (r.group.Status() != StatusNormal || r.group.View() != view) {
			t.Fatalf("replica %d is %v in view %d, want normal in view %d", r.id, r.group.Status(), r.group.View(), view)
		}
	}
}

// TestRetransmittedPrepareIsRestamped: a new primary re-proposes the merged
// uncommitted ops under its own view: the frame's view is rewritten (the
// identity excludes it, wire.md 3.5), since backups accept only prepares of
// their view. Op 2 here was prepared in view 0 and reached only r1.
func TestRetransmittedPrepareIsRestamped(t *testing.T) {
	c := newCluster(t, 3, 28)
	r0, r1 := c.replicas[0], c.replicas[1]
	commitEverywhere(t, c, 1, 1)
	c.drop = func(m message) bool {
		cmd := wire.HeaderOf(m.frame).Command()
		return m.to == 2 && cmd == wire.CommandPrepare || m.from == 1 && cmd == wire.CommandPrepareOk
	}
	proposeAt(t, r0, 2)
	c.settle()
	f, held := r1.journal.Frame(2)
	if !held || r0.group.CommitMax() != 1 {
		t.Fatalf("op 2: held by r1 %v, r0 commit_max %d; want held and uncommitted", held, r0.group.CommitMax())
	}
	identity := wire.HeaderOf(f).Checksum()
	r0.crash()
	c.drop = nil

	type sent struct {
		from     uint8
		view, op uint64
		identity wire.U128
	}
	var prepares []sent
	c.observe = func(m message) {
		h := wire.HeaderOf(m.frame)
		if h.Command() == wire.CommandPrepare {
			var x wire.PrepareHeader
			x.Decode(h)
			prepares = append(prepares, sent{m.from, uint64(x.View), x.Op, h.Checksum()})
		}
	}
	if !c.runUntil(200_000, func() bool { p := c.primary(); return p != nil && p.group.View() > 0 && p.group.CommitMin() >= 2 }) {
		c.dump()
		t.Fatal("op 2 did not commit in a new view")
	}
	p := c.primary()
	n := 0
	for _, s := range prepares {
		if s.from != p.id || s.op != 2 {
			continue
		}
		n++
		if s.view != uint64(p.group.View()) {
			t.Fatalf("the new primary %d sent op 2 with view %d, not re-stamped with its view %d", p.id, s.view, p.group.View())
		}
		if s.identity != identity {
			t.Fatalf("re-stamping changed op 2's identity: %s, was %s", s.identity, identity)
		}
	}
	if n == 0 {
		t.Fatal("the new primary never re-proposed op 2")
	}
	if c.canon[2] != identity {
		t.Fatal("the cluster committed another op 2")
	}
}
