package bus

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/replica/wire/wiresample"
)

func TestMeshDirectionalDialing(t *testing.T) {
	for _, auth := range []bool{false, true} {
		const count = 5
		c := newCluster(t)
		for i := range uint8(count) {
			cfg := testConfig(i, count)
			if auth {
				cfg = authConfig(i, count)
			}
			c.add(cfg, 7)
		}
		c.tick(1)
		// Replica i dialed exactly the replicas above it, in id order.
		for i := range uint8(count) {
			var dials []string
			for _, l := range c.n.log {
				if strings.HasPrefix(l, fmt.Sprintf("%d dial ", i)) {
					dials = append(dials, strings.Fields(l)[2])
				}
			}
			var want []string
			for p := i + 1; p < count; p++ {
				want = append(want, fmt.Sprint(p))
			}
			if !slices.Equal(dials, want) {
				t.Fatalf("auth %v: replica %d dialed %v, want %v", auth, i, dials, want)
			}
		}
		// Every pair has exactly one connection, established at both ends.
		conns := c.n.openConns()
		if len(conns) != count*(count-1)/2 {
			t.Fatalf("%d connections", len(conns))
		}
		pairs := map[[2]uint8]int{}
		for _, fc := range conns {
			if fc.node[0] >= fc.node[1] {
				t.Fatalf("connection %d dialed from %d to %d", fc.id, fc.node[0], fc.node[1])
			}
			pairs[fc.node]++
		}
		for i := range uint8(count) {
			for j := range uint8(count) {
				if i == j {
					continue
				}
				if !c.buses[i].Established(j) {
					t.Fatalf("%d-%d not established", i, j)
				}
				if i < j && pairs[[2]uint8{i, j}] != 1 {
					t.Fatalf("pair %d-%d has %d connections", i, j, pairs[[2]uint8{i, j}])
				}
			}
		}
		// Sweeps with everything connected dial nothing more.
		before := len(c.n.log)
		c.tick(3 * ReconnectTicksDefault)
		for _, l := range c.n.log[before:] {
			if strings.Contains(l, " dial ") {
				t.Fatalf("redial while connected: %s", l)
			}
		}
		// Every replica can reach every other.
		for i := range uint8(count) {
			for j := range uint8(count) {
				if i != j && !c.buses[i].Send(j, commit(i, uint64(j))) {
					t.Fatalf("%d cannot send to %d", i, j)
				}
			}
		}
		c.n.run()
		for i := range uint8(count) {
			if len(c.sinks[i].got) != count-1 {
				t.Fatalf("replica %d got %d frames", i, len(c.sinks[i].got))
			}
		}
	}
}

func TestSingleReplicaDialsNobody(t *testing.T) {
	c := newCluster(t)
	c.add(testConfig(0, 1), 1)
	c.tick(2 * ReconnectTicksDefault)
	if len(c.n.log) != 0 {
		t.Fatalf("calls %v", c.n.log)
	}
}

func TestReconnectAfterClose(t *testing.T) {
	c := newCluster(t)
	b0, b1 := c.add(authConfig(0, 2), 1), c.add(authConfig(1, 2), 2)
	c.tick(1)
	conn := c.n.openConns()[0]
	c.n.reset(conn.id)
	c.n.run()
	c.check()
	if b0.Established(1) || b1.Established(0) {
		t.Fatal("established after a reset")
	}
	if b0.Send(1, commit(0, 1)) {
		t.Fatal("sent without a connection")
	}
	// The next sweep is at tick 1 + ReconnectTicks.
	c.tick(ReconnectTicksDefault - 1)
	if b0.Established(1) {
		t.Fatal("redialed before the sweep")
	}
	c.tick(1)
	if !b0.Established(1) || !b1.Established(0) {
		t.Fatal("not reconnected")
	}
	s0, s1 := b0.Stats().Peers[1], b1.Stats().Peers[0]
	if s0.Dials != 2 || s0.HandshakesOK != 2 || s0.ConnectionsClosed != 1 || s1.ConnectionsClosed != 1 ||
		s1.HandshakesOK != 2 {
		t.Fatalf("stats %+v %+v", s0, s1)
	}
	// A framing error closes the connection from the receiving side, either
	// side; the dialer's sweep reconnects.
	bad := commit(0, 1)
	bad[60] = 30
	for _, from := range []uint8{0, 1} {
		conn = c.n.openConns()[0]
		c.n.port(from).Send(conn.id, bad) // a peer's transport writes garbage
		c.n.run()
		c.check()
		if b0.Established(1) || b1.Established(0) {
			t.Fatalf("garbage from %d: still connected", from)
		}
		c.tick(ReconnectTicksDefault)
		if !b0.Established(1) || !b1.Established(0) {
			t.Fatalf("garbage from %d: not reconnected", from)
		}
	}
	if s0, s1 := b0.Stats().Peers[1], b1.Stats().Peers[0]; s0.WireRejected[wire.ErrCommandUnknown] != 1 ||
		s1.WireRejected[wire.ErrCommandUnknown] != 1 || s0.Dials != 4 {
		t.Fatalf("stats %+v %+v", s0, s1)
	}
}

