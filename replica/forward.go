package replica

import (
	"encoding/binary"

	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Session forwarding (cluster.mdx "Session forwarding", wire.md 5.15-5.18):
// a client may log in and out on any replica. A backup that receives a
// Register or a Logout sends only the verified identity to the metadata
// primary (ForwardRegister, ForwardLogout) and parks the request; the primary
// proposes it in-process (one hop: it never forwards again) and answers with
// the outcome once the op commits, or at once when it refuses. On Ok the
// backup binds the client's connection and answers the client; on a refusal
// it answers with the transient code the outcome maps to (client-ops.md 6.5).

// Client-visible codes of the forwarding outcomes (client-ops.md 2.7, 6.5).
const (
	codeTransientNotCommitted uint32 = 57 // outcome unknown: replay on the same connection
	codeTransientNotAccepted  uint32 = 58 // not admitted: retry anywhere
	codeResourceNotFound      uint32 = 20
)

// forwardKind says what a parked request is.
type forwardKind uint8

const (
	forwardRegister forwardKind = iota + 1
	forwardLogout
)

// parked is one client request a backup forwarded and waits on.
type parked struct {
	kind    forwardKind
	nonce   wire.U128
	conn    ConnID
	request wire.RequestHeader
	ticks   int // since it was forwarded
	// ok: the primary's Ok arrived; commit is then the op the backup waits
	// to commit before it answers (the Register's epoch, the Logout's op,
	// or the primary's commit for a no-op Logout).
	ok     bool
	commit uint64
}

// origin is a forwarded request the primary proposed: whom to tell at commit.
type origin struct {
	kind    forwardKind
	replica uint8
	nonce   wire.U128
}

// forwarding is the replica's forwarding state, on both sides.
type forwarding struct {
	counter uint64    // per boot, never 0 in a nonce
	parked  []*parked // backup side, oldest first, at most ForwardsMax
	// origins: primary side, by client; only looked up and cleared in
	// client order (cancel sorts).
	origins map[wire.U128]origin
}

func (f *forwarding) nextNonce(replica uint8) wire.U128 {
	f.counter++
	return wire.U128{Hi: uint64(replica), Lo: f.counter}
}

func (f *forwarding) find(nonce wire.U128) (int, *parked) {
	for i, p := range f.parked {
		if p.nonce == nonce {
			return i, p
		}
	}
	return -1, nil
}

func (f *forwarding) drop(i int) {
	f.parked[i] = nil
	f.parked = append(f.parked[:i], f.parked[i+1:]...)
}

// forwardFromBackup parks a client's Register or Logout and forwards it to
// the metadata primary; a backup that knows no primary, or is full of parked
// requests, answers TransientNotAccepted at once.
func (r *Replica) forwardFromBackup(c ConnID, h *wire.RequestHeader) {
	for _, p := range r.fwd.parked {
		if p.request.Client == h.Client && p.request.Operation == h.Operation {
			p.conn = c // a retry of a parked request: answer it on its newest connection
			return
		}
	}
	if r.metadata.Status() != vsr.StatusNormal || len(r.fwd.parked) >= r.cfg.Profile.ForwardsMax {
		if r.metadata.Status() != vsr.StatusNormal {
			r.probe("forward refused by the backup: no primary")
		} else {
			r.probe("forward refused by the backup: no room")
		}
		if h.Operation == wire.OperationRegister {
			r.answerTransient(c, h, codeTransientNotAccepted)
		} else {
			r.answerStatus(c, h, codeTransientNotAccepted)
		}
		return
	}
	p := &parked{nonce: r.fwd.nextNonce(r.cfg.Replica), conn: c, request: *h}
	var frame []byte
	prefix := wire.Prefix{Cluster: r.cfg.Cluster(), View: r.metadata.View(), Replica: r.cfg.Replica}
	switch h.Operation {
	case wire.OperationRegister:
		p.kind = forwardRegister
		// [raw]: the header's user is the authenticated user; credentials
		// never leave this replica, only the identity does.
		x := wire.ForwardRegisterHeader{Prefix: prefix, Client: h.Client, Nonce: p.nonce, UserID: h.UserID}
		frame = wire.BuildFrame(&x, nil)
	case wire.OperationLogout:
		p.kind = forwardLogout
		x := wire.ForwardLogoutHeader{Prefix: prefix, Client: h.Client, Nonce: p.nonce, Session: h.Session, Request: h.Request}
		frame = wire.BuildFrame(&x, nil)
	default:
		panic("replica: forwarding a " + h.Operation.String())
	}
	r.fwd.parked = append(r.fwd.parked, p)
	r.bus.Send(r.metadata.Primary(), frame)
}

// onForwardRegister: the primary's side of a forwarded login.
func (r *Replica) onForwardRegister(from uint8, h *wire.Header) {
	var x wire.ForwardRegisterHeader
	x.Decode(h)
	outcome := wire.ForwardRegisterOk
	switch {
	case !r.metadata.IsPrimary():
		outcome = wire.ForwardRegisterNotPrimary
	case r.metadata.InFlight(x.Client):
		outcome = wire.ForwardRegisterInProgress
	case r.metadata.CommitMin() != r.metadata.CommitMax():
		// NotCaughtUp is reserved and never produced (wire.md 5.16): a
		// primary still applying its log admits nothing, as PipelineFull
		// says (DEVIATIONS.md 45).
		outcome = wire.ForwardRegisterPipelineFull
	case r.table.CheckRegister(x.Client, x.UserID).Kind != clients.VerdictNew:
		outcome = wire.ForwardRegisterClientIDOwnedByAnotherUser
	}
	if outcome == wire.ForwardRegisterOk {
		res := r.metadata.Propose(vsr.Proposal{Client: x.Client, Operation: wire.OperationRegister, UserID: x.UserID})
		if res == vsr.Refused {
			outcome = wire.ForwardRegisterPipelineFull
		} else {
			r.probe("forwarded register proposed")
			r.fwd.origins[x.Client] = origin{kind: forwardRegister, replica: from, nonce: x.Nonce}
			return // answered at commit
		}
	}
	r.probe("forwarded register refused by the primary: " + outcome.String())
	r.sendRegisterResult(from, x.Nonce, x.Client, outcome, 0, 0)
}

// onForwardLogout: the primary's side of a forwarded logout. A session its
// client table shows superseded for good (a newer epoch, or the request at
// or below the watermark: both only grow along the log) logs out as a
// no-op, Ok at the current commit (client-ops.md 5.2 [shell]). A session
// the table does not hold, or holds at an older epoch, is proposed: this
// primary may be a stale one whose table has not applied the Register yet
// (VOPR seed 424401: a primary cut off in an old view told a client its
// live session was gone), and the commit removes whatever the log's order
// says is there, or nothing (DEVIATIONS.md 69).
func (r *Replica) onForwardLogout(from uint8, h *wire.Header) {
	var x wire.ForwardLogoutHeader
	x.Decode(h)
	outcome := wire.ForwardLogoutOk
	switch {
	case !r.metadata.IsPrimary():
		outcome = wire.ForwardLogoutNotPrimary
	case r.metadata.InFlight(x.Client):
		outcome = wire.ForwardLogoutInProgress
	case r.metadata.CommitMin() != r.metadata.CommitMax():
		outcome = wire.ForwardLogoutPipelineFull
	}
	if outcome == wire.ForwardLogoutOk {
		e, ok := r.table.Lookup(x.Client)
		if ok && (e.Epoch > x.Session || e.Epoch == x.Session && x.Request <= e.Watermark) {
			r.probe("forwarded logout of a gone session: no-op")
			r.sendLogoutResult(from, x.Nonce, x.Client, outcome, r.metadata.CommitMax())
			return
		}
		if !ok || e.Epoch < x.Session {
			r.probe("forwarded logout of a session this table does not hold: proposed")
		}
		// ForwardLogout carries no request_checksum: the prepare's is 0
		// (a Logout's body is empty, so nothing can be confused with it).
		res := r.metadata.Propose(vsr.Proposal{Client: x.Client, Request: x.Request,
			Operation: wire.OperationLogout, UserID: e.UserID})
		if res != vsr.Refused {
			r.probe("forwarded logout proposed")
			r.fwd.origins[x.Client] = origin{kind: forwardLogout, replica: from, nonce: x.Nonce}
			return
		}
		outcome = wire.ForwardLogoutPipelineFull
	}
	r.probe("forwarded logout refused by the primary: " + outcome.String())
	r.sendLogoutResult(from, x.Nonce, x.Client, outcome, 0)
}

func (r *Replica) sendRegisterResult(to uint8, nonce, client wire.U128, o wire.ForwardRegisterOutcome, epoch, watermark uint64) {
	x := wire.ForwardRegisterResultHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), View: r.metadata.View(), Replica: r.cfg.Replica},
		Nonce: nonce, Client: client, Epoch: epoch, Watermark: watermark, Outcome: o}
	r.bus.Send(to, wire.BuildFrame(&x, nil))
}

