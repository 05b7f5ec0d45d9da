package sim

import (
	"fmt"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// A replace round of the view-change fault nemesis puts an op's stale
// header inside a log, above its commit point, in the vote of a replica of
// the highest log_view: what the merge's rules for headers off the hash
// chain are for ("DoViewChange reports headers that do not chain as
// unknown" where the voter's own next op names another parent, "view
// change ignored canonical headers off the hash chain" where another
// canonical vote holds the op the log_view's log put there).
//
// After the strike (the primary crashed with its head ops, which no backup
// received, damaged), the struck replica is split off alone:
//
//   - the rest elect a view without it, truncating the struck ops on their
//     nack quorum; once their primary (the replacer) is Normal, its
//     acknowledgements are withheld (it hears nobody), so that the ops it
//     prepares at the struck ops' numbers stay uncommitted;
//   - once it has prepared up to the struck head (or, in head rounds, over
//     the lowest struck op), the struck replica
//     reaches the replacer alone, both ways: it asks for the view and
//     reconciles, the log it adopts replacing the struck ops above its
//     commit point, and the reconcile's header write of one of them is
//     misdirected (event), leaving the struck op's header in the slot;
//   - it is cut off from everyone again at once (no repair, no
//     acknowledgement), crashes soon after, and restarts split off with a
//     backup of the replacer's view (vcForgetCrash): their view change
//     counts its vote, the stale header inside it.

// vcFaultsReplaceWithheldTicksMax: how long the replacer may take to
// prepare over the struck ops, its requests forwarded by no backup (it
// hears none): client requests can be sparse.
const vcFaultsReplaceWithheldTicksMax = 4000

// isolateAlone splits the struck primary off alone.
func (f *vcFaults) isolateAlone(tick int64, primary uint8) {
	f.stage, f.nextTick = vcFaultsReplacing, tick+vcFaultsReplaceTicksMax
	// The watch always runs: the misdirected write is what the round is for.
	f.watching, f.watchUntil = true, f.nextTick+vcFaultsReplaceWithheldTicksMax+vcFaultsWatchTicks
	// Half the rounds (head rounds) let it join once the replacer has
	// prepared over the lowest struck op only: the log it adopts then
	// likely ends there, the stale header its vote's top entry, chained to
	// the op below, which conflicts with another canonical vote's header
	// of the op instead of breaking its own vote's chain.
	f.replaceTop = f.watchHead
	f.wantShort = false
	if f.rng.IntN(2) == 0 {
		f.replaceTop = f.watchLow
	} else {
		// Two in three of the others run short (vcfaults_short.go).
		f.wantShort = f.rng.IntN(3) > 0
	}
	f.v.c.Net.Split([][]network.NodeID{{network.NodeID(primary)}, f.others(primary)})
	f.v.tr.process("nemesis", primary, false, "view-change faults: struck primary split off alone", 0)
}

// tickReplacing withholds the acknowledgements of the rest's primary once
// it is Normal in a view above the struck replica's, or gives up.
func (f *vcFaults) tickReplacing(tick int64) {
	// Paused once restarted, so that alone it does not run its view up
	// with elections nobody answers: when it joins, it asks the replacer
	// for its view instead of forcing a view change of its own on it.
	if n := f.v.c.Replicas[f.primary]; n.Up() && !n.Paused() && n.Replica() != nil && !f.paused {
		n.Pause()
		f.paused = true
	}
	if p, ok := f.restPrimary(); ok && f.caughtUp(p) && f.shortReady(p, tick) {
		f.replacer = p.ID()
		f.stage, f.nextTick = vcFaultsReplaceWithheld, tick+vcFaultsReplaceWithheldTicksMax
		f.watchUntil = f.nextTick + vcFaultsWatchTicks
		struck, replacer := network.NodeID(f.primary), network.NodeID(f.replacer)
		// A replica dials only higher peers, once per reconnect sweep (500
		// ticks): where the replacer is the lower, the path between the
		// two stays open, so that it dials the paused struck replica now
		// and its prepares wait there, held, for the join. Else the join
		// restarts the struck replica, whose first sweep dials at once.
		// Either way the struck replica asks for the view the moment it
		// joins, not a sweep later, when the replacer has prepared past
		// the struck op a head round aims at (VOPR seeds 4242000 on: the
		// join took 500 to 600 ticks in 9 head rounds of 10).
		preopen := f.replacer < f.primary
		f.startShort(p)
		f.v.c.Net.CutPaths(func(from, to network.NodeID) bool {
			if f.isShort(from) || f.isShort(to) {
				return true
			}
			if preopen && (from == struck && to == replacer || from == replacer && to == struck) {
				return false
			}
			return from == struck || to == struck || to == replacer
		})
		f.v.tr.process("nemesis", f.replacer, false, "view-change faults: the rest's primary's acknowledgements withheld", 0)
		return
	}
	if tick >= f.nextTick {
		f.endReplace(tick)
	}
}

// tickReplaceWithheld lets the struck replica reach the replacer once it
// has prepared up to the struck head, or gives up.
func (f *vcFaults) tickReplaceWithheld(tick int64) {
	p := f.v.c.Replicas[f.replacer]
	r := p.Replica()
	if !p.Up() || r == nil || !r.Metadata().IsPrimary() || r.Metadata().Status() != vsr.StatusNormal {
		f.endReplace(tick)
		return
	}
	g := r.Metadata()
	if f.replaceTop == f.watchLow && g.Op() > f.watchLow {
		f.replaceTop = f.watchHead // the head round's moment passed: any struck op
	}
	if f.replaceTop > f.watchLow && g.Op() >= f.replaceTop && g.CommitMax() < f.watchLow {
		f.joinReplacer()
		return
	}
	if tick >= f.nextTick {
		f.endReplace(tick)
	}
}

// replaceEvent sees, in a head round of the faulted phase (a cut in the
// liveness phase would keep the core apart: VOPR seed 348549933009091822,
// before this check), the replacer build its prepare of
// the lowest struck op, and lets the struck replica join it then: the
// prepare, stalled on the cut path, reaches it first and it asks for the
// view, whose log most likely still ends at that op.
func (f *vcFaults) replaceEvent(e replica.Event) {
	if !f.v.faulted || f.stage != vcFaultsReplaceWithheld || f.replaceTop != f.watchLow || e.Kind != replica.EventGroup ||
		e.Group.Kind != vsr.EventPrepared || e.Group.Group != wire.MetadataGroup || e.Replica != f.replacer ||
		e.Group.Op != f.watchLow {
		return
	}
	if r := f.v.c.Replicas[f.replacer].Replica(); r != nil && r.Metadata().CommitMax() < f.watchLow {
		f.joinReplacer()
	}
}

// joinReplacer lets the struck replica reach the replacer alone, both
// ways, the replacer still hearing no other replica.
func (f *vcFaults) joinReplacer() {
	f.v.res.Probes["view-change faults: the rest prepared over the struck ops"]++
	struck, replacer := network.NodeID(f.primary), network.NodeID(f.replacer)
	f.v.c.Net.CutPaths(func(from, to network.NodeID) bool {
		if f.isShort(from) || f.isShort(to) {
			return true
		}
		if from == struck || to == struck {
			return from != replacer && to != replacer
		}
		return to == replacer
	})
	f.stage = vcFaultsHeld
	if f.replaceTop == f.watchLow {
		f.holdRequests()
	}
	if n := f.v.c.Replicas[f.primary]; f.primary < f.replacer && n.Up() {
		f.paused = false // the crash ends the pause
		f.v.crashAndRestart(n, 1)
	}
	f.resumeStruck()
	f.v.tr.process("nemesis", f.primary, false, fmt.Sprintf("view-change faults: struck replica joins the rest's primary %d alone", f.replacer), 0)
}

// endReplace abandons a replace round: nothing is watched any more.
func (f *vcFaults) endReplace(tick int64) {
	f.resumeStruck()
	f.watching = false
	f.end(tick, true)
}

// resumeStruck resumes the struck replica if the round paused it.
func (f *vcFaults) resumeStruck() {
	if f.paused {
		f.paused = false
		f.v.c.Replicas[f.primary].Resume()
	}
}

// caughtUp reports whether the rest's primary has committed and executed
// its whole log: once its inbound paths are cut it can repair nothing, and
// a primary whose commit_min lags its commit_max admits no request
// (client-ops.md 2.4), so it would prepare nothing over the struck ops
// (VOPR seed 4242152: a hole at the op below the struck ones, its repair
// answers cut off, and the round starved).
func (f *vcFaults) caughtUp(p *ReplicaNode) bool {
	g := p.Replica().Metadata()
	return g.CommitMin() == g.CommitMax() && g.CommitMax() == g.Op()
}

// restPrimary finds the Normal metadata primary of a replica other than
// the struck one.
func (f *vcFaults) restPrimary() (*ReplicaNode, bool) {
	for _, n := range f.v.c.Replicas {
		r := n.Replica()
		if n.ID() == f.primary || !n.Up() || r == nil {
			continue
		}
		if g := r.Metadata(); g.IsPrimary() && g.Status() == vsr.StatusNormal {
			return n, true
		}
	}
	return nil, false
}

// replacedOp draws the struck op whose header write the reconcile loses:
// one the adopted log (head, commit) replaced above its commit point, one
// above the lowest where it can (its stale header's parent is then the
// old op below, which the log replaced too); false when none is.
func (f *vcFaults) replacedOp(head, commit uint64) (uint64, bool) {
	lo, hi := max(f.watchLow, commit+1), min(f.watchHead, head)
	if lo > hi {
		return 0, false
	}
	if f.replaceTop == f.watchLow && head == f.watchLow && lo == f.watchLow {
		return f.watchLow, true // the adopted log's head
	}
	if lo == f.watchLow && hi > lo {
		lo++
	}
	return lo + f.rng.Uint64N(hi-lo+1), true
}

// holdRequests holds the client requests bound for the replacer, in a head
// round, until the struck replica has reconciled (or the round ends): the
// struck replica asks for the view at its next probe, up to 100 ticks
// after the join, and a request prepared before the answer would put the
// adopted log's head above the struck op the round aims at.
func (f *vcFaults) holdRequests() {
	f.requestsHeld = f.v.c.Net.AddFilter(network.Filter{From: network.AnyNode, To: network.NodeID(f.replacer), Action: network.Hold,
		Match: func(frame []byte) bool { return wire.HeaderOf(frame).Command() == wire.CommandRequest }})
}

// releaseRequests lets the requests holdRequests held go.
func (f *vcFaults) releaseRequests() {
	if f.requestsHeld != 0 {
		f.v.c.Net.RemoveFilter(f.requestsHeld)
		f.requestsHeld = 0
	}
}
