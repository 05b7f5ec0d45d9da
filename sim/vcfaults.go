package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica"

	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// The view-change fault nemesis (Options.ViewChangeFaults) times journal
// faults so that a view change must decide ops by the merge's rarer rules:
// the head ops only the primary holds, with their slots damaged on its disk
// as it crashes. Random faults almost never line up so: the primary has to
// crash in the few milliseconds between journaling a prepare and a backup
// receiving it, and that slot has to be damaged on its disk.
//
// A round waits for the moment the metadata plane's Normal primary holds
// durably a head op that no backup has received (it is uncommitted: no
// backup can have acknowledged it), crashes the primary, damages on its
// disk the slots of those ops (each one's prepare chunk, so that it
// recovers the header and not the body, or else its header sector; only
// where the fault atlas grants the primary faults of that slot, as any
// storage fault), and restarts it soon after. Its vote then reports an op
// it holds no body of and cannot nack: the new primary waits for a body
// nobody reported, then truncates the op once a nack quorum of the other
// votes proves it uncommitted ("view change truncated an op on a nack
// quorum"), or truncates above a lower such op.
type vcFaults struct {
	v        *vopr
	rng      *rand.Rand
	kind     vcRoundKind
	stage    vcFaultsStage
	nextTick int64 // idle: when the next round starts; cut, replacing, stale: its deadline; isolated: the heal
	primary  uint8 // cut: the primary cut off
	// spanMin: the head ops of its own the cut primary must hold before
	// the strike (drawn per round, 1 to vcFaultsOpsMax): with two or more,
	// the log that replaces them replaces an op and the one below it.
	spanMin uint64
	// After three strikes in four, until watchUntil (a tick): the struck
	// replica's next reconcile (the log it adopts forgets or replaces the
	// damaged ops) gets its header or prepare write of one of them
	// misdirected, and the replica crashes soon after with the primary, so
	// that it restarts with a half-old slot in its log or above it and
	// votes before a StartView reconciles it away.
	watching   bool
	watchLow   uint64 // the lowest op the strike damaged
	watchHead  uint64
	watchUntil int64
	// held: a replace round's struck replica is split off alone between
	// its reconcile (the one whose write was misdirected, or a short
	// round's) and its crash, so that no repair rewrites its slots before
	// it votes.
	held bool
	// replacer: a replace round's primary of the rest, whose
	// acknowledgements are withheld while it prepares over the struck ops.
	replacer uint8
	// replaceTop: the op the replacer must have prepared up to before the
	// struck replica may join it (vcfaults_replace.go).
	replaceTop uint64
	paused     bool // the struck replica, paused by a replace round
	// A lower-log_view round (vcfaults_lower.go): the backups that miss
	// the view (stale), the op struck (staleOp), and the view the rest
	// must pass (staleView).
	stale     []network.NodeID
	staleOp   uint64
	staleView uint32
	// quietRound: no random crashes or pauses from the cut until the
	// round ends (half the rounds, as the rollback nemesis does): a replace
	// or lower-log_view round scripts several crashes and partitions in
	// turn, and a random crash in between abandons it.
	quietRound bool
	// short: a short replace round's short backups (vcfaults_short.go),
	// nil in other rounds; shortHead: the head the struck replica adopted.
	short     []network.NodeID
	shortHead uint64
	wantShort bool // drawn with the replace round: run short if it can
	// requestsHeld: the filter holding client requests bound for the
	// replacer in a head round, 0 when none.
	requestsHeld network.FilterID
	// electSide: the isolated side, where it must elect on its own (its
	// votes are what the round is for), else nil; the isolation ends as
	// soon as a replica of it is Normal in a view above electView, or at
	// nextTick.
	electSide []network.NodeID
	electView uint32
}

// vcRoundKind is what a round does once it has a view change to make.
type vcRoundKind uint8

const (
	// vcRoundNack: the struck primary is split off with too few backups to
	// elect without the rest, whose votes bring the nack quorum.
	vcRoundNack vcRoundKind = iota
	// vcRoundReplace: the struck primary is split off alone while the rest
	// elect, truncate its head ops and prepare others at their numbers;
	// its reconcile then replaces the struck ops, one of its writes
	// misdirected, and it votes with a stale header inside its log.
	vcRoundReplace
	// vcRoundLowerLogView: a canonical voter loses an op that only voters
	// of a lower log_view still report (vcfaults_lower.go).
	vcRoundLowerLogView
)