func (r *Replica) sendLogoutResult(to uint8, nonce, client wire.U128, o wire.ForwardLogoutOutcome, commit uint64) {
	x := wire.ForwardLogoutResultHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), View: r.metadata.View(), Replica: r.cfg.Replica},
		Nonce: nonce, Client: client, Commit: commit, Outcome: o}
	r.bus.Send(to, wire.BuildFrame(&x, nil))
}

// forwardCommitted runs at the primary when a Register or Logout commits:
// the backup it came from learns the outcome. Every replica commits it, but
// only the one that proposed it holds an origin.
func (r *Replica) forwardCommitted(p *wire.PrepareHeader) {
	o, ok := r.fwd.origins[p.Client]
	if !ok {
		return
	}
	switch {
	case o.kind == forwardRegister && p.Operation == wire.OperationRegister:
		var watermark uint64
		if e, ok := r.table.Lookup(p.Client); ok {
			watermark = e.Watermark
		}
		r.sendRegisterResult(o.replica, o.nonce, p.Client, wire.ForwardRegisterOk, p.Op, watermark)
	case o.kind == forwardLogout && p.Operation == wire.OperationLogout:
		r.sendLogoutResult(o.replica, o.nonce, p.Client, wire.ForwardLogoutOk, p.Op)
	default:
		return // another op of the client: its forward is still pending
	}
	delete(r.fwd.origins, p.Client)
}

