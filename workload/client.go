package workload

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// ConnID names a client's connection to a replica.
type ConnID uint64

// Transport is what a client needs from the network.
type Transport interface {
	// Dial connects to replica target's client port; Connected or
	// DialFailed follows.
	Dial(target int) ConnID
	Send(c ConnID, frame []byte) bool
	Close(c ConnID)
	// Now is the virtual time, for the history.
	Now() int64
}

// Config describes one client.
type Config struct {
	Index    int // the client's index in the workload
	Replicas int
	// Requests is how many requests the client sends after registering
	// (a Register after an eviction does not count).
	Requests int
	// TimeoutTicks is how long a request waits for a reply before the client
	// resends it to the next replica.
	TimeoutTicks int
	// Rand is the client's own seeded stream: its ids and, with Mix nil
	// and Ops empty, nothing else.
	Rand *rand.Rand
	// Mix draws the requests; nil: only Submit'ted ops are sent.
	Mix *Mix
	// LogoutProbability: per request drawn from the Mix, the chance the
	// client logs out instead; once its Logout is answered it registers
	// again under a fresh id, as the SDK re-logs in (client-ops.md 6.1).
	LogoutProbability float64
	// ThinkTicks is how long the client waits after a request completes
	// before it starts the next (0: at once): a long run's clients spread
	// their requests over its tick budget (EndThinking stops it).
	ThinkTicks int
	// Bad, when set, draws a bad request in place of some of the Mix's
	// (badrequests.go).
	Bad *BadMix
}

type connState uint8

const (
	connIdle connState = iota
	connDialing
	connOpen
)

type inFlight struct {
	inv      Invocation
	frame    []byte
	ticks    int // ticks since the last send
	attempts int
	register bool
	logout   bool // a Logout: once answered, the client takes a fresh id
	// link: the read link the request goes out on (links.go), nil for the
	// home session; read: the read a link's Register is for.
	link *readLink
	read Op
	// route: where the request is admitted (routeOf).
	route string
	// silent: no answer is owed (Op.Silent): one timeout ends it.
	silent bool
}

// Client is one simulated client.
type Client struct {
	cfg Config
	t   Transport
	rec Recorder

	id         wire.U128
	session    uint64
	registered bool   // it held a session at least once
	request    uint64 // the last request number used
	sent       int    // requests invoked (Registers excluded)

	target  int
	conn    ConnID
	state   connState
	pending *inFlight // the home session's request in flight
	reading *inFlight // a read link's request in flight (links.go)
	queue   []Op
	// deferred: a read drawn while another read was in flight; it starts
	// once that one ends.
	deferred *Op
	// links: the read links the client polls on (links.go), at most
	// linksMax, most recently used last; bound: the home session is bound
	// to the home connection boundConn (it registered on it).
	links     []*readLink
	bound     bool
	boundConn ConnID
	// holdTicks: after a transient refusal the client waits this many
	// ticks before it sends again (the SDK pauses too), so that a cluster
	// with no primary is not asked in a tight loop; resend says to send the
	// request in flight on the same connection once the hold is over.
	holdTicks int
	resend    bool
	// refusals counts the transient refusals in a row; the hold doubles
	// with each, up to transientHoldTicksMax, and a real answer resets it.
	refusals int

	// Counters.
	Evictions  int
	Logouts    int // Logouts answered (the client then registered a fresh id)
	Timeouts   int
	Transients int // requests answered TransientNotAccepted or TransientNotCommitted
	// thinkLeft: ticks to wait before the next request (Config.ThinkTicks).
	thinkLeft int
	// routes: the replica that last admitted each route's request
	// (routes.go), at most routeHintsMax; only looked up, never iterated.
	routes map[string]int
	// RouteMoves counts the requests sent to a replica a route's hint
	// named instead of the current one.
	RouteMoves int
}

// Transient refusals (client-ops.md 6.5) and how long the client holds
// before it acts on one.
const (
	codeTransientNotCommitted = 57  // replay on the same connection
	codeTransientNotAccepted  = 58  // not admitted: the next replica
	codeUnauthenticated       = 40  // a read on an unbound connection
	transientHoldTicks        = 5   // the SDK's 50 ms pause
	transientHoldTicksMax     = 200 // the SDK rechecks the leader every 2 s
)

// New returns a client; it dials on its first tick.
func New(cfg Config, t Transport, rec Recorder) *Client {
	if cfg.Replicas < 1 || cfg.TimeoutTicks < 1 || cfg.Rand == nil || t == nil || rec == nil {
		panic(fmt.Sprintf("workload: bad client config %+v", cfg))
	}
	c := &Client{cfg: cfg, t: t, rec: rec, target: cfg.Index % cfg.Replicas}
	c.newIdentity()
	return c
}