func TestDialFailedRetries(t *testing.T) {
	c := newCluster(t)
	b0 := c.add(testConfig(0, 2), 1)
	c.n.down[1] = true
	c.n.nodes[1] = nil
	c.tick(1)
	if s := b0.Stats().Peers[1]; s.Dials != 1 || s.DialsFailed != 1 {
		t.Fatalf("stats %+v", s)
	}
	b1 := c.add(testConfig(1, 2), 2)
	c.n.down[1] = false
	c.tick(ReconnectTicksDefault)
	if !b0.Established(1) || !b1.Established(0) {
		t.Fatal("no retry")
	}
}

// TestDuplicateInboundNewestWins: the acceptor keeps a half-open connection
// the dialer has forgotten (its process lost the socket); the dialer's next
// connection replaces it.
func TestDuplicateInboundNewestWins(t *testing.T) {
	for _, auth := range []bool{false, true} {
		c := newCluster(t)
		cfg0, cfg1 := testConfig(0, 2), testConfig(1, 2)
		if auth {
			cfg0, cfg1 = authConfig(0, 2), authConfig(1, 2)
		}
		b0, b1 := c.add(cfg0, 1), c.add(cfg1, 2)
		c.tick(1)
		old := c.n.openConns()[0].id
		// The dialer's end vanishes: it hears Closed, the acceptor hears nothing.
		c.n.vanish(old, 0)
		b0.Closed(old)
		c.check()
		if b0.Established(1) || !b1.Established(0) {
			t.Fatal("setup")
		}
		c.tick(ReconnectTicksDefault)
		if !b0.Established(1) || !b1.Established(0) {
			t.Fatal("not reconnected")
		}
		if got := b1.peers[0].established.id; got == old {
			t.Fatalf("auth %v: the old connection won", auth)
		}
		if s := b1.Stats().Peers[0]; s.ConnectionsReplaced != 1 || s.ConnectionsClosed != 1 || s.HandshakesOK != 2 {
			t.Fatalf("acceptor stats %+v", s)
		}
		// Traffic flows on the new connection, both ways.
		b0.Send(1, commit(0, 1))
		b1.Send(0, commit(1, 2))
		c.n.run()
		if len(c.sinks[0].got) != 1 || len(c.sinks[1].got) != 1 {
			t.Fatal("no traffic on the new connection")
		}
	}
}

func TestDuplicateInboundRogue(t *testing.T) {
	n, b, r, first := acceptorWithRogue(t, testConfig(1, 2), 0)
	r.send(first, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, wire.Bytes32{}, wire.Bytes32{}, 0))
	n.run()
	second := r.dial(1)
	n.run()
	r.send(second, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, wire.Bytes32{}, wire.Bytes32{}, 0))
	n.run()
	if !r.closed[first] || r.closed[second] || b.peers[0].established.id != second {
		t.Fatalf("closed %v", r.closed)
	}
	b.Send(0, commit(1, 1))
	n.run()
	if len(r.frames[second]) != 1 || len(r.frames[first]) != 0 {
		t.Fatal("sent on the wrong connection")
	}
	if err := b.checkInvariants(); err != nil {
		t.Fatal(err)
	}
}

