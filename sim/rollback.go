package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// The rollback nemesis (Options.Rollback) builds on purpose the shape random
// partitions almost never reach (FoundationDB's Rollback workload, Jepsen's
// targeted nemeses): a replica that holds prepares a later view replaced,
// in a view change whose merged headers do not name those ops, so that only
// the hash chain tells the replaced prepares from the canonical ones.
//
// A round, driven from the harness's view of every replica:
//
//  1. cut: the Normal primary (old) is cut off from every replica, and so,
//     with five or six replicas, is one backup (lagger). Clients still reach
//     old, which goes on preparing their requests in its view: ops no
//     quorum will hold. The others (at least a view-change quorum) elect a
//     new primary and commit other prepares at those op numbers.
//  2. aim: at the first moment a backup of the new view (bridge) has
//     committed over an op old holds replaced, with every op up to its
//     commit_max - 1 held by old, the bridge is cut off from the new view's
//     primary, which freezes its commit_max. The DoViewChange it sends from
//     then on names ops from its commit_max up, so the ops below it are
//     known to the next primary only by the chain. The nemesis draws who
//     should lead next: old, lagger, or whoever the protocol elects. For a
//     drawn leader it keeps old and lagger apart from the bridge until the
//     highest view among them is the leader's to lead.
//  3. bridge: old, lagger and bridge (topped up to a view-change quorum from
//     the majority) are joined, the new view's primary outside. If old
//     leads, it finds its own replaced prepares in its journal under the
//     bridge's headers (canary_chain_unchecked); if lagger leads, it
//     repairs the committed ops it lacks by asking the others in turn, old
//     among them (canary_repair_unchained).
//  4. led: once a replica of the joined side leads a newer view, the split
//     holds a while (time to repair and commit), then heals; the next round
//     starts after a gap.
//
// A round that does not reach its next stage within its deadline (crashes,
// no client traffic) heals and starts over. The nemesis draws from its own
// stream, so it changes nothing else of a seed's world.
type rollback struct {
	v     *vopr
	rng   *rand.Rand
	stage rollbackStage
	// nextTick: when the stage acts next (idle: the next round; led: the heal).
	nextTick     int64
	deadlineTick int64
	old          uint8
	lagger       int // -1 when there is none (fewer than five replicas)
	oldView      uint32
	bridgeView   uint32           // the new view, the bridge's when it was cut from its primary
	leader       int              // the replica aimed at to lead the joined side, -1 for any
	quietRound   bool             // no crashes or pauses while this round runs
	joined       []network.NodeID // old, lagger, bridge and the replicas topping them up
	rest         []network.NodeID // the other replicas, the new view's primary among them
}

type rollbackStage uint8

const (
	rollbackIdle   rollbackStage = iota // between rounds
	rollbackCut                         // old (and lagger) cut off, the majority moves on
	rollbackAim                         // the bridge cut from its primary, old and lagger still apart
	rollbackBridge                      // the joined side, waiting for a view among it
	rollbackLed                         // a replica of the joined side leads: hold, then heal
)

// Round timing, in ticks.
const (
	rollbackGapTicksMin     = 100  // between rounds
	rollbackGapTicksSpread  = 1000 //
	rollbackCutTicksMax     = 6000 // for the majority to commit over a replaced op
	rollbackAimTicksMax     = 6000 // for the highest view to come to the aimed leader
	rollbackBridgeTicksMax  = 6000 // for a view among the joined side
	rollbackHoldTicksMin    = 300  // the joined side on its own after it leads
	rollbackHoldTicksSpread = 1500 //
)

func newRollback(v *vopr) *rollback {
	r := &rollback{v: v, rng: v.c.Streams.Stream("vopr.rollback"), lagger: -1, leader: -1}
	r.nextTick = rollbackGapTicksMin + r.rng.Int64N(rollbackGapTicksSpread)
	return r
}

// tick advances the round by what the replicas did since the last tick.
func (r *rollback) tick(nowNs int64) {
	tick := nowNs / kernel.TickNs
	switch r.stage {
	case rollbackIdle:
		if tick >= r.nextTick {
			r.cut(tick)
		}
	case rollbackLed:
		if tick >= r.nextTick {
			r.end(tick, "")
		}
	default:
		if tick > r.deadlineTick {
			r.end(tick, abandoned(r.stage))
			return
		}
		r.wait(tick)
	}
}

// abandoned names the probe of a round that timed out in stage.
func abandoned(stage rollbackStage) string {
	switch stage {
	case rollbackCut:
		return "rollback: round abandoned before a replaced op was committed over"
	case rollbackAim:
		return "rollback: round abandoned: the aimed leader's turn did not come"
	}
	return "rollback: round abandoned: no view among the joined side"
}