func (c *Client) newIdentity() {
	c.id = wire.U128{Lo: c.cfg.Rand.Uint64() | 1, Hi: c.cfg.Rand.Uint64()}
	c.session = 0
}

// SetBad makes the client draw bad requests from b in place of some of the
// Mix's (nil: none).
func (c *Client) SetBad(b *BadMix) { c.cfg.Bad = b }

// Submit queues an op (scripted tests); a Mix draws them otherwise.
func (c *Client) Submit(op Op) { c.queue = append(c.queue, op) }

// ID returns the id the client currently sends under.
func (c *Client) ID() wire.U128 { return c.id }

// Session returns the client's session epoch, 0 while unregistered.
func (c *Client) Session() uint64 { return c.session }

// Done reports whether the client has registered, sent every request and
// seen each of them end (a reply, a denial, or an eviction). A client
// evicted after its last request does not register again: it has nothing
// left to send, and a done client re-registering would evict the others
// forever when there are more clients than client-table slots.
func (c *Client) Done() bool {
	return c.pending == nil && c.reading == nil && c.registered && !c.hasWork()
}

// Backlog is how many requests the client has yet to see end: those not
// yet sent and those in flight (the liveness phase's budget grows with it).
func (c *Client) Backlog() int {
	n := len(c.queue)
	if c.cfg.Mix != nil {
		n += max(0, c.cfg.Requests-c.sent)
	}
	for _, started := range []bool{c.pending != nil && !c.pending.register, c.reading != nil, c.deferred != nil} {
		if started {
			n++
		}
	}
	return n
}

func (c *Client) hasWork() bool {
	return c.deferred != nil || len(c.queue) > 0 || c.cfg.Mix != nil && c.sent < c.cfg.Requests
}

// Pending reports whether a request is in flight.
func (c *Client) Pending() bool { return c.pending != nil || c.reading != nil }

// EndThinking makes the client start its next requests at once from now on
// (the liveness phase lets the clients finish).
func (c *Client) EndThinking() { c.cfg.ThinkTicks, c.thinkLeft = 0, 0 }

// Tick advances the client's timers by one tick.
func (c *Client) Tick() {
	if c.thinkLeft > 0 {
		c.thinkLeft--
	}
	if c.holdTicks > 0 {
		c.holdTicks--
		if c.holdTicks > 0 {
			return
		}
		if c.resend && c.state == connOpen && c.pending != nil {
			c.resend = false
			c.send()
			return
		}
		c.resend = false
	}
	if r := c.reading; r != nil {
		r.ticks++
		if r.ticks >= c.cfg.TimeoutTicks {
			c.Timeouts++
			c.linkTimedOut()
		}
	}
	if c.pending != nil {
		c.pending.ticks++
		if c.pending.ticks >= c.cfg.TimeoutTicks && c.pending.silent {
			c.Timeouts++
			c.giveUp()
		} else if c.pending.ticks >= c.cfg.TimeoutTicks {
			c.Timeouts++
			c.failover()
			return
		}
	}
	switch c.state {
	case connIdle:
		c.dial()
	case connOpen:
		c.next()
	}
}

// failover drops the connection and moves to the next replica; the request
// in flight is resent there, unchanged.
func (c *Client) failover() {
	if c.state != connIdle {
		c.t.Close(c.conn)
	}
	c.state = connIdle
	c.target = (c.target + 1) % c.cfg.Replicas
	if c.pending != nil {
		c.forgetRoute(c.pending.route)
		c.pending.ticks = 0
		if r, ok := c.rec.(TimeoutRecorder); ok {
			p := c.pending
			r.TimedOut(Timeout{Client: c.cfg.Index, ClientID: c.id, Request: p.inv.Request, Target: c.target,
				Attempts: p.attempts, AtNs: c.t.Now()})
		}
	}
	c.dial()
}

// Retarget makes the client leave its connection and dial replica next
// (scripted tests: a client moved to a replica that never saw its login).
func (c *Client) Retarget(replica int) {
	if c.state != connIdle {
		c.t.Close(c.conn)
	}
	c.state = connIdle
	c.target = replica % c.cfg.Replicas
}

// moveOn leaves a replica that did not admit the request in flight: it is
// sent, unchanged, to the next replica once the hold is over.
func (c *Client) moveOn() {
	c.t.Close(c.conn)
	c.state = connIdle
	c.target = (c.target + 1) % c.cfg.Replicas
	c.pending.ticks = 0
}

// transientCode reads a transient refusal: a status reply (client-ops.md 2.1
// shape C) or a result-only refusal (shape B, status 0 and the body
// 01000000 00000000 <code>) with code 57 or 58. No op commits with those
// codes, so shape B cannot be a committed rejection; a Register's committed
// reply has an empty body.
func transientCode(r *wire.ReplyHeader, body []byte) (uint32, bool) {
	code := r.Status
	if code == 0 && len(body) == 12 && binary.LittleEndian.Uint32(body) == 1 && binary.LittleEndian.Uint32(body[4:]) == 0 {
		code = binary.LittleEndian.Uint32(body[8:])
	}
	return code, code == codeTransientNotCommitted || code == codeTransientNotAccepted
}

