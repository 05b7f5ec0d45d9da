package bus

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// A tiny in-memory network for the tests: connections with per-direction
// FIFO delivery, driven by hand. Pending events sit in one queue; step fires
// the first, stepAt any event that no earlier event of the same direction
// precedes (so random interleavings keep TCP's per-connection order). It
// follows the contract of network.Network: no callback runs inside a
// Transport call, a node that closes a connection hears nothing more of it,
// frames it sent before closing are still delivered, then the peer sees
// Closed; a reset loses everything in flight and notifies both open ends.

// tb is what the fakes need of a *testing.T or a *rapid.T.
type tb interface {
	Fatalf(format string, args ...any)
	Fatal(args ...any)
}

// endpoint is what a node of the fake network is: a *Bus or a *rogue.
type endpoint interface {
	Connected(c ConnID)
	DialFailed(c ConnID)
	Accepted(c ConnID)
	Received(c ConnID, frame []byte)
	Closed(c ConnID)
}

type endState uint8

const (
	endOpen   endState = iota + 1 // may send and receive
	endNotify                     // reset: sends fail, Closed pending
	endDone                       // closed; told or closed by itself
)

type fconn struct {
	id         ConnID
	node       [2]uint8 // dialer, acceptor
	state      [2]endState
	connecting bool
}

type evKind uint8

const (
	evConnect evKind = iota + 1
	evDeliver
	evClosed
)

type fevent struct {
	kind  evKind
	conn  ConnID
	to    int // end index the event is for (evConnect: 0)
	frame []byte
}

type fakeNet struct {
	t      tb
	nodes  [ReplicasMax]endpoint
	down   [ReplicasMax]bool
	conns  map[ConnID]*fconn
	lastID ConnID
	queue  []fevent
	log    []string // every transport call, for the determinism test
	// mitm gives the two ends of a connection different channel bindings,
	// as a relay between two TLS sessions would see.
	mitm bool
}

func newFakeNet(t tb) *fakeNet {
	return &fakeNet{t: t, conns: make(map[ConnID]*fconn)}
}

// port is one node's Transport.
type port struct {
	n  *fakeNet
	id uint8
}

func (n *fakeNet) port(id uint8) *port { return &port{n: n, id: id} }

func (n *fakeNet) end(c *fconn, id uint8) int {
	switch id {
	case c.node[0]:
		return 0
	case c.node[1]:
		return 1
	}
	n.t.Fatalf("node %d is not an end of connection %d", id, c.id)
	return -1
}

func (p *port) Dial(peer uint8) ConnID {
	n := p.n
	if peer == p.id {
		n.t.Fatalf("node %d dials itself", p.id)
	}
	n.lastID++
	c := &fconn{id: n.lastID, node: [2]uint8{p.id, peer}, connecting: true}
	n.conns[c.id] = c
	n.queue = append(n.queue, fevent{kind: evConnect, conn: c.id})
	n.log = append(n.log, fmt.Sprintf("%d dial %d -> %d", p.id, peer, c.id))
	return c.id
}

func (p *port) Send(id ConnID, frame []byte) bool {
	n := p.n
	cmd := "short"
	if len(frame) >= wire.HeaderSize {
		cmd = wire.HeaderOf(frame).Command().String()
	}
	n.log = append(n.log, fmt.Sprintf("%d send %d %s %x", p.id, id, cmd, xxh3.Hash(frame)))
	c := n.conns[id]
	if c == nil || c.connecting {
		return false
	}
	e := n.end(c, p.id)
	if c.state[e] != endOpen {
		return false
	}
	if c.state[1-e] == endOpen {
		n.queue = append(n.queue, fevent{kind: evDeliver, conn: id, to: 1 - e, frame: slices.Clone(frame)})
	}
	return true
}

func (p *port) Close(id ConnID) {
	n := p.n
	n.log = append(n.log, fmt.Sprintf("%d close %d", p.id, id))
	c := n.conns[id]
	if c == nil {
		return
	}
	e := n.end(c, p.id)
	if c.connecting {
		if e != 0 {
			n.t.Fatalf("acceptor closes connection %d before it connected", id)
		}
		n.drop(id, func(ev fevent) bool { return true })
		delete(n.conns, id)
		return
	}
	switch c.state[e] {
	case endOpen:
		c.state[e] = endDone
		n.drop(id, func(ev fevent) bool { return ev.to == e })
		if c.state[1-e] == endOpen {
			n.queue = append(n.queue, fevent{kind: evClosed, conn: id, to: 1 - e})
		}
	case endNotify:
		c.state[e] = endDone
		n.drop(id, func(ev fevent) bool { return ev.to == e })
	}
	n.gc(c)
}

