package checker

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// A replica that admits a client's request answers it there: the primary
// that prepares a request it received on a client connection sends the
// committed op's reply on that connection (client-ops.md 2.1: "the replica
// that holds the client's connection sends it"; partition-plane.md: the
// group's primary answers the send). A reply never sent leaves the client
// to time out and retry, and the run to end as a stall with nothing named;
// here it is named at the commit that should have answered.
//
// The checker follows the client connections as the harness delivers and
// closes them (ClientDelivered, ClientConnClosed), and holds a replica to
// the promise only where nothing it saw could have moved the answer
// elsewhere: the connection the request came on is still open, it carried
// no other client's request since, and the client sent this replica
// nothing on another connection since.

// Names of the answer promises.
const (
	// ReplyWithheld: a replica committed a request it admitted from a
	// client connection that is still open, and sent no reply on it.
	ReplyWithheld = "committed request not answered"
	// PollUnanswered: a replica handled a PollMessages without answering
	// it (a read is served where it lands, at once: partition-plane.md
	// "Polls", client-ops.md 5.28).
	PollUnanswered = "poll not answered"
	// PollStatusWrong: a poll answered with a status client-ops.md 5.28
	// never gives one.
	PollStatusWrong = "poll answered with a status it never has"
)

// pollStatuses are the statuses a PollMessages reply may carry
// (client-ops.md 5.28: success, Unauthenticated, Unauthorized, a missing
// stream, topic or partition; DEVIATIONS.md: TransientNotAccepted from a
// replica that has not built the partition's group yet).
var pollStatuses = [...]uint32{0, 40, 41, 1009, 2010, 3007, 58}

// connKey names one client connection at one replica.
type connKey struct {
	replica uint8
	conn    uint64
}

// connRecord is what the checker saw of a client connection at a replica:
// the client whose request it last carried.
type connRecord struct {
	incarnation uint64
	client      wire.U128
	closed      bool
}

// deliveryRecord is the last request of a client a replica received.
type deliveryRecord struct {
	incarnation uint64
	conn        uint64
	request     uint64
}

type admitKey struct {
	replica uint8
	client  wire.U128
	request uint64
}

// admitRecord: a replica prepared a client's request it had received on
// conn.
type admitRecord struct {
	incarnation uint64
	conn        uint64
	group       uint64
	op          uint64
}

// answerState is the bookkeeping of the answer promise (lazily made).
type answerState struct {
	conns     map[connKey]connRecord         // looked up only
	delivered map[inflightKey]deliveryRecord // looked up only
	admitted  map[admitKey]admitRecord       // looked up only
	// lastReply: per replica, the last Reply it sent a client, unless an
	// EventReply claimed it since.
	lastReply []sentReply
	// poll: per replica, the PollMessages it is handling, until answered.
	poll []sentReply
	// fwd: the forward promises (forwards.go), lazily made.
	fwd *forwardState
}

type sentReply struct {
	client  wire.U128
	request uint64
	atNs    int64 // the reply of a commit goes out in the commit's own step
	set     bool
}

func u128(x wirespec.U128) wire.U128 { return wire.U128{Lo: x.Lo, Hi: x.Hi} }

func (c *Checker) answerState() *answerState {
	if c.answers == nil {
		c.answers = &answerState{conns: map[connKey]connRecord{}, delivered: map[inflightKey]deliveryRecord{},
			admitted: map[admitKey]admitRecord{}, lastReply: make([]sentReply, c.replicas), poll: make([]sentReply, c.replicas)}
	}
	return c.answers
}

// ClientDelivered tells the checker replica r is about to handle a frame
// from a client on connection conn.
func (c *Checker) ClientDelivered(nowNs int64, r uint8, conn uint64, frame []byte) {
	c.nowNs = nowNs
	if c.violation != nil || int(r) >= c.replicas || len(frame) < wire.HeaderSize || frame[wirespec.OffCommand] != wirespec.Request {
		return
	}
	a := c.answerState()
	client := u128(wirespec.Get128(frame, wirespec.OffReqClient))
	inc := c.incarnations[r]
	a.conns[connKey{r, conn}] = connRecord{incarnation: inc, client: client}
	switch op := frame[wirespec.OffReqOperation]; {
	case wirespec.IsMetadataOperation(op) && !c.metadataPrimary(r):
		// A metadata request a backup receives is forwarded or refused,
		// never bound to its connection there (client-ops.md 6.5).
		delete(a.delivered, inflightKey{r, client})
		c.forwardDelivered(r, conn, frame)
		return
	case !wirespec.IsMetadataOperation(op) && !wirespec.IsPartitionOperation(op):
		// A read: served where it lands, never prepared.
		if binary.LittleEndian.Uint32(frame[wirespec.OffReqCode:]) == pollMessagesCode {
			a.poll[r] = sentReply{client: client, request: wirespec.U64(frame, wirespec.OffReqRequest), set: true}
		}
		return
	}
	a.delivered[inflightKey{r, client}] = deliveryRecord{incarnation: inc, conn: conn, request: wirespec.U64(frame, wirespec.OffReqRequest)}
}

