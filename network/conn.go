package network

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/plan"
	"github.com/zeebo/xxh3"
)

// commandOffset is where a frame's command byte sits (wire.md 2); the
// per-command counters key on it. wire keeps its offsets unexported.
const commandOffset = 60

// endState is what one end of a connection (the node at it) knows and may do.
type endState uint8

const (
	endDone    endState = iota // no further callbacks; cannot send
	endDialing                 // the dialer, before Connected or DialFailed
	endOpen                    // may send; receives frames and, later, Closed
	endClosing                 // the node closed it; its FIN is in flight; no callbacks
	endNotify                  // reset; a Closed event is scheduled
)

// stall says why a direction's head frame waits beyond its delivery time.
// A clog is not a stall state: the direction simply re-arms at the clog's end.
type stall uint8

const (
	stallNone stall = iota
	stallCut        // the path is cut by a partition; a TCP timeout is armed
	stallHeld       // a Hold filter keeps the head frame
)

// inflight is one frame (or the FIN of an orderly close) on its way.
type inflight struct {
	buf         []byte // from the pool; nil for a FIN
	deliverAtNs int64  // never before the previous frame's: FIFO
	command     uint8  // frame[60] when sent, for the per-command counters
	fin         bool
	heldBy      FilterID // the Hold filter keeping it, 0 if none
	filterAfter FilterID // filters with ids up to this one let it pass already
}

// dir is one direction of a connection: the frames from end side to the
// other end, in order. It is the long-lived event object of its direction:
// every event it schedules carries a fresh argument, and it remembers which
// argument each of its pending events (delivery, timeout, notification) has,
// so a firing with any other argument is stale and does nothing.
type dir struct {
	c               *conn
	side            int // the sending end
	q               ring
	bytes           int64
	lastDeliverAtNs int64

	deliverArg uint64 // the armed delivery of the head, 0 if none
	armedAtNs  int64
	timeoutArg uint64 // the armed TCP timeout, 0 if none
	notifyArg  uint64 // the armed Closed notification of the receiving end, 0 if none
	stall      stall
}

// conn is one connection: end 0 dialed, end 1 accepted.
type conn struct {
	n          *Network
	id         ConnID
	node       [2]int32 // node indices
	end        [2]endState
	dir        [2]dir // dir[s] carries frames from end s to end 1-s
	connectArg uint64 // the pending connect event (on dir[0]), 0 if none
	refused    bool   // refused when dialed: DialFailed at completion
}

// Dial opens a connection from node from to node to and returns its id at
// once; Connected or DialFailed follows after a drawn connect delay. The dial
// is refused if, at dial time or at completion, the target is down or not
// listening (a client), or a partition cuts either direction between them.
// Dialing from a down node, to an unknown node or to oneself is a
// programmer error.
func (n *Network) Dial(from, to NodeID) ConnID {
	fi, ti := n.lookup(from), n.lookup(to)
	if fi == ti {
		panic(fmt.Sprintf("network: node %d dials itself", from))
	}
	if !n.nodes[fi].up {
		panic(fmt.Sprintf("network: node %d dials while down", from))
	}
	n.lastConn++
	c := &conn{n: n, id: n.lastConn, node: [2]int32{fi, ti}, end: [2]endState{endDialing, endDone}}
	c.dir[0] = dir{c: c, side: 0}
	c.dir[1] = dir{c: c, side: 1}
	c.refused = !n.reachable(fi, ti)
	c.connectArg = n.nextArg()
	n.sched.At(n.sched.Now()+draw(n.rngConnect, n.opts.ConnectDelayMinNs, n.opts.ConnectDelayMeanNs), &c.dir[0], c.connectArg)
	n.conns[c.id] = c
	n.live = append(n.live, c)
	return c.id
}

// reachable reports whether a dial from fi to ti can complete now.
func (n *Network) reachable(fi, ti int32) bool {
	t := &n.nodes[ti]
	return t.up && t.replica && !n.paths[fi][ti].cut && !n.paths[ti][fi].cut
}