func TestAcceptsPendingBounded(t *testing.T) {
	n := newFakeNet(t)
	r := n.addRogue(0)
	s := &sink{t: t}
	b := New(testConfig(1, 2), n.port(1), nil, s)
	s.b = b
	n.nodes[1] = b
	var ids []ConnID
	for range AcceptsPendingMax + 3 {
		ids = append(ids, r.dial(1))
	}
	n.run()
	st := b.Stats()
	if st.Accepted != AcceptsPendingMax+3 || st.AcceptsRefused != 3 || b.acceptsPending != AcceptsPendingMax {
		t.Fatalf("stats %+v", st)
	}
	for i, id := range ids {
		if r.closed[id] != (i >= AcceptsPendingMax) {
			t.Fatalf("connection %d closed %v", i, r.closed[id])
		}
	}
	if err := b.checkInvariants(); err != nil {
		t.Fatal(err)
	}
}

// establishedWithRogue returns replica 1 of 3 (auth off) with rogue replica
// 0 connected to it.
func establishedWithRogue(t *testing.T) (*fakeNet, *Bus, *sink, *rogue, ConnID) {
	n, b, r, cid := acceptorWithRogue(t, testConfig(1, 3), 0)
	r.send(cid, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, wire.Bytes32{}, wire.Bytes32{}, 0))
	n.run()
	if !b.Established(0) {
		t.Fatal("setup")
	}
	return n, b, b.handler.(*sink), r, cid
}

func TestReceiveEveryConsensusCommand(t *testing.T) {
	n, b, s, r, cid := establishedWithRogue(t)
	frames := wiresample.Frames()
	frames = frames[:len(frames)-2] // the last two are rejects
	want := map[wire.Command]DropRule{}
	delivered := 0
	for _, f := range frames {
		r.send(cid, f)
		c := wire.HeaderOf(f).Command()
		if rule, drop := dispatchRule(c); drop {
			want[c] = rule
		} else {
			delivered++
		}
	}
	n.run()
	if len(s.got) != delivered {
		t.Fatalf("delivered %d of %d", len(s.got), delivered)
	}
	i := 0
	for _, f := range frames {
		if _, drop := want[wire.HeaderOf(f).Command()]; drop {
			continue
		}
		if !bytes.Equal(s.got[i].frame, f) || s.got[i].peer != 0 {
			t.Fatalf("delivery %d differs", i)
		}
		i++
	}
	st := b.Stats().Peers[0]
	// The sample holds a Request, a Reply, an Eviction and the three handshake frames.
	if st.BusDropped[DropRequest] != 1 || st.BusDropped[DropClientBound] != 2 || st.BusDropped[DropHandshake] != 3 {
		t.Fatalf("dropped %v", st.BusDropped)
	}
	if st.FramesReceived != uint64(len(frames)) || st.FramesDelivered != uint64(delivered) {
		t.Fatalf("stats %+v", st)
	}
	if r.closed[cid] {
		t.Fatal("closed")
	}
}

func TestReceiveDrops(t *testing.T) {
	sealBroken := commit(0, 1)
	sealBroken[200] ^= 1
	commitBody := wire.BuildFrame(&wire.CommitHeader{Prefix: wire.Prefix{Cluster: testCluster,
		Command: wire.CommandCommit, Replica: 0}, Commit: 1}, make([]byte, 256))
	prepare := wiresample.Frames()[4]
	if wire.HeaderOf(prepare).Command() != wire.CommandPrepare {
		t.Fatal("sample changed")
	}
	reserved := slices.Clone(prepare)
	reserved[100] = 1
	wire.Finish(reserved) // sealed again: only the reserved rule breaks
	svcRelease := wire.BuildFrame(&wire.StartViewChangeHeader{Prefix: wire.Prefix{Cluster: testCluster,
		Command: wire.CommandStartViewChange, Replica: 0, Release: 1}}, nil)
	ping := commit(0, 1)
	ping[60] = byte(wire.CommandPing)
	replica3 := commit(3, 1) // replica count is 3
	replica200 := commit(200, 1)
	prepareOther := slices.Clone(prepare)
	wire.HeaderOf(prepareOther)[61] = 7
	wire.Finish(prepareOther)

	for _, tc := range []struct {
		name  string
		frame []byte
		rule  wire.Rule
		bus   DropRule
	}{
		{"seal mismatch", sealBroken, wire.ErrSealMismatch, 0},
		{"commit with a body", commitBody, wire.ErrSizeNotHeader, 0},
		{"prepare reserved bytes", reserved, wire.ErrReservedFrameNonzero, 0},
		{"svc release", svcRelease, wire.ErrReleaseNonzero, 0},
		{"ping", ping, 0, DropNotReplicaPlane},
		{"replica 3 of 3", replica3, 0, DropReplicaRange},
		{"replica 200", replica200, 0, DropReplicaRange},
		{"prepare built by replica 7", prepareOther, 0, DropReplicaRange},
	} {
		n, b, s, r, cid := establishedWithRogue(t)
		r.send(cid, tc.frame)
		r.send(cid, commit(0, 9)) // the connection stays up
		n.run()
		if len(s.got) != 1 || !bytes.Equal(s.got[0].frame, commit(0, 9)) || r.closed[cid] {
			t.Fatalf("%s: deliveries %d closed %v", tc.name, len(s.got), r.closed[cid])
		}
		st := b.Stats().Peers[0]
		if tc.rule != 0 && st.WireRejected[tc.rule] != 1 {
			t.Fatalf("%s: rule %v not counted: %v", tc.name, tc.rule, st.WireRejected)
		}
		if tc.rule == 0 && st.BusDropped[tc.bus] != 1 {
			t.Fatalf("%s: %v not counted: %v", tc.name, tc.bus, st.BusDropped)
		}
	}
}