func (c *Client) dial() {
	c.state = connDialing
	c.conn = c.t.Dial(c.target)
}

// next starts the next request when none is in flight and the client is
// not thinking.
func (c *Client) next() {
	if c.pending != nil || c.thinkLeft > 0 {
		return
	}
	var p inFlight
	var drawn Op // the op started, for its request_checksum and silence
	switch {
	case c.session == 0 && c.registered && !c.hasWork():
		return
	case c.session == 0:
		p = inFlight{register: true, inv: Invocation{Operation: wire.OperationRegister}}
	case c.deferred != nil:
		if c.reading != nil {
			return
		}
		op := *c.deferred
		c.deferred = nil
		c.sent-- // counted when it was drawn, and again as it starts
		if c.startRead(op) {
			return
		}
		p.inv, drawn = Invocation{Operation: op.Operation, Code: op.Code, Body: op.Body}, op
	case len(c.queue) > 0:
		op := c.queue[0]
		c.queue = c.queue[1:]
		if isRead(op) && c.read(op) {
			return
		}
		p.inv, drawn = Invocation{Operation: op.Operation, Code: op.Code, Body: op.Body}, op
	case c.cfg.Mix != nil && c.sent < c.cfg.Requests && c.cfg.LogoutProbability > 0 && c.cfg.Rand.Float64() < c.cfg.LogoutProbability:
		p.inv = Invocation{Operation: wire.OperationLogout}
		p.logout = true
	case c.cfg.Mix != nil && c.sent < c.cfg.Requests && c.cfg.Bad != nil && c.cfg.Bad.Take():
		op := c.cfg.Bad.Next()
		if isRead(op) && c.read(op) {
			return
		}
		p.inv, drawn = Invocation{Operation: op.Operation, Code: op.Code, Body: op.Body}, op
	case c.cfg.Mix != nil && c.sent < c.cfg.Requests:
		op := c.cfg.Mix.Next()
		if isRead(op) && c.read(op) {
			return
		}
		p.inv, drawn = Invocation{Operation: op.Operation, Code: op.Code, Body: op.Body}, op
	default:
		return
	}
	p.silent = drawn.Silent
	p.inv.Client, p.inv.ClientID, p.inv.AtNs = c.cfg.Index, c.id, c.t.Now()
	if !p.register {
		c.request++
		c.sent++
		p.inv.Session, p.inv.Request = c.session, c.request
		p.inv.Checksum = wire.BodySeal(p.inv.Body)
		if drawn.SetChecksum {
			p.inv.Checksum, p.inv.OffFormat = drawn.Checksum, !drawn.Checksum.IsZero()
		}
	}
	h := wire.RequestHeader{Client: c.id, Session: p.inv.Session, Request: p.inv.Request,
		Operation: p.inv.Operation, RequestChecksum: p.inv.Checksum, CommandCode: p.inv.Code}
	p.frame = wire.BuildFrame(&h, p.inv.Body)
	p.route = routeOf(p.inv)
	if p.logout {
		c.sent-- // a Logout is not one of the Requests the client was given
	}
	c.pending = &p
	c.rec.Invoke(p.inv)
	if !c.followRoute(p.route) {
		c.send()
	}
	c.alongsideStore(p.inv)
}

// read starts a drawn read on a read link, or defers it while another
// read is in flight (reporting true: nothing more starts now), or reports
// false when it belongs on the home connection.
func (c *Client) read(op Op) bool {
	if c.reading != nil {
		c.sent++
		c.deferred = &op
		return true
	}
	return c.startRead(op)
}

func (c *Client) send() {
	c.pending.attempts++
	c.pending.ticks = 0
	c.t.Send(c.conn, c.pending.frame)
}

// Connected: a dial completed; the request in flight, if any, is resent.
func (c *Client) Connected(conn ConnID) {
	if l := c.linkOf(conn); l != nil {
		c.linkConnected(l)
		return
	}
	if conn != c.conn || c.state != connDialing {
		return
	}
	c.state = connOpen
	if c.pending != nil {
		c.send()
		return
	}
	c.next()
}

// DialFailed: the replica is down or cut off; try the next one.
func (c *Client) DialFailed(conn ConnID) {
	if l := c.linkOf(conn); l != nil {
		c.linkLost(l)
		c.resume()
		return
	}
	if conn == c.conn {
		c.state = connIdle
		c.target = (c.target + 1) % c.cfg.Replicas
	}
}

