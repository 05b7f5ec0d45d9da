package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Every replica builds the reply of every committed metadata op as it
// applies it (replica.EventReply): the bytes it caches in its client table
// and resends to a retrying client, whichever replica then answers. The
// client check (Complete) sees only the replies that reach a client; this
// one sees every replica's, as it is built, so a state machine or a table
// that goes wrong on a backup is named at the op it went wrong at, not when
// (or if) a later view's primary replays it.

// Names of the violations of what a replica answers.
const (
	ReplyDiverged = "reply differs from the model" // a replica built a committed op's reply other than the model's
	ReplayWrong   = "wrong reply replayed"         // a replica resent, for a request, bytes other than its committed reply
)

// pendingReply is the reply a replica built for the op it is applying; the
// op's EventCommitted follows it.
type pendingReply struct {
	op    uint64
	frame []byte
	set   bool
}

// builtReply notes a replica's reply to an op it is applying.
func (c *Checker) builtReply(e replica.Event) {
	if e.PartitionGroup != 0 {
		return // the partition planes' replies: partition.go
	}
	c.pendingReplies[e.Replica] = pendingReply{op: e.Op, frame: e.Frame, set: true}
}

// checkBuiltReply runs after replica r committed op: the reply it built
// for it must be the model's.
func (c *Checker) checkBuiltReply(r uint8, op uint64) {
	p := c.pendingReplies[r]
	c.pendingReplies[r] = pendingReply{}
	if !p.set || c.violation != nil {
		return
	}
	if p.op != op {
		c.fail(Violation{Name: ReplyDiverged, Replicas: []uint8{r}, Ops: []uint64{op, p.op},
			Detail: fmt.Sprintf("replica %d applied op %d with the reply of op %d", r, op, p.op)})
		return
	}
	if op == 0 || op > uint64(len(c.canon)) {
		return
	}
	if want := c.canon[op-1].reply; string(want) != string(p.frame) {
		c.fail(Violation{Name: ReplyDiverged, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d built op %d's reply as %s, the model's is %s", r, op, replyDiff(p.frame, want), replyDiff(want, p.frame))})
	}
}

// replyDiff describes a reply frame for a violation: its header's fields
// that differ from other's, and its body's length and first bytes.
func replyDiff(frame, other []byte) string {
	if len(frame) < wire.HeaderSize || len(other) < wire.HeaderSize {
		return fmt.Sprintf("%d bytes", len(frame))
	}
	var a, b wire.ReplyHeader
	a.Decode(wire.HeaderOf(frame))
	b.Decode(wire.HeaderOf(other))
	s := fmt.Sprintf("[op %d commit %d request %d %v status %d", a.Op, a.Commit, a.Request, a.Operation, a.Status)
	if a.Client != b.Client {
		s += fmt.Sprintf(" client %s", a.Client)
	}
	body := frame[wire.HeaderSize:]
	s += fmt.Sprintf(", body %d bytes", len(body))
	if len(body) > 0 {
		s += fmt.Sprintf(" %x", body[:min(len(body), 12)])
	}
	return s + "]"
}

// replayed checks a cached reply a replica resent to a retrying client:
// it is the reply its request committed with, byte for byte.
func (c *Checker) replayed(e replica.Event) {
	if len(e.Frame) < wire.HeaderSize {
		c.fail(Violation{Name: ReplayWrong, Replicas: []uint8{e.Replica},
			Detail: fmt.Sprintf("replica %d replayed %d bytes to client %s", e.Replica, len(e.Frame), e.Client)})
		return
	}
	var h wire.ReplyHeader
	h.Decode(wire.HeaderOf(e.Frame))
	op := h.Op
	if h.Request != 0 || e.Request != 0 {
		got, ok := c.executed[requestKey{e.Client, e.Request}]
		if !ok {
			c.fail(Violation{Name: ReplayWrong, Replicas: []uint8{e.Replica}, Ops: []uint64{h.Op},
				Detail: fmt.Sprintf("replica %d replayed a reply of op %d for client %s request %d, which never committed", e.Replica, h.Op, e.Client, e.Request)})
			return
		}
		op = got
	}
	if op == 0 || op > uint64(len(c.canon)) {
		c.fail(Violation{Name: ReplayWrong, Replicas: []uint8{e.Replica}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d replayed to client %s a reply of op %d, which is not committed", e.Replica, e.Client, op)})
		return
	}
	entry := c.canon[op-1]
	var p wire.PrepareHeader
	p.Decode(&entry.header)
	if p.Client != e.Client || string(entry.reply) != string(e.Frame) {
		c.fail(Violation{Name: ReplayWrong, Replicas: []uint8{e.Replica}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d replayed to client %s request %d %s; its committed reply (op %d, client %s request %d) is %s",
				e.Replica, e.Client, e.Request, replyDiff(e.Frame, entry.reply), op, p.Client, p.Request, replyDiff(entry.reply, e.Frame))})
	}
}
