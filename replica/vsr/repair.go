package vsr

import (
	"github.com/iggy-vopr/vopr/canary/bug"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// repairState is the one outstanding RequestPrepares of a replica.
type repairState struct {
	active   bool
	nonce    wire.U128
	peer     uint8
	from, to uint64
	attempts int
	// accepted counts the frames of this request journaled: a reply whose
	// frames were all rejected (or could not be checked) is no progress,
	// and the next request goes to another peer.
	accepted int
	// waiting holds repaired frames whose identity cannot be checked yet
	// (they arrive in ascending order, the chain is checked downwards).
	waiting [][]byte
}

func (r *repairState) reset() {
	*r = repairState{}
}

// requestRepair asks a peer for the lowest stretch of ops the replica needs
// and lacks: bodies of canonical ops it does not hold, and committed ops
// beyond its head. A Normal backup asks the primary, which serves only
// canonical ops; the primary (and a view change) asks a replica that holds
// them and checks every frame against the canonical identity.
func (g *Group) requestRepair() {
	if g.repair.active {
		return
	}
	switch g.status {
	case StatusNormal:
	case StatusViewChange:
		if g.vc.merged == nil {
			return
		}
	case StatusRecovering:
		if g.catchUp == nil {
			return
		}
	default:
		return
	}
	lo, hi, ok := g.missingRange()
	if !ok {
		return
	}
	// A backup asks its primary first (the primary serves only ops it knows
	// are canonical, so its frames need no other check); after a stall it
	// asks the others in turn and checks their frames by the hash chain.
	peer := g.Primary()
	anyPeer := g.cfg.RepairAnyPeer && !g.IsPrimary() && g.status == StatusNormal && g.deps.Rand.IntN(2) == 0
	if anyPeer && g.cfg.ReplicaCount > 2 {
		// Any replica but ourselves: the primary stays one choice of several.
		peer = (g.cfg.Replica + 1 + uint8(g.deps.Rand.IntN(int(g.cfg.ReplicaCount)-1))) % g.cfg.ReplicaCount
	} else if g.IsPrimary() || g.status == StatusViewChange || g.repair.attempts > 0 {
		peer = g.repairPeer(lo)
		if peer == g.cfg.Replica {
			return
		}
	}
	if blo, bhi, ok := g.behindRange(); ok && blo < lo && g.repair.attempts%int(g.cfg.ReplicaCount) == int(g.cfg.ReplicaCount)-1 {
		// One round in every rotation asks the primary for the lowest ops
		// this backup cannot vouch for: the primary serves every op it
		// committed and is trusted for it (checkRepaired), while the
		// stretch above, which the chain would check, may be held by no
		// replica of the core (VOPR seed 3115659328: a backup at commit 7
		// asked ops 13..14, held only by a crashed replica, for 30 s, and
		// never its primary for the committed 8..12). Not first: asking
		// the stretch above first lets the chain vouch for every frame the
		// backup holds below it, where asking from the bottom fetches them
		// all again.
		g.probe("repair asks the primary below a stretch nobody served")
		lo, hi, peer = blo, bhi, g.Primary()
	}
	g.sendRepairRequest(peer, lo, hi)
}

// behindRange returns, for a backup behind its primary's commit (Normal, or
// catching up), the run of ops from the lowest it cannot vouch for, up to
// the commit it knows of.
func (g *Group) behindRange() (lo, hi uint64, ok bool) {
	if g.IsPrimary() || g.status != StatusNormal && g.catchUp == nil {
		return 0, 0, false
	}
	top := min(g.commitMax, g.deps.Journal.AdmitsThrough())
	if lo, ok = g.lowestUnvouched(top); !ok {
		return 0, 0, false
	}
	hi = lo
	for hi < top && hi-lo+1 < uint64(g.cfg.RepairChunkMax) && !g.holdsCanonical(hi+1) {
		hi++
	}
	return lo, hi, true
}

// lowestUnvouched returns the lowest op above commit_min, up to top, that
// the replica does not hold with its canonical identity.
func (g *Group) lowestUnvouched(top uint64) (uint64, bool) {
	for op := g.commitMin + 1; op <= top; op++ {
		if !g.holdsCanonical(op) {
			return op, true
		}
	}
	return 0, false
}

// repairFrom asks one of sources (a bitset of replicas that hold op) for
// the ops from op up to head.
func (g *Group) repairFrom(sources uint64, op, head uint64) {
	if g.repair.active {
		return
	}
	if sources&^(1<<g.cfg.Replica) == 0 {
		g.probe("view change waits for a body nobody reported")
		return
	}
	peer := g.pickPeer(sources &^ (1 << g.cfg.Replica))
	g.sendRepairRequest(peer, op, min(head, op+uint64(g.cfg.RepairChunkMax)-1))
}

// repairPeer picks a peer to repair op from: a voter that reported its body
// during a view change, else another replica in turn.
func (g *Group) repairPeer(op uint64) uint8 {
	if m := g.vc.merged; m != nil && g.status == StatusViewChange {
		if s := m.sources[op] &^ (1 << g.cfg.Replica); s != 0 {
			return g.pickPeer(s)
		}
	}
	all := uint64(1)<<g.cfg.ReplicaCount - 1
	return g.pickPeer(all &^ (1 << g.cfg.Replica))
}

// pickPeer rotates through the set with the attempt count, so a dead peer
// is not asked forever, skipping the peers whose last repair request timed
// out and that have been silent since, while another remains (VOPR long run
// 15228355419466583266: a restarted primary repaired hundreds of holes one
// stretch at a time, and every stretch first waited out the timeouts of two
// frozen peers).
func (g *Group) pickPeer(set uint64) uint8 {
	n := popcount(set)
	if n == 0 {
		return g.cfg.Replica
	}
	start := g.repair.attempts % n
	for step := range n {
		if r := nthOf(set, (start+step)%n); g.repairSilent&(1<<r) == 0 {
			return r
		}
	}
	return nthOf(set, start) // every peer of the set is silent: the rotation as it is
}

// nthOf returns the k-th replica (from 0) in set, in replica order.
func nthOf(set uint64, k int) uint8 {
	for r := range uint8(64) {
		if set&(1<<r) != 0 {
			if k == 0 {
				return r
			}
			k--
		}
	}
	panic("vsr: nthOf past the set")
}

// missingRange returns the stretch to repair next. Where the identity of a
// missing op is known or follows from the chain, the stretch is the run of
// missing ops that ends at the highest such op (the chain is checked
// downwards); otherwise (a backup behind its primary) it starts at the
// lowest missing op.
func (g *Group) missingRange() (lo, hi uint64, ok bool) {
	// Ops the ring cannot hold yet are not asked for: their frames would
	// be dropped (journalAppend) until a checkpoint frees their slots.
	top := min(max(g.op, g.commitMax), g.deps.Journal.AdmitsThrough())
	chunk := uint64(g.cfg.RepairChunkMax)
	lowest, ok := g.lowestUnvouched(top)
	if !ok {
		return 0, 0, false
	}
	for op := top; op >= lowest; op-- {
		if g.holdsCanonical(op) {
			continue
		}
		if _, known := g.canon[op]; known || g.chainKnown(op) {
			// The stretch is the run of ops we lack that ends here: asking
			// for ops we hold as well would let a server that lacks one of
			// them stop there (it serves up to its first gap), short of the
			// op we need, again and again. Below a break in the chain we
			// cannot tell our frames canonical yet, but a frame we hold is
			// checked once the chain reaches it: asking for it again only
			// puts the servers' own holes in the way (VOPR long run, seed 1:
			// every replica asked for eight ops ending at its own hole, each
			// stretch held a hole of every peer, and nobody applied an op for
			// 2 M ticks).
			lo := op
			for lo > lowest && op-lo+1 < chunk && g.lacks(lo-1) {
				lo--
			}
			return lo, op, true
		}
		if op == lowest {
			break
		}
	}
	return lowest, min(top, lowest+chunk-1), true
}

// lacks reports whether a repair should fetch op: its canonical identity is
// known and not what the journal holds, or it is unknown and the journal
// holds no frame for the op at all.
func (g *Group) lacks(op uint64) bool {
	if _, known := g.canon[op]; known {
		return !g.holdsCanonical(op)
	}
	_, held := g.deps.Journal.Frame(op)
	return !held
}

// chainKnown reports whether op's identity follows from op+1's canonical header.
func (g *Group) chainKnown(op uint64) bool {
	_, ok := g.canon[op+1]
	return ok
}

func (g *Group) sendRepairRequest(peer uint8, from, to uint64) {
	if from == 0 || from > to {
		panic("vsr: bad repair range")
	}
	g.repair.active = true
	g.repair.peer = peer
	g.repair.from, g.repair.to = from, to
	g.repair.nonce = wire.U128{Lo: g.deps.Rand.Uint64(), Hi: g.deps.Rand.Uint64() | 1}
	g.repair.waiting = g.repair.waiting[:0]
	g.repair.accepted = 0
	if !g.repairTimeout.running {
		g.repairTimeout.start()
	}
	rp := wire.RequestPreparesHeader{Prefix: wire.Prefix{Cluster: g.cfg.Cluster, Replica: g.cfg.Replica},
		Nonce: g.repair.nonce, FromOp: from, ToOp: to, Group: g.cfg.Group}
	g.deps.Out.Send(peer, wire.BuildFrame(&rp, nil))
}

// onRepairTimeout: the repair stalled; ask again, another peer in turn.
func (g *Group) onRepairTimeout() {
	if !g.repair.active {
		if _, _, ok := g.missingRange(); !ok || g.status == StatusRecovering && g.catchUp == nil {
			g.repairTimeout.stop()
			return
		}
	}
	g.probe("repair re-requested")
	attempts := g.repair.attempts
	if g.repair.active {
		g.repairSilent |= 1 << g.repair.peer
		// A request answered without progress was counted by its reply;
		// counting it again here moved the rotation two peers a round, so
		// with two peers to choose from it asked the same one forever (VOPR
		// long seed 424245: the primary asked the backup without op 537
		// 950 times and never the one that held it).
		attempts++
	}
	g.repair.reset()
	g.repair.attempts = attempts
	if g.status == StatusViewChange {
		g.tryStartView()
		return
	}
	g.requestRepair()
}

// onRequestPrepares serves a repair: RepairPrepare frames in ascending op
// order, stopping at the first op it cannot vouch for, then RepairDone. When
// the front of the range is below the journal's retained floor it first
// says so with RangeEvicted (op: the oldest op it retains, or one past the
// range when it retains none of it, wire.md correction 0.3) and serves from
// the floor.
// A replica serves only ops it knows are canonical (applied, or matching the
// view's headers), except during a view change, when the asker checks every
// frame against headers it already has.
func (g *Group) onRequestPrepares(asker uint8, h *wire.Header) {
	var x wire.RequestPreparesHeader
	x.Decode(h)
	if x.Group != g.cfg.Group || g.status == StatusRecovering {
		return
	}
	to := min(x.ToOp, max(g.commitMax, g.op))
	first := x.FromOp
	retained := g.deps.Journal.RetainedFrom()
	if g.IsPrimary() && g.vouchedFrom > retained && first < g.vouchedFrom {
		// The primary vouches for what it serves: ops below vouchedFrom it
		// cannot, so they are as good as evicted here.
		g.probe("repair: the primary cannot vouch for ops an install skipped")
		retained = g.vouchedFrom
	}
	if g.deps.Plane != nil && first >= retained && first <= g.commitMin {
		// A partition plane's memory journal holds no frame for an op it
		// applied through a state transfer (or replayed from its segment
		// log after a restart) while RetainedFrom still says 1: for the
		// asker those ops are as good as evicted, and only a RangeEvicted
		// sends it to a state transfer. Answering RepairDone with nothing
		// left every replica asking every other forever, the one that
		// had installed the state included (VOPR seed 22354).
		lowest, top := first, min(g.commitMin, to)
		for lowest <= top {
			if _, held := g.deps.Journal.Frame(lowest); held {
				break
			}
			lowest++
		}
		if lowest > first {
			g.probe("repair: ops applied but not held answered as evicted")
			retained = lowest
		}
	}
	if first < retained {
		// The oldest op retained is also "one past the scanned range" when
		// none of it is retained: max(from_op, retained, to_op+1) is
		// retained whenever from_op < retained (wire.md correction 0.3).
		g.probe("RangeEvicted sent")
		evicted := wire.RepairRangeHeader{Prefix: wire.Prefix{Cluster: g.cfg.Cluster, Replica: g.cfg.Replica,
			Command: wire.CommandRangeEvicted}, Nonce: x.Nonce, Op: retained, Group: g.cfg.Group}
		g.deps.Out.Send(asker, wire.BuildFrame(&evicted, nil))
		first = retained
	}
	last := first - 1 // after a RangeEvicted, retained_from - 1 when nothing is served
	served := 0
	for op := first; op <= to && served < g.cfg.RepairChunkMax; op++ {
		frame, ok := g.servable(op)
		if !ok {
			break
		}
		r := append([]byte(nil), frame...)
		wire.ToRepairPrepare(r)
		g.deps.Out.Send(asker, r)
		last = op
		served++
	}
	if served > 0 {
		g.probe("repair served")
	}
	done := wire.RepairRangeHeader{Prefix: wire.Prefix{Cluster: g.cfg.Cluster, Replica: g.cfg.Replica,
		Command: wire.CommandRepairDone}, Nonce: x.Nonce, Op: last, Group: g.cfg.Group}
	g.deps.Out.Send(asker, wire.BuildFrame(&done, nil))
}

// servable returns the frame to serve for op. The Normal primary serves only
// ops it knows are canonical (applied, or matching the view's headers):
// its backups accept its frames for committed ops without another check.
// Anyone else serves whatever its journal holds, and the asker checks each
// frame against a canonical identity it already has.
func (g *Group) servable(op uint64) ([]byte, bool) {
	frame, held := g.deps.Journal.Frame(op)
	if !held {
		return nil, false
	}
	if !g.IsPrimary() {
		return frame, true
	}
	if op <= g.commitMin {
		return frame, op >= g.vouchedFrom
	}
	c, ok := g.canon[op]
	return frame, ok && c.Checksum() == wire.HeaderOf(frame).Checksum()
}

// onRepairPrepare: a repaired prepare arrives. It is kept only if its
// identity is the canonical one (known, or the parent of the canonical op
// above it), or if it comes from the Normal primary of our view for a
// committed op (the primary serves only canonical ops).
func (g *Group) onRepairPrepare(from uint8, frame []byte) {
	if !g.repair.active || from != g.repair.peer {
		return
	}
	var x wire.PrepareHeader
	x.Decode(wire.HeaderOf(frame))
	if x.Group != g.cfg.Group || x.Op < g.repair.from || x.Op > g.repair.to || x.Op <= g.commitMin {
		return
	}
	if len(g.repair.waiting) >= g.cfg.RepairChunkMax {
		return
	}
	if g.deps.Plane != nil && !g.deps.Plane.Intact(frame) {
		g.probe("repaired prepare dropped: its body is corrupt")
		return
	}
	f := append([]byte(nil), frame...)
	wire.ToPrepare(f)
	g.repair.waiting = append(g.repair.waiting, f)
	g.acceptRepaired()
}

// acceptRepaired journals every waiting frame whose identity can now be
// checked, highest first, until none can.
func (g *Group) acceptRepaired() {
	for progress := true; progress; {
		progress = false
		for i := len(g.repair.waiting) - 1; i >= 0; i-- {
			f := g.repair.waiting[i]
			if f == nil {
				continue
			}
			h := wire.HeaderOf(f)
			var x wire.PrepareHeader
			x.Decode(h)
			verdict := g.checkRepaired(x.Op, h.Checksum())
			if verdict == repairWait {
				continue
			}
			g.repair.waiting[i] = nil
			progress = true
			switch verdict {
			case repairReject:
				g.probe("repaired prepare rejected: not canonical")
				continue
			case repairHeld:
				g.probe("repaired prepare dropped: already held")
				continue
			}
			if _, known := g.canon[x.Op]; !known {
				g.canon[x.Op] = *h
			}
			g.op = max(g.op, x.Op)
			g.timestampMax = max(g.timestampMax, x.Timestamp)
			g.repair.accepted++
			g.probe("prepare repaired")
			if g.deps.Journal.Knowledge(x.Op) == KnowledgeHeader {
				g.probe("corrupt slot repaired")
			}
			g.journalAppend(f)
		}
	}
	g.extendCanonDown()
	if g.status == StatusNormal || g.catchUp != nil {
		g.sendAcks()
		g.commitJournal()
	} else {
		g.tryStartView()
	}
}

type repairVerdict uint8

const (
	repairWait repairVerdict = iota
	repairAccept
	repairReject
	repairHeld // already applied or held with the canonical identity: a duplicate
)

func (g *Group) checkRepaired(op uint64, identity wire.U128) repairVerdict {
	if op <= g.commitMin || g.holdsCanonical(op) {
		return repairHeld
	}
	if c, ok := g.canon[op]; ok {
		if c.Checksum() == identity {
			return repairAccept
		}
		return repairReject
	}
	if above, ok := g.canon[op+1]; ok {
		var p wire.PrepareHeader
		p.Decode(&above)
		g.probe("repaired prepare checked by the hash chain")
		if bug.RepairUnchained && p.Parent != identity {
			g.probe("canary: repaired prepare accepted off the hash chain") // canary_repair_unchained: parent not compared
			return repairAccept
		}
		if p.Parent == identity {
			return repairAccept
		}
		return repairReject
	}
	if (g.status == StatusNormal || g.catchUp != nil) && !g.IsPrimary() && g.repair.peer == g.Primary() && op <= g.commitMax {
		return repairAccept // the primary serves only canonical ops
	}
	return repairWait
}

// onRepairReply: RepairDone or RangeEvicted ends the stretch.
func (g *Group) onRepairReply(from uint8, h *wire.Header) {
	var x wire.RepairRangeHeader
	x.Decode(h)
	if !g.repair.active || from != g.repair.peer || x.Nonce != g.repair.nonce || x.Group != g.cfg.Group {
		return
	}
	if x.Command == wire.CommandRangeEvicted {
		g.probe("repair answered with RangeEvicted")
		if x.Op > g.commitMin+1 && g.deps.StateTransfer != nil {
			g.deps.StateTransfer(from, x.Op)
		}
		return // the RepairDone that follows ends the request
	}
	progressed := g.repair.accepted > 0
	g.repair.active = false
	g.repair.waiting = g.repair.waiting[:0]
	if progressed {
		g.repair.attempts = 0
	} else {
		g.repair.attempts++
		// A peer that answers with nothing of use is no better than one
		// that timed out once: the silent ones get another turn. A backup
		// sends its primary nothing unprompted, so a silent mark on it
		// would otherwise outlive any outage (VOPR long seed 424245: a
		// primary at commit 0 asked only the one peer that answered,
		// which held none of the ops, for 60,000 ticks).
		g.repairSilent = 0
	}
	if g.status == StatusViewChange {
		g.tryStartView()
		return
	}
	if progressed {
		g.requestRepair()
	}
}

// repairPeerFor names a peer to ask for state: the primary of the view
// when this replica is a backup, else the next replica.
func (g *Group) repairPeerFor() uint8 {
	if !g.IsPrimary() {
		return g.Primary()
	}
	return (g.cfg.Replica + 1) % g.cfg.ReplicaCount
}

// needStateTransfer tells the replica that only a state transfer lets the
// group past op (Deps.StateTransfer).
func (g *Group) needStateTransfer(peer uint8, op uint64) {
	if g.deps.StateTransfer == nil || g.cfg.ReplicaCount == 1 || peer == g.cfg.Replica {
		return
	}
	g.deps.StateTransfer(peer, op)
}
