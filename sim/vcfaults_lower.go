package sim

import (
	"fmt"
	"slices"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// A lower-log_view round of the view-change fault nemesis reaches the
// merge rule that takes, for an op above commit_max no canonical vote
// reports, the header of a lower log_view's vote that the canonical op
// above names as its parent (consensus.md: lower-log_view headers count
// only if the entry above names them). Random faults almost never line it
// up: the only voters of the highest log_view must have lost an
// uncommitted op (its slot damaged whole, so that nothing of it is known)
// while keeping the op above, and the view change must count voters that
// missed that log_view but hold the op.
//
// The round goes in three steps:
//
//   - withhold: the Normal primary is cut one way, so that its prepares
//     reach the backups but no acknowledgement comes back: every backup
//     journals ops nobody commits;
//   - stale: a view-change quorum's worth of backups less one (the stale
//     backups) are split off and the primary crashes, so that the rest
//     elect a view without them whose log holds those uncommitted ops;
//   - strike: the moment a replica of the rest is Normal in that view (the
//     voter), before the ops commit, the round damages both copies of the
//     slot of one of them on its disk (where the fault atlas grants it),
//     crashes and restarts it, and splits it with the stale backups from
//     the rest. Their view change has one canonical vote, which cannot
//     report the op and reports the op above, and lower ones that hold it.

const (
	// The withholding lasts until the backups hold this many ops nobody
	// committed (1 to vcFaultsLowerOpsMax, drawn), or gives up.
	vcFaultsLowerOpsMax = 4
	// Backups do not suspect a primary whose heartbeats reach them, so the
	// withholding may wait long for sparse client requests.
	vcFaultsWithholdTicksMax   = 2000
	vcFaultsLowerStaleTicksMax = 1500
	// The strike follows the voter's Normal status event this late (a
	// replica is not crashed inside its own step), and waits, in steps of
	// this much, for its log_view to be durable (its restart must vote
	// with it), at most vcFaultsLowerStrikeTries steps.
	vcFaultsLowerStrikeDelayNs = 500_000
	vcFaultsLowerStrikeTries   = 400
)

// lowerLogViewFits reports whether, with n replicas, the rest can elect
// without the stale backups (and the voter with them makes a quorum).
func lowerLogViewFits(n int) bool {
	if n < 3 {
		return false
	}
	q := vsr.QuorumViewChange(n)
	return n-(q-1) >= q
}

// startWithhold cuts the Normal primary one way; false when no round can
// start now (no Normal primary, a replica down or paused, a crash of the
// primary beyond the memory-loss bound).
func (f *vcFaults) startWithhold(tick int64) bool {
	var primary *ReplicaNode
	for _, n := range f.v.c.Replicas {
		r := n.Replica()
		if !n.Up() || n.Paused() || r == nil {
			return false
		}
		if g := r.Metadata(); g.IsPrimary() && g.Status() == vsr.StatusNormal {
			primary = n
		}
	}
	if primary == nil || f.v.memoryLossBeyondBound(primary) {
		return false
	}
	f.primary = primary.ID()
	f.staleView = primary.Replica().Metadata().View()
	f.spanMin = 1 + f.rng.Uint64N(vcFaultsLowerOpsMax)
	f.stage, f.nextTick = vcFaultsWithhold, tick+vcFaultsWithholdTicksMax
	f.v.c.Net.Partition([]network.NodeID{network.NodeID(primary.ID())}, true)
	f.v.tr.process("nemesis", primary.ID(), false, "view-change faults: primary's acknowledgements withheld", 0)
	return true
}

// tickWithhold moves to the stale step once every backup holds spanMin
// ops above the primary's commit_max, or abandons the round.
func (f *vcFaults) tickWithhold(tick int64) {
	p := f.v.c.Replicas[f.primary]
	if !p.Up() || p.Replica() == nil || !p.Replica().Metadata().IsPrimary() || p.Replica().Metadata().View() != f.staleView {
		f.end(tick, true)
		return
	}
	commit := p.Replica().Metadata().CommitMax()
	held := true
	for _, n := range f.v.c.Replicas {
		r := n.Replica()
		if n == p {
			continue
		}
		if !n.Up() || n.Paused() || r == nil {
			f.end(tick, true)
			return
		}
		held = held && r.Metadata().Op() >= commit+f.spanMin
	}
	switch {
	case held && !f.v.memoryLossBeyondBound(p):
		f.startStale(tick, p)
	case tick >= f.nextTick && f.spanMin > 1:
		f.spanMin, f.nextTick = 1, tick+vcFaultsWithholdTicksMax/4 // one op will do
	case tick >= f.nextTick:
		f.end(tick, true)
	}
}

// startStale splits the stale backups off and crashes the primary.
func (f *vcFaults) startStale(tick int64, primary *ReplicaNode) {
	backups := f.others(primary.ID())
	f.rng.Shuffle(len(backups), func(i, j int) { backups[i], backups[j] = backups[j], backups[i] })
	stale := backups[:vsr.QuorumViewChange(f.v.o.Replicas)-1]
	f.stale = append(f.stale[:0], stale...)
	f.stage, f.nextTick = vcFaultsStale, tick+vcFaultsLowerStaleTicksMax
	f.v.c.Net.Split([][]network.NodeID{stale, f.othersThan(stale)})
	f.v.crashAndRestart(primary, 1+f.rng.Int64N(vcFaultsRestartTicksMax))
	f.v.tr.process("nemesis", primary.ID(), false, fmt.Sprintf("view-change faults: backups %v split off, primary crashed", stale), 0)
}

// tickStale abandons the round at its deadline: no replica of the rest
// became Normal in a view above the round's with an uncommitted op that
// fits (lowerEvent strikes).
func (f *vcFaults) tickStale(tick int64) {
	if tick >= f.nextTick {
		f.end(tick, true)
	}
}

// lowerEvent sees, in the stale step, a replica of the rest turn Normal
// in a view above the round's, and strikes it soon after if an op fits.
func (f *vcFaults) lowerEvent(e replica.Event) {
	if !f.v.faulted || f.stage != vcFaultsStale || e.Kind != replica.EventGroup || e.Group.Kind != vsr.EventStatus ||
		e.Group.Group != wire.MetadataGroup || e.Group.Status != vsr.StatusNormal || e.Group.View <= f.staleView ||
		f.isStale(e.Replica) {
		return
	}
	n := f.v.c.Replicas[e.Replica]
	f.v.c.Loop.After(vcFaultsLowerStrikeDelayNs, vcLowerStrike{f, n, 0}, uint64(n.incarnation))
}

// vcLowerStrike strikes the voter if it still fits, once its log_view is
// durable.
type vcLowerStrike struct {
	f     *vcFaults
	n     *ReplicaNode
	tries int
}

func (e vcLowerStrike) Fire(nowNs int64, incarnation uint64) (string, int32, uint64) {
	f := e.f
	if f.stage != vcFaultsStale || !e.n.Up() || uint64(e.n.incarnation) != incarnation || !f.v.faulted || e.n.Replica() == nil {
		return "", 0, 0
	}
	if _, logView, err := f.v.c.disks.DurableView(e.n.ID()); err != nil || logView < e.n.Replica().Metadata().LogView() {
		if e.tries < vcFaultsLowerStrikeTries {
			f.v.c.Loop.After(vcFaultsLowerStrikeDelayNs, vcLowerStrike{f, e.n, e.tries + 1}, incarnation)
		}
		return "", 0, 0
	}
	op, ok := f.lowerOp(e.n)
	if !ok {
		return "", 0, 0
	}
	f.staleOp = op
	f.strikeVoter(nowNs/kernel.TickNs, e.n)
	return "vopr.crash", int32(e.n.ID()), 0
}

// lowerOp finds an op above commit_max (the voter's and the stale
// backups') that the voter and every stale backup hold durably, the same
// prepare, whose slot the atlas lets the round damage on the voter's
// disk, and above which the voter holds the next op.
func (f *vcFaults) lowerOp(voter *ReplicaNode) (uint64, bool) {
	r := voter.Replica()
	if r == nil || voter.Paused() || f.v.memoryLossBeyondBound(voter) {
		return 0, false
	}
	g := r.Metadata()
	if g.Status() != vsr.StatusNormal || g.View() <= f.staleView {
		return 0, false
	}
	low, high := g.CommitMax(), g.Op()-1
	for _, s := range f.stale {
		sg := f.v.c.Replicas[int(s)].Replica()
		if sg == nil {
			return 0, false
		}
		low, high = max(low, sg.Metadata().CommitMax()), min(high, sg.Metadata().Op())
	}
	for op := max(low, 1); op <= high; op++ {
		if f.lowerOpFits(voter.ID(), op) {
			return op, true
		}
	}
	return 0, false
}

// lowerOpFits reports whether the round can damage op on the voter: the
// atlas grants it, the voter holds the op and the one above durably, and
// every stale backup holds the same prepare of op.
func (f *vcFaults) lowerOpFits(voter uint8, op uint64) bool {
	disks := f.v.c.disks
	if !disks.Faultable(voter, op) {
		return false
	}
	id, ok := disks.DurablePrepare(voter, op)
	if !ok {
		return false
	}
	if _, ok := disks.DurablePrepare(voter, op+1); !ok {
		return false
	}
	for _, s := range f.stale {
		if other, ok := disks.DurablePrepare(uint8(s), op); !ok || other != id {
			return false
		}
	}
	return true
}

// strikeVoter damages the op's slot whole on the voter's disk, crashes
// and restarts it, and splits it with the stale backups from the rest
// until the heal.
func (f *vcFaults) strikeVoter(tick int64, voter *ReplicaNode) {
	disks := f.v.c.disks
	voter.dev.InjectCorruption(disks.slotSector(voter.ID(), disks.headers, f.staleOp))
	voter.dev.InjectCorruption(disks.slotSector(voter.ID(), disks.prepares, f.staleOp))
	f.v.crashAndRestart(voter, 1+f.rng.Int64N(vcFaultsRestartTicksMax))
	side := append([]network.NodeID{network.NodeID(voter.ID())}, f.stale...)
	f.v.c.Net.Split([][]network.NodeID{side, f.othersThan(side)})
	f.v.res.Probes["view-change faults: a canonical voter lost an op a lower log_view holds"]++
	f.v.tr.process("nemesis", voter.ID(), false, fmt.Sprintf("view-change faults: op %d's slot damaged, split %v from the rest", f.staleOp, side), 0)
	f.isolateToElect(tick, side)
}

func (f *vcFaults) isStale(id uint8) bool {
	return slices.Contains(f.stale, network.NodeID(id))
}

// othersThan lists the replicas not in ids.
func (f *vcFaults) othersThan(ids []network.NodeID) []network.NodeID {
	var out []network.NodeID
	for _, n := range f.v.c.Replicas {
		if !slices.Contains(ids, network.NodeID(n.ID())) {
			out = append(out, network.NodeID(n.ID()))
		}
	}
	return out
}
