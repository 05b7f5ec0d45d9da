package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// The primary that prepares a request it received on a client connection
// sends the committed reply on it, unless the connection closed, carried
// another client since, or the client moved to another connection.
func TestCommittedRequestNotAnswered(t *testing.T) {
	for _, tc := range []struct {
		name     string
		deliver  uint8 // the replica the request reaches
		between  func(f *fakeCluster, a *req)
		send     bool // the primary sends the reply at the commit
		violated bool
	}{
		{name: "answered", send: true},
		{name: "not answered", violated: true},
		{name: "the connection closed first", between: func(f *fakeCluster, a *req) { f.c.ClientConnClosed(f.tick(), 0, 7) }},
		{name: "the client moved to another connection", between: func(f *fakeCluster, a *req) {
			f.c.ClientDelivered(f.tick(), 0, 8, requestFrame(a))
		}},
		{name: "another client took the connection", between: func(f *fakeCluster, a *req) {
			other := *a
			other.inv.ClientID = wire.U128{Lo: 99, Hi: 99}
			f.c.ClientDelivered(f.tick(), 0, 7, requestFrame(&other))
		}},
		{name: "the primary crashed", between: func(f *fakeCluster, a *req) { f.crash(0) }},
		{name: "received by a backup", deliver: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, cls := started(t, 3, 1)
			a := f.invoke(cls[0], createStream("a"))
			f.c.ClientDelivered(f.tick(), tc.deliver, 7, requestFrame(a))
			p := f.propose(a)
			if tc.between != nil {
				tc.between(f, a)
			}
			f.commitTo(0, p.op())
			f.at(f.now + 1000)
			if tc.send {
				f.c.ToClient(f.now, 0, p.reply)
			}
			f.c.Replica(f.now, replica.Event{Kind: replica.EventReply, Replica: 0, Client: a.inv.ClientID, Request: a.inv.Request, Op: p.op(), Frame: p.reply})
			if tc.violated {
				wantViolation(t, f, checker.ReplyWithheld)
				return
			}
			wantPass(t, f)
		})
	}
}

// requestFrame is the Request frame of r, as its client sends it.
func requestFrame(r *req) []byte {
	x := wire.RequestHeader{Client: r.inv.ClientID, Request: r.inv.Request, Session: r.inv.Session,
		Operation: r.inv.Operation, RequestChecksum: r.inv.Checksum}
	return wire.BuildFrame(&x, r.inv.Body)
}

// A poll is answered where it lands, in the step that handles it, with one
// of the statuses client-ops.md 5.28 gives a poll.
func TestPollAnswered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status uint32
		send   bool
		want   string
	}{
		{name: "answered", send: true},
		{name: "partition not found", send: true, status: 3007},
		{name: "not answered", want: checker.PollUnanswered},
		{name: "another status", send: true, status: 3006, want: checker.PollStatusWrong},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, cls := started(t, 3, 1)
			cl := cls[0]
			poll := wire.RequestHeader{Client: cl.id, Request: cl.request + 1, Session: cl.session,
				Operation: wire.OperationNonReplicated, CommandCode: 100}
			f.c.ClientDelivered(f.tick(), 1, 3, wire.BuildFrame(&poll, nil))
			if tc.send {
				x := wire.ReplyHeader{Client: cl.id, Request: poll.Request, Operation: wire.OperationNonReplicated, Status: tc.status,
					Op: cl.session, Prefix: wire.Prefix{Replica: 1}}
				f.c.ToClient(f.tick(), 1, wire.BuildFrame(&x, nil))
			}
			f.c.ClientHandled(f.tick(), 1)
			if tc.want != "" {
				wantViolation(t, f, tc.want)
				return
			}
			wantPass(t, f)
		})
	}
}

// Once a replica answered the request its client last sent it, a retry of
// it committed again there (a forwarded Logout proposed twice) owes the
// client nothing more.
func TestAnsweredRequestCommittedAgainOwesNothing(t *testing.T) {
	f := newFake(t, 3)
	f.c.SetClientTableCapacity(4)
	f.status(0, vsr.StatusNormal, 0)
	cl := f.client(0)
	f.do(f.register(cl))
	a := f.invoke(cl, call{op: wire.OperationLogout})
	f.c.ClientDelivered(f.tick(), 0, 7, requestFrame(a))
	// Replica 0 builds the reply (and sends it, the first time) as it
	// applies the op, before its commit is reported.
	commit := func(p *prep, send bool) {
		f.commitTo(1, p.op()) // the model applies it: p.reply is built
		f.at(f.now + 1000)
		if send {
			f.c.ToClient(f.now, 0, p.reply)
		}
		f.c.Replica(f.now, replica.Event{Kind: replica.EventReply, Replica: 0, Client: a.inv.ClientID, Request: a.inv.Request, Op: p.op(), Frame: p.reply})
		f.commitTo(0, p.op())
	}
	commit(f.propose(a), true)
	commit(f.propose(a), false) // the retry, forwarded by a backup, committed again
	wantPass(t, f)
}
