package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestMergeTruncatesAboveANackQuorum: an op with a nack quorum was never
// committed, so no op above it was either (commits are in op order), and the
// view change truncates the log below it even when an op above it has too
// few nacks to be truncated on its own. Three replicas commit ops 1..3; the
// primary prepares 4 and 5, and only op 5 reaches r1 (its write of op 4
// never happened): r1 and r2 both prove they never acknowledged op 4, r1
// holds op 5. With the primary gone, a view change of r1 and r2 must drop
// ops 4 and 5 and go on; keeping op 5 would wait forever for op 4's body,
// which nobody has (VOPR seed 815).
func TestMergeTruncatesAboveANackQuorum(t *testing.T) {
	c := newCluster(t, 3, 31)
	r1, r2 := c.replicas[1], c.replicas[2]
	_, f5 := preparedAlone(t, c)
	r1.crash()
	holdDurably(r1, f5)
	r1.start(false)
	if k := r1.journal.Knowledge(4); k != KnowledgeNever {
		t.Fatalf("r1's knowledge of op 4 is %v, want never (provably unacknowledged)", k)
	}
	viewChangeOf(t, c, r1, r2)
	for _, r := range []*replica{r1, r2} {
		if r.group.Op() != 3 {
			t.Fatalf("replica %d's head is op %d after the view change, want 3 (ops 4 and 5 truncated)", r.id, r.group.Op())
		}
	}
	if c.probes["view change truncated above an op with a nack quorum"] == 0 {
		t.Fatalf("the truncation below op 5 never happened (probes %v)", c.probes)
	}
}

// TestMergeTakesAHeaderTheOpAboveNames: the canonical voter (highest
// log_view) lost op 4 (it can prove it never acknowledged it) but holds op 5;
// a voter of a lower log_view holds op 4 with the identity op 5 names as its
// parent. Too few nacks to truncate op 4, so the merge must take that copy as
// the canonical op 4 and repair its body from it, not wait forever for a
// header no canonical vote carries (VOPR seed 814).
func TestMergeTakesAHeaderTheOpAboveNames(t *testing.T) {
	c := newCluster(t, 3, 32)
	r1, r2 := c.replicas[1], c.replicas[2]
	f4, f5 := preparedAlone(t, c)
	r1.crash()
	r2.crash()
	// r1: log_view 2, op 5 held, op 4 never acknowledged.
	holdDurably(r1, f5)
	r1.journal.durableState.View, r1.journal.durableState.LogView = 2, 2
	// r2: log_view 0, op 4 held.
	holdDurably(r2, f4)
	r1.start(false)
	r2.start(false)
	viewChangeOf(t, c, r1, r2)
	holdsBoth := func() bool {
		for _, r := range []*replica{r1, r2} {
			for _, f := range [][]byte{f4, f5} {
				op := u64op(wire.HeaderOf(f))
				if g, ok := r.journal.Frame(op); !ok || wire.HeaderOf(g).Checksum() != wire.HeaderOf(f).Checksum() {
					return false
				}
			}
		}
		return true
	}
	if !c.runUntil(400_000, holdsBoth) {
		c.dump()
		t.Fatal("r1 and r2 never both held ops 4 and 5")
	}
	if c.probes["view change took a header the op above names"] == 0 {
		t.Fatalf("the merge did not take op 4 from the lower log_view (probes %v)", c.probes)
	}
	for _, r := range []*replica{r1, r2} {
		if r.group.Op() != 5 {
			t.Fatalf("replica %d's head is %d, want 5", r.id, r.group.Op())
		}
	}
}

// preparedAlone commits ops 1..3 on every replica of c, then lets the
// primary (replica 0) prepare ops 4 and 5 that reach nobody, and crashes it;
// it returns the two prepares, for a test to plant where it wants them.
func preparedAlone(t *testing.T, c *cluster) (f4, f5 []byte) {
	t.Helper()
	r0 := c.replicas[0]
	commitEverywhere(t, c, 1, 3)
	c.block(link{0, 1}, link{0, 2})
	proposeAt(t, r0, 4)
	proposeAt(t, r0, 5)
	c.settle()
	f4, ok4 := r0.journal.Frame(4)
	f5, ok5 := r0.journal.Frame(5)
	if !ok4 || !ok5 {
		t.Fatal("the primary did not journal ops 4 and 5")
	}
	r0.crash()
	c.unblockAll()
	return f4, f5
}

