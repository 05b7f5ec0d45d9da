package sim

import (
	"fmt"

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
	// parent is the parent named by the body or header the journal holds
	// for op, if any.
	parent func(op uint64) (wire.U128, bool)
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
		// A leftover of a replaced log is what its vote reports blank:
		// nothing the merge can take, nor a nack (VOPR seed 90082 with
		// shorter gaps between view-change fault rounds: two replicas
		// whose op 27 slots held a leftover and a conflict, the merge
		// waiting for ever, unexplained while the leftover counted as
		// held). Journal.Header answers from the held body first, else
		// from a header copy the journal vouches for.
		header := func(op uint64) (wire.Header, bool) {
			if g.Leftover(op) {
				return wire.Header{}, false
			}
			return r.Journal().Header(op)
		}
		core = append(core, coreLog{
			replica: uint8(i), op: g.Op(), commitMax: g.CommitMax(), logView: g.LogView(),
			knows: func(op uint64) journal.Knowledge {
				if g.Leftover(op) {
					return journal.Unknown
				}
				if _, ok := r.Journal().Frame(op); ok {
					return journal.Held
				}
				return r.Journal().Knowledge(op)
			},
			identity: func(op uint64) (wire.U128, bool) {
				h, ok := header(op)
				return h.Checksum(), ok
			},
			parent: func(op uint64) (wire.U128, bool) {
				h, ok := header(op)
				var p wire.PrepareHeader
				p.Decode(&h)
				return p.Parent, ok
			},
		})
	}
	return missingPrepare(core, vsr.QuorumNack(v.o.Replicas), len(core) < v.o.Replicas)
}

// missingPrepare is the rule behind explainMissingPrepare, over the core
// replicas that are up: the first op of the log the view change must adopt
// (above the lowest commit_max, up to the head of the highest log_view) that
// no core replica holds with its canonical identity and that fewer than
// nackQuorum core replicas can nack (a replica whose head is below the op
// nacks it, as its DoViewChange would). "" when every such op is held or
// nackable. outside says whether some replica is outside the core: where
// none is, the acknowledgements that may have committed the op came from
// core replicas whose copies a fault since destroyed.
//
// The canonical identity is the one the view change's merge can know:
// the copy (body or header) of a core replica of the highest log_view, or
// else the parent that the canonical op above names. A body of an older
// log with another identity is a prepare that later view replaced (VOPR
// seed 26 with -rollback: a header-only slot in log_view 12, the only body
// in the core a view-10 prepare, the view-12 body on a frozen replica). A
// body of an older log where the core knows no canonical identity at all
// proves nothing either: the highest log_view may have replaced it with a
// prepare that replicas outside the core acknowledged and committed (VOPR
// seed 11971028900399579235: the log_view-11 head is a slot its one holder
// in the core cannot read, the log_view-9 replicas hold a view-9 prepare
// there, and the merge can neither adopt nor truncate the op).
func missingPrepare(core []coreLog, nackQuorum int, outside bool) string {
	if len(core) == 0 {
		return ""
	}
	commit, logView := core[0].commitMax, uint32(0)
	for _, c := range core {
		commit = min(commit, c.commitMax)
		logView = max(logView, c.logView)
	}
	head := uint64(0)
	for _, c := range core {
		if c.logView == logView {
			head = max(head, c.op)
		}
	}
	canonical := canonicalIdentities(core, logView, commit, head)
	for op := commit + 1; op <= head; op++ {
		id, known := canonical[op]
		held, nacks := false, 0
		var unknown, replaced []uint8
		for _, c := range core {
			if c.op < op {
				nacks++
				continue
			}
			switch c.knows(op) {
			case journal.Held:
				if got, _ := c.identity(op); known && got == id {
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
			switch {
			case len(replaced) > 0 && known:
				why += fmt.Sprintf("; replicas %v hold a prepare a later log replaced", replaced)
			case len(replaced) > 0:
				why += fmt.Sprintf("; no core replica knows its identity in log_view %d, so the older prepare replicas %v hold may have been replaced", logView, replaced)
			}
			if !outside {
				return why + "); it may have been committed, acknowledged by core replicas whose copies faults destroyed"
			}
			return why + "); it may have been committed outside the core"
		}
	}
	return ""
}

// canonicalIdentities returns the identity of each op in (commit, head] as
// the view change's merge can know it: from a core replica of logView whose
// head reaches the op, else as the parent of the canonical op above when a
// core replica holds a header that names it. Ops it cannot know are absent.
func canonicalIdentities(core []coreLog, logView uint32, commit, head uint64) map[uint64]wire.U128 {
	ids := make(map[uint64]wire.U128)
	var named wire.U128 // the parent the canonical op above names
	haveNamed := false
	for op := head; op > commit; op-- {
		id, ok := wire.U128{}, false
		for _, c := range core {
			if c.logView != logView || c.op < op {
				continue
			}
			if got, known := c.identity(op); known {
				id, ok = got, true
				break
			}
		}
		if !ok && haveNamed {
			id, ok = named, true
		}
		haveNamed = false
		if !ok {
			continue
		}
		ids[op] = id
		for _, c := range core {
			if c.op < op || c.parent == nil {
				continue
			}
			if got, known := c.identity(op); known && got == id {
				if p, ok := c.parent(op); ok {
					named, haveNamed = p, true
					break
				}
			}
		}
	}
	return ids
}