type vcFaultsStage uint8

const (
	vcFaultsIdle            vcFaultsStage = iota
	vcFaultsCut                           // the primary alone: it prepares what no backup receives
	vcFaultsIsolated                      // crashed; its side split from the rest until the heal
	vcFaultsReplacing                     // replace: crashed and alone until the rest elect
	vcFaultsReplaceWithheld               // replace: the rest's primary prepares over its head ops, unacknowledged
	vcFaultsHeld                          // replace: it reaches that primary alone, until its reconcile and crash
	vcFaultsWithhold                      // lower log_view: the primary's acknowledgements cut off
	vcFaultsStale                         // lower log_view: backups split off until the rest's view strikes
)

const (
	vcFaultsGapTicksMin     = 20
	vcFaultsGapTicksSpread  = 100
	vcFaultsCutTicksMax     = 300 // well inside the backups' 500-tick heartbeat timeout
	vcFaultsRestartTicksMax = 40
	vcFaultsOpsMax          = 3 // head ops damaged at most
	// The split lasts past the restarted primary's probes (about 500
	// ticks) and its election.
	vcFaultsIsolationTicksMin    = 600
	vcFaultsIsolationTicksSpread = 600
	// A side that must elect on its own gets up to this long (its heal
	// comes earlier, once it has).
	vcFaultsElectTicksMin    = 3000
	vcFaultsElectTicksSpread = 1000
	// The watch for the struck replica's reconcile outlasts the split by
	// this much; its crash comes 5 to 40 ticks after the reconcile (once
	// its writes, misdirected one included, and its log_view are durable).
	vcFaultsWatchTicks        = 2000
	vcFaultsForgetCrashTicks  = 5
	vcFaultsForgetCrashSpread = 35
	// A replace round gives the rest this long to elect and prepare over
	// the struck ops before it heals anyway.
	vcFaultsReplaceTicksMax = 1500
)

func newVCFaults(v *vopr) *vcFaults {
	f := &vcFaults{v: v, rng: v.c.Streams.Stream("vopr.vcfaults")}
	f.nextTick = vcFaultsGapTicksMin + f.rng.Int64N(vcFaultsGapTicksSpread)
	return f
}

// splits reports whether the nemesis may partition the replicas: not while
// random partitions or the rollback nemesis do.
func (f *vcFaults) splits() bool {
	return f.v.o.PartitionMode == network.PartitionNone && !f.v.o.Rollback
}

// tick moves the round on.
func (f *vcFaults) tick(nowNs int64) {
	tick := nowNs / kernel.TickNs
	switch f.stage {
	case vcFaultsIdle:
		if tick >= f.nextTick {
			f.start(tick)
		}
	case vcFaultsCut:
		if primary, head, below, ok := f.lonelyHead(); ok && primary == f.primary && head-below >= f.spanMin {
			f.strike(tick, primary, head, below)
		} else if tick >= f.nextTick {
			f.end(tick, true)
		}
	case vcFaultsIsolated:
		if tick >= f.nextTick || (f.electSide != nil && f.sideElected()) {
			f.end(tick, false)
		}
	case vcFaultsReplacing:
		f.tickReplacing(tick)
	case vcFaultsReplaceWithheld:
		f.tickReplaceWithheld(tick)
	case vcFaultsHeld:
		// Until the reconcile's write is armed and the crash that follows
		// it fires (which ends the round), or the watch passes.
		if (!f.watching && !f.held) || tick > f.watchUntil {
			f.end(tick, false)
		}
	case vcFaultsWithhold:
		f.tickWithhold(tick)
	case vcFaultsStale:
		f.tickStale(tick)
	}
}

// quiet reports whether process faults are held off now.
func (f *vcFaults) quiet() bool { return f.stage != vcFaultsIdle && f.quietRound }