// holdDurably plants frame in a crashed replica's journal as durable and
// acknowledged, as a completed append would have left it.
func holdDurably(r *replica, frame []byte) {
	op := u64op(wire.HeaderOf(frame))
	r.journal.durable[op] = frame
	r.journal.acked[op] = wire.HeaderOf(frame).Checksum()
}

// viewChangeOf runs c until a and b are Normal in one view.
func viewChangeOf(t *testing.T, c *cluster, a, b *replica) {
	t.Helper()
	if !c.runUntil(400_000, func() bool {
		return a.group.Status() == StatusNormal && b.group.Status() == StatusNormal && a.group.View() == b.group.View()
	}) {
		c.dump()
		t.Fatalf("replicas %d and %d never finished a view change (probes %v)", a.id, b.id, c.probes)
	}
}

// TestMergeWaitsForAHeadOnlyAnUnreadableSlotKnew: the canonical voter
// (highest log_view) cannot read its head slot, and the only copy of that
// op in the quorum is a prepare of an older view that a lower log_view
// holds. The canonical log may have replaced it: here it did, with a
// prepare the frozen replica and the canonical voter acknowledged (a
// replication quorum, so possibly committed). The merge must neither adopt
// the older prepare nor truncate the op (one nack of the two a truncation
// needs), but wait; once the replica holding the canonical op returns,
// the view change completes with it (VOPR seed 11971028900399579235, six
// replicas: the stall is unavoidable, and the liveness phase now explains
// it instead of failing).
func TestMergeWaitsForAHeadOnlyAnUnreadableSlotKnew(t *testing.T) {
	c := newCluster(t, 3, 33)
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	f4, _ := preparedAlone(t, c) // r0 prepared a view-0 op 4 and is down
	f3, ok := r1.journal.Frame(3)
	if !ok {
		t.Fatal("r1 does not hold op 3")
	}
	g4 := replacingPrepare(f3, 3)

	r1.crash()
	r2.crash()
	// r0: log_view 3, holds the view-3 op 4 it prepared as primary of view 3.
	delete(r0.journal.durable, 5)
	delete(r0.journal.acked, 5)
	holdDurably(r0, g4)
	r0.journal.durableState.View, r0.journal.durableState.LogView = 3, 3
	// r1: log_view 3, acknowledged g4, then its slot became unreadable.
	r1.journal.durableState.View, r1.journal.durableState.LogView = 3, 3
	delete(r1.journal.durable, 4)
	r1.journal.faulty[4] = true
	// r2: log_view 0, holds view 0's op 4.
	holdDurably(r2, f4)
	r1.start(false)
	r2.start(false)

	c.run(200_000)
	for _, r := range []*replica{r1, r2} {
		if r.group.Status() == StatusNormal {
			c.dump()
			t.Fatalf("replica %d is Normal at op %d without the canonical op 4", r.id, r.group.Op())
		}
	}
	if f, held := r1.journal.Frame(4); held {
		t.Fatalf("r1 took op %s as op 4, a prepare the canonical log may have replaced", wire.HeaderOf(f).Checksum())
	}
	if c.probes["view change waits for a header"] == 0 {
		t.Fatalf("the merge never waited for op 4's header (probes %v)", c.probes)
	}

	r0.start(false)
	holdsG4 := func() bool {
		for _, r := range c.replicas {
			f, held := r.journal.Frame(4)
			if r.group.Status() != StatusNormal || !held || wire.HeaderOf(f).Checksum() != wire.HeaderOf(g4).Checksum() {
				return false
			}
		}
		return true
	}
	if !c.runUntil(400_000, holdsG4) {
		c.dump()
		t.Fatal("the view change did not complete with the view-3 op 4 once r0 returned")
	}
}

// replacingPrepare builds the prepare a primary of view would have built at
// the op above parent, with a body of its own: a later log's replacement
// for whatever an older view prepared there.
func replacingPrepare(parent []byte, view uint32) []byte {
	var p wire.PrepareHeader
	p.Decode(wire.HeaderOf(parent))
	x := p
	x.Prefix.View = view
	x.Parent = wire.HeaderOf(parent).Checksum()
	x.Op = p.Op + 1
	x.Request = p.Request + 100
	x.Timestamp = p.Timestamp + 1
	return wire.BuildFrame(&x, []byte("replacement"))
}

