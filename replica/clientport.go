package replica

import (
	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// The client port, on the consensus-plane ([raw]) path of client-ops.md:
// only the Normal primary of the metadata plane admits requests; other
// replicas drop them (session forwarding comes later), and so do the
// refusals the raw path leaves silent.

// ClientAccepted: a client connected.
func (r *Replica) ClientAccepted(c ConnID) {}

// ClientClosed: a client connection is gone.
func (r *Replica) ClientClosed(c ConnID) {
	if client, ok := r.byConn[c]; ok {
		delete(r.byConn, c)
		if r.conns[client] == c {
			delete(r.conns, client)
		}
	}
}

// ClientReceived: a frame from a client.
func (r *Replica) ClientReceived(c ConnID, frame []byte) {
	if err := wire.CheckFraming(frame, r.cfg.Profile.FrameSizeMax); err != nil {
		r.probe("client framing error: connection closed")
		r.env.Clients.Close(c)
		r.ClientClosed(c)
		return
	}
	if err := wire.Validate(frame); err != nil || wire.HeaderOf(frame).Command() != wire.CommandRequest {
		r.probe("client frame dropped")
		return
	}
	var h wire.RequestHeader
	h.Decode(wire.HeaderOf(frame))
	if h.Operation.IsPartition() {
		r.parts.admit(c, &h, frame[wire.HeaderSize:])
		return
	}
	if h.Operation == wire.OperationNonReplicated && h.CommandCode == partition.PollMessagesCode {
		r.parts.poll(c, &h, frame[wire.HeaderSize:])
		return
	}
	if !r.metadata.IsPrimary() {
		switch h.Operation {
		case wire.OperationRegister, wire.OperationLogout:
			// A forward carries no body, so a body the primary's
			// Preflight denies (these bodies must be empty) is denied
			// here the same: forwarded, it would commit (VOPR seed 5
			// with -bad-requests 0.2).
			if refusal := metadata.Preflight(h.Operation, frame[wire.HeaderSize:]); refusal.Kind == metadata.Deny {
				r.probe("forward refused by the backup: a body the primary denies")
				r.deny(c, &h, refusal.Status)
				return
			}
			r.forwardFromBackup(c, &h)
		default:
			// Not the primary: not admitted here, retry anywhere
			// (client-ops.md 6.5; the raw path is silent, DEVIATIONS.md 5).
			r.answerStatus(c, &h, codeTransientNotAccepted)
		}
		return
	}
	r.bind(c, h.Client)
	// Preflight, in client-ops.md 2.4's order: a prepare from this client
	// already in flight, or a primary not caught up: silent on the raw path.
	if r.metadata.InFlight(h.Client) || r.metadata.CommitMin() != r.metadata.CommitMax() {
		return
	}
	var v clients.Verdict
	if h.Operation == wire.OperationRegister {
		v = r.table.CheckRegister(h.Client, h.UserID)
	} else {
		v = r.table.CheckRequest(h)
	}
	switch v.Kind {
	case clients.VerdictReplay:
		r.env.Clients.Send(c, v.Reply)
		r.env.Sink.Event(Event{Kind: EventReplay, Replica: r.cfg.Replica, Client: h.Client, Request: h.Request, Frame: v.Reply})
		return
	case clients.VerdictEvict:
		r.evict(h.Client, v.Reason)
		return
	case clients.VerdictNew:
	default: // Drop, and AlreadyApplied (silent on the raw path)
		return
	}
	body := frame[wire.HeaderSize:]
	proj, refusal := metadata.Project(h.Operation, body, r.alloc)
	switch refusal.Kind {
	case metadata.Accepted:
	case metadata.Deny:
		r.deny(c, &h, refusal.Status)
		return
	case metadata.Evict:
		r.evict(h.Client, refusal.Reason)
		return
	default:
		return
	}
	user := h.UserID // [raw]: a Register's header names the acting user
	if h.Operation != wire.OperationRegister {
		if e, ok := r.table.Lookup(h.Client); ok {
			user = e.UserID
		}
	}
	r.metadata.Propose(vsr.Proposal{Client: h.Client, Request: h.Request, RequestChecksum: h.RequestChecksum,
		Operation: proj.Operation, UserID: user, Body: proj.Body})
}

// bind remembers which connection a client's replies go to.
func (r *Replica) bind(c ConnID, client wire.U128) {
	if old, ok := r.conns[client]; ok && old != c {
		delete(r.byConn, old)
	}
	if prev, ok := r.byConn[c]; ok && prev != client && r.conns[prev] == c {
		delete(r.conns, prev)
	}
	r.conns[client] = c
	r.byConn[c] = client
}

// unbind forgets the connection of a client's session.
func (r *Replica) unbind(client wire.U128) {
	if c, ok := r.conns[client]; ok {
		delete(r.conns, client)
		if r.byConn[c] == client {
			delete(r.byConn, c)
		}
	}
}

// deny answers a request refused before consensus with a status reply (an
// empty body, not cached: client-ops.md 2.1 shape C).
func (r *Replica) deny(c ConnID, h *wire.RequestHeader, status uint32) {
	x := wire.ReplyHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), View: r.metadata.View(), Replica: r.cfg.Replica},
		RequestChecksum: h.RequestChecksum, Client: h.Client, Request: h.Request, Operation: h.Operation,
		Commit: r.metadata.CommitMax(), Status: status}
	r.env.Clients.Send(c, wire.BuildFrame(&x, nil))
	r.env.Sink.Event(Event{Kind: EventDeny, Replica: r.cfg.Replica, Client: h.Client, Request: h.Request, Status: status})
}