// start draws the round's kind and begins it: a lower-log_view round
// where the replica count lets the rest elect without the stale backups
// and the nemesis may split, else a strike round (cut).
func (f *vcFaults) start(tick int64) {
	n := f.v.o.Replicas
	// Replace rounds twice as often as the others: of the three, they
	// reach their rules least often per round.
	f.kind = [...]vcRoundKind{vcRoundNack, vcRoundReplace, vcRoundReplace, vcRoundLowerLogView}[f.rng.IntN(4)]
	f.quietRound = f.rng.IntN(2) == 0
	if f.kind == vcRoundReplace && (n < 3 || !f.splits()) {
		f.kind = vcRoundNack
	}
	if f.kind == vcRoundLowerLogView {
		if lowerLogViewFits(n) && f.splits() && f.startWithhold(tick) {
			return
		}
		f.kind = vcRoundNack
	}
	f.cut(tick)
}

// cut cuts the Normal primary of the metadata plane off from its backups,
// one way (they still reach it, and so do clients), so that it prepares
// ops none of them receives: the acknowledgements of what it prepared
// before the cut still arrive, its clients get their replies and send
// their next requests, and those are the lonely head ops (a cut both ways
// left it only the requests of clients idle at the cut: three in four
// replace rounds ended there, VOPR seeds 4242000 on). Without splits it
// waits for that to happen by chance.
func (f *vcFaults) cut(tick int64) {
	for _, n := range f.v.c.Replicas {
		r := n.Replica()
		if !n.Up() || n.Paused() || r == nil || !r.Metadata().IsPrimary() || r.Metadata().Status() != vsr.StatusNormal {
			continue
		}
		if !f.strikeable(n) {
			break
		}
		f.primary, f.stage, f.nextTick = n.ID(), vcFaultsCut, tick+vcFaultsCutTicksMax
		f.spanMin = 1 + f.rng.Uint64N(vcFaultsOpsMax)
		if f.splits() {
			cut := network.NodeID(n.ID())
			f.v.c.Net.CutPaths(func(from, to network.NodeID) bool { return from == cut })
			f.v.tr.process("nemesis", n.ID(), false, "view-change faults: primary cut off", 0)
		}
		return
	}
	f.nextTick = tick + vcFaultsGapTicksMin
}

// strikeable reports whether a round may cut primary off now: the strike
// that ends the cut crashes it, which a replica still without memory
// elsewhere (crashed by the last round, catching up) puts beyond the
// memory-loss bound, and the cut keeps that replica from catching up; and
// a replica down has no head the strike can compare with.
func (f *vcFaults) strikeable(primary *ReplicaNode) bool {
	if f.v.memoryLossBeyondBound(primary) {
		return false
	}
	for _, n := range f.v.c.Replicas {
		if !n.Up() || n.Replica() == nil {
			return false
		}
	}
	return true
}

// strike damages the primary's head ops that no backup holds, crashes it,
// restarts it soon after, and splits its side from the rest.
func (f *vcFaults) strike(tick int64, primary uint8, head, below uint64) {
	n := f.v.c.Replicas[primary]
	disks := f.v.c.disks
	damaged := 0
	for op := head; op > below && head-op < vcFaultsOpsMax; op-- {
		if !disks.Faultable(primary, op) {
			continue
		}
		if f.rng.IntN(3) < 2 {
			n.dev.InjectCorruption(disks.slotSector(primary, disks.prepares, op))
		} else {
			n.dev.InjectCorruption(disks.slotSector(primary, disks.headers, op))
		}
		damaged++
	}
	if damaged == 0 {
		return // the atlas grants it no fault there: wait for another head
	}
	f.v.crashAndRestart(n, 1+f.rng.Int64N(vcFaultsRestartTicksMax))
	f.v.tr.process("nemesis", primary, false, fmt.Sprintf("view-change faults: primary crashed with %d of its head ops (%d..%d) damaged", damaged, below+1, head), 0)
	f.v.res.Probes["view-change faults: primary crashed with its own head ops damaged"]++
	f.stage, f.nextTick = vcFaultsIsolated, tick+vcFaultsIsolationTicksMin+f.rng.Int64N(vcFaultsIsolationTicksSpread)
	f.watching, f.watchLow, f.watchHead, f.watchUntil = f.rng.IntN(4) > 0, head+1-min(head-below, vcFaultsOpsMax), head, f.nextTick+vcFaultsWatchTicks
	if f.kind == vcRoundReplace {
		f.isolateAlone(tick, primary)
		return
	}
	if f.splits() {
		f.isolate(primary)
	}
}

