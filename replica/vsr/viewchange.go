package vsr

import (
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// viewChange is the state of one view change, for the view in Group.view.
type viewChange struct {
	svcFrom uint64     // replicas (other than us) that sent SVC for this view
	dvcSent bool       // we sent our DVC for this view
	dvcs    []*dvcVote // by replica: the first DVC each sent for this view (primary only)
	merged  *mergeResult
	// startViewPending: the primary installed the view and waits for it to
	// be durable before broadcasting StartView.
	startViewPending bool
	// reconciling: the journal is being made to agree with an adopted log;
	// log_view must not be persisted until it has.
	reconciling bool
	// withheld: an amnesiac replica reported that it withholds its vote in
	// this view.
	withheld bool
}

func (vc *viewChange) reset(n uint8) {
	*vc = viewChange{dvcs: make([]*dvcVote, n)}
}

// dvcVote is one DoViewChange as the new primary reads it.
type dvcVote struct {
	from    uint8
	logView uint32
	op      uint64
	commit  uint64
	nack    wire.U128
	present wire.U128
	entries []wire.Header // entry i is op-i
}

func (d *dvcVote) entry(op uint64) (wire.Header, int, bool) {
	if op > d.op || d.op-op >= uint64(len(d.entries)) {
		return wire.Header{}, 0, false
	}
	i := int(d.op - op)
	return d.entries[i], i, true
}

// mergeResult is the log the new primary adopts.
type mergeResult struct {
	head      uint64
	commitMax uint64
	headers   map[uint64]wire.Header // (commitMax, head], canonical
	// sources: for each op in (commitMax, head], replicas that can serve its body.
	sources map[uint64]uint64
}

// startViewChange moves to view v in ViewChange status and says so.
func (g *Group) startViewChange(v uint32) {
	if v <= g.view && g.status == StatusViewChange {
		return
	}
	if v < g.view {
		panic("vsr: view change to an older view")
	}
	g.setStatus(StatusViewChange, v)
	g.vc.reset(g.cfg.ReplicaCount)
	g.pipeline, g.requests = nil, nil
	g.normalTimeout.stop()
	g.commitTimeout.stop()
	g.prepareTimeout.stop()
	g.rsvTimeout.stop()
	g.svcTimeout.start()
	g.viewChangeTimeout.start()
	g.repair.reset()
	g.persist()
	g.sendStartViewChange()
	g.maybeSendDoViewChange()
}

func (g *Group) sendStartViewChange() {
	if g.status != StatusViewChange {
		g.svcTimeout.stop()
		return
	}
	svc := wire.StartViewChangeHeader{Prefix: g.prefix(), Group: g.cfg.Group}
	g.broadcast(wire.BuildFrame(&svc, nil))
}

// onStartViewChange: a replica suspects the primary of view h.View-1.
func (g *Group) onStartViewChange(from uint8, h *wire.Header) {
	var x wire.StartViewChangeHeader
	x.Decode(h)
	if g.status == StatusRecovering || x.Group != g.cfg.Group || x.View < g.view {
		return
	}
	if x.View > g.view {
		g.startViewChange(x.View)
	}
	if g.status != StatusViewChange || x.View != g.view {
		return
	}
	g.vc.svcFrom |= 1 << from
	g.maybeSendDoViewChange()
}

// maybeSendDoViewChange sends our vote once f = (n-1)/2 others suspect the
// primary too.
func (g *Group) maybeSendDoViewChange() {
	f := (int(g.cfg.ReplicaCount) - 1) / 2
	if bug.DVCBeforePersist && g.status == StatusViewChange && !g.vc.dvcSent && !g.vc.reconciling && popcount(g.vc.svcFrom) >= f && !g.stateDurable() {
		g.canaryVoteBeforePersist() // canary_dvc_before_persist: the vote skips the stateDurable gate
		return
	}
	if g.status != StatusViewChange || g.vc.dvcSent || g.vc.reconciling || popcount(g.vc.svcFrom) < f || !g.stateDurable() {
		return
	}
	if g.amnesiac && (!amnesiacVoteSafe(int(g.cfg.ReplicaCount)) || g.Primary() == g.cfg.Replica) {
		if !g.vc.withheld {
			g.vc.withheld = true
			g.probe("amnesiac replica withholds its DoViewChange")
		}
		return
	}
	if g.amnesiac {
		g.probe("amnesiac replica votes knowing nothing")
	}
	g.vc.dvcSent = true
	g.dvcTimeout.start()
	g.sendDoViewChange()
}

// amnesiacVoteSafe reports whether a replica that lost its journal may vote
// at once, as one that knows nothing (log_view 0, an empty log, no nack),
// in a cluster of n: when the other votes of any view-change quorum are
// at least a nack quorum, they meet every replication quorum, so they hold
// every committed op without it. That is n = 2 alone (q_vc = 2, q_nack = 1:
// both replicas acknowledged every committed op, and the one that kept its
// memory holds them); elsewhere q_vc - 1 < q_nack, and the replica must
// withhold its vote until it has caught up. Without it, a two-replica group
// whose restarted replica is the next primary never gets a second vote
// (VOPR seeds 5004, 5039, 5104 with sends in every seed). The vote goes
// to the other replica only: an amnesiac replica never merges as primary
// (its view change times out and the next view's primary is the other
// replica), since the other's vote proves nothing when it lost its memory
// too (VOPR seed 19: both had, the merge dropped committed op 1). Then
// nobody merges, and the group stalls beyond the memory-loss bound.
func amnesiacVoteSafe(n int) bool {
	return QuorumViewChange(n)-1 >= QuorumNack(n)
}

// sendDoViewChange broadcasts our vote (Iggy broadcasts it) and, at the new
// primary, counts it.
func (g *Group) sendDoViewChange() {
	if g.status != StatusViewChange || !g.vc.dvcSent {
		g.dvcTimeout.stop()
		return
	}
	vote := g.buildVote()
	dvc := wire.DoViewChangeHeader{Prefix: g.prefix(), Op: vote.op, Commit: vote.commit, Group: g.cfg.Group,
		LogView: vote.logView, NackBitset: vote.nack, PresentBitset: vote.present}
	frame := wire.BuildFrame(&dvc, wire.EncodeSuffix(vote.entries))
	if g.Primary() == g.cfg.Replica {
		g.countVote(vote)
	}
	g.broadcast(frame)
}

// buildVote describes our log for the new primary: the suffix from
// max(commit_max, 1) up to our head (top 128), each op as we know it. An op
// we hold is its header with the present bit; an op we know only by header
// is the header alone, with the nack bit when the journal proves we never
// acknowledged it (DEVIATIONS.md 29); an op we can prove we never
// acknowledged is a blank with the nack bit (nacks above commit only); an
// op we cannot read is a blank with no nack (DEVIATIONS.md 1); a stale op
// (not of the log_view's log) is a blank, nacked where its slot shows it
// alone (DEVIATIONS.md 73).
func (g *Group) buildVote() *dvcVote {
	if g.amnesiac {
		// amnesiacVoteSafe: a vote of log_view 0 with an empty log, no
		// nack: every other vote outranks it, and it truncates nothing.
		return &dvcVote{from: g.cfg.Replica}
	}
	v := &dvcVote{from: g.cfg.Replica, logView: g.logView, op: g.op, commit: min(g.commitMax, g.op)}
	if g.op == 0 {
		return v
	}
	lo := max(v.commit, 1)
	if g.op-lo >= wire.SuffixEntriesMax {
		lo = g.op - wire.SuffixEntriesMax + 1
	}
	for op := g.op; op >= lo; op-- {
		i := len(v.entries)
		frame, held := g.deps.Journal.Frame(op)
		c, canonical := g.canon[op]
		switch {
		case g.leftover[op] && !canonical:
			v.entries = append(v.entries, wire.BlankEntry(op)) // markLeftovers
			// Not of the log_view's log (above its recorded head, stamped
			// before it): where the slot shows no other prepare of the op,
			// this replica never acknowledged the log's (DEVIATIONS.md 73).
			if h, ok := g.deps.Journal.Header(op); ok && op > v.commit && g.deps.Journal.WrittenOnly(op, h.Checksum()) {
				v.nack = v.nack.WithBit(i)
				g.probe("vote nacks a stale op its slot shows alone")
			}
		case op <= g.commitMin && held:
			v.entries = append(v.entries, *wire.HeaderOf(frame))
			v.present = v.present.WithBit(i)
		case canonical && held && wire.HeaderOf(frame).Checksum() == c.Checksum():
			v.entries = append(v.entries, c)
			v.present = v.present.WithBit(i)
		case canonical:
			v.entries = append(v.entries, c)
			if k := g.deps.Journal.Knowledge(op); op > v.commit && (k == KnowledgeNever || k == KnowledgeHeaderNever) {
				v.nack = v.nack.WithBit(i)
			}
		default:
			switch g.deps.Journal.Knowledge(op) {
			case KnowledgeHeld:
				v.entries = append(v.entries, *wire.HeaderOf(frame))
				v.present = v.present.WithBit(i)
			case KnowledgeHeader:
				h, _ := g.deps.Journal.Header(op)
				v.entries = append(v.entries, h)
				if op > v.commit {
					g.probe("vote reports a damaged slot's op unknown, not nacked") // trap "torn tail versus corrupt head"
				}
			case KnowledgeHeaderNever:
				h, _ := g.deps.Journal.Header(op)
				v.entries = append(v.entries, h)
				if op > v.commit {
					v.nack = v.nack.WithBit(i)
				}
			case KnowledgeNever:
				v.entries = append(v.entries, wire.BlankEntry(op))
				if op > v.commit {
					v.nack = v.nack.WithBit(i)
				}
			default:
				v.entries = append(v.entries, wire.BlankEntry(op))
				if op > v.commit {
					g.probe("vote reports a damaged slot's op unknown, not nacked")
				}
			}
		}
		if bug.NackCorrupt {
			g.canaryNackCorrupt(v, op, i) // canary_nack_corrupt: a corrupt slot's op nacked as never prepared
		}
		if op == 1 {
			break
		}
	}
	if bug.VoteDropsTail {
		g.canaryDropTail(v) // canary_vote_drops_tail: the acknowledged tail left out of the vote
	}
	g.consistentSuffix(v)
	if _, err := wire.DecodeSuffix(wire.EncodeSuffix(v.entries), v.op); err != nil {
		panic(fmt.Sprintf("vsr: replica %d built a DoViewChange its peers cannot decode: %v", g.cfg.Replica, err))
	}
	return v
}

// consistentSuffix blanks, without a nack, the entries of the vote that do
// not fit the nearest reported entry above them as a receiver checks a
// suffix (wire.DecodeSuffix: timestamps strictly increase going up, and
// adjacent ops chain). A journal can hold a stale header in or above the
// log it adopted (a misdirected write left an old copy, DEVIATIONS.md 44);
// a vote that carried it would be undecodable, and with it the whole view
// change (VOPR seed 1061395566604765858: two replicas, every vote of one
// of them refused, for ever). Of two entries that do not fit, a canonical
// one is kept, else one stamped in the log_view where the other is not;
// otherwise both are reported blank: nothing is known of them, which is
// what the merge makes of such a pair too, and a blank without a nack
// never truncates an op. A stale entry blanked for an adjacent entry of the
// log_view is nacked where its slot proves the log's op was never
// acknowledged here (offChainNack, DEVIATIONS.md 73).
func (g *Group) consistentSuffix(v *dvcVote) {
	canonical := func(i int) bool {
		e := &v.entries[i]
		c, ok := g.canon[v.op-uint64(i)]
		return ok && c.Checksum() == e.Checksum()
	}
	ofLogView := func(i int) bool { return v.entries[i].View() >= v.logView }
	blank := func(i int) {
		v.entries[i] = wire.BlankEntry(v.op - uint64(i))
		v.present = v.present.WithoutBit(i)
		v.nack = v.nack.WithoutBit(i)
	}
	// blankStale blanks entry b, which does not chain with entry k, kept:
	// with a nack where that proves b's op was never acknowledged here.
	blankStale := func(b, k int) {
		nack := g.offChainNack(v, b, k)
		blank(b)
		if nack {
			v.nack = v.nack.WithBit(b)
			g.probe("vote nacks a stale op its slot shows alone")
		}
	}
	for round := 0; round <= len(v.entries); round++ {
		child := -1 // the nearest non-blank entry above
		conflict := false
		for i := range v.entries {
			e := &v.entries[i]
			if wire.IsBlank(e) {
				continue
			}
			if child >= 0 && !fits(e, &v.entries[child]) {
				conflict = true
				switch ce, cc := canonical(i), canonical(child); {
				case ce && !cc:
					blankStale(child, i)
				case cc && !ce:
					blankStale(i, child)
				case !ce && !cc && ofLogView(i) != ofLogView(child):
					// The one stamped in the log_view is of its log (one
					// primary, one prepare per view and op; ops above the
					// log_view's recorded head are blank already, as
					// leftovers): the other does not chain with it, so
					// it is not. Blanking both left nobody reporting the
					// log's op (VOPR seed 5244 with -view-change-faults:
					// a stale op 69 under view 12's op 70, the only copy
					// of its header in the core; the view change waited
					// for ever).
					if ofLogView(i) {
						blankStale(child, i)
					} else {
						blankStale(i, child)
					}
				default:
					blank(child)
					blank(i)
				}
				g.probe("DoViewChange reports headers that do not chain as unknown")
				break
			}
			child = i
		}
		if !conflict {
			return
		}
	}
	panic("vsr: a suffix that does not settle")
}

// offChainNack reports whether entry b of the vote, which consistentSuffix
// is about to blank for not chaining with entry k, is to be nacked: whether
// that proves this replica never acknowledged the log_view's op at b's
// place: k is b's neighbour (adjacent ops) and stamped in the log_view, so
// it is of the log_view's log (one primary per view, whose log only grows
// in it, stamps it; a later primary's stamp would be above), and the two do
// not chain, so b's prepare is not the log's; b was stamped before the
// log_view; and b's slot shows no other prepare of the op
// (Journal.WrittenOnly), so none was acknowledged here. Blank without a
// nack, such an op deadlocked a two-replica view change: the peer's copy,
// the only other, was a write its crash tore (VOPR seed 3449264250: a
// view-8 op 2 left in replica 0's slot by a misdirected reconcile write,
// under view 9's op 1; replica 1's view-9 op 2 torn in flight). An op the
// slot shows another prepare of (or damage) stays a blank without a nack.
func (g *Group) offChainNack(v *dvcVote, b, k int) bool {
	if b != k+1 && k != b+1 {
		return false
	}
	lo, hi := &v.entries[max(b, k)], &v.entries[min(b, k)] // entries run from the head down
	var x, y wire.PrepareHeader
	x.Decode(lo)
	y.Decode(hi)
	if y.Parent == x.Checksum {
		return false // they chain: a timestamp disorder proves nothing of identity
	}
	e := &v.entries[b]
	op := v.op - uint64(b)
	if op <= v.commit || v.entries[k].View() != v.logView || e.View() >= v.logView {
		return false
	}
	return g.deps.Journal.WrittenOnly(op, e.Checksum())
}

// fits reports whether entry e (below) and child (the nearest non-blank
// entry above it) pass wire.DecodeSuffix's pair checks.
func fits(e, child *wire.Header) bool {
	var x, c wire.PrepareHeader
	x.Decode(e)
	c.Decode(child)
	if x.Timestamp >= c.Timestamp {
		return false
	}
	return x.Op+1 != c.Op || x.Checksum.IsZero() || c.Parent == x.Checksum
}

// onDoViewChange: a vote for view h.View.
func (g *Group) onDoViewChange(from uint8, frame []byte) {
	var x wire.DoViewChangeHeader
	x.Decode(wire.HeaderOf(frame))
	if g.status == StatusRecovering || x.Group != g.cfg.Group || x.View < g.view {
		return
	}
	if x.View > g.view {
		g.startViewChange(x.View)
	}
	if g.status != StatusViewChange || x.View != g.view {
		return
	}
	// A DVC is also a suspicion of the old primary.
	g.vc.svcFrom |= 1 << from
	g.maybeSendDoViewChange()
	if g.Primary() != g.cfg.Replica {
		return
	}
	entries, err := wire.DecodeSuffix(frame[wire.HeaderSize:], x.Op)
	if err != nil {
		g.probe("undecodable DoViewChange suffix")
		return
	}
	g.countVote(&dvcVote{from: from, logView: x.LogView, op: x.Op, commit: x.Commit, nack: x.NackBitset,
		present: x.PresentBitset, entries: entries})
}

// countVote keeps the first vote of each replica and merges at a
// view-change quorum.
func (g *Group) countVote(v *dvcVote) {
	if g.vc.dvcs[v.from] != nil || g.vc.merged != nil {
		return
	}
	g.vc.dvcs[v.from] = v
	votes := 0
	for _, d := range g.vc.dvcs {
		if d != nil {
			votes++
		}
	}
	if votes < QuorumViewChange(int(g.cfg.ReplicaCount)) || g.vc.dvcs[g.cfg.Replica] == nil {
		return
	}
	m, ok := g.merge()
	if !ok {
		return
	}
	g.vc.merged = m
	g.adoptMerge()
}

// merge decides the new view's log from the votes (consensus.md, "DVC
// merge"). The canonical votes are those of the highest log_view; the log
// ends below the lowest op above commit_max that a nack quorum proves was
// never committed (and below the ops truncated from the top on their own
// nack quorums); that is the head, and every op below it down to
// commit_max must have a canonical header.
func (g *Group) merge() (*mergeResult, bool) {
	var votes []*dvcVote
	for _, d := range g.vc.dvcs {
		if d != nil {
			votes = append(votes, d)
		}
	}
	// A canonical vote may carry a header that is not of its log_view's
	// log: a disk fault the atlas allows (a misdirected write that left a
	// header copy stale, VOPR seed 7628763972220832867) survives the
	// reconcile that should have cleared it. Such a header shows as a
	// conflict with another canonical vote or as a break in the hash chain;
	// every header involved is then treated as unknown (blank, no nack),
	// which never truncates nor adopts anything it should not, and the merge
	// runs again without them. Each round blanks at least one header, so
	// the rounds are bounded by the entries.
	votes = g.consistentVotes(votes)
	for round := 0; ; round++ {
		m, broken, ok := g.mergeVotes(votes)
		if broken == 0 {
			return m, ok
		}
		if round > 2*wire.SuffixEntriesMax {
			panic(fmt.Sprintf("vsr: view %d: the merge found breaks in the hash chain round after round", g.view))
		}
		g.probe("view change ignored canonical headers off the hash chain")
		votes = blankAt(votes, broken, broken+1)
	}
}

// consistentVotes returns the votes with every header of a canonical vote
// (one of the highest log_view) blanked that conflicts with another
// canonical vote's header for the same op, or that breaks the hash chain
// with the vote's own header of the op above or below.
//
// Of conflicting headers, one stamped in the log_view itself (or later: a
// retransmission re-stamps) is kept where it is the only such identity:
// the log_view's primary prepared or retransmitted it, and one primary
// puts one prepare at an op, so it is the log_view's op. A stale copy is
// an op the log_view's log replaced, stamped in an earlier view. Blanking
// it too left nobody reporting the op (VOPR seed 222 with
// -view-change-faults: two replicas, a view-4 op 17 on one, a view-3 op
// 17 header left above the other's head by a misdirected forget write, and
// the view change waited for ever).
func (g *Group) consistentVotes(votes []*dvcVote) []*dvcVote {
	logViewMax := logViewMaxOf(votes)
	seen := make(map[uint64]wire.U128)
	conflict := make(map[uint64]bool)
	// ofLogView: per op, the identity of a header stamped in logViewMax or
	// later, and whether two such identities were seen (then none is kept).
	type stamped struct {
		id        wire.U128
		ambiguous bool
	}
	ofLogView := make(map[uint64]stamped)
	for _, d := range votes {
		if d.logView != logViewMax {
			continue
		}
		for i := range d.entries {
			e := &d.entries[i]
			if wire.IsBlank(e) {
				continue
			}
			op := d.op - uint64(i)
			if c, ok := seen[op]; ok && c != e.Checksum() {
				conflict[op] = true
			}
			seen[op] = e.Checksum()
			if e.View() >= logViewMax {
				if s, ok := ofLogView[op]; ok && s.id != e.Checksum() {
					ofLogView[op] = stamped{ambiguous: true}
				} else if !ok {
					ofLogView[op] = stamped{id: e.Checksum()}
				}
			}
		}
	}
	kept := func(op uint64, id wire.U128) bool {
		s, ok := ofLogView[op]
		return ok && !s.ambiguous && s.id == id
	}
	out := make([]*dvcVote, len(votes))
	for k, d := range votes {
		out[k] = d
		if d.logView != logViewMax {
			continue
		}
		var suspect []uint64
		for i := range d.entries {
			e := &d.entries[i]
			if wire.IsBlank(e) {
				continue
			}
			op := d.op - uint64(i)
			if conflict[op] && !kept(op, e.Checksum()) {
				suspect = append(suspect, op)
			}
			if i+1 < len(d.entries) && !wire.IsBlank(&d.entries[i+1]) {
				var p wire.PrepareHeader
				p.Decode(e)
				if p.Parent != d.entries[i+1].Checksum() {
					suspect = append(suspect, op, op-1)
				}
			}
		}
		if len(suspect) > 0 {
			g.probe("view change ignored canonical headers off the hash chain")
			out[k] = d.withBlanks(suspect)
		}
	}
	return out
}

// blankAt returns the votes with the canonical votes' headers of ops lo
// and hi blanked.
func blankAt(votes []*dvcVote, lo, hi uint64) []*dvcVote {
	logViewMax := logViewMaxOf(votes)
	out := make([]*dvcVote, len(votes))
	for k, d := range votes {
		out[k] = d
		if d.logView == logViewMax {
			out[k] = d.withBlanks([]uint64{lo, hi})
		}
	}
	return out
}

// logViewMaxOf returns the highest log_view of the votes: theirs are the
// canonical votes.
func logViewMaxOf(votes []*dvcVote) uint32 {
	lv := uint32(0)
	for _, d := range votes {
		lv = max(lv, d.logView)
	}
	return lv
}

// withBlanks returns a copy of the vote with its entries for ops blanked
// and their present and nack bits cleared: what a vote says of an op it
// cannot read.
func (d *dvcVote) withBlanks(ops []uint64) *dvcVote {
	c := *d
	c.entries = append([]wire.Header(nil), d.entries...)
	for _, op := range ops {
		if _, i, in := d.entry(op); in {
			c.entries[i] = wire.BlankEntry(op)
			c.present = c.present.WithoutBit(i)
			c.nack = c.nack.WithoutBit(i)
		}
	}
	return &c
}

// mergeVotes is one round of the merge over votes. broken is nonzero when
// the merged headers break the hash chain between ops broken and broken+1:
// the caller blanks both and merges again.
func (g *Group) mergeVotes(votes []*dvcVote) (m *mergeResult, broken uint64, ok bool) {
	m = &mergeResult{headers: make(map[uint64]wire.Header), sources: make(map[uint64]uint64)}
	logViewMax := logViewMaxOf(votes)
	for _, d := range votes {
		m.commitMax = max(m.commitMax, d.commit)
	}
	m.commitMax = max(m.commitMax, g.commitMax)
	// Every prepare that exists was built by a primary whose pipeline held at
	// most PipelineMax ops: the commit it carries was committed, and so was
	// everything PipelineMax below it (consensus.md, merge rules).
	pipeline := uint64(g.cfg.PipelineMax)
	// Only a header the voter knows counts: an op it cannot read (a faulty
	// slot reported blank) may never have been prepared at all. The
	// highest it knows counts, not only its head: where its head slot is
	// damaged and its durable commit_max lags (commit_max is persisted with
	// the view, not with every commit), the votes' commits alone can lie
	// more than a suffix below the head (VOPR seed 424245 -long
	// -view-change-faults -rollback: two votes of log_view 111, heads 1100
	// and 1102 unreadable, commit 606; the merge panicked on 494
	// uncommitted ops). Any prepare that exists proves its own bound,
	// whichever log it belongs to: a committed op is at its place in every
	// later log.
	for _, d := range votes {
		for i := range d.entries {
			h := &d.entries[i]
			if wire.IsBlank(h) {
				continue
			}
			op := d.op - uint64(i)
			var p wire.PrepareHeader
			p.Decode(h)
			m.commitMax = max(m.commitMax, min(p.Commit, op))
			if op > pipeline {
				m.commitMax = max(m.commitMax, op-pipeline)
			}
			break
		}
	}
	top := uint64(0)
	for _, d := range votes {
		if d.logView == logViewMax {
			top = max(top, d.op)
		}
	}
	canonicalAt := func(op uint64) (wire.Header, bool) {
		var found wire.Header
		ok := false
		for _, d := range votes {
			if d.logView != logViewMax {
				continue
			}
			h, _, in := d.entry(op)
			if !in || wire.IsBlank(&h) {
				continue
			}
			if ok && found.Checksum() != h.Checksum() {
				panic(fmt.Sprintf("vsr: view %d: canonical votes disagree at op %d (%s vs %s) after consistentVotes",
					g.view, op, found.Checksum(), h.Checksum()))
			}
			found, ok = h, true
		}
		return found, ok
	}
	qNack := QuorumNack(int(g.cfg.ReplicaCount))
	if bug.TruncateWithoutQuorum {
		qNack-- // canary_truncate_without_quorum: one nack short of a nack quorum
	}
	nacksAt := func(op uint64) int {
		h, known := canonicalAt(op)
		nacks := 0
		for _, d := range votes {
			e, i, in := d.entry(op)
			switch {
			case d.op == 0 && g.cfg.MemoryJournal:
				// A vote of an empty log in a group whose journal lives in
				// memory nacks nothing: it is what an amnesiac replica
				// sends (amnesiacVoteSafe), which may have acknowledged ops
				// it no longer knows of (VOPR seed 6455057784201346205: a
				// two-replica group's committed op 1 truncated on such a
				// vote, both of log_view 0). A fresh replica's vote looks
				// the same; not counting it only keeps an op a nack quorum
				// might have dropped. A durable journal's empty log nacks:
				// without it, a two-replica metadata group whose primary's
				// first prepares tore (Unknown, never nackable) waits for
				// ever (6 of the 2,000 seeds from 1641702591265066990).
			case d.op < op:
				nacks++
			case in && d.nack.Bit(i):
				nacks++
			case in && known && d.logView < logViewMax && !wire.IsBlank(&e) && e.Checksum() != h.Checksum():
				nacks++ // it holds another op here: it never prepared the canonical one
			}
		}
		return nacks
	}
	head := top
	for ; head > m.commitMax && nacksAt(head) >= qNack; head-- {
		g.probe("view change truncated an op on a nack quorum")
	}
	// An op with a nack quorum was never committed, so no op above it was
	// either (an op commits only after every op below it): the log ends
	// below the lowest such op, even where an op above it has too few nacks
	// to be truncated by itself, as Iggy's merge does (consensus.md: it
	// scans up from commit_max). Keeping that op would wait forever for the
	// body of the one below, which no voter holds (VOPR seed 815).
	for op := m.commitMax + 1; op < head; op++ {
		if nacksAt(op) >= qNack {
			g.probe("view change truncated above an op with a nack quorum")
			head = op - 1
			break
		}
	}
	m.head = head
	// The canonical votes' headers, from the head down as far as they
	// reach: above commit_max every op needs one; at and below it they
	// anchor the hash chain the new primary checks its journal against.
	lowest := head
	for _, d := range votes {
		if d.logView == logViewMax && len(d.entries) > 0 {
			lowest = min(lowest, d.op+1-uint64(len(d.entries)))
		}
	}
	for op := head; op >= max(lowest, 1) && op > 0; op-- {
		h, ok := canonicalAt(op)
		if !ok {
			// No canonical vote reports the op (a canonical voter's copy can
			// be lost while the op above survives), but the op above names
			// it as parent: a lower log_view's copy with that identity is
			// the canonical one (consensus.md: lower-log_view headers count
			// only if the entry above names them). Without it the view
			// change would wait forever for a header it can know (VOPR seed
			// 814).
			h, ok = namedByAbove(votes, m.headers, op)
			if ok {
				g.probe("view change took a header the op above names")
			}
		}
		if !ok && op == head && op <= m.commitMax && g.commitMin >= op {
			// The head is committed and applied here: this replica, the new
			// primary, knows its identity (the one it applied) and needs no
			// vote to report it. After a state transfer installed op C, no
			// journal holds op C's header (the install brings the state, not
			// the prepare), and an idle group whose head is C would wait for
			// ever for a header nobody can send (VOPR seed 3562540142 -long:
			// every voter of partition group 579 had installed or lost op
			// 14, 4,467 views in a row).
			g.probe("view change: the head is applied here, its header is not needed")
			continue
		}
		if !ok {
			if op > m.commitMax || op == head {
				g.probe("view change waits for a header")
				if g.allVoted() {
					g.probe("view change deadlocked: no header for an op without a nack quorum")
				}
				return nil, 0, false
			}
			continue
		}
		m.headers[op] = h
		if above, ok := m.headers[op+1]; ok {
			var p wire.PrepareHeader
			p.Decode(&above)
			if p.Parent != h.Checksum() {
				return nil, op, false
			}
		}
		for _, d := range votes {
			if e, i, in := d.entry(op); in && d.present.Bit(i) && e.Checksum() == h.Checksum() {
				m.sources[op] |= 1 << d.from
			}
		}
	}
	if head < m.commitMax {
		panic(fmt.Sprintf("vsr: view %d: the merge truncated the log to op %d, below commit_max %d: committed ops lost", g.view, head, m.commitMax))
	}
	if head-m.commitMax > uint64(wire.SuffixEntriesMax-1) {
		panic(fmt.Sprintf("vsr: merged %d uncommitted ops", head-m.commitMax))
	}
	return m, 0, true
}

// namedByAbove returns a vote's header for op whose identity is the parent
// that the merged header of op+1 names, from votes of any log_view.
func namedByAbove(votes []*dvcVote, merged map[uint64]wire.Header, op uint64) (wire.Header, bool) {
	above, ok := merged[op+1]
	if !ok {
		return wire.Header{}, false
	}
	var p wire.PrepareHeader
	p.Decode(&above)
	for _, d := range votes {
		if e, _, in := d.entry(op); in && !wire.IsBlank(&e) && e.Checksum() == p.Parent {
			return e, true
		}
	}
	return wire.Header{}, false
}

func (g *Group) allVoted() bool {
	for _, d := range g.vc.dvcs {
		if d == nil {
			return false
		}
	}
	return true
}

// adoptMerge installs the merged log at the new primary: it needs every
// uncommitted body before it can go Normal and re-replicate them.
func (g *Group) adoptMerge() {
	m := g.vc.merged
	g.commitMax = max(g.commitMax, m.commitMax)
	if m.head < g.op {
		g.deps.Journal.Truncate(m.head)
		// Its own votes from now on end at the merged head, while its disk
		// still holds the old log until the reconcile runs.
		g.emit(Event{Kind: EventReconciled, View: g.view, Op: m.head})
	}
	// Canonical knowledge belongs to one view's log: what we knew of our old
	// log_view's log above commit_min says nothing about the merged one.
	for op := g.commitMin + 1; op <= max(g.op, m.head); op++ {
		delete(g.canon, op)
	}
	for op := g.commitMin + 1; op <= m.head; op++ {
		if h, ok := m.headers[op]; ok {
			g.canon[op] = h
		}
	}
	g.op = m.head
	if g.amnesiac {
		panic(fmt.Sprintf("vsr: amnesiac replica %d merged view %d as primary", g.cfg.Replica, g.view))
	}
	if m.head > 0 {
		if h, ok := m.headers[m.head]; ok {
			var p wire.PrepareHeader
			p.Decode(&h)
			g.timestampMax = max(g.timestampMax, p.Timestamp)
		}
	}
	g.extendCanonDown()
	g.tryStartView()
}

// tryStartView starts the view once the primary holds every uncommitted
// body of the merged log; until then it repairs them from the voters that
// have them.
func (g *Group) tryStartView() {
	m := g.vc.merged
	if m == nil || g.status != StatusViewChange || g.vc.reconciling {
		return
	}
	for op := m.commitMax + 1; op <= m.head; op++ {
		if !g.holdsCanonical(op) {
			g.repairFrom(m.sources[op], op, m.head)
			return
		}
	}
	g.reconcileThen(func() {
		g.becomeNormal()
		g.vc.startViewPending = true
		g.rebuildPipeline()
		g.onStateDurable()
	})
}

// holdsCanonical reports whether the journal holds op with its canonical identity.
func (g *Group) holdsCanonical(op uint64) bool {
	c, ok := g.canon[op]
	if !ok {
		return false
	}
	f, held := g.deps.Journal.Frame(op)
	return held && wire.HeaderOf(f).Checksum() == c.Checksum()
}

// reconcileThen makes the journal agree durably with the adopted canonical
// log, then runs next (which persists the new log_view).
func (g *Group) reconcileThen(next func()) {
	var headers []wire.Header
	for op := g.commitMin + 1; op <= g.op; op++ {
		if c, ok := g.canon[op]; ok {
			if g.deps.Journal.Admits(op) != Admitted {
				// Its slot still holds an op above the durable checkpoint:
				// the header is recorded once a checkpoint frees the slot,
				// when the op itself is journaled. Meanwhile the op is
				// unacknowledged here, which its slot's older header says
				// (the journal nacks it, rightly).
				g.probe("reconcile leaves an op its ring cannot hold yet")
				continue
			}
			headers = append(headers, c)
			if f, held := g.deps.Journal.Frame(op); held && wire.HeaderOf(f).Checksum() != c.Checksum() {
				// The journal holds another prepare at a canonical op (one a
				// later view replaced): the reconcile forgets its body, so
				// neither an ack by slot occupancy nor the commit walk can
				// take it (consensus.md traps).
				g.probe("adopted log replaces another prepare the journal held")
			}
		}
	}
	g.vc.reconciling = true
	g.leftover = nil // the reconcile forgets or rewrites every slot above the canonical log
	view := g.view
	g.reconcileSeq++
	seq := g.reconcileSeq
	g.emit(Event{Kind: EventReconciled, View: g.view, Op: g.op})
	g.deps.Journal.Reconcile(g.op, headers, func() {
		if seq != g.reconcileSeq {
			// A later reconcile of the same view (a StartView that came
			// while a merge's reconcile ran) is the one whose log goes
			// Normal, once its own writes are durable: this one's done
			// would persist the log_view before them (long seed
			// 1039472243: Normal in log_view 1158 with head 483 while op
			// 483's header was still being written; a crash, and a vote
			// of log_view 1158 ending at 482).
			g.probe("reconcile superseded by a later one: its completion does nothing")
			return
		}
		g.vc.reconciling = false
		if g.view != view || g.status != StatusViewChange {
			// A newer view, or a probe for one (a StartView the ring cannot
			// hold yet sends the replica Recovering to catch up): what this
			// reconcile adopted is no longer the log to go Normal with.
			return
		}
		next()
	})
}

// rebuildPipeline re-proposes the merged uncommitted ops in the new view.
func (g *Group) rebuildPipeline() {
	g.pipeline = g.pipeline[:0]
	for op := g.commitMax + 1; op <= g.op; op++ {
		f, _ := g.deps.Journal.Frame(op)
		g.pipeline = append(g.pipeline, &pending{op: op, header: g.canon[op], frame: f})
	}
	if len(g.pipeline) > 0 {
		g.prepareTimeout.start()
	}
}

// broadcastStartView announces the view with its suffix.
func (g *Group) broadcastStartView() {
	headers := g.suffixHeaders()
	sv := wire.StartViewHeader{Prefix: g.prefix(), Op: g.op, Commit: g.commitMax, Group: g.cfg.Group}
	g.broadcast(wire.BuildFrame(&sv, wire.EncodeSuffix(headers)))
	g.emit(Event{Kind: EventStartView, View: g.view, Op: g.op, Commit: g.commitMax, Headers: headers})
	g.commitPipeline()
	g.commitJournal()
}

// suffixHeaders returns the canonical headers from the head down to
// max(commit_max, 1) (top 128), for a StartView.
func (g *Group) suffixHeaders() []wire.Header {
	if g.op == 0 {
		return nil
	}
	lo := max(min(g.commitMax, g.op), 1)
	if g.op-lo >= wire.SuffixEntriesMax {
		lo = g.op - wire.SuffixEntriesMax + 1
	}
	var hs []wire.Header
	for op := g.op; op >= lo; op-- {
		h, ok := g.canonicalHeader(op)
		if !ok {
			break // below what we know: the receiver chains down from the last one
		}
		hs = append(hs, h)
		if op == 1 {
			break
		}
	}
	return hs
}

// canonicalHeader returns op's canonical header: from canon, or from the
// journal for an applied op.
func (g *Group) canonicalHeader(op uint64) (wire.Header, bool) {
	if h, ok := g.canon[op]; ok {
		return h, true
	}
	if op <= g.commitMin {
		if f, ok := g.deps.Journal.Frame(op); ok {
			return *wire.HeaderOf(f), true
		}
	}
	return wire.Header{}, false
}

// onStartView: the primary of a view installs it here.
func (g *Group) onStartView(from uint8, frame []byte) {
	var x wire.StartViewHeader
	x.Decode(wire.HeaderOf(frame))
	if x.Group != g.cfg.Group || from != PrimaryIndex(x.View, g.cfg.ReplicaCount) || x.View < g.view {
		return
	}
	if g.status == StatusRecovering && !x.Incarnation.IsZero() && x.Incarnation != g.recovery.incarnation &&
		x.View <= g.view && x.Op < g.op {
		if bug.StaleStartViewAccepted {
			g.probe("canary: stale StartView installed") // canary_stale_startview_accepted: the guard skipped
		} else {
			g.probe("stale StartView ignored")
			return // consensus.md correction 6: a narrow incarnation guard
		}
	}
	if x.View == g.view && g.status == StatusNormal {
		if x.Op <= g.op || g.logView == g.view {
			return // already installed
		}
	}
	if x.View == g.logView && x.Op < g.commitMin {
		g.probe("StartView below commit_min skipped")
		return // consensus.md correction 5
	}
	entries, err := wire.DecodeSuffix(frame[wire.HeaderSize:], x.Op)
	if err != nil {
		g.probe("undecodable StartView suffix")
		entries = nil
	}
	if len(entries) == 0 && x.Op > g.commitMin && x.Commit >= x.Op {
		// A StartView without headers whose every op is committed: the
		// view's primary applied them and no longer holds their headers (a
		// partition primary's ops flushed and evicted, or installed by a
		// state transfer). Asking for a full one gets the same answer again,
		// and an amnesiac replica probed, elected and went Recovering again
		// 37 times while the data sat in the primary's segment log (VOPR
		// seed 3965681371). Nothing uncommitted is missing, and committed
		// ops are canonical in every later view: catch up on them (repair
		// from the primary, which serves only canonical ops, or a state
		// transfer where it answers RangeEvicted) and adopt the view once
		// its head is applied here, so the log_view goes durable only with
		// its whole log held.
		g.startCatchUp(x.View, x.Op, x.Commit, nil, true)
		return
	}
	if len(entries) == 0 && x.Op > g.commitMin {
		// A StartView without headers (an older-view correction, or a peer
		// that knew none) cannot anchor our log: ask for a full one.
		g.probe("StartView without headers")
		if g.status != StatusRecovering {
			g.view = max(g.view, x.View)
		}
		g.startRecoveryProbe()
		return
	}
	g.installView(x.View, x.Op, x.Commit, entries)
}

// installView makes a backup Normal in view with the primary's log.
func (g *Group) installView(view uint32, op, commit uint64, entries []wire.Header) {
	if op > g.deps.Journal.AdmitsThrough() {
		g.startCatchUp(view, op, commit, entries, false)
		return
	}
	g.vc.reset(g.cfg.ReplicaCount)
	g.repair.reset()
	g.status, g.view = StatusViewChange, view // Normal only once reconciled and durable
	if op < g.op {
		g.deps.Journal.Truncate(op)
	}
	for o := op + 1; o <= g.op; o++ {
		delete(g.canon, o)
	}
	// The new view's canonical headers replace ours above commit_min.
	for o := g.commitMin + 1; o <= max(op, g.op); o++ {
		delete(g.canon, o)
	}
	g.op = max(op, g.commitMin)
	for _, h := range entries {
		var p wire.PrepareHeader
		p.Decode(&h)
		if p.Op > g.commitMin && !wire.IsBlank(&h) {
			g.canon[p.Op] = h
			g.timestampMax = max(g.timestampMax, p.Timestamp)
		}
	}
	g.learnCommit(commit)
	g.extendCanonDown()
	if g.amnesiac {
		// A log it joins since its restart: every op it may have
		// acknowledged and that may be committed is in it, so once it has
		// applied that log it holds them all. Any view's log will do, the
		// latest best: a later view may truncate the uncommitted top of an
		// earlier one, which would then never be applied (VOPR seed
		// 15776400082343665307: amnesiac for good after view 11's ops 10
		// and 11 were dropped by view 17).
		g.amnesiaUntil, g.amnesiaKnown = g.op, true
		g.caughtUp()
	}
	g.reconcileThen(func() {
		g.becomeNormal()
		g.sendAcks()
		g.commitJournal()
		g.requestRepair()
	})
}

// extendCanonDown learns canonical headers below the known ones by the
// hash chain: op k's identity is op k+1's parent, and a journaled frame with
// that identity gives k's header.
func (g *Group) extendCanonDown() {
	for op := g.op; op > g.commitMin+1; op-- {
		above, ok := g.canon[op]
		if !ok {
			continue
		}
		if _, known := g.canon[op-1]; known {
			continue
		}
		var p wire.PrepareHeader
		p.Decode(&above)
		if op-1 == g.commitMin {
			continue
		}
		if bug.ChainUnchecked {
			g.canaryChainUnchecked(op-1, p.Parent) // canary_chain_unchecked: the journal's frame taken without the chain check
		}
		f, held := g.deps.Journal.Frame(op - 1)
		if held && wire.HeaderOf(f).Checksum() == p.Parent {
			g.canon[op-1] = *wire.HeaderOf(f)
			continue
		}
		if held {
			g.probe("journal frame off the hash chain not taken as canonical")
		}
		// A slot that kept only the header (its body is lost or was never
		// received) still names the op: the header whose identity is the
		// parent is the canonical one, and the chain goes on below it.
		// Without it, a replica knows no canonical identity below its own
		// highest hole, cannot serve those ops as primary, and two replicas
		// with holes in different ops wait on each other forever (VOPR seed
		// 288).
		if h, known := g.deps.Journal.Header(op - 1); known && h.Checksum() == p.Parent {
			g.canon[op-1] = h
		}
	}
}

// onViewChangeTimeout: the view change did not finish; try the next view.
func (g *Group) onViewChangeTimeout() {
	if g.status != StatusViewChange {
		g.viewChangeTimeout.stop()
		return
	}
	g.probe("view change timed out")
	g.startViewChange(g.view + 1)
}