// conn returns connection c and the end node from holds, or nil if c is
// finished. An id never issued, or a node that is not an end of c, is a
// programmer error.
func (n *Network) conn(c ConnID, from NodeID) (*conn, int) {
	x := n.conns[c]
	if x == nil {
		if c == 0 || c > n.lastConn {
			panic(fmt.Sprintf("network: unknown connection %d", c))
		}
		return nil, 0
	}
	idx := n.lookup(from)
	switch idx {
	case x.node[0]:
		return x, 0
	case x.node[1]:
		return x, 1
	}
	panic(fmt.Sprintf("network: node %d is not an end of connection %d", from, c))
}

// Peer returns the node at the other end of connection c from node at, and
// false once c is finished.
func (n *Network) Peer(c ConnID, at NodeID) (NodeID, bool) {
	x, end := n.conn(c, at)
	if x == nil {
		return 0, false
	}
	return n.nodes[x.node[1-end]].id, true
}

// Send queues a copy of frame from node from on connection c and returns
// true, or returns false if c is not open at from (still dialing, closed,
// reset, or gone) or if the frame overflows the direction's bounds (which
// resets the connection, see Options.InFlightFramesMax). A frame sent to a
// peer that has already closed is accepted and lost, as on TCP. Sending from
// a down node, on a connection from is not an end of, or a frame shorter
// than a header or longer than FrameSizeMax, is a programmer error.
func (n *Network) Send(c ConnID, from NodeID, frame []byte) bool {
	x, e := n.conn(c, from)
	if x == nil {
		return false
	}
	if !n.nodes[x.node[e]].up {
		panic(fmt.Sprintf("network: node %d sends while down", from))
	}
	if len(frame) < wire.HeaderSize || len(frame) > n.opts.FrameSizeMax {
		panic(fmt.Sprintf("network: frame of %d bytes outside [%d, %d]", len(frame), wire.HeaderSize, n.opts.FrameSizeMax))
	}
	if x.end[e] != endOpen {
		return false
	}
	d := &x.dir[e]
	if d.q.n >= n.opts.InFlightFramesMax || d.bytes+int64(len(frame)) > n.opts.InFlightBytesMax {
		x.reset(ResetOverflow, LostReset)
		return false
	}
	p := &n.paths[x.node[e]][x.node[1-e]]
	command := frame[commandOffset]
	for _, k := range n.counters(p, command) {
		k.FramesSent++
		k.BytesSent += uint64(len(frame))
	}
	if x.end[1-e] != endOpen {
		// The peer closed: the frame reaches a closed socket and is lost.
		n.lose(p, command, LostClosed)
		return true
	}
	link := func(kind plan.Kind) plan.Site {
		return plan.Site{Kind: kind, A: int32(n.nodes[x.node[e]].id), B: int32(n.nodes[x.node[1-e]].id)}
	}
	if n.faultsOn && n.opts.ResetProbability > 0 {
		drawn := n.rngReset.Float64() < n.opts.ResetProbability
		if _, fire := n.opts.Plan.Fire(n.sched.Now(), link(plan.Reset), drawn); fire {
			// The write went into the socket; then the connection died.
			n.opts.Plan.Fired(n.sched.Now(), link(plan.Reset), "")
			n.lose(p, command, LostReset)
			x.reset(ResetRandom, LostReset)
			return true
		}
	}
	buf := n.pool.get(len(frame))
	copy(buf, frame)
	if n.faultsOn && n.opts.CorruptProbability > 0 {
		// A frame with no protected range cannot be corrupted: its draw
		// fires nothing (a plan does not hold it).
		drawn := n.rngCorrupt.Float64() < n.opts.CorruptProbability && n.corruptible(buf)
		if _, fire := n.opts.Plan.Fire(n.sched.Now(), link(plan.Corrupt), drawn); fire && n.corrupt(buf) {
			n.opts.Plan.Fired(n.sched.Now(), link(plan.Corrupt), "")
			for _, k := range n.counters(p, command) {
				k.FramesCorrupted++
			}
		}
	}
	if n.faultsOn && n.opts.ChunkCorruptProbability > 0 && command == uint8(wire.CommandStateChunk) && len(buf) > wire.HeaderSize {
		drawn := n.rngChunkCorrupt.Float64() < n.opts.ChunkCorruptProbability
		if _, fire := n.opts.Plan.Fire(n.sched.Now(), link(plan.ChunkCorrupt), drawn); fire {
			n.opts.Plan.Fired(n.sched.Now(), link(plan.ChunkCorrupt), "")
			bit := n.rngChunkCorrupt.IntN((len(buf) - wire.HeaderSize) * 8)
			buf[wire.HeaderSize+bit/8] ^= 1 << (bit % 8)
			for _, k := range n.counters(p, command) {
				k.FramesCorrupted++
				k.ChunksCorrupted++
			}
		}
	}
	now := n.sched.Now()
	at := max(d.lastDeliverAtNs, now+draw(n.rngDelay, n.opts.DelayMinNs, n.opts.DelayMeanNs))
	d.push(inflight{buf: buf, deliverAtNs: at, command: command})
	return true
}