// wait moves the round on if what its stage waits for has happened.
func (r *rollback) wait(tick int64) {
	switch r.stage {
	case rollbackCut:
		r.freeze(tick)
	case rollbackAim:
		r.aim(tick)
	case rollbackBridge:
		r.led(tick)
	}
}

// quiet reports whether process faults are held off now (a quiet round is
// under way).
func (r *rollback) quiet() bool { return r.stage != rollbackIdle && r.quietRound }

// onEvent looks again after every replica event in the stages that wait
// for a moment: the bridge must be cut at the first commit that puts a
// replaced op below its commit_max (a tick may hold many commits), and the
// joined side joined as soon as the aimed leader's view begins.
func (r *rollback) onEvent(nowNs int64) {
	if r.stage == rollbackCut || r.stage == rollbackAim {
		r.wait(nowNs / kernel.TickNs)
	}
}

// group returns replica i's metadata group, nil while it is down.
func (r *rollback) group(i int) *vsr.Group {
	n := r.v.c.Replicas[i]
	if !n.Up() || n.Replica() == nil {
		return nil
	}
	return n.Replica().Metadata()
}

// replicasWhere lists the replicas keep keeps, in id order.
func (r *rollback) replicasWhere(keep func(id network.NodeID) bool) []network.NodeID {
	var ids []network.NodeID
	for i := range r.v.o.Replicas {
		if id := network.NodeID(i); keep(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// cut starts a round at the Normal primary, if there is one that runs.
func (r *rollback) cut(tick int64) {
	c, n := r.v.c, r.v.o.Replicas
	p := c.Primary()
	if p == nil || p.Paused() {
		return
	}
	r.old, r.oldView, r.lagger = p.ID(), p.Replica().Metadata().View(), -1
	rest := r.replicasWhere(func(id network.NodeID) bool { return uint8(id) != r.old })
	components := [][]network.NodeID{{network.NodeID(r.old)}}
	if len(rest)-1 >= vsr.QuorumViewChange(n) {
		k := r.rng.IntN(len(rest))
		r.lagger = int(rest[k])
		components = append(components, []network.NodeID{rest[k]})
		rest = slices.Delete(rest, k, k+1)
	}
	c.Net.Split(append(components, rest))
	r.stage, r.deadlineTick = rollbackCut, tick+rollbackCutTicksMax
	// Half the rounds hold process faults off while they run: a crash of
	// any replica of the shape (old, lagger, the bridge) undoes it, and
	// under a seed's crash rate most rounds would never finish.
	r.quietRound = r.rng.IntN(2) == 0
	r.v.res.Probes["rollback: old primary cut off"]++
	if r.lagger >= 0 {
		r.v.res.Probes["rollback: a lagging backup cut off with it"]++
	}
	r.v.tr.process("nemesis", r.old, false, fmt.Sprintf("rollback: old primary cut off in view %d (lagger %d)", r.oldView, r.lagger), 0)
}

// freeze cuts the bridge from the new view's primary once a backup of it
// has committed over a replaced op that old holds, with every op up to its
// commit_max - 1 held by old.
func (r *rollback) freeze(tick int64) {
	oldG := r.group(int(r.old))
	if oldG == nil {
		return
	}
	oldJ := r.v.c.Replicas[r.old].Replica().Journal()
	for i := range r.v.o.Replicas {
		if uint8(i) == r.old || i == r.lagger {
			continue
		}
		g := r.group(i)
		if g == nil || g.Status() != vsr.StatusNormal || g.IsPrimary() || g.View() <= r.oldView {
			continue
		}
		top := g.CommitMax() - 1 // the op below the bridge's DoViewChange headers
		if g.CommitMax() < 2 || top <= oldG.CommitMin() || top > g.CommitMin() || top > oldG.Op() {
			continue
		}
		// Old's log is a common prefix and then its replaced ops: the hash
		// chain makes the op at top differ exactly when old holds any
		// replaced op up to it, so top alone is compared.
		mine, ok1 := r.v.c.Replicas[i].Replica().Journal().Frame(top)
		theirs, ok2 := oldJ.Frame(top)
		if ok1 && ok2 && wire.HeaderOf(mine).Checksum() != wire.HeaderOf(theirs).Checksum() {
			r.split(tick, uint8(i), g)
			return
		}
	}
}

// split picks the joined side around bridge and draws its leader: with one
// drawn, it cuts the bridge from its primary and keeps old and lagger
// apart until their turn (aim); without, it joins them at once.
func (r *rollback) split(tick int64, bridge uint8, g *vsr.Group) {
	n := r.v.o.Replicas
	r.joined = []network.NodeID{network.NodeID(r.old), network.NodeID(bridge)}
	if r.lagger >= 0 {
		r.joined = append(r.joined, network.NodeID(r.lagger))
	}
	others := r.replicasWhere(func(id network.NodeID) bool { return !slices.Contains(r.joined, id) && uint8(id) != g.Primary() })
	r.rng.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
	for len(r.joined) < vsr.QuorumViewChange(n) && len(others) > 0 {
		r.joined, others = append(r.joined, others[0]), others[1:]
	}
	slices.Sort(r.joined)
	r.rest = r.replicasWhere(func(id network.NodeID) bool { return !slices.Contains(r.joined, id) })
	r.bridgeView = g.View()
	r.v.res.Probes["rollback: a backup committed over a replaced op cut from its primary"]++
	r.v.tr.process("nemesis", bridge, false, fmt.Sprintf("rollback: bridge cut from its primary in view %d at commit_max %d", g.View(), g.CommitMax()), 0)
	// Some rounds let the protocol elect whom it will (a third, or a
	// sixth with a lagger); the rest aim at old or, two thirds of the
	// rounds that have one, at lagger: the two replicas whose logs the
	// chain must correct, lagger's the rarer shape (it needs five
	// replicas).
	r.leader = -1
	if r.lagger >= 0 {
		switch r.rng.IntN(6) {
		case 0:
		case 1:
			r.leader = int(r.old)
		default:
			r.leader = r.lagger
		}
	} else if r.rng.IntN(3) > 0 {
		r.leader = int(r.old)
	}
	if r.leader < 0 {
		r.join(tick)
		return
	}
	r.v.tr.process("nemesis", uint8(r.leader), false, "rollback: aimed to lead the joined side", 0)
	apart := []network.NodeID{}
	components := [][]network.NodeID{{network.NodeID(r.old)}}
	if r.lagger >= 0 {
		components = append(components, []network.NodeID{network.NodeID(r.lagger)})
	}
	for _, id := range r.joined {
		if uint8(id) != r.old && int(id) != r.lagger {
			apart = append(apart, id)
		}
	}
	r.v.c.Net.Split(append(components, apart, r.rest))
	r.stage, r.deadlineTick = rollbackAim, tick+rollbackAimTicksMax
}

// aim joins the joined side once the highest view among it is one the
// aimed leader leads, and every replica in that view is still in its view
// change: the others follow the highest view, so the leader is elected.
func (r *rollback) aim(tick int64) {
	n := r.v.o.Replicas
	w, ready := uint32(0), true
	for _, id := range r.joined {
		if g := r.group(int(id)); g != nil {
			w = max(w, g.View())
		}
	}
	for _, id := range r.joined {
		if g := r.group(int(id)); g != nil && g.View() == w && g.Status() != vsr.StatusViewChange {
			ready = false
		}
	}
	if ready && w > r.bridgeView && int(vsr.PrimaryIndex(w, uint8(n))) == r.leader {
		r.join(tick)
	}
}

// join splits the joined side from the rest.
func (r *rollback) join(tick int64) {
	r.v.c.Net.Split([][]network.NodeID{r.joined, r.rest})
	r.stage, r.deadlineTick = rollbackBridge, tick+rollbackBridgeTicksMax
	r.v.res.Probes["rollback: old primary joined with a backup committed over its replaced op"]++
	r.v.tr.process("nemesis", r.old, false, fmt.Sprintf("rollback: old primary joined with the bridge: %v", r.joined), 0)
}

// led waits for a Normal primary of a view above the bridge's among the
// joined side, and names who it is.
func (r *rollback) led(tick int64) {
	for _, id := range r.joined {
		g := r.group(int(id))
		if g == nil || !g.IsPrimary() || g.View() <= r.bridgeView {
			continue
		}
		switch {
		case uint8(id) == r.old:
			r.v.res.Probes["rollback: the old primary leads the joined side"]++
		case int(id) == r.lagger:
			r.v.res.Probes["rollback: the lagging backup leads the joined side"]++
		default:
			r.v.res.Probes["rollback: a replica of the new view leads the joined side"]++
		}
		if r.leader >= 0 && int(id) == r.leader {
			r.v.res.Probes["rollback: the aimed leader leads"]++
		}
		r.v.tr.process("nemesis", uint8(id), false, fmt.Sprintf("rollback: leads the joined side in view %d", g.View()), 0)
		r.stage, r.nextTick = rollbackLed, tick+rollbackHoldTicksMin+r.rng.Int64N(rollbackHoldTicksSpread)
		return
	}
}

// end heals every replica path (Heal also lifts the clogs between
// replicas, which a round's own cuts may have hidden) and schedules the
// next round.
func (r *rollback) end(tick int64, probe string) {
	if probe != "" {
		r.v.res.Probes[probe]++
	}
	r.v.c.Net.Heal(r.replicasWhere(func(network.NodeID) bool { return true }))
	r.v.tr.process("nemesis", r.old, false, "rollback: healed", 0)
	r.stage, r.joined, r.leader = rollbackIdle, nil, -1
	r.nextTick = tick + rollbackGapTicksMin + r.rng.Int64N(rollbackGapTicksSpread)
}