func TestReceiveFramingErrorCloses(t *testing.T) {
	short := commit(0, 1)
	wire.HeaderOf(short).SetSize(100)
	cmd := commit(0, 1)
	cmd[60] = 30
	big := make([]byte, 2<<20)
	copy(big, commit(0, 1))
	wire.HeaderOf(big).SetSize(uint32(len(big)))
	for _, tc := range []struct {
		frame []byte
		rule  wire.Rule
	}{
		{short, wire.ErrSizeBelowHeader}, {cmd, wire.ErrCommandUnknown}, {big, wire.ErrSizeAboveMax},
		{short[:100], wire.ErrTruncated},
	} {
		n, b, s, r, cid := establishedWithRogue(t)
		r.send(cid, tc.frame)
		r.send(cid, commit(0, 9)) // never read: the connection is gone
		n.run()
		if !r.closed[cid] || b.Established(0) || len(s.got) != 0 {
			t.Fatalf("%v: not closed", tc.rule)
		}
		st := b.Stats().Peers[0]
		if st.WireRejected[tc.rule] != 1 || st.ConnectionsClosed != 1 {
			t.Fatalf("%v: stats %v", tc.rule, st.WireRejected)
		}
	}
}

func TestSendNotEstablished(t *testing.T) {
	c := newCluster(t)
	b0 := c.add(testConfig(0, 3), 1)
	if b0.Send(2, commit(0, 1)) {
		t.Fatal("sent")
	}
	c.tick(1) // dials 1 and 2: nobody listens
	if b0.Send(1, commit(0, 1)) || b0.Send(2, commit(0, 1)) {
		t.Fatal("sent")
	}
	if st := b0.Stats(); st.Peers[1].SendDropped[SendDropNotEstablished] != 1 ||
		st.Peers[2].SendDropped[SendDropNotEstablished] != 2 || st.Peers[2].FramesSent != 0 {
		t.Fatalf("stats %+v", st.Peers)
	}
}

func TestSendQueueFull(t *testing.T) {
	c := newCluster(t)
	b0, _ := c.add(testConfig(0, 2), 1), c.add(testConfig(1, 2), 2)
	c.tick(1)
	queue := b0.cfg.PeerQueueFramesMax
	for i := range queue {
		if !b0.Send(1, commit(0, uint64(i))) {
			t.Fatalf("frame %d dropped", i)
		}
	}
	for range 3 {
		if b0.Send(1, commit(0, 999)) {
			t.Fatal("queue overran")
		}
	}
	st := b0.Stats().Peers[1]
	if st.FramesSent != uint64(queue) || st.SendDropped[SendDropQueueFull] != 3 {
		t.Fatalf("stats %+v", st)
	}
	// One delivery frees one slot.
	c.n.step()
	if !b0.Send(1, commit(0, 1000)) || b0.Send(1, commit(0, 1001)) {
		t.Fatal("slot not freed")
	}
	c.n.run()
	if got := len(c.sinks[1].got); got != queue+1 {
		t.Fatalf("delivered %d", got)
	}
}

// refusingPort refuses every frame after the first allow, as a transport
// whose connection died (before the Closed event) does.
type refusingPort struct {
	*port
	allow int
}

