package sim

import (
	"fmt"
	"slices"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/vsr"
)

// A short replace round aims at the merge rule "the log ends below the
// lowest op with a nack quorum" ("view change truncated above an op with
// a nack quorum"): an op with a nack quorum below one without, which only
// the scan up from commit_max finds (the top-down truncation stops at the
// op above).
//
// Half the replace rounds that are not head rounds run so: when the
// replacer's acknowledgements are withheld, a view-change quorum's worth
// less one of its backups (the short backups, Normal in its view and
// caught up with it) are cut off from everyone as well, so that their logs
// end below the struck ops. The struck replica then joins the replacer
// once it has prepared above the lowest struck op, and reconciles: the
// adopted log's ops it never acknowledged are recorded as such
// (nackable, DEVIATIONS 29's second seal). No write is misdirected;
// instead, just before its crash, the adopted head's slot is damaged
// whole, so that its vote reports that op unknown. Restarted, it is split
// off with the short backups. Their votes nack every op above their heads;
// its own nacks the struck ops below the damaged head, not the head:
// the lowest struck op has a nack quorum, the head one nack fewer.

// startShort draws, for a replace round that is not a head round, whether
// it runs short, and picks its short backups: false where too few
// backups of the replacer's view are caught up with it.
func (f *vcFaults) startShort(replacer *ReplicaNode) bool {
	f.short = nil
	if !f.wantShort {
		return false
	}
	caught, k := f.caughtBackups(replacer)
	if len(caught) < k {
		return false
	}
	f.rng.Shuffle(len(caught), func(i, j int) { caught[i], caught[j] = caught[j], caught[i] })
	f.short = caught[:k]
	// The adopted head must lie above the lowest struck op.
	f.replaceTop = max(f.watchHead, f.watchLow+1)
	f.v.tr.process("nemesis", replacer.ID(), false, fmt.Sprintf("view-change faults: short backups %v cut off", f.short), 0)
	return true
}

// caughtBackups lists the backups of the replacer's view caught up with
// it, below the struck ops, and how many a short round needs (a
// view-change quorum less one).
func (f *vcFaults) caughtBackups(replacer *ReplicaNode) ([]network.NodeID, int) {
	rg := replacer.Replica().Metadata()
	var caught []network.NodeID
	for _, n := range f.v.c.Replicas {
		r := n.Replica()
		if n.ID() == f.primary || n.ID() == replacer.ID() || !n.Up() || n.Paused() || r == nil {
			continue
		}
		if g := r.Metadata(); g.Status() == vsr.StatusNormal && g.View() == rg.View() && g.Op() == rg.Op() && g.Op() < f.watchLow {
			caught = append(caught, network.NodeID(n.ID()))
		}
	}
	return caught, vsr.QuorumViewChange(f.v.o.Replicas) - 1
}

// isShort reports whether id is a short backup of the round.
func (f *vcFaults) isShort(id network.NodeID) bool { return slices.Contains(f.short, id) }

// shortReconciled takes, in a short round, the struck replica's reconcile
// to head (commit its commit point): it is cut off at once, its crash
// armed; false where the adopted head is not above the lowest struck op
// or its slot may not be damaged (the round then ends as it may).
func (f *vcFaults) shortReconciled(n *ReplicaNode, head, commit uint64) bool {
	if head <= f.watchLow || head <= commit || !f.v.c.disks.Faultable(n.ID(), head) {
		return false
	}
	f.shortHead = head
	f.held = true
	struck, replacer := network.NodeID(n.ID()), network.NodeID(f.replacer)
	f.v.c.Net.CutPaths(func(from, to network.NodeID) bool {
		return from == struck || to == struck || to == replacer || f.isShort(from) || f.isShort(to)
	})
	f.v.tr.process("nemesis", n.ID(), false, fmt.Sprintf("view-change faults: reconciled to head %d over the struck ops, cut off", head), 0)
	return true
}

// shortStrike damages, just before the struck replica's crash, its slot of
// the adopted head whole, and splits it off with the short backups; false
// where one of them is down (the crash then goes on as in any round).
func (f *vcFaults) shortStrike(tick int64, n *ReplicaNode) bool {
	for _, id := range f.short {
		if m := f.v.c.Replicas[int(id)]; !m.Up() || m.Replica() == nil {
			return false
		}
	}
	disks := f.v.c.disks
	n.dev.InjectCorruption(disks.slotSector(n.ID(), disks.headers, f.shortHead))
	n.dev.InjectCorruption(disks.slotSector(n.ID(), disks.prepares, f.shortHead))
	f.v.res.Probes["view-change faults: a short round's adopted head damaged, the short backups joined"]++
	side := append([]network.NodeID{network.NodeID(n.ID())}, f.short...)
	f.v.c.Net.Split([][]network.NodeID{side, f.othersThan(side)})
	f.v.tr.process("nemesis", n.ID(), false, fmt.Sprintf("view-change faults: op %d's slot damaged, split %v from the primary", f.shortHead, side), 0)
	f.isolateToElect(tick, side)
	return true
}

// shortReady reports whether a round that wants to run short may start
// withholding the replacer's acknowledgements: once enough of its backups
// have caught up with it, or, past the first half of the wait, at once
// (the round then runs as any replace round).
func (f *vcFaults) shortReady(replacer *ReplicaNode, tick int64) bool {
	if !f.wantShort || tick >= f.nextTick-vcFaultsReplaceTicksMax/2 {
		return true
	}
	caught, k := f.caughtBackups(replacer)
	return len(caught) >= k
}