// Closed: the connection is gone; the next tick dials again.
func (c *Client) Closed(conn ConnID) {
	if l := c.linkOf(conn); l != nil {
		c.linkLost(l)
		c.resume()
		return
	}
	if conn == c.conn {
		c.state = connIdle
	}
}

// Received handles a frame from the replica.
func (c *Client) Received(conn ConnID, frame []byte) {
	if wire.Validate(frame) != nil {
		return
	}
	if l := c.linkOf(conn); l != nil {
		c.linkReceived(l, frame)
		c.resume()
		return
	}
	if conn != c.conn {
		return
	}
	h := wire.HeaderOf(frame)
	switch h.Command() {
	case wire.CommandReply:
		var r wire.ReplyHeader
		r.Decode(h)
		p := c.pending
		if p == nil || r.Client != c.id || r.Request != p.inv.Request {
			return // stale, or for a request already done
		}
		if code, ok := transientCode(&r, frame[wire.HeaderSize:]); ok {
			c.Transients++
			c.holdTicks = min(transientHoldTicks<<min(c.refusals, 8), transientHoldTicksMax)
			c.refusals++
			if code == codeTransientNotAccepted {
				c.forgetRoute(p.route)
				c.moveOn()
			} else {
				c.resend = true
			}
			return
		}
		c.refusals = 0
		kind := Replied
		if r.Status != 0 {
			kind = Denied
		}
		if kind == Replied || p.route == routeMetadata {
			// A partition op's denial may come from any replica (an
			// unknown partition is refused before the primary is asked).
			c.learnRoute(p.route, c.target)
		}
		if p.register {
			if kind != Replied {
				return // a Register refusal: keep trying
			}
			c.session, c.registered = r.Commit, true
			c.boundConn, c.bound = c.conn, true
		}
		c.rec.Complete(Completion{Client: c.cfg.Index, ClientID: c.id, Request: p.inv.Request, Kind: kind,
			Frame: append([]byte(nil), frame...), Attempts: p.attempts, AtNs: c.t.Now()})
		c.pending = nil
		if !p.register {
			c.thinkLeft = c.cfg.ThinkTicks
		}
		if p.logout && kind == Replied {
			// The session is over: the next request registers a fresh
			// id, as the SDK's re-login does.
			c.Logouts++
			c.newIdentity()
			c.bound = false
		}
		c.next()
	case wire.CommandEviction:
		var e wire.EvictionHeader
		e.Decode(h)
		if e.Client != c.id {
			return
		}
		c.Evictions++
		if p := c.pending; p != nil {
			c.rec.Complete(Completion{Client: c.cfg.Index, ClientID: c.id, Request: p.inv.Request, Kind: Indefinite,
				Reason: e.Reason, Attempts: p.attempts, AtNs: c.t.Now()})
		}
		c.pending = nil
		c.newIdentity()
		c.next()
	}
}

// giveUp ends the request in flight that is owed no answer (Op.Silent)
// after its timeout: its outcome stays unknown, and the client goes on.
func (c *Client) giveUp() {
	p := c.pending
	c.rec.Complete(Completion{Client: c.cfg.Index, ClientID: c.id, Request: p.inv.Request, Kind: Indefinite,
		Attempts: p.attempts, AtNs: c.t.Now()})
	c.pending = nil
	c.thinkLeft = c.cfg.ThinkTicks
}

// resume starts the next request once a read link's request ended, if
// the home connection is open (otherwise its dial does).
func (c *Client) resume() {
	if c.pending == nil && c.state == connOpen && c.holdTicks == 0 {
		c.next()
	}
}

// Describe says where the client stands, for a liveness failure's report:
// its request in flight (operation, request number, attempts, ticks since
// sent), its target and connection, and its holds.
func (c *Client) Describe() string {
	conn := [...]string{connIdle: "idle", connDialing: "dialing", connOpen: "open"}[c.state]
	s := fmt.Sprintf("client %d: target replica %d (%s), %d of %d requests sent, %d queued", c.cfg.Index, c.target, conn,
		c.sent, c.cfg.Requests, len(c.queue))
	if p := c.pending; p != nil {
		kind := p.inv.Operation.String()
		if p.register {
			kind = "Register"
		}
		s += fmt.Sprintf(", in flight: %s request %d, attempt %d, %d ticks since sent", kind, p.inv.Request, p.attempts, p.ticks)
	}
	if c.holdTicks > 0 || c.refusals > 0 {
		s += fmt.Sprintf(", holding %d ticks after %d refusals", c.holdTicks, c.refusals)
	}
	if p := c.reading; p != nil {
		s += fmt.Sprintf(", a read in flight on its link to replica %d (attempt %d, %d ticks)", p.link.replica, p.attempts, p.ticks)
	}
	if !c.registered {
		s += ", never registered"
	}
	return s
}