func (p *refusingPort) Send(c ConnID, frame []byte) bool {
	if p.allow <= 0 {
		return false
	}
	p.allow--
	return p.port.Send(c, frame)
}

func TestSendTransportRefused(t *testing.T) {
	n := newFakeNet(t)
	r := n.addRogue(1)
	p := &refusingPort{port: n.port(0), allow: 1}
	s := &sink{t: t}
	b := New(testConfig(0, 2), p, nil, s)
	s.b = b
	n.nodes[0] = b
	b.Tick()
	n.run()
	if !b.Established(1) || len(r.frames) != 1 {
		t.Fatal("setup")
	}
	if b.Send(1, commit(0, 1)) || b.Stats().Peers[1].SendDropped[SendDropTransport] != 1 {
		t.Fatal("refusal not counted")
	}
}

func TestSendProgrammerErrors(t *testing.T) {
	c := newCluster(t)
	b0, _ := c.add(testConfig(0, 2), 1), c.add(testConfig(1, 2), 2)
	c.tick(1)
	huge := make([]byte, b0.cfg.FrameSizeMax+256)
	copy(huge, commit(0, 1))
	wire.HeaderOf(huge).SetSize(uint32(len(huge)))
	wrongSize := commit(0, 1)
	wrongSize = append(wrongSize, 0)
	for name, f := range map[string]func(){
		"too big":    func() { b0.Send(1, huge) },
		"size field": func() { b0.Send(1, wrongSize) },
		"handshake": func() {
			b0.Send(1, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, wire.Bytes32{}, wire.Bytes32{}, 0))
		},
		"reply":       func() { b0.Send(1, wiresample.Frames()[7]) },
		"request":     func() { b0.Send(1, wiresample.Frames()[3]) },
		"replica 2":   func() { b0.Send(1, commit(2, 1)) },
		"to self":     func() { b0.Send(0, commit(0, 1)) },
		"to nobody":   func() { b0.Send(2, commit(0, 1)) },
		"established": func() { b0.Established(5) },
	} {
		if !panics(f) {
			t.Errorf("%s: no panic", name)
		}
	}
	if c := wire.HeaderOf(wiresample.Frames()[7]).Command(); c != wire.CommandReply {
		t.Fatalf("sample frame 7 is %v", c)
	}
	if c := wire.HeaderOf(wiresample.Frames()[3]).Command(); c != wire.CommandRequest {
		t.Fatalf("sample frame 3 is %v", c)
	}
}

func panics(f func()) (did bool) {
	defer func() { did = recover() != nil }()
	f()
	return false
}

func TestConfigValidation(t *testing.T) {
	ok := authConfig(0, 3)
	for name, mut := range map[string]func(*Config){
		"count 0":        func(c *Config) { c.ReplicaCount = 0 },
		"count 33":       func(c *Config) { c.ReplicaCount = 33 },
		"replica":        func(c *Config) { c.Replica = 3 },
		"short secret":   func(c *Config) { c.Secret = []byte("short") },
		"short previous": func(c *Config) { c.PreviousSecret = []byte("short") },
		"tls no auth":    func(c *Config) { c.Auth, c.TLS = false, true },
		"queue":          func(c *Config) { c.PeerQueueFramesMax = 0 },
		"frame size":     func(c *Config) { c.FrameSizeMax = 255 },
		"reconnect":      func(c *Config) { c.ReconnectTicks = 0 },
		"grace":          func(c *Config) { c.HandshakeGraceTicks = -1 },
	} {
		cfg := ok
		mut(&cfg)
		if !panics(func() { New(cfg, newFakeNet(t).port(0), rngFor(1), &sink{}) }) {
			t.Errorf("%s: accepted", name)
		}
	}
	if !panics(func() { New(ok, newFakeNet(t).port(0), nil, &sink{}) }) {
		t.Error("auth without rng accepted")
	}
	tls := ok
	tls.TLS = true
	if !panics(func() { New(tls, struct{ Transport }{newFakeNet(t).port(0)}, rngFor(1), &sink{}) }) {
		t.Error("TLS on a transport without binding accepted")
	}
	New(ok, newFakeNet(t).port(0), rngFor(1), &sink{})
}

