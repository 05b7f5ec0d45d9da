package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// A login or logout that reaches a backup is forwarded to the metadata
// primary or answered there (client-ops.md 5.1's and 5.2's transients: not
// primary, unreachable, pipeline full → TransientNotAccepted; in progress,
// canceled, timed out → TransientNotCommitted), never dropped: the client
// has no other way to learn what became of it. And the primary's refusal
// of a forward (ForwardRegisterResult or ForwardLogoutResult with an
// outcome other than Ok, wire.md 5.16 and 5.18) is the answer the client
// waits on: the backup passes it on as it arrives. A backup that swallows
// either leaves the client to its forward timeout and a TransientNotCommitted
// that says "outcome unknown" of a request the primary said it never took.
//
// The checker follows the answers a backup sends its clients (ToClient) and
// the forwards it sends (checker.Sent, which may come later than the
// request: the bus queues a frame for a peer it is still connecting to). A
// backup that knows no primary (its metadata status is not Normal) cannot
// forward: it answers at once. A backup in Normal status that answers
// nothing has parked the request (forwarded it, or queued the forward); a
// request is parked until the backup sends the client a reply of that
// operation, or an eviction, or crashes, and a retry of a parked request
// only moves its answer to the retry's connection (it owes nothing at
// once).

// Names of the forward promises.
const (
	// ForwardDropped: a backup that knows no primary handled a client's
	// valid Register or Logout, had no forward of it parked, and did not
	// answer it.
	ForwardDropped = "login or logout left unanswered by a backup without a primary"
	// ForwardRefusalUnanswered: a backup handled the primary's refusal of
	// a forward it had parked and did not answer the client.
	ForwardRefusalUnanswered = "forward's refusal not passed on to the client"
	// ForwardLogoutUnsettled: a backup handled the primary's Ok for a
	// Logout it had forwarded, at a commit it has applied, and did not
	// answer the client (client-ops.md 5.2: the empty success).
	ForwardLogoutUnsettled = "forwarded logout's success not passed on to the client"
)

// Client operations a backup forwards (wire.md 5.20's operation byte).
const (
	operationRegister = 1
	operationLogout   = 3
)

// fwdParkKey names a parked forward: a backup, a client and the operation
// (the backup keeps one forward per client and operation).
type fwdParkKey struct {
	replica   uint8
	client    wire.U128
	operation uint8
}

// fwdParked is a forward the backup sent and has not answered.
type fwdParked struct {
	incarnation uint64
	nonce       wirespec.U128
	// resulted: the primary's result came (an Ok one leaves the request
	// parked until its commit answers it); later results owe nothing.
	resulted bool
}

// fwdHandling is the login or logout a backup is handling.
type fwdHandling struct {
	set       bool
	conn      uint64
	client    wire.U128
	operation uint8
	request   uint64
	retry     bool // a forward of it is parked: the retry owes nothing at once
	normal    bool // the backup is in Normal status: it may forward
	done      bool // answered
}

// forwardState is the bookkeeping of the forward promises.
type forwardState struct {
	parked   map[fwdParkKey]fwdParked // looked up only
	handling []fwdHandling
}

func (c *Checker) forwardState() *forwardState {
	a := c.answerState()
	if a.fwd == nil {
		a.fwd = &forwardState{parked: map[fwdParkKey]fwdParked{}, handling: make([]fwdHandling, c.replicas)}
	}
	return a.fwd
}

// forwardDelivered: replica r, a metadata backup as far as its events
// told, is about to handle a client's frame on conn.
func (c *Checker) forwardDelivered(r uint8, conn uint64, frame []byte) {
	f := c.forwardState()
	f.handling[r] = fwdHandling{}
	op := frame[wirespec.OffReqOperation]
	if op != operationRegister && op != operationLogout || wirespec.CheckFromClient(frame) != nil {
		return // a frame the replica's Validate may drop unanswered (a Request is not sealed: wire.md 3.2)
	}
	client := u128(wirespec.Get128(frame, wirespec.OffReqClient))
	p, ok := f.parked[fwdParkKey{r, client, op}]
	f.handling[r] = fwdHandling{set: true, conn: conn, client: client, operation: op,
		request: wirespec.U64(frame, wirespec.OffReqRequest), retry: ok && p.incarnation == c.incarnations[r],
		normal: c.lastStatus[r] == vsr.StatusNormal}
}

// forwardSent notes a ForwardRegister or ForwardLogout replica r sends.
func (c *Checker) forwardSent(r uint8, frame []byte) {
	if c.answers == nil || int(r) >= c.replicas || len(frame) < wirespec.HeaderSize {
		return
	}
	var op uint8
	var client, nonce wirespec.U128
	switch frame[wirespec.OffCommand] {
	case wirespec.ForwardRegister:
		op, client, nonce = operationRegister, wirespec.Get128(frame, wirespec.OffFRClient), wirespec.Get128(frame, wirespec.OffFRNonce)
	case wirespec.ForwardLogout:
		op, client, nonce = operationLogout, wirespec.Get128(frame, wirespec.OffFLClient), wirespec.Get128(frame, wirespec.OffFLNonce)
	default:
		return
	}
	f := c.forwardState()
	f.parked[fwdParkKey{r, u128(client), op}] = fwdParked{incarnation: c.incarnations[r], nonce: nonce}
}