// TestMergeIgnoresAStaleHeaderOffTheChain: a canonical voter's journal
// holds, above its log's head, the header of an op its log_view replaced
// (a misdirected write left that header copy stale when the reconcile
// cleared it): the header does not chain to the op below it. The merge
// must not adopt it (nor panic on the broken chain): it treats it as
// unknown, and truncates the op once the other voters' heads prove it was
// never committed. Replica 1 leads view 4 and merges its own vote first,
// so the stale header is in every merge it makes. (VOPR seed
// 7628763972220832867: six replicas, a misdirected header write during the
// reconcile of view 5, "merged op 2 does not chain to op 1".)
func TestMergeIgnoresAStaleHeaderOffTheChain(t *testing.T) {
	c := newCluster(t, 3, 35)
	commitEverywhere(t, c, 1, 3)
	f3, _ := c.replicas[0].journal.Frame(3)
	stale := stalePrepare(4, wire.U128{Lo: 0xdead}, 0) // a view-0 op 4 of another log
	for _, r := range c.replicas {
		crashInLogView(r, 3, 2)
	}
	r1 := c.replicas[1]
	r1.journal.durableHdrs[4] = *wire.HeaderOf(stale)
	r1.journal.acked[4] = wire.HeaderOf(stale).Checksum() // it may have acknowledged it once
	for _, r := range c.replicas {
		r.start(false)
	}
	if !c.runUntil(400_000, func() bool {
		for _, r := range c.replicas {
			if r.group.Status() != StatusNormal || r.group.CommitMin() < 3 || r.group.View() < 4 {
				return false
			}
		}
		return true
	}) {
		c.dump()
		t.Fatalf("the view change did not complete (probes %v)", c.probes)
	}
	// The voter reports the pair that does not chain as unknown itself
	// (consistentSuffix); a merge that got the stale header anyway ignores
	// it. Either way it is seen off the chain.
	if c.probes["view change ignored canonical headers off the hash chain"] == 0 &&
		c.probes["DoViewChange reports headers that do not chain as unknown"] == 0 {
		t.Fatalf("the stale header was never seen off the chain (probes %v)", c.probes)
	}
	for _, r := range c.replicas {
		if h, ok := r.journal.Header(4); ok && h.Checksum() == wire.HeaderOf(stale).Checksum() {
			t.Fatalf("replica %d still reports the stale op 4 in view %d", r.id, r.group.View())
		}
		if r.group.Op() != 3 {
			t.Fatalf("replica %d's head is op %d, want 3 (the stale op 4 truncated)", r.id, r.group.Op())
		}
		if f, _ := r.journal.Frame(3); wire.HeaderOf(f).Checksum() != wire.HeaderOf(f3).Checksum() {
			t.Fatalf("replica %d lost op 3", r.id)
		}
	}
}

// TestVoteWithAStaleHeaderIsDecodable scripts VOPR seed
// 1061395566604765858: two replicas, and one's journal holds, above its
// log's head, a stale header older than the op below it (a lower
// timestamp, another parent). Its DoViewChange carried that header, so its
// peer refused every vote of it as undecodable (timestamps must decrease
// going down a suffix), and with two replicas no view change could
// complete without it. A vote reports such a pair as unknown instead, and
// every vote it sends decodes.
func TestVoteWithAStaleHeaderIsDecodable(t *testing.T) {
	c := newCluster(t, 2, 82)
	commitEverywhere(t, c, 1, 3)
	stale := stalePrepare(4, wire.U128{Lo: 0xdead}, 0) // timestamp 1: below op 3's
	for _, r := range c.replicas {
		crashInLogView(r, 3, 2)
	}
	r1 := c.replicas[1]
	r1.journal.durableHdrs[4] = *wire.HeaderOf(stale)
	r1.journal.acked[4] = wire.HeaderOf(stale).Checksum()
	for _, r := range c.replicas {
		r.start(false)
	}
	if !c.runUntil(400_000, func() bool {
		for _, r := range c.replicas {
			if r.group.Status() != StatusNormal || r.group.CommitMin() < 3 || r.group.View() < 4 {
				return false
			}
		}
		return true
	}) {
		c.dump()
		t.Fatalf("the view change did not complete (probes %v)", c.probes)
	}
	if n := c.probes["undecodable DoViewChange suffix"]; n > 0 {
		t.Fatalf("%d votes could not be decoded (probes %v)", n, c.probes)
	}
	if c.probes["DoViewChange reports headers that do not chain as unknown"] == 0 {
		t.Fatalf("the stale header was never reported as unknown (probes %v)", c.probes)
	}
}