// counters returns the counters a frame of command on path p updates: the
// path's, the command's, and the totals.
func (n *Network) counters(p *path, command uint8) [3]*Counters {
	return [3]*Counters{&p.stats, &n.commands[command], &n.stats.Counters}
}

// lose counts one frame of command on p as lost under cause.
func (n *Network) lose(p *path, command uint8, cause LossCause) {
	for _, k := range n.counters(p, command) {
		k.FramesLost[cause]++
	}
}

// push queues it on d, arming delivery if d was idle.
func (d *dir) push(it inflight) {
	d.q.push(it)
	d.bytes += int64(len(it.buf))
	d.lastDeliverAtNs = it.deliverAtNs
	if d.deliverArg == 0 && d.stall == stallNone {
		if d.q.n != 1 {
			panic("network: a direction with queued frames was neither armed nor stalled")
		}
		d.arm(it.deliverAtNs)
	}
}

// arm schedules the delivery of d's head at atNs (or now, if that is past),
// superseding any delivery already armed.
func (d *dir) arm(atNs int64) {
	n := d.c.n
	atNs = max(atNs, n.sched.Now())
	d.deliverArg = n.nextArg()
	d.armedAtNs = atNs
	n.sched.At(atNs, d, d.deliverArg)
}

// armNext arms the next delivery after the head left, unless something else
// (a stall, a reset, a Send during the callback) already decided.
func (d *dir) armNext() {
	if d.q.n > 0 && d.deliverArg == 0 && d.stall == stallNone {
		d.arm(d.q.front().deliverAtNs)
	}
}

// from and to return the node indices of d's sender and receiver.
func (d *dir) from() int32 { return d.c.node[d.side] }
func (d *dir) to() int32   { return d.c.node[1-d.side] }

// path returns the path d travels.
func (d *dir) path() *path { return &d.c.n.paths[d.from()][d.to()] }

// flush loses every frame queued on d, counting them under cause, and
// cancels d's delivery and timeout.
func (d *dir) flush(cause LossCause) {
	n := d.c.n
	p := d.path()
	for d.q.n > 0 {
		it := d.q.pop()
		if it.fin {
			continue
		}
		n.lose(p, it.command, cause)
		n.pool.put(it.buf, false)
	}
	d.bytes = 0
	d.deliverArg, d.timeoutArg = 0, 0
	d.stall = stallNone
}

// Fire runs one of d's events: the connect event (dir 0 only), the delivery
// of the head frame, a TCP timeout, or a Closed notification. Any other
// argument is stale and does nothing.
func (d *dir) Fire(nowNs int64, arg uint64) (string, int32, uint64) {
	c := d.c
	switch arg {
	case d.deliverArg:
		d.deliverArg = 0
		return d.deliver(nowNs)
	case d.timeoutArg:
		d.timeoutArg = 0
		return d.timeout()
	case d.notifyArg:
		d.notifyArg = 0
		return d.notify()
	case c.connectArg:
		c.connectArg = 0
		return c.connect()
	}
	return "", -1, 0
}