// isolate splits the primary and a view-change quorum's worth of backups
// less one from the rest, so that its backups cannot elect a primary
// without its vote: it restarts, finds no primary to answer its probes and
// starts the election itself, with the head ops it cannot read in its log.
// The rest (fewer than a view-change quorum) join once healed, and their
// votes bring the nack quorum. With two replicas there is no rest.
func (f *vcFaults) isolate(primary uint8) {
	backups := f.others(primary)
	f.rng.Shuffle(len(backups), func(i, j int) { backups[i], backups[j] = backups[j], backups[i] })
	k := vsr.QuorumViewChange(f.v.o.Replicas) - 1
	if k >= len(backups) {
		f.v.c.Net.Heal(f.all())
		return
	}
	side := append([]network.NodeID{network.NodeID(primary)}, backups[:k]...)
	f.v.c.Net.Split([][]network.NodeID{side, backups[k:]})
	f.v.tr.process("nemesis", primary, false, fmt.Sprintf("view-change faults: split %v from %v", side, backups[k:]), 0)
}

// isolateToElect starts the isolation of a side that must elect without
// the rest: it lasts until the side has elected (its view change merged
// the votes the round shaped) or electTicksMax passes. A fixed span cut
// many short: the restarted replica probes for about 500 ticks before it
// starts an election, and its side's backups suspect their primary only
// after their own heartbeat timeout.
func (f *vcFaults) isolateToElect(tick int64, side []network.NodeID) {
	f.stage, f.nextTick = vcFaultsIsolated, tick+vcFaultsElectTicksMin+f.rng.Int64N(vcFaultsElectTicksSpread)
	f.electSide, f.electView = side, 0
	for _, n := range f.v.c.Replicas {
		if r := n.Replica(); r != nil && n.Up() {
			f.electView = max(f.electView, r.Metadata().View())
		}
	}
}

// sideElected reports whether a replica of the electing side is Normal in
// a view above the one the isolation began in.
func (f *vcFaults) sideElected() bool {
	for _, id := range f.electSide {
		n := f.v.c.Replicas[int(id)]
		if r := n.Replica(); r != nil && n.Up() && r.Metadata().Status() == vsr.StatusNormal && r.Metadata().View() > f.electView {
			return true
		}
	}
	return false
}

// end heals what the round split and draws the gap to the next.
func (f *vcFaults) end(tick int64, abandoned bool) {
	if abandoned {
		f.v.res.Probes["view-change faults: round abandoned"]++
	}
	if f.splits() {
		f.v.c.Net.Heal(f.all())
	}
	f.releaseRequests()
	f.stage, f.held, f.electSide, f.short = vcFaultsIdle, false, nil, nil
	f.nextTick = tick + vcFaultsGapTicksMin + f.rng.Int64N(vcFaultsGapTicksSpread)
}

func (f *vcFaults) others(id uint8) []network.NodeID {
	return f.othersThan([]network.NodeID{network.NodeID(id)})
}

func (f *vcFaults) all() []network.NodeID {
	ids := make([]network.NodeID, 0, len(f.v.c.Replicas))
	for _, n := range f.v.c.Replicas {
		ids = append(ids, network.NodeID(n.ID()))
	}
	return ids
}

// lonelyHead finds a Normal metadata primary whose head op is durable on
// its disk and above every other replica's head (below: the highest of
// those), which it may crash within the memory-loss bound.
func (f *vcFaults) lonelyHead() (primary uint8, head, below uint64, ok bool) {
	for _, n := range f.v.c.Replicas {
		r := n.Replica()
		if !n.Up() || n.Paused() || r == nil {
			continue
		}
		g := r.Metadata()
		if g.Status() != vsr.StatusNormal || !g.IsPrimary() {
			continue
		}
		head = g.Op()
		if head <= g.CommitMax() || f.v.memoryLossBeyondBound(n) {
			return 0, 0, 0, false
		}
		if _, durable := f.v.c.disks.DurablePrepare(n.ID(), head); !durable {
			return 0, 0, 0, false
		}
		below = g.CommitMax()
		for _, m := range f.v.c.Replicas {
			if m == n {
				continue
			}
			if !m.Up() || m.Replica() == nil {
				return 0, 0, 0, false // its head is not known
			}
			op := m.Replica().Metadata().Op()
			if op >= head {
				return 0, 0, 0, false
			}
			below = max(below, op)
		}
		return n.ID(), head, below, true
	}
	return 0, 0, 0, false
}