func (p *port) InFlight(id ConnID) int {
	n := p.n
	c := n.conns[id]
	if c == nil || c.connecting {
		return 0
	}
	e := n.end(c, p.id)
	k := 0
	for _, ev := range n.queue {
		if ev.conn == id && ev.kind == evDeliver && ev.to == 1-e {
			k++
		}
	}
	return k
}

// ChannelBinding makes port a ChannelBinder: both ends of a connection see
// the same exporter, unless the network plays a man in the middle.
func (p *port) ChannelBinding(id ConnID) wire.Bytes32 {
	var x wire.Bytes32
	x[0], x[1] = byte(id), 0xEE
	if p.n.mitm {
		x[2] = p.id
	}
	return x
}

// drop removes the pending events of connection id that match.
func (n *fakeNet) drop(id ConnID, match func(fevent) bool) {
	n.queue = slices.DeleteFunc(n.queue, func(ev fevent) bool { return ev.conn == id && match(ev) })
}

func (n *fakeNet) gc(c *fconn) {
	if c.state[0] == endDone && c.state[1] == endDone {
		for _, ev := range n.queue {
			if ev.conn == c.id {
				return
			}
		}
		delete(n.conns, c.id)
	}
}

// reset kills connection id: frames in flight are lost and open ends see
// Closed.
func (n *fakeNet) reset(id ConnID) {
	c := n.conns[id]
	if c == nil || c.connecting {
		return
	}
	n.drop(id, func(fevent) bool { return true })
	for e := range 2 {
		if c.state[e] == endOpen {
			c.state[e] = endNotify
			n.queue = append(n.queue, fevent{kind: evClosed, conn: id, to: e})
		}
	}
	n.gc(c)
}

// vanish makes end e of connection id forget it silently, as a crashed
// process's socket does while the other end keeps a half-open connection.
func (n *fakeNet) vanish(id ConnID, e int) {
	c := n.conns[id]
	c.state[e] = endDone
	n.drop(id, func(ev fevent) bool { return ev.to == e })
	n.gc(c)
}

// blocked reports whether an earlier event of the same direction precedes
// event i.
func (n *fakeNet) blocked(i int) bool {
	ev := n.queue[i]
	for _, before := range n.queue[:i] {
		if before.conn == ev.conn && before.to == ev.to {
			return true
		}
	}
	return false
}

// step fires the first pending event; false if there is none.
func (n *fakeNet) step() bool {
	if len(n.queue) == 0 {
		return false
	}
	n.stepAt(0)
	return true
}

// stepAt fires pending event i, which must not be blocked.
func (n *fakeNet) stepAt(i int) {
	if n.blocked(i) {
		n.t.Fatalf("event %d fired out of order", i)
	}
	ev := n.queue[i]
	n.queue = slices.Delete(n.queue, i, i+1)
	c := n.conns[ev.conn]
	switch ev.kind {
	case evConnect:
		dialer, acceptor := n.nodes[c.node[0]], n.nodes[c.node[1]]
		c.connecting = false
		if acceptor == nil || n.down[c.node[1]] {
			c.state = [2]endState{endDone, endDone}
			n.gc(c)
			dialer.DialFailed(c.id)
			return
		}
		c.state = [2]endState{endOpen, endOpen}
		acceptor.Accepted(c.id)
		dialer.Connected(c.id)
	case evDeliver:
		if c.state[ev.to] == endOpen {
			n.nodes[c.node[ev.to]].Received(c.id, ev.frame)
		}
	case evClosed:
		if s := c.state[ev.to]; s == endOpen || s == endNotify {
			c.state[ev.to] = endDone
			n.gc(c)
			n.nodes[c.node[ev.to]].Closed(c.id)
		}
		n.gc(c)
	}
}

// run fires events until none is left.
func (n *fakeNet) run() {
	for i := 0; n.step(); i++ {
		if i > 1_000_000 {
			n.t.Fatal("the network does not settle")
		}
	}
}

// openConns returns the connections open at both ends, by id.
func (n *fakeNet) openConns() []*fconn {
	var out []*fconn
	for _, c := range n.conns {
		if c.state[0] == endOpen && c.state[1] == endOpen {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *fconn) int { return int(a.id) - int(b.id) })
	return out
}

// rogue is a hand-driven node: the test plays a peer byte by byte.
type rogue struct {
	n        *fakeNet
	id       uint8
	accepted []ConnID
	frames   map[ConnID][][]byte
	closed   map[ConnID]bool
	failed   map[ConnID]bool
	conned   map[ConnID]bool
}

func (n *fakeNet) addRogue(id uint8) *rogue {
	r := &rogue{n: n, id: id, frames: map[ConnID][][]byte{}, closed: map[ConnID]bool{},
		failed: map[ConnID]bool{}, conned: map[ConnID]bool{}}
	n.nodes[id] = r
	return r
}