// deliver hands d's head to the receiver, unless a cut, a clog or a filter
// stalls it.
func (d *dir) deliver(nowNs int64) (string, int32, uint64) {
	c, n := d.c, d.c.n
	p := d.path()
	if p.cut {
		d.stall = stallCut
		if d.timeoutArg == 0 {
			d.timeoutArg = n.nextArg()
			n.sched.At(nowNs+draw(n.rngTimeout, n.opts.TCPTimeoutMinNs, n.opts.TCPTimeoutMeanNs), d, d.timeoutArg)
		}
		return "", -1, 0
	}
	if nowNs < p.clogUntilNs {
		d.arm(p.clogUntilNs)
		return "", -1, 0
	}
	to := &n.nodes[d.to()]
	head := d.q.front()
	if !head.fin && len(n.filters) > 0 {
		if f := n.match(d, head); f != nil {
			if f.Action == Hold {
				head.heldBy = f.id
				d.stall = stallHeld
				return "", -1, 0
			}
			it := d.q.pop()
			d.bytes -= int64(len(it.buf))
			n.lose(p, it.command, LostFiltered)
			hash := xxh3.Hash(it.buf) ^ uint64(c.id)
			n.pool.put(it.buf, false)
			d.armNext()
			return "network.drop", int32(to.id), hash
		}
	}
	it := d.q.pop()
	recv := 1 - d.side
	if c.end[recv] != endOpen || !to.up {
		panic(fmt.Sprintf("network: connection %d delivers to an end that cannot receive", c.id))
	}
	if it.fin {
		// The orderly close arrives behind every frame sent before it.
		c.end[d.side] = endDone
		c.end[recv] = endDone
		c.finishIfDone()
		to.ep.Closed(c.id)
		return "network.closed", int32(to.id), uint64(c.id)
	}
	d.bytes -= int64(len(it.buf))
	for _, k := range n.counters(p, it.command) {
		k.FramesDelivered++
		k.BytesDelivered += uint64(len(it.buf))
	}
	hash := xxh3.Hash(it.buf) ^ uint64(c.id)
	to.ep.Received(c.id, it.buf)
	n.pool.put(it.buf, n.opts.PoisonBuffers)
	d.armNext()
	return "network.deliver", int32(to.id), hash
}

// timeout resets the connection: its frames stalled across a cut too long.
func (d *dir) timeout() (string, int32, uint64) {
	if d.stall != stallCut {
		panic("network: a TCP timeout fired on a direction that is not stalled by a cut")
	}
	d.c.reset(ResetTimeout, LostReset)
	return "network.timeout", int32(d.c.n.nodes[d.to()].id), uint64(d.c.id)
}

// notify tells d's receiving end that the connection was reset.
func (d *dir) notify() (string, int32, uint64) {
	c := d.c
	recv := 1 - d.side
	if c.end[recv] != endNotify {
		panic("network: a Closed notification fired for an end not awaiting one")
	}
	c.end[recv] = endDone
	c.finishIfDone()
	nd := &c.n.nodes[c.node[recv]]
	nd.ep.Closed(c.id)
	return "network.closed", int32(nd.id), uint64(c.id)
}

// connect completes or refuses the dial.
func (c *conn) connect() (string, int32, uint64) {
	n := c.n
	dialer, acceptor := &n.nodes[c.node[0]], &n.nodes[c.node[1]]
	if c.end[0] != endDialing {
		panic("network: a connect event fired for an aborted dial")
	}
	if c.refused || !n.reachable(c.node[0], c.node[1]) {
		n.stats.DialsFailed++
		c.end[0] = endDone
		c.finishIfDone()
		dialer.ep.DialFailed(c.id)
		return "network.dial_failed", int32(dialer.id), uint64(c.id)
	}
	n.stats.ConnectionsOpened++
	c.end[0], c.end[1] = endOpen, endOpen
	// As on TCP, the dialer's connect completes before the acceptor's accept
	// returns. The dialer may close or reset the connection in Connected; the
	// acceptor still learns of it (then sees Closed), unless it went down.
	dialer.ep.Connected(c.id)
	if c.end[1] != endDone {
		acceptor.ep.Accepted(c.id, dialer.id)
	}
	return "network.connect", int32(acceptor.id), uint64(c.id)
}