// ClientConnClosed tells the checker a client connection at replica r is
// gone (either side closed it).
func (c *Checker) ClientConnClosed(nowNs int64, r uint8, conn uint64) {
	c.nowNs = nowNs
	if c.answers == nil {
		return
	}
	k := connKey{r, conn}
	if rec, ok := c.answers.conns[k]; ok {
		rec.closed = true
		c.answers.conns[k] = rec
	}
}

// metadataPrimary reports whether r is, as far as its events told, the
// Normal primary of the metadata plane.
func (c *Checker) metadataPrimary(r uint8) bool {
	return c.lastStatus[r] == vsr.StatusNormal && int(c.lastView[r])%c.replicas == int(r)
}

// admittedPrepare: replica r, as primary, built a prepare of group; if it
// carries the request of a client r last received on a connection, r owes
// that connection the reply.
func (c *Checker) admittedPrepare(r uint8, group uint64, h *wire.Header) {
	var p wire.PrepareHeader
	p.Decode(h)
	if p.Client.IsZero() {
		return
	}
	a := c.answerState()
	d, ok := a.delivered[inflightKey{r, p.Client}]
	if !ok || d.incarnation != c.incarnations[r] || d.request != p.Request {
		return
	}
	a.admitted[admitKey{r, p.Client, p.Request}] = admitRecord{incarnation: d.incarnation, conn: d.conn, group: group, op: p.Op}
}

// sentToClient notes a Reply replica r sends a client.
func (c *Checker) sentToClient(r uint8, frame []byte) {
	c.forwardAnswered(r, frame)
	if c.answers == nil || int(r) >= c.replicas || len(frame) < wire.HeaderSize || frame[wirespec.OffCommand] != wirespec.Reply {
		return
	}
	sent := sentReply{client: u128(wirespec.Get128(frame, wirespec.OffReplyClient)),
		request: wirespec.U64(frame, wirespec.OffReplyRequest), atNs: c.nowNs, set: true}
	c.answers.lastReply[r] = sent
	// The request the client last sent here is answered: a later commit
	// of it (a retry committed again) owes nothing more.
	if d, ok := c.answers.delivered[inflightKey{r, sent.client}]; ok && d.request == sent.request {
		delete(c.answers.delivered, inflightKey{r, sent.client})
	}
	p := c.answers.poll[r]
	if !p.set || p.client != sent.client || p.request != sent.request || frame[wirespec.OffReplyOperation] != 2 {
		return
	}
	c.answers.poll[r] = sentReply{}
	status := binary.LittleEndian.Uint32(frame[wirespec.OffReplyStatus:])
	if slices.Contains(pollStatuses[:], status) {
		return
	}
	c.fail(Violation{Name: PollStatusWrong, Replicas: []uint8{r},
		Detail: fmt.Sprintf("replica %d answered poll %d of client %s with status %d; a poll's are %v", r, p.request, p.client, status, pollStatuses)})
}

// ClientHandled tells the checker replica r has handled the client frame
// ClientDelivered announced: a poll must have been answered by now.
func (c *Checker) ClientHandled(nowNs int64, r uint8) {
	c.nowNs = nowNs
	c.forwardHandled(r)
	if c.answers == nil || c.violation != nil || int(r) >= c.replicas {
		return
	}
	p := c.answers.poll[r]
	if !p.set {
		return
	}
	c.answers.poll[r] = sentReply{}
	c.fail(Violation{Name: PollUnanswered, Replicas: []uint8{r},
		Detail: fmt.Sprintf("replica %d handled poll %d of client %s and sent nothing back", r, p.request, p.client)})
}

// answered checks a replica's committed reply (EventReply, which follows
// the send it made, if any) against the promise.
func (c *Checker) answered(e replica.Event) {
	a := c.answers
	if a == nil || int(e.Replica) >= c.replicas {
		return
	}
	r := e.Replica
	sent := a.lastReply[r]
	a.lastReply[r] = sentReply{}
	k := admitKey{r, e.Client, e.Request}
	adm, ok := a.admitted[k]
	if !ok {
		return
	}
	delete(a.admitted, k)
	inc := c.incarnations[r]
	conn, known := a.conns[connKey{r, adm.conn}]
	d := a.delivered[inflightKey{r, e.Client}]
	switch {
	case adm.incarnation != inc || !known || conn.incarnation != inc || conn.closed || conn.client != e.Client:
		return // the connection is gone, or carries another client now
	case d.incarnation != inc || d.conn != adm.conn:
		return // the client has spoken to r on another connection since
	case sent.set && sent.client == e.Client && sent.request == e.Request && sent.atNs == c.nowNs:
		return
	}
	plane := "the metadata plane"
	if e.PartitionGroup != 0 {
		plane = fmt.Sprintf("partition group %d", e.PartitionGroup)
	}
	c.fail(Violation{Name: ReplyWithheld, Replicas: []uint8{r}, Ops: []uint64{e.Op},
		Detail: fmt.Sprintf("replica %d prepared request %d of client %s (op %d of %s), which it received on client connection %d, and committed it with that connection still open and the client's, but sent no reply",
			r, e.Request, e.Client, e.Op, plane, adm.conn)})
}