// event sees the replicas' events: the struck replica's first reconcile
// after the strike.
func (f *vcFaults) event(e replica.Event) {
	f.lowerEvent(e)
	f.replaceEvent(e)
	if !f.watching || e.Kind != replica.EventGroup || e.Group.Kind != vsr.EventReconciled ||
		e.Group.Group != wire.MetadataGroup || e.Replica != f.primary {
		return
	}
	tick := f.v.c.Loop.Now() / kernel.TickNs
	f.watching = false
	f.releaseRequests()
	if tick > f.watchUntil || !f.v.faulted {
		return
	}
	n := f.v.c.Replicas[e.Replica]
	disks := f.v.c.disks
	// One of the struck ops: above the adopted head its slot is forgotten,
	// at or below it the adopted log's header recorded over it (the log
	// replaced it); either write, misdirected, leaves the struck op's
	// stale header in the slot.
	//
	// Where the adopted log replaced two struck ops or more, one above the
	// lowest: its stale header's parent is the old op below, which the
	// log also replaced, so the slot is off the chain of the log's own ops.
	op := f.watchLow + f.rng.Uint64N(f.watchHead-f.watchLow+1)
	if hi := min(e.Group.Op, f.watchHead); hi > f.watchLow {
		op = f.watchLow + 1 + f.rng.Uint64N(hi-f.watchLow)
	}
	if f.kind == vcRoundReplace && f.short != nil {
		if f.stage == vcFaultsHeld && f.shortReconciled(n, e.Group.Op, e.Group.Commit) {
			delay := vcFaultsForgetCrashTicks + f.rng.Int64N(vcFaultsForgetCrashSpread)
			f.v.c.Loop.After(delay*kernel.TickNs, vcForgetCrash{f, n}, uint64(n.incarnation))
			return
		}
		f.short = nil // an ordinary replace round, then
	}
	if f.kind == vcRoundReplace {
		// Its own view (it ran ahead alone, and led the view change it
		// forced on the replacer): no other vote will share its log_view.
		if vsr.PrimaryIndex(e.Group.View, uint8(f.v.o.Replicas)) == e.Replica {
			return
		}
		var ok bool
		if op, ok = f.replacedOp(e.Group.Op, e.Group.Commit); !ok {
			return
		}
	}
	if !disks.Faultable(e.Replica, op) {
		return
	}
	// The header sector's write, or the prepare chunk's (which the
	// reconcile writes first): either leaves the slot half old.
	zone, what := disks.headers, "header"
	if f.kind != vcRoundReplace && f.rng.IntN(2) == 0 {
		// A replace round's reconcile records the op that replaced the
		// struck one in the header copy: only that write, lost, leaves
		// the struck op's header in its slot below the head.
		zone, what = disks.prepares, "prepare"
	}
	if !n.dev.MisdirectNextWrite(disks.slotSector(e.Replica, zone, op)) {
		return
	}
	f.v.res.Probes["view-change faults: a reconcile's write of a struck op misdirected"]++
	f.v.tr.process("nemesis", e.Replica, false, fmt.Sprintf("view-change faults: the %s write of op %d misdirected, the adopted head %d", what, op, e.Group.Op), 0)
	if f.kind == vcRoundReplace && f.stage == vcFaultsHeld {
		// Alone until its crash: a repair would rewrite the slot whole,
		// and its acknowledgements would commit the ops above.
		f.held = true
		f.v.c.Net.CutPaths(func(from, to network.NodeID) bool {
			return from == network.NodeID(e.Replica) || to == network.NodeID(e.Replica) || to == network.NodeID(f.replacer)
		})
	}
	delay := vcFaultsForgetCrashTicks + f.rng.Int64N(vcFaultsForgetCrashSpread)
	f.v.c.Loop.After(delay*kernel.TickNs, vcForgetCrash{f, n}, uint64(n.incarnation))
}