// forwardAnswered notes a frame replica r sends a client: a reply of a
// forwarded operation, or an eviction, answers the parked forward.
func (c *Checker) forwardAnswered(r uint8, frame []byte) {
	if c.answers == nil || c.answers.fwd == nil || int(r) >= c.replicas || len(frame) < wirespec.HeaderSize {
		return
	}
	f := c.answers.fwd
	var client wire.U128
	ops := []uint8{operationRegister, operationLogout}
	switch frame[wirespec.OffCommand] {
	case wirespec.Reply:
		client = u128(wirespec.Get128(frame, wirespec.OffReplyClient))
		ops = ops[:0]
		if op := frame[wirespec.OffReplyOperation]; op == operationRegister || op == operationLogout {
			ops = append(ops, op)
		}
	case wirespec.Eviction:
		client = u128(wirespec.Get128(frame, wirespec.OffEvictClient))
	default:
		return
	}
	if h := &f.handling[r]; h.set && h.client == client {
		h.done = true
	}
	for _, op := range ops {
		delete(f.parked, fwdParkKey{r, client, op})
	}
}

// forwardHandled: replica r has handled the client frame forwardDelivered
// announced.
func (c *Checker) forwardHandled(r uint8) {
	if c.answers == nil || c.answers.fwd == nil || int(r) >= c.replicas {
		return
	}
	f := c.answers.fwd
	h := f.handling[r]
	f.handling[r] = fwdHandling{}
	if !h.set || h.done || h.retry || c.violation != nil {
		return
	}
	if conn, ok := c.answers.conns[connKey{r, h.conn}]; ok && conn.closed {
		return // the replica closed the connection (a framing error)
	}
	if h.normal {
		// Forwarded, its frame perhaps queued until the bus connects:
		// parked, its nonce learned when the frame goes out.
		k := fwdParkKey{r, h.client, h.operation}
		if p, ok := f.parked[k]; !ok || p.incarnation != c.incarnations[r] {
			f.parked[k] = fwdParked{incarnation: c.incarnations[r]}
		}
		return
	}
	c.fail(Violation{Name: ForwardDropped, Replicas: []uint8{r},
		Detail: fmt.Sprintf("replica %d, a metadata backup in status %s (view %d) that knows no primary to forward to, handled %s request %d of client %s on connection %d with no forward of it parked, and did not answer it",
			r, c.lastStatus[r], c.lastView[r], operationName(h.operation), h.request, h.client, h.conn)})
}

// forwardResultHandled: replica r has handled a peer frame; a forward's
// result other than Ok for a forward r has parked must have been answered.
func (c *Checker) forwardResultHandled(r, from uint8, frame []byte, delivered bool) {
	if c.answers == nil || c.answers.fwd == nil || int(r) >= c.replicas || !delivered || c.violation != nil {
		return
	}
	var op, outcome uint8
	var client, nonce wirespec.U128
	switch frame[wirespec.OffCommand] {
	case wirespec.ForwardRegisterResult:
		op, outcome = operationRegister, frame[wirespec.OffFRROutcome]
		client, nonce = wirespec.Get128(frame, wirespec.OffFRRClient), wirespec.Get128(frame, wirespec.OffFRRNonce)
	case wirespec.ForwardLogoutResult:
		op, outcome = operationLogout, frame[wirespec.OffFLROutcome]
		client, nonce = wirespec.Get128(frame, wirespec.OffFLRClient), wirespec.Get128(frame, wirespec.OffFLRNonce)
	default:
		return
	}
	f := c.answers.fwd
	k := fwdParkKey{r, u128(client), op}
	p, ok := f.parked[k]
	if !ok || p.incarnation != c.incarnations[r] || p.nonce != nonce || p.resulted {
		return // answered already (a reply or an eviction removed it), or not this forward's
	}
	if outcome == 0 {
		// Ok: a Register is answered now or at its commit; a Logout's
		// commit (its op, or the primary's commit for a no-op) once this
		// replica has applied it.
		if op == operationLogout {
			if commit := wirespec.U64(frame, wirespec.OffFLRCommit); commit < c.next[r] {
				delete(f.parked, k)
				c.fail(Violation{Name: ForwardLogoutUnsettled, Replicas: []uint8{r, from}, Ops: []uint64{commit},
					Detail: fmt.Sprintf("replica %d handled replica %d's ForwardLogoutResult Ok at commit %d of its forward of client %s's Logout, parked there, having applied op %d, and sent the client no answer",
						r, from, commit, u128(client), c.next[r]-1)})
				return
			}
		}
		p.resulted = true
		f.parked[k] = p
		return
	}
	delete(f.parked, k)
	c.fail(Violation{Name: ForwardRefusalUnanswered, Replicas: []uint8{r, from},
		Detail: fmt.Sprintf("replica %d handled replica %d's %s (outcome %d) of its forward of client %s's %s, parked there, and sent the client no answer",
			r, from, wirespec.CommandName(frame[wirespec.OffCommand]), outcome, u128(client), operationName(op))})
}

func operationName(op uint8) string {
	if op == operationRegister {
		return "Register"
	}
	return "Logout"
}