func TestStaleEvents(t *testing.T) {
	c := newCluster(t)
	b0 := c.add(testConfig(0, 2), 1)
	b0.Received(99, commit(1, 1))
	b0.Closed(99)
	b0.DialFailed(99)
	if got := b0.Stats().StaleEvents; got != 3 {
		t.Fatalf("stale %d", got)
	}
	// Connected for an abandoned dial closes it.
	b0.Connected(98)
	if got := c.n.log[len(c.n.log)-1]; got != "0 close 98" {
		t.Fatalf("last call %q", got)
	}
}

func TestTransportContractViolations(t *testing.T) {
	c := newCluster(t)
	b1 := c.add(testConfig(1, 2), 1)
	b1.Accepted(5)
	if !panics(func() { b1.Accepted(5) }) {
		t.Error("reused id accepted")
	}
	if !panics(func() { b1.Connected(5) }) {
		t.Error("Connected for an inbound connection")
	}
	b1 = c.add(testConfig(1, 2), 1)
	b1.handler = reenter{b1}
	b1.Accepted(6)
	b1.Received(6, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, wire.Bytes32{}, wire.Bytes32{}, 0))
	if !panics(func() { b1.Received(6, commit(0, 1)) }) {
		t.Error("re-entry allowed")
	}
}

type reenter struct{ b *Bus }

func (r reenter) Deliver(uint8, []byte) { r.b.Tick() }

// TestDeterminism runs one scripted story twice with the same seeds and
// compares every transport call; a different nonce seed changes the bytes.
func TestDeterminism(t *testing.T) {
	story := func(seed uint64) []string {
		c := newCluster(t)
		for i := range uint8(4) {
			cfg := authConfig(i, 4)
			cfg.PreviousSecret = secretNew
			c.add(cfg, seed)
		}
		c.tick(1)
		for k := range 20 {
			for i := range uint8(4) {
				c.buses[i].Send((i+1+uint8(k)%3)%4, commit(i, uint64(k)))
			}
			if k%5 == 0 {
				conns := c.n.openConns()
				c.n.reset(conns[k%len(conns)].id)
			}
			c.n.run()
			c.tick(200)
		}
		return c.n.log
	}
	a, b := story(1), story(1)
	if !slices.Equal(a, b) {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("call %d differs: %q vs %q", i, a[i], b[i])
			}
		}
		t.Fatalf("lengths %d vs %d", len(a), len(b))
	}
	if slices.Equal(a, story(2)) {
		t.Fatal("the nonce seed changes nothing")
	}
}

// echo answers its first delivery with a frame of its own, from inside Deliver.
type echo struct {
	b   *Bus
	got int
}

func (e *echo) Deliver(peer uint8, frame []byte) {
	e.got++
	if e.got == 1 && !e.b.Send(peer, commit(e.b.cfg.Replica, 1)) {
		panic("send from Deliver refused")
	}
}

func TestSendFromDeliver(t *testing.T) {
	c := newCluster(t)
	b0, b1 := c.add(testConfig(0, 2), 1), c.add(testConfig(1, 2), 2)
	e0, e1 := &echo{b: b0}, &echo{b: b1}
	b0.handler, b1.handler = e0, e1
	c.tick(1)
	b0.Send(1, commit(0, 1))
	c.n.run()
	if e1.got != 2 || e0.got != 1 {
		t.Fatalf("deliveries %d %d", e0.got, e1.got)
	}
}

// nullPort is a Transport that accepts everything and keeps nothing.
type nullPort struct{}

func (nullPort) Dial(uint8) ConnID                  { return 1 }
func (nullPort) Send(ConnID, []byte) bool           { return true }
func (nullPort) Close(ConnID)                       {}
func (nullPort) InFlight(ConnID) int                { return 0 }
func (nullPort) ChannelBinding(ConnID) wire.Bytes32 { return wire.Bytes32{} }

type countSink struct{ n int }

func (s *countSink) Deliver(uint8, []byte) { s.n++ }

func TestSteadyPathDoesNotAllocate(t *testing.T) {
	s := &countSink{}
	b := New(testConfig(1, 2), nullPort{}, nil, s)
	b.Accepted(7)
	b.Received(7, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, wire.Bytes32{}, wire.Bytes32{}, 0))
	in, out := commit(0, 1), commit(1, 2)
	if allocs := testing.AllocsPerRun(100, func() {
		b.Received(7, in)
		b.Send(0, out)
	}); allocs != 0 {
		t.Fatalf("%v allocations per frame", allocs)
	}
	if s.n != 101 {
		t.Fatalf("%d deliveries", s.n)
	}
}