// TestMergeKeepsTheLogViewsOwnOpOverAStaleHeader: two replicas, both of
// log_view 3. Replica 0, view 3's primary, prepared op 4 and op 5 in view
// 3 and holds them; replica 1's journal holds, in op 4's slot, the header
// of an op 4 of view 1 that view 3's log replaced (the reconcile's write
// that should have forgotten it was misdirected, and replica 1 restarted).
// The canonical votes disagree at op 4, but only one of the two headers
// was stamped in view 3: it is the log_view's op 4 (one primary, one
// prepare per view and op), the other is stale. A merge that blanked both
// waited for ever for a header nobody reports (VOPR seed 222 with
// -view-change-faults -partition-mode=none: "view change deadlocked: no
// header for an op without a nack quorum", for 60,000 ticks).
func TestMergeKeepsTheLogViewsOwnOpOverAStaleHeader(t *testing.T) {
	c := newCluster(t, 2, 35)
	commitEverywhere(t, c, 1, 3)
	f3, _ := c.replicas[0].journal.Frame(3)
	g4 := replacingPrepare(f3, 3)
	g5 := replacingPrepare(g4, 3)
	stale := staleReplacement(g4) // view 1's op 4 over op 3: another request, a fitting timestamp
	for _, r := range c.replicas {
		crashInLogView(r, 3, 3)
	}
	r0, r1 := c.replicas[0], c.replicas[1]
	holdDurably(r0, g4)
	holdDurably(r0, g5)
	r1.journal.durableHdrs[4] = *wire.HeaderOf(stale)
	r1.journal.acked[4] = wire.HeaderOf(stale).Checksum() // acknowledged in view 1, once
	for _, r := range c.replicas {
		r.start(false)
	}
	viewChangeOf(t, c, r0, r1)
	holdsG4 := func() bool {
		for _, r := range c.replicas {
			f, held := r.journal.Frame(4)
			if !held || wire.HeaderOf(f).Checksum() != wire.HeaderOf(g4).Checksum() {
				return false
			}
		}
		return true
	}
	if !c.runUntil(400_000, holdsG4) {
		c.dump()
		t.Fatalf("view 3's op 4 is not on both replicas (probes %v)", c.probes)
	}
	if c.probes["view change deadlocked: no header for an op without a nack quorum"] > 0 {
		t.Fatalf("the merge deadlocked before it kept view 3's op 4 (probes %v)", c.probes)
	}
}

// TestLeftoverAboveTheLogViewsHeadIsVotedBlank: a replica persisted
// log_view 3 with its log's head at op 3 (the superblock records it), yet
// its journal still holds a view-1 op 4 above that head: the reconcile
// that adopted log_view 3 forgot it, and a misdirected write kept it. Every
// op log_view 3 appended above op 3 was stamped in view 3, so this one is a
// leftover of a replaced log: its vote reports it blank, never present.
// Reported present, a merge whose other votes start above op 4 took it as
// the committed op 4 (VOPR seed 31915 with -stale-answers
// -view-change-faults: a divergent commit). The slot shows no other op 4
// written, so the replica never acknowledged its log's op 4: the blank is
// nacked (VOPR seed 3449264250); where the slot shows another op 4 (the
// log's, whose writes a fault lost) it is not.
func TestLeftoverAboveTheLogViewsHeadIsVotedBlank(t *testing.T) {
	for _, tc := range []struct {
		name  string
		known bool
		other bool // the slot shows another op 4 written
	}{{"head recorded", true, false}, {"head recorded, another op 4 written", true, true}, {"no head recorded", false, false}} {
		known := tc.known
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, 3, 35)
			commitEverywhere(t, c, 1, 3)
			f3, _ := c.replicas[0].journal.Frame(3)
			g4 := replacingPrepare(f3, 3)
			stale := staleReplacement(g4) // view 1's op 4 of a replaced log
			r := c.replicas[1]
			crashInLogView(r, 3, 3)
			holdDurably(r, stale)
			if tc.other {
				r.journal.acked[4] = wire.HeaderOf(g4).Checksum()
			}
			r.journal.recordedHead, r.journal.recordedHeadKnown = 3, known
			r.start(false)
			v := r.group.buildVote()
			e, i, in := v.entry(4)
			if !in {
				t.Fatalf("the vote (head %d) does not cover op 4", v.op)
			}
			blank := wire.IsBlank(&e) && !v.present.Bit(i)
			if known && (!blank || v.nack.Bit(i) == tc.other) {
				t.Fatalf("the leftover op 4 is voted %s (present %v, nack %v), want blank, nacked %v", e.Checksum(), v.present.Bit(i), v.nack.Bit(i), !tc.other)
			}
			if !known && (wire.IsBlank(&e) || e.Checksum() != wire.HeaderOf(stale).Checksum() || !v.present.Bit(i)) {
				t.Fatalf("without a recorded head op 4 is voted %s (present %v): the rule needs the head", e.Checksum(), v.present.Bit(i))
			}
		})
	}
}