func (r *rogue) Connected(c ConnID)  { r.conned[c] = true }
func (r *rogue) DialFailed(c ConnID) { r.failed[c] = true }
func (r *rogue) Accepted(c ConnID)   { r.accepted = append(r.accepted, c) }
func (r *rogue) Closed(c ConnID)     { r.closed[c] = true }
func (r *rogue) Received(c ConnID, frame []byte) {
	r.frames[c] = append(r.frames[c], slices.Clone(frame))
}

func (r *rogue) dial(peer uint8) ConnID { return r.n.port(r.id).Dial(peer) }
func (r *rogue) send(c ConnID, frame []byte) {
	if !r.n.port(r.id).Send(c, frame) {
		r.n.t.Fatalf("rogue %d cannot send on %d", r.id, c)
	}
}
func (r *rogue) close(c ConnID) { r.n.port(r.id).Close(c) }

// sink is a Handler that records deliveries and checks that each comes from
// an established peer.
type sink struct {
	t   tb
	b   *Bus
	got []delivery
}

type delivery struct {
	peer  uint8
	frame []byte
}

func (s *sink) Deliver(peer uint8, frame []byte) {
	if !s.b.Established(peer) {
		s.t.Fatalf("replica %d: delivery from peer %d, not established", s.b.cfg.Replica, peer)
	}
	s.got = append(s.got, delivery{peer, slices.Clone(frame)})
}

// Test fixtures.

func rngFor(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6275)) }

var (
	testCluster = wire.ClusterID("iggy-cluster")
	secretOld   = []byte("old-shared-secret-of-at-least-32-bytes")
	secretNew   = []byte("new-shared-secret-of-at-least-32-bytes")
	secretOther = []byte("someone-elses-secret-at-least-32-bytes")
)

func testConfig(replica, count uint8) Config {
	cfg := DefaultConfig(testCluster, replica, count)
	cfg.PeerQueueFramesMax = 32
	cfg.FrameSizeMax = 1 << 20
	return cfg
}

func authConfig(replica, count uint8) Config {
	cfg := testConfig(replica, count)
	cfg.Auth = true
	cfg.Secret = secretOld
	return cfg
}

// cluster is a set of buses on one fake network.
type cluster struct {
	t     tb
	n     *fakeNet
	buses [ReplicasMax]*Bus
	sinks [ReplicasMax]*sink
}

func newCluster(t tb) *cluster {
	return &cluster{t: t, n: newFakeNet(t)}
}

// add puts a bus with cfg on the network; its nonces come from seed.
func (c *cluster) add(cfg Config, seed uint64) *Bus {
	s := &sink{t: c.t}
	b := New(cfg, c.n.port(cfg.Replica), rand.New(rand.NewPCG(seed, uint64(cfg.Replica))), s)
	s.b = b
	c.buses[cfg.Replica], c.sinks[cfg.Replica] = b, s
	c.n.nodes[cfg.Replica] = b
	return b
}

// tick ticks every bus k times, settling the network after each round, and
// checks every bus's invariants.
func (c *cluster) tick(k int) {
	for range k {
		for _, b := range c.buses {
			if b != nil {
				b.Tick()
			}
		}
		c.n.run()
		c.check()
	}
}

func (c *cluster) check() {
	for _, b := range c.buses {
		if b != nil {
			if err := b.checkInvariants(); err != nil {
				c.t.Fatalf("replica %d: %v", b.cfg.Replica, err)
			}
		}
	}
}

// commit builds a valid Commit frame from replica.
func commit(replica uint8, n uint64) []byte {
	return wire.BuildFrame(&wire.CommitHeader{Prefix: wire.Prefix{Cluster: testCluster, Command: wire.CommandCommit,
		Replica: replica}, Commit: n, Group: wire.MetadataGroup}, nil)
}

// handshakeFrame builds a handshake frame as a peer would send it.
func handshakeFrame(c wire.Command, cluster wire.U128, replica uint8, nonce, mac wire.Bytes32,
	status wire.HandshakeStatus) []byte {
	return wire.BuildFrame(&wire.HandshakeHeader{Prefix: wire.Prefix{Cluster: cluster, Command: c, Replica: replica},
		Nonce: nonce, MAC: mac, Status: status}, nil)
}

func someNonce(b byte) wire.Bytes32 {
	var n wire.Bytes32
	for i := range n {
		n[i] = b + byte(i)
	}
	return n
}

func decodeHS(t testing.TB, frame []byte) wire.HandshakeHeader {
	t.Helper()
	if len(frame) != wire.HeaderSize {
		t.Fatalf("handshake frame of %d bytes", len(frame))
	}
	var h wire.HandshakeHeader
	h.Decode(wire.HeaderOf(frame))
	return h
}
