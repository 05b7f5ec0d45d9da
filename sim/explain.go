package sim

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/vsr"
)

// coreLog is what the stall diagnosis needs of one core replica that is up:
// its head and commit_max, and what its journal can say about each op.
type coreLog struct {
	replica   uint8
	op        uint64 // head
	commitMax uint64
	// knows reports what the journal can say of an op at or below the
	// head: journal.Held when it holds a body for it.
	knows func(op uint64) journal.Knowledge
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
			replica: uint8(i), op: g.Op(), commitMax: g.CommitMax(),
			knows: func(op uint64) journal.Knowledge {
				if _, ok := r.Journal().Frame(op); ok {
					return journal.Held
				}
				return r.Journal().Knowledge(op)
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
		held, nacks := false, 0
		var unknown []uint8
		for _, c := range core {
			if c.op < op {
				nacks++
				continue
			}
			switch c.knows(op) {
			case journal.Held:
				held = true
			case journal.Nackable, journal.HeaderUnacked:
				nacks++
			default:
				unknown = append(unknown, c.replica)
			}
		}
		if !held && nacks < nackQuorum {
			return fmt.Sprintf("op %d is held by no core replica, and only %d of the %d nacks that would prove it uncommitted exist (replicas %v cannot read it); it may have been committed outside the core",
				op, nacks, nackQuorum, unknown)
		}
	}
	return ""
}