// cancelForwards runs when the replica stops being the metadata primary:
// every forward it proposed and has not answered is Canceled (its prepare
// may still commit in the next view: the client replays to find out).
func (r *Replica) cancelForwards() {
	if len(r.fwd.origins) == 0 || r.metadata.IsPrimary() {
		return
	}
	ids := make([]wire.U128, 0, len(r.fwd.origins))
	for id := range r.fwd.origins {
		ids = append(ids, id)
	}
	sortU128(ids)
	for _, id := range ids {
		o := r.fwd.origins[id]
		if o.kind == forwardRegister {
			r.sendRegisterResult(o.replica, o.nonce, id, wire.ForwardRegisterCanceled, 0, 0)
		} else {
			r.sendLogoutResult(o.replica, o.nonce, id, wire.ForwardLogoutCanceled, 0)
		}
	}
	clear(r.fwd.origins)
	r.probe("forwards canceled: primary lost its view")
}

// onForwardRegisterResult: the backup learns the outcome of a login it
// forwarded.
func (r *Replica) onForwardRegisterResult(h *wire.Header) {
	var x wire.ForwardRegisterResultHeader
	x.Decode(h)
	i, p := r.fwd.find(x.Nonce)
	if p == nil || p.kind != forwardRegister || p.request.Client != x.Client || p.ok {
		return // late, or for a request already answered
	}
	switch x.Outcome {
	case wire.ForwardRegisterOk:
		if x.Epoch == 0 {
			panic("replica: ForwardRegisterResult Ok with epoch 0 passed validation")
		}
		r.probe("forwarded register committed")
		r.bind(p.conn, x.Client)
		if x.Epoch > r.metadata.CommitMin() {
			p.ok, p.commit = true, x.Epoch // answered when this replica commits it (forwardApplied)
			return
		}
		if reply, ok := r.table.RegisterReply(x.Client, x.Epoch); ok {
			r.env.Clients.Send(p.conn, reply)
			r.env.Sink.Event(Event{Kind: EventReplay, Replica: r.cfg.Replica, Client: x.Client, Frame: reply})
		} else {
			// Rebound or logged out by a later op before the result came:
			// that reply is not the outcome any more.
			r.probe("forwarded register superseded before its result arrived")
			r.answerTransient(p.conn, &p.request, codeTransientNotCommitted)
		}
	case wire.ForwardRegisterNotPrimary, wire.ForwardRegisterPipelineFull, wire.ForwardRegisterNotCaughtUp:
		r.probe("forwarded register not accepted: " + x.Outcome.String())
		r.answerTransient(p.conn, &p.request, codeTransientNotAccepted)
	case wire.ForwardRegisterInProgress, wire.ForwardRegisterCanceled:
		r.probe("forwarded register not committed: " + x.Outcome.String())
		r.answerTransient(p.conn, &p.request, codeTransientNotCommitted)
	case wire.ForwardRegisterClientIDOwnedByAnotherUser:
		r.probe("forwarded register of a client id another user owns")
		r.evictOn(p.conn, x.Client, wire.EvictionSessionError)
	}
	r.fwd.drop(i)
}

// onForwardLogoutResult: the backup learns the outcome of a logout it
// forwarded.
func (r *Replica) onForwardLogoutResult(h *wire.Header) {
	var x wire.ForwardLogoutResultHeader
	x.Decode(h)
	i, p := r.fwd.find(x.Nonce)
	if p == nil || p.kind != forwardLogout || p.request.Client != x.Client || p.ok {
		return
	}
	switch x.Outcome {
	case wire.ForwardLogoutOk:
		r.probe("forwarded logout committed")
		p.ok, p.commit = true, x.Commit
		r.settleForwards(r.metadata.CommitMin())
		return
	case wire.ForwardLogoutNotPrimary, wire.ForwardLogoutPipelineFull:
		r.probe("forwarded logout not accepted: " + x.Outcome.String())
		r.answerStatus(p.conn, &p.request, codeTransientNotAccepted)
	case wire.ForwardLogoutInProgress, wire.ForwardLogoutCanceled:
		r.probe("forwarded logout not committed: " + x.Outcome.String())
		r.answerStatus(p.conn, &p.request, codeTransientNotCommitted)
	}
	r.fwd.drop(i)
}