// TestVoteKeepsTheLogViewsOpOverAStaleHeaderBelowIt: a replica adopted
// log_view 3, whose log replaced op 4 and put view 3's op 5 above the new
// op 4 (the superblock records the head, op 5), but the reconcile's header
// write of op 4 was misdirected: its journal still holds view 1's op 4,
// and view 3's op 5 by header only. The two do not chain. Op 5 was
// stamped in the log_view, so it is of the log_view's log and the stale
// op 4 is not: the vote reports op 5's header and op 4 blank. A vote that
// blanked both left nobody reporting op 5's header where it was the only
// copy among the voters, and the view change waited for ever (VOPR seed
// 5244 with -view-change-faults -partition-mode=none). The slot shows no
// other op 4 written, so the replica never acknowledged its log's op 4:
// the blank is nacked (VOPR seed 3449264250); where the slot shows another
// op 4 it is not.
func TestVoteKeepsTheLogViewsOpOverAStaleHeaderBelowIt(t *testing.T) {
	for _, other := range []bool{false, true} {
		c := newCluster(t, 3, 35)
		commitEverywhere(t, c, 1, 3)
		f3, _ := c.replicas[0].journal.Frame(3)
		g4 := replacingPrepare(f3, 3)
		g5 := replacingPrepare(g4, 3)
		stale := staleReplacement(g4) // view 1's op 4 of the replaced log
		r := c.replicas[1]
		crashInLogView(r, 3, 3)
		holdDurably(r, stale)
		if other {
			r.journal.acked[4] = wire.HeaderOf(g4).Checksum()
		}
		r.journal.durableHdrs[5] = *wire.HeaderOf(g5)
		r.journal.recordedHead, r.journal.recordedHeadKnown = 5, true
		r.start(false)
		v := r.group.buildVote()
		if v.op != 5 {
			t.Fatalf("the vote's head is op %d, want 5", v.op)
		}
		e5, i5, _ := v.entry(5)
		if e5.Checksum() != wire.HeaderOf(g5).Checksum() || v.nack.Bit(i5) {
			t.Fatalf("op 5 is voted %s (nack %v), want view 3's op 5 %s", e5.Checksum(), v.nack.Bit(i5), wire.HeaderOf(g5).Checksum())
		}
		e4, i4, _ := v.entry(4)
		if !wire.IsBlank(&e4) || v.present.Bit(i4) || v.nack.Bit(i4) == other {
			t.Fatalf("another op 4 written %v: the stale op 4 is voted %s (present %v, nack %v), want blank, nacked %v",
				other, e4.Checksum(), v.present.Bit(i4), v.nack.Bit(i4), !other)
		}
		if c.probes["DoViewChange reports headers that do not chain as unknown"] == 0 {
			t.Fatal("the rule that blanked the stale op did not run")
		}
	}
}

// staleReplacement returns a view-1 prepare at g's op, over g's parent:
// another request, a fitting timestamp. It is what a slot holds when the
// log that put g there replaced it, and a reconcile's write was lost.
// crashInLogView crashes r and leaves it durably in view and log_view
// logView with commit_max commitMax, as a replica that adopted that
// view's log before it crashed.
func crashInLogView(r *replica, logView uint32, commitMax uint64) {
	r.crash()
	r.journal.durableState.View, r.journal.durableState.LogView = logView, logView
	r.journal.durableState.CommitMax = commitMax
}

func staleReplacement(g []byte) []byte {
	var p wire.PrepareHeader
	p.Decode(wire.HeaderOf(g))
	p.Prefix.View, p.Request = 1, p.Request+200
	return wire.BuildFrame(&p, []byte("stale"))
}