// reset kills the connection: every frame in flight in both directions is
// lost under loss, and each open end whose node is up is told Closed by an
// event (never re-entrantly).
func (c *conn) reset(cause ResetCause, loss LossCause) {
	n := c.n
	n.stats.Resets[cause]++
	if c.end[0] == endDialing {
		// Only a scripted Reset reaches a dial in progress: refuse it.
		c.refused = true
		return
	}
	for s := range 2 {
		c.dir[s].flush(loss)
	}
	for e := range 2 {
		switch c.end[e] {
		case endOpen:
			if n.nodes[c.node[e]].up {
				c.end[e] = endNotify
				d := &c.dir[1-e]
				d.notifyArg = n.nextArg()
				n.sched.At(n.sched.Now(), d, d.notifyArg)
			} else {
				c.end[e] = endDone
			}
		case endClosing:
			c.end[e] = endDone
		}
	}
	c.finishIfDone()
}

// down handles end e's node going down: it hears nothing more of c.
func (c *conn) down(e int) {
	prev := c.end[e]
	c.end[e] = endDone
	switch prev {
	case endDialing:
		// The dial dies with its process; the target never hears of it.
		c.connectArg = 0
		c.finishIfDone()
	case endNotify:
		// Already reset; its Closed is moot now.
		c.dir[1-e].notifyArg = 0
		c.finishIfDone()
	case endOpen, endClosing:
		c.reset(ResetDown, LostDown)
	case endDone:
		// Nothing pending at this end: the peer is awaiting its own Closed,
		// or this is the target of a dial, which completion will refuse.
	}
}

// finishIfDone retires the connection once neither end expects anything.
func (c *conn) finishIfDone() {
	if c.connectArg != 0 || c.end[0] != endDone || c.end[1] != endDone {
		return
	}
	for s := range 2 {
		d := &c.dir[s]
		if d.q.n != 0 || d.notifyArg != 0 {
			panic(fmt.Sprintf("network: connection %d finished with work pending", c.id))
		}
		d.deliverArg, d.timeoutArg = 0, 0
	}
	c.n.finish(c)
}

// Close closes connection c at node by, in order: frames by already sent are
// still delivered, then the peer sees Closed. Frames on their way to by are
// lost (LostClosed), as is anything the peer sends before it learns of the
// close. by gets no further callbacks for c. Closing a dial in progress
// abandons it (the target never hears of it); closing a connection already
// reset, closed or gone does nothing, and cancels a pending Closed.
func (n *Network) Close(c ConnID, by NodeID) {
	x, e := n.conn(c, by)
	if x == nil {
		return
	}
	switch x.end[e] {
	case endDialing:
		x.connectArg = 0
		x.end[e] = endDone
		x.finishIfDone()
	case endNotify:
		x.dir[1-e].notifyArg = 0
		x.end[e] = endDone
		x.finishIfDone()
	case endOpen:
		n.stats.Closes++
		x.end[e] = endClosing
		x.dir[1-e].flush(LostClosed)
		if x.end[1-e] == endClosing {
			// Both closed: the peer's FIN was just flushed and ours would
			// reach a closed socket. Nothing more to do for either end.
			x.end[1-e] = endDone
			x.end[e] = endDone
			x.finishIfDone()
			return
		}
		if x.end[1-e] != endOpen {
			panic(fmt.Sprintf("network: connection %d open at one end, neither open nor closing at the other", c))
		}
		d := &x.dir[e]
		at := max(d.lastDeliverAtNs, n.sched.Now()+draw(n.rngDelay, n.opts.DelayMinNs, n.opts.DelayMeanNs))
		d.push(inflight{fin: true, deliverAtNs: at})
	}
}

// Reset resets connection c now, as a scripted fault (ResetScripted): frames
// in flight are lost, open ends see Closed. A dial in progress is refused.
// Resetting a finished connection does nothing.
func (n *Network) Reset(c ConnID) {
	x := n.conns[c]
	if x == nil {
		if c == 0 || c > n.lastConn {
			panic(fmt.Sprintf("network: unknown connection %d", c))
		}
		return
	}
	x.reset(ResetScripted, LostReset)
}

// InFlight returns the frames (not counting an orderly close) queued on c
// from node from towards its peer: sent, not yet delivered or lost.
func (n *Network) InFlight(c ConnID, from NodeID) int {
	x, e := n.conn(c, from)
	if x == nil {
		return 0
	}
	k := 0
	for i := range x.dir[e].q.n {
		if !x.dir[e].q.at(i).fin {
			k++
		}
	}
	return k
}
