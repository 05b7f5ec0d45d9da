package workload

import (
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Read links: a client's polls go out on connections of their own, one per
// replica it reads from, each with a session of its own client id logged in
// there (a Register, forwarded to the metadata primary by a backup), as a
// cluster-aware SDK keeps a connection per node it talks to (a read at the
// replica where the home session logged in on the home connection goes
// out there). The client's
// home session (its metadata requests and sends, retried unchanged from
// replica to replica as Iggy's SDK does) is never bound anywhere else for a
// read: binding its id on a second connection would fence the first
// (client-ops.md 6.2). DEVIATIONS.md 56 says where this differs from Iggy's
// SDK.
//
// A read runs on a link while the home session has a request of its own
// in flight: a consumer whose offset store is in flight polls on at once
// (alongsideStore), as a consumer committing offsets in the background
// does. A link's request gets no second chance: a timeout, a refused dial, a
// closed connection or an eviction ends it Indefinite, a transient refusal
// ends it Denied, and the client goes on with its next request. Reads have
// no effect to lose, and a read retried elsewhere would be another
// client's request.

// readLink is the client's connection to one replica it polls.
type readLink struct {
	replica int
	conn    ConnID
	state   connState
	id      wire.U128
	session uint64 // the commit of its Register; 0 while not logged in
	request uint64
}

// isRead reports whether op is a read sent on a read link.
func isRead(op Op) bool { return op.Operation == wire.OperationNonReplicated }

// linksMax bounds a client's read links: each holds a session in the
// replicas' client table (8 slots in the simulation profile), so a client
// reading from a third replica moves its least recently used link there,
// logging the same id in on the new connection (a rebind, client-ops.md
// 6.2, which fences the old connection, closed anyway).
const linksMax = 2

// linkTo returns the client's link to replica (made, or moved there, on
// first use; not dialed yet), most recently used from now on.
func (c *Client) linkTo(replica int) *readLink {
	at := -1
	for i, l := range c.links {
		if l.replica == replica {
			at = i
		}
	}
	var l *readLink
	switch {
	case at >= 0:
		l = c.links[at]
		c.links = append(c.links[:at], c.links[at+1:]...)
	case len(c.links) < linksMax:
		l = &readLink{replica: replica}
		c.newLinkIdentity(l)
	default:
		l = c.links[0]
		c.links = c.links[1:]
		if l.state != connIdle {
			c.t.Close(l.conn)
		}
		l.replica, l.state, l.session = replica, connIdle, 0
	}
	c.links = append(c.links, l)
	return l
}

func (c *Client) newLinkIdentity(l *readLink) {
	l.id = wire.U128{Lo: c.cfg.Rand.Uint64() | 1, Hi: c.cfg.Rand.Uint64()}
	l.session, l.request = 0, 0
}

// startRead starts op (a read) on the link to the replica the client reads
// from: its current target, or with a Mix, a quarter of the time any
// replica. A link not logged in registers first; the read waits in read.
// It reports false, starting nothing, when the read belongs on the home
// connection: at its target, where the home session logged in on it.
func (c *Client) startRead(op Op) bool {
	replica := c.target
	if c.cfg.Mix != nil && c.cfg.Rand.IntN(4) == 0 {
		replica = c.cfg.Rand.IntN(c.cfg.Replicas)
	}
	if replica == c.target && c.bound && c.boundConn == c.conn && c.state == connOpen {
		return false // the home connection is bound to the home session: read there
	}
	c.sent++
	c.readOn(c.linkTo(replica), op)
	return true
}

// readOn starts op, a read, on link l.
func (c *Client) readOn(l *readLink, op Op) {
	p := &inFlight{link: l, read: op}
	c.reading = p
	if l.session == 0 {
		p.register = true
		p.inv = Invocation{Client: c.cfg.Index, ClientID: l.id, Operation: wire.OperationRegister, AtNs: c.t.Now()}
		h := wire.RequestHeader{Client: l.id, Operation: wire.OperationRegister}
		p.frame = wire.BuildFrame(&h, nil)
		c.rec.Invoke(p.inv)
	} else {
		c.invokeRead(p)
	}
	c.sendLink()
}

// invokeRead records p's read as invoked on its link's session.
func (c *Client) invokeRead(p *inFlight) {
	l := p.link
	l.request++
	p.register = false
	p.inv = Invocation{Client: c.cfg.Index, ClientID: l.id, Session: l.session, Request: l.request,
		Operation: p.read.Operation, Code: p.read.Code, Body: p.read.Body, AtNs: c.t.Now()}
	p.inv.Checksum = wire.BodySeal(p.inv.Body)
	h := wire.RequestHeader{Client: l.id, Session: l.session, Request: l.request, Operation: p.inv.Operation,
		RequestChecksum: p.inv.Checksum, CommandCode: p.inv.Code}
	p.frame = wire.BuildFrame(&h, p.inv.Body)
	p.attempts = 0
	c.rec.Invoke(p.inv)
}

// sendLink sends the request in flight on its link, dialing it first when
// it has no connection.
func (c *Client) sendLink() {
	p := c.reading
	l := p.link
	p.ticks = 0
	switch l.state {
	case connIdle:
		l.state = connDialing
		l.conn = c.t.Dial(l.replica)
	case connOpen:
		p.attempts++
		c.t.Send(l.conn, p.frame)
	}
}

// endLink ends the request in flight on a link without an answer
// (Indefinite) and goes on.
func (c *Client) endLink() {
	p := c.reading
	c.rec.Complete(Completion{Client: c.cfg.Index, ClientID: p.link.id, Request: p.inv.Request, Kind: Indefinite,
		Attempts: p.attempts, AtNs: c.t.Now()})
	c.reading = nil
}

// linkOf returns the link whose connection is conn, or nil.
func (c *Client) linkOf(conn ConnID) *readLink {
	for _, l := range c.links {
		if l.state != connIdle && l.conn == conn {
			return l
		}
	}
	return nil
}

// linkTimedOut: the request in flight on a link got no answer in time; the
// connection is dropped (a late answer on it is never read).
func (c *Client) linkTimedOut() {
	l := c.reading.link
	if l.state != connIdle {
		c.t.Close(l.conn)
		l.state = connIdle
	}
	c.endLink()
}

// linkConnected: a link's dial completed.
func (c *Client) linkConnected(l *readLink) {
	if l.state != connDialing {
		return
	}
	l.state = connOpen
	if p := c.reading; p != nil && p.link == l {
		c.sendLink()
	}
}

// linkLost: a link's dial failed or its connection closed.
func (c *Client) linkLost(l *readLink) {
	l.state = connIdle
	if p := c.reading; p != nil && p.link == l {
		c.endLink()
	}
}

// linkReceived handles a frame on a link's connection.
func (c *Client) linkReceived(l *readLink, frame []byte) {
	h := wire.HeaderOf(frame)
	p := c.reading
	switch h.Command() {
	case wire.CommandReply:
		var r wire.ReplyHeader
		r.Decode(h)
		if p == nil || p.link != l || r.Client != l.id || r.Request != p.inv.Request {
			return
		}
		if p.register && r.Operation != wire.OperationRegister {
			return
		}
		kind := Replied
		if r.Status != 0 {
			kind = Denied
		}
		if _, transient := transientCode(&r, frame[wire.HeaderSize:]); transient {
			kind = Denied
		}
		if !p.register && r.Status == codeUnauthenticated {
			// The replica lost the link's login (a restart): log in again
			// on this connection (the same id, no other connection to
			// fence), then read.
			l.session = 0
		}
		c.rec.Complete(Completion{Client: c.cfg.Index, ClientID: l.id, Request: p.inv.Request, Kind: kind,
			Frame: append([]byte(nil), frame...), Attempts: p.attempts, AtNs: c.t.Now()})
		if p.register && kind == Replied {
			l.session = r.Commit
			c.invokeRead(p)
			c.sendLink()
			return
		}
		c.reading = nil
	case wire.CommandEviction:
		var e wire.EvictionHeader
		e.Decode(h)
		if e.Client != l.id {
			return
		}
		c.Evictions++
		if p != nil && p.link == l {
			c.rec.Complete(Completion{Client: c.cfg.Index, ClientID: l.id, Request: p.inv.Request, Kind: Indefinite,
				Reason: e.Reason, Attempts: p.attempts, AtNs: c.t.Now()})
			c.reading = nil
		}
		c.newLinkIdentity(l)
	}
}

// alongsideStore starts, with a Mix and no read in flight, a Next poll of
// the consumer and partition of a Quorum offset store the home session
// just sent, on the link to the same replica: the poll runs while the
// store is prepared and not yet committed, and what it starts after must
// be an offset a committed store set (checker "poll skip").
func (c *Client) alongsideStore(inv Invocation) {
	if c.cfg.Mix == nil || c.reading != nil || inv.Operation != wire.OperationStoreConsumerOffset {
		return
	}
	r, err := partition.DecodeOffsetRequest(inv.Body, true)
	if err != nil || r.Ack != partition.AckQuorum || c.cfg.Rand.IntN(2) == 0 {
		return
	}
	// The poll is encoded by the workload's own encoder, not the replica's
	// (partition.EncodePoll): a body the client writes itself shows when
	// the replica's reading of it is wrong.
	q := poll{consumerKind: r.ConsumerKind, consumer: identOf(r.Consumer), stream: identOf(r.Stream), topic: identOf(r.Topic),
		hasPartition: r.HasPartition, partition: r.Partition, strategy: partition.PollNext, count: 4}
	c.readOn(c.linkTo(c.target), Op{Operation: wire.OperationNonReplicated, Body: encodePoll(q), Code: partition.PollMessagesCode})
}
