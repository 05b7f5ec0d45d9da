package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// The preflight's one-request rule (client-ops.md 2.4, and the Register
// rule of 6.2): a primary admits nothing from a client while a prepare of
// that client is in its pipeline, whatever the path the request came by
// (its own client port, or a backup's ForwardRegister or ForwardLogout).
// A second prepare of one client in flight lets a retried or forwarded
// request commit twice, or re-register a session under its client's feet,
// and the model, which applies whatever committed, would follow it.

// TwoInFlight: a primary built a prepare of a client while an earlier
// prepare of that client, which it built in the same view, was not yet
// committed there.
const TwoInFlight = "two requests of one client in flight"

type inflightKey struct {
	replica uint8
	client  wire.U128
}

// inflightRecord is the last prepare a primary built for a client.
type inflightRecord struct {
	incarnation uint64
	view        uint32
	op          uint64
	request     uint64
	operation   wire.Operation
}

// prepared holds a primary's new metadata prepare to the one-request rule.
func (c *Checker) preparedFor(r uint8, g vsr.Event) {
	var p wire.PrepareHeader
	p.Decode(&g.Header)
	if p.Client.IsZero() {
		return // an internal op: no client's request
	}
	if c.inflight == nil {
		c.inflight = map[inflightKey]inflightRecord{}
	}
	k := inflightKey{r, p.Client}
	// c.next[r] is the op r commits next: an op at or above it is still
	// in r's pipeline.
	if prev, ok := c.inflight[k]; ok && prev.incarnation == c.incarnations[r] && prev.view == g.View && prev.op >= c.next[r] && prev.op != p.Op {
		c.fail(Violation{Name: TwoInFlight, Replicas: []uint8{r}, Ops: []uint64{prev.op, p.Op},
			Detail: fmt.Sprintf("replica %d, primary of view %d, prepared op %d (%v request %d) of client %s while its op %d (%v request %d) of that client was in flight (committed up to op %d)",
				r, g.View, p.Op, p.Operation, p.Request, p.Client, prev.op, prev.operation, prev.request, c.next[r]-1)})
		return
	}
	c.inflight[k] = inflightRecord{incarnation: c.incarnations[r], view: g.View, op: p.Op, request: p.Request, operation: p.Operation}
}

// logoutRepeat reports whether p, a request committed before, is a Logout
// of a client whose session the table no longer holds: a no-op, not a
// second apply. A primary proposes a forwarded Logout of a session its own
// table does not hold (it may be a stale primary that has not applied the
// Register: DEVIATIONS.md 69), so a retried Logout can commit again after
// the first removed the session; the table then has nothing to remove.
func (c *Checker) logoutRepeat(p *wire.PrepareHeader) bool {
	if p.Operation != wire.OperationLogout || c.table == nil {
		return false
	}
	_, holds := c.table.index[p.Client]
	return !holds
}