// settleForwards answers the parked Logouts whose Ok arrived, whose op this
// replica has applied (through op applied), and that no committed Logout
// answered: the no-op logouts of a session that was gone, with an empty
// success. Commit passes the op it has just applied: vsr raises commit_min
// to it only once Commit returns, so CommitMin there still names the op
// below, and a no-op Ok at that commit would wait for the next op to
// commit, or time out as TransientNotCommitted.
func (r *Replica) settleForwards(applied uint64) {
	for i := 0; i < len(r.fwd.parked); {
		p := r.fwd.parked[i]
		if p.kind != forwardLogout || !p.ok || p.commit > applied {
			i++
			continue
		}
		r.answerStatus(p.conn, &p.request, 0)
		r.fwd.drop(i)
	}
}

// forwardApplied runs on every replica as a Register or Logout commits: at
// the primary the backup it came from learns the outcome; at a backup the
// parked request it answers gets its reply, sent on its connection unless
// the commit sent it there already (sent).
func (r *Replica) forwardApplied(p *wire.PrepareHeader, reply []byte, sent bool) {
	r.forwardCommitted(p)
	for i, q := range r.fwd.parked {
		if q.request.Client != p.Client {
			continue
		}
		switch {
		case q.kind == forwardRegister && p.Operation == wire.OperationRegister && q.ok && q.commit == p.Op,
			q.kind == forwardLogout && p.Operation == wire.OperationLogout && q.request.Request == p.Request:
			if !sent || r.conns[p.Client] != q.conn {
				r.env.Clients.Send(q.conn, reply)
			}
			r.fwd.drop(i)
			return
		}
	}
}

// tickForwards times out parked requests whose answer never came (the
// forward or its result was lost, or the primary went away): the outcome
// is unknown, TransientNotCommitted.
func (r *Replica) tickForwards() {
	for i := 0; i < len(r.fwd.parked); {
		p := r.fwd.parked[i]
		p.ticks++
		if p.ticks < r.cfg.Profile.ForwardTimeoutTicks {
			i++
			continue
		}
		r.probe("forward timed out")
		if p.kind == forwardRegister {
			r.answerTransient(p.conn, &p.request, codeTransientNotCommitted)
		} else {
			r.answerStatus(p.conn, &p.request, codeTransientNotCommitted)
		}
		r.fwd.drop(i)
	}
}

// answerTransient answers with a result-only refusal (client-ops.md 2.1
// shape B): status 0 and the body 01000000 00000000 <code>, not cached.
func (r *Replica) answerTransient(c ConnID, h *wire.RequestHeader, code uint32) {
	body := make([]byte, 12)
	binary.LittleEndian.PutUint32(body[0:], 1)
	binary.LittleEndian.PutUint32(body[8:], code)
	x := wire.ReplyHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), View: r.metadata.View(), Replica: r.cfg.Replica},
		RequestChecksum: h.RequestChecksum, Client: h.Client, Request: h.Request, Operation: h.Operation,
		Commit: r.metadata.CommitMax()}
	r.env.Clients.Send(c, wire.BuildFrame(&x, body))
	r.env.Sink.Event(Event{Kind: EventDeny, Replica: r.cfg.Replica, Client: h.Client, Request: h.Request, Status: code})
}

// answerStatus answers with a status reply (shape C; status 0 for the
// empty success of a no-op Logout).
func (r *Replica) answerStatus(c ConnID, h *wire.RequestHeader, status uint32) {
	r.deny(c, h, status)
}

// evictOn sends an Eviction on connection c (a forwarded login the primary
// refused for good).
func (r *Replica) evictOn(c ConnID, client wire.U128, reason wire.EvictionReason) {
	e := wire.EvictionHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), View: r.metadata.View(), Replica: r.cfg.Replica},
		Client: client, Reason: reason}
	sent := r.env.Clients.Send(c, wire.BuildFrame(&e, nil))
	r.env.Sink.Event(Event{Kind: EventEviction, Replica: r.cfg.Replica, Client: client, Reason: reason, Sent: sent})
}

func sortU128(ids []wire.U128) {
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && lessU128(ids[j], ids[j-1]); j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
}

func lessU128(a, b wire.U128) bool { return a.Hi < b.Hi || a.Hi == b.Hi && a.Lo < b.Lo }