// vcForgetCrash crashes the replica whose write was misdirected (within
// the memory-loss bound) and restarts it soon after, split off from the
// metadata primary with too few replicas to elect without it, replicas of
// its log_view first; where the nemesis may not split, the primary
// crashes with it instead.
type vcForgetCrash struct {
	f *vcFaults
	n *ReplicaNode
}

func (e vcForgetCrash) Fire(nowNs int64, incarnation uint64) (string, int32, uint64) {
	f, v := e.f, e.f.v
	tick := nowNs / kernel.TickNs
	held := f.held
	f.held = false
	if !e.n.Up() || uint64(e.n.incarnation) != incarnation || !v.faulted || v.memoryLossBeyondBound(e.n) {
		if held {
			f.end(tick, false)
		}
		return "", 0, 0
	}
	if f.short != nil {
		v.crashAndRestart(e.n, 1+f.rng.Int64N(vcFaultsRestartTicksMax))
		if held && f.shortStrike(tick, e.n) {
			return "vopr.crash", int32(e.n.ID()), 0
		}
		f.end(tick, false)
		return "vopr.crash", int32(e.n.ID()), 0
	}
	logView := e.n.Replica().Metadata().LogView() // read before the crash drops it
	v.crashAndRestart(e.n, 1+f.rng.Int64N(vcFaultsRestartTicksMax))
	v.res.Probes["view-change faults: crashed over a misdirected write"]++
	// Its vote must count in the view change its restart meets, stale
	// header included, before a StartView could make it reconcile the
	// header away: it is split off with too few replicas to elect without
	// it, away from the primary. Where the nemesis may not split now (or
	// the replicas are too few), the primary goes down with it instead.
	var primary *ReplicaNode
	for _, m := range v.c.Replicas {
		if r := m.Replica(); m != e.n && m.Up() && r != nil && r.Metadata().IsPrimary() && r.Metadata().Status() == vsr.StatusNormal {
			primary = m
		}
	}
	if f.splits() && (held || f.stage == vcFaultsIdle) && primary != nil {
		backups := f.sideBackups(e.n.ID(), primary.ID(), logView)
		if len(backups) > 0 {
			side := append([]network.NodeID{network.NodeID(e.n.ID())}, backups...)
			v.c.Net.Split([][]network.NodeID{side, f.othersThan(side)})
			v.tr.process("nemesis", e.n.ID(), false, fmt.Sprintf("view-change faults: split %v from the primary", side), 0)
			f.isolateToElect(tick, side)
			return "vopr.crash", int32(e.n.ID()), 0
		}
	}
	if held {
		f.end(tick, false)
	}
	if primary != nil && !v.memoryLossBeyondBound(primary) {
		v.crashAndRestart(primary, 1+f.rng.Int64N(vcFaultsRestartTicksMax))
	}
	return "vopr.crash", int32(e.n.ID()), 0
}

// sideBackups lists the replicas to split off with a replica crashed over
// a misdirected write, whose log_view is logView: up ones only (a replica
// down votes in no view change), none of a higher log_view (its vote alone
// would be canonical, and the crashed replica's stale header would count
// for nothing: VOPR seed 4242092), replicas of logView first, so that a
// stale header of its vote meets the log_view's own. Empty where fewer
// than a view-change quorum less one qualify, or none is of logView.
func (f *vcFaults) sideBackups(crashed, primary uint8, logView uint32) []network.NodeID {
	var same, lower []network.NodeID
	for _, id := range f.others(crashed) {
		m := f.v.c.Replicas[int(id)]
		r := m.Replica()
		if id == network.NodeID(primary) || !m.Up() || r == nil {
			continue
		}
		switch lv := r.Metadata().LogView(); {
		case lv == logView:
			same = append(same, id)
		case lv < logView:
			lower = append(lower, id)
		}
	}
	k := vsr.QuorumViewChange(f.v.o.Replicas) - 1
	if len(same) == 0 || len(same)+len(lower) < k {
		return nil
	}
	f.rng.Shuffle(len(same), func(i, j int) { same[i], same[j] = same[j], same[i] })
	f.rng.Shuffle(len(lower), func(i, j int) { lower[i], lower[j] = lower[j], lower[i] })
	return append(same, lower...)[:k]
}
