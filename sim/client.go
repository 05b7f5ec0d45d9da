package sim

import (
	"fmt"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"math/rand/v2"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Client is a scripted client on the simulated network: it registers, then
// sends the requests it is given one at a time, on the [raw] consensus-plane
// path of client-ops.md. On a timeout it closes its connection and resends
// the same request (same request number) to the next replica in turn; on an
// eviction it drops its in-flight request (its outcome is unknown) and
// registers again under a fresh id.
type Client struct {
	c     *Cluster
	node  network.NodeID
	index int
	rng   *rand.Rand

	id      wire.U128
	session uint64 // 0 until registered
	request uint64 // the last request number used

	target  int // the replica it talks to
	conn    network.ConnID
	state   clientConnState
	ticker  *kernel.Ticker
	pending *clientRequest
	queue   []ClientOp

	// TimeoutTicks is how long a request waits for its reply before the
	// client tries the next replica.
	TimeoutTicks int

	// Results holds every completed request, in completion order.
	Results []ClientResult
	// Evictions counts the evictions the client received.
	Evictions int
}

// ClientOp is one request a test gives a client.
type ClientOp struct {
	Operation wire.Operation
	Body      []byte
}

// ClientResult is one completed request.
type ClientResult struct {
	Op       ClientOp
	Request  uint64
	Client   wire.U128
	Reply    wire.ReplyHeader
	Body     []byte
	SentNs   int64 // first send
	DoneNs   int64
	Attempts int
	Evicted  bool // no reply: the session was evicted while it was in flight
}

type clientConnState uint8

const (
	clientIdle clientConnState = iota
	clientDialing
	clientConnected
)

type clientRequest struct {
	op       ClientOp
	header   wire.RequestHeader
	frame    []byte
	sentNs   int64
	ticks    int // ticks since the last send
	attempts int
	register bool
}

func newClient(c *Cluster, node network.NodeID, index int) *Client {
	cl := &Client{c: c, node: node, index: index, rng: c.Streams.Stream(fmt.Sprintf("client.%d", index)),
		TimeoutTicks: 300}
	cl.target = index % c.Options.Replicas
	cl.newIdentity()
	c.Net.AddNode(node, false, cl)
	cl.ticker = kernel.NewTicker(c.Loop, int32(node), cl.tick)
	return cl
}

func (cl *Client) newIdentity() {
	cl.id = wire.U128{Lo: cl.rng.Uint64() | 1, Hi: cl.rng.Uint64()}
	cl.session, cl.request = 0, 0
}

// Submit queues a request.
func (cl *Client) Submit(op wire.Operation, body []byte) {
	cl.queue = append(cl.queue, ClientOp{Operation: op, Body: body})
}

// Idle reports whether the client has nothing in flight or queued.
func (cl *Client) Idle() bool { return cl.pending == nil && len(cl.queue) == 0 && cl.session != 0 }

// Session returns the client's session epoch (0 until registered).
func (cl *Client) Session() uint64 { return cl.session }

// ID returns the client's current id.
func (cl *Client) ID() wire.U128 { return cl.id }

func (cl *Client) tick() {
	if cl.pending != nil {
		cl.pending.ticks++
		if cl.pending.ticks >= cl.TimeoutTicks {
			cl.c.Probes["client request timed out"]++
			cl.failover()
			return
		}
	}
	switch cl.state {
	case clientIdle:
		cl.dial()
	case clientConnected:
		cl.next()
	}
}

// failover drops the connection and moves to the next replica; the request
// in flight is resent there.
func (cl *Client) failover() {
	if cl.state == clientConnected {
		cl.c.Net.Close(cl.conn, cl.node)
	}
	cl.state = clientIdle
	cl.target = (cl.target + 1) % cl.c.Options.Replicas
	if cl.pending != nil {
		cl.pending.ticks = 0
	}
	cl.dial()
}

func (cl *Client) dial() {
	if !cl.c.Net.Up(network.NodeID(cl.target)) {
		cl.target = (cl.target + 1) % cl.c.Options.Replicas
		return
	}
	cl.state = clientDialing
	cl.conn = cl.c.Net.Dial(cl.node, network.NodeID(cl.target))
}

// next sends the pending request, or registers, or starts the next queued one.
func (cl *Client) next() {
	if cl.pending == nil {
		switch {
		case cl.session == 0:
			cl.pending = &clientRequest{register: true, op: ClientOp{Operation: wire.OperationRegister},
				header: wire.RequestHeader{Client: cl.id, Operation: wire.OperationRegister}}
		case len(cl.queue) > 0:
			op := cl.queue[0]
			cl.queue = cl.queue[1:]
			cl.request++
			cl.pending = &clientRequest{op: op, header: wire.RequestHeader{Client: cl.id, Session: cl.session,
				Request: cl.request, Operation: op.Operation, RequestChecksum: wire.BodySeal(op.Body)}}
		default:
			return
		}
		cl.pending.frame = wire.BuildFrame(&cl.pending.header, cl.pending.op.Body)
		cl.pending.sentNs = cl.c.Loop.Now()
	} else if cl.pending.attempts > 0 && cl.pending.ticks > 0 {
		return // sent on this connection, waiting
	}
	cl.pending.attempts++
	cl.pending.ticks = 0
	cl.c.Net.Send(cl.conn, cl.node, cl.pending.frame)
	cl.pending.ticks = 1
}

// Endpoint.

func (cl *Client) Accepted(network.ConnID, network.NodeID) {
	panic("sim: a client accepted a connection")
}

func (cl *Client) Connected(c network.ConnID) {
	if c != cl.conn || cl.state != clientDialing {
		return
	}
	cl.state = clientConnected
	if cl.pending != nil {
		cl.pending.ticks = 0 // resend on this connection
		cl.pending.attempts++
		cl.c.Net.Send(cl.conn, cl.node, cl.pending.frame)
		cl.pending.ticks = 1
		return
	}
	cl.next()
}

func (cl *Client) DialFailed(c network.ConnID) {
	if c == cl.conn {
		cl.state = clientIdle
		cl.target = (cl.target + 1) % cl.c.Options.Replicas
	}
}

func (cl *Client) Closed(c network.ConnID) {
	if c == cl.conn {
		cl.state = clientIdle
	}
}

func (cl *Client) Received(c network.ConnID, frame []byte) {
	if c != cl.conn || wire.Validate(frame) != nil {
		return
	}
	h := wire.HeaderOf(frame)
	switch h.Command() {
	case wire.CommandReply:
		var r wire.ReplyHeader
		r.Decode(h)
		p := cl.pending
		if p == nil || r.Client != cl.id || r.Request != p.header.Request {
			return // a stale or duplicate reply
		}
		if p.register {
			if r.Status != 0 {
				return
			}
			cl.session = r.Commit
		}
		cl.Results = append(cl.Results, ClientResult{Op: p.op, Request: p.header.Request, Client: cl.id, Reply: r,
			Body: append([]byte(nil), frame[wire.HeaderSize:]...), SentNs: p.sentNs, DoneNs: cl.c.Loop.Now(),
			Attempts: p.attempts})
		cl.pending = nil
		cl.next()
	case wire.CommandEviction:
		var e wire.EvictionHeader
		e.Decode(h)
		if e.Client != cl.id {
			return
		}
		cl.Evictions++
		if p := cl.pending; p != nil && !p.register {
			cl.Results = append(cl.Results, ClientResult{Op: p.op, Request: p.header.Request, Client: cl.id,
				SentNs: p.sentNs, DoneNs: cl.c.Loop.Now(), Attempts: p.attempts, Evicted: true})
		}
		cl.pending = nil
		cl.newIdentity()
		cl.next()
	}
}
