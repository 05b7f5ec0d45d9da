package sim

import (
	"fmt"
	"slices"

	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// coreLog is what the stall diagnosis needs of one core replica that is up:
// its head and commit_max, and what its journal can say about each op.
type coreLog struct {
	replica   uint8
	op        uint64 // head
	commitMax uint64
	logView   uint32
	// knows reports what the journal can say of an op at or below the
	// head: journal.Held when it holds a body for it.
	knows func(op uint64) journal.Knowledge
	// identity is the identity of the body or header the journal holds
	// for op, if any.
	identity func(op uint64) (wire.U128, bool)
}

// explainMissingPrepare excuses a stall the protocol cannot avoid because
// an op beyond the core's commit is lost to the core: no core replica holds
// a body for it, and fewer core replicas than a nack quorum can prove they
// never acknowledged it. Such an op may have been committed by replicas
// outside the core (a replication quorum of them acknowledged it, then
// froze), so the view change may neither truncate it nor repair it
// (TigerBeetle's VOPR excuses the same: "a prepare is missing on a nack
// quorum or on all replicas", vopr-notes.md section 6). It returns "" when
// there is no such op.
//
// The nacks counted are the ones the core replicas' journals would give:
// the explanation is only as good as the journal's proof that an op was
// never acknowledged, so a journal that fails to prove what it could (the
// bug behind seed 2267) shows here as an excused stall: campaigns watch the
// rate of liveness=explained.
func (v *vopr) explainMissingPrepare() string {
	var core []coreLog
	for i, rn := range v.c.Replicas {
		if !v.core[i] || rn.Replica() == nil {
			continue
		}
		r := rn.Replica()
		g := r.Metadata()
		core = append(core, coreLog{
			replica: uint8(i), op: g.Op(), commitMax: g.CommitMax(), logView: g.LogView(),
			knows: func(op uint64) journal.Knowledge {
				if _, ok := r.Journal().Frame(op); ok {
					return journal.Held
				}
				return r.Journal().Knowledge(op)
			},
			identity: func(op uint64) (wire.U128, bool) {
				if f, ok := r.Journal().Frame(op); ok {
					return wire.HeaderOf(f).Checksum(), true
				}
				if h, ok := r.Journal().Header(op); ok {
					return h.Checksum(), true
				}
				return wire.U128{}, false
			},
		})
	}
	return missingPrepare(core, vsr.QuorumNack(v.o.Replicas))
}

// missingPrepare is the rule behind explainMissingPrepare, over the core
// replicas that are up: the first op above the lowest commit_max and at or
// below the highest head that no core replica holds and that fewer than
// nackQuorum core replicas can nack (a replica whose head is below the op
// nacks it, as its DoViewChange would). "" when every such op is held or
// nackable.
//
// A body counts as held only if it is the op as the view change will
// adopt it: as known (body or header) by the core replicas of the highest
// log_view that know it. A body an older log holds is a prepare that
// later view replaced, and cannot be committed (VOPR seed 26 with
// -rollback: a header-only slot in log_view 12, the only body in the core a
// view-10 prepare, the view-12 body on a frozen replica).
func missingPrepare(core []coreLog, nackQuorum int) string {
	if len(core) == 0 {
		return ""
	}
	commit, head := core[0].commitMax, uint64(0)
	for _, c := range core {
		commit = min(commit, c.commitMax)
		head = max(head, c.op)
	}
	for op := commit + 1; op <= head; op++ {
		adopted := adoptedIdentities(core, op)
		held, nacks := false, 0
		var unknown, replaced []uint8
		for _, c := range core {
			if c.op < op {
				nacks++
				continue
			}
			switch c.knows(op) {
			case journal.Held:
				if id, _ := c.identity(op); slices.Contains(adopted, id) {
					held = true
				} else {
					replaced = append(replaced, c.replica)
				}
			case journal.Nackable, journal.HeaderUnacked:
				nacks++
			default:
				unknown = append(unknown, c.replica)
			}
		}
		if !held && nacks < nackQuorum {
			why := fmt.Sprintf("op %d is held by no core replica, and only %d of the %d nacks that would prove it uncommitted exist (replicas %v cannot read it",
				op, nacks, nackQuorum, unknown)
			if len(replaced) > 0 {
				why += fmt.Sprintf("; replicas %v hold a prepare a later log replaced", replaced)
			}
			return why + "); it may have been committed outside the core"
		}
	}
	return ""
}

// adoptedIdentities returns the identities of op as known by the core
// replicas of the highest log_view that know it (by body or header).
func adoptedIdentities(core []coreLog, op uint64) []wire.U128 {
	var ids []wire.U128
	best := uint32(0)
	for _, c := range core {
		id, ok := c.identity(op)
		switch {
		case !ok || c.op < op:
		case len(ids) == 0 || c.logView > best:
			best, ids = c.logView, append(ids[:0], id)
		case c.logView == best:
			ids = append(ids, id)
		}
	}
	return ids
}
