package bus

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Limits and Iggy's defaults (wire.md 1 and 11), in 10 ms ticks where timed.
const (
	// ReplicasMax is Iggy's REPLICAS_MAX.
	ReplicasMax = 32
	// ReconnectTicksDefault is message_bus.reconnect_period (5 s).
	ReconnectTicksDefault = 500
	// HandshakeGraceTicksDefault is message_bus.handshake_grace (10 s).
	HandshakeGraceTicksDefault = 1000
	// PeerQueueFramesMaxDefault is message_bus.peer_queue_capacity.
	PeerQueueFramesMaxDefault = 256
	// AcceptsPendingMax bounds the inbound connections whose handshake is in
	// progress at once; a connection accepted beyond it is closed at once.
	// Honest peers never have more than one each in progress.
	AcceptsPendingMax = 2 * ReplicasMax
)

// ConnID names one connection of the transport. The transport never reuses an
// id while the bus may still hear of the connection.
type ConnID uint64

// Transport is what the bus needs from the network. The cluster harness adapts
// the simulated network to it (a real TCP transport could later). Connection
// events come back through the Bus's event methods, never from inside a
// Transport call: a Transport must not call into the Bus.
type Transport interface {
	// Dial starts a connection to replica peer's replica port and returns its
	// id at once; Connected or DialFailed follows as a later event.
	Dial(peer uint8) ConnID
	// Send queues one whole frame on an open connection (the transport copies
	// it) and reports whether it did; false if c is not open.
	Send(c ConnID, frame []byte) bool
	// Close closes c (a dial in progress is abandoned). The transport reports
	// nothing more about c afterwards; Close of a closed c does nothing.
	Close(c ConnID)
	// InFlight returns the frames sent on c and not yet delivered or lost:
	// the socket's send queue.
	InFlight(c ConnID) int
}

// ChannelBinder is what a Transport that wraps connections in TLS 1.3 also
// implements when Config.TLS is set: the channel binding folded into every
// handshake MAC (wire.md 6.5).
type ChannelBinder interface {
	// ChannelBinding returns c's RFC 8446 exporter, label
	// wire.TLSExporterLabel, no context, 32 bytes. Both ends of one TLS
	// session see the same value.
	ChannelBinding(c ConnID) wire.Bytes32
}

// Handler receives every consensus frame that passed the bus from an
// established peer connection, in arrival order, exactly once. frame is valid
// only during the call. Deliver may call Bus.Send, Bus.Established and
// Bus.Stats, and no other Bus method.
type Handler interface {
	Deliver(peer uint8, frame []byte)
}

// Config configures one replica's bus.
type Config struct {
	// Cluster is the cluster id (wire.ClusterID of the cluster's name).
	Cluster wire.U128
	// Replica is this replica's id, below ReplicaCount.
	Replica uint8
	// ReplicaCount is the roster size, 1..ReplicasMax.
	ReplicaCount uint8
	// Auth enables the authenticated handshake (cluster.auth.enabled).
	Auth bool
	// Secret is cluster.auth.shared_secret: raw bytes, at least
	// wire.SharedSecretMinLen when Auth is set; ignored otherwise.
	Secret []byte
	// PreviousSecret is cluster.auth.previous_shared_secret, accepted for
	// verification only; empty means no rotation window.
	PreviousSecret []byte
	// TLS folds the transport's channel binding into every MAC (cluster.tls);
	// it requires Auth and a Transport that implements ChannelBinder.
	TLS bool
	// PeerQueueFramesMax is message_bus.peer_queue_capacity: a send is
	// dropped when that many frames are in flight to the peer.
	PeerQueueFramesMax int
	// FrameSizeMax is message_bus.max_message_size, at least wire.HeaderSize.
	FrameSizeMax uint32
	// ReconnectTicks is the reconnect sweep period.
	ReconnectTicks int
	// HandshakeGraceTicks bounds a whole handshake, dial included.
	HandshakeGraceTicks int
}

// DefaultConfig returns Iggy's defaults for replica of a cluster of count,
// without auth.
func DefaultConfig(cluster wire.U128, replica, count uint8) Config {
	return Config{
		Cluster:             cluster,
		Replica:             replica,
		ReplicaCount:        count,
		PeerQueueFramesMax:  PeerQueueFramesMaxDefault,
		FrameSizeMax:        wire.MaxFrameSizeDefault,
		ReconnectTicks:      ReconnectTicksDefault,
		HandshakeGraceTicks: HandshakeGraceTicksDefault,
	}
}

func (cfg *Config) validate() error {
	switch {
	case cfg.ReplicaCount == 0 || cfg.ReplicaCount > ReplicasMax:
		return fmt.Errorf("replica count %d outside 1..%d", cfg.ReplicaCount, ReplicasMax)
	case cfg.Replica >= cfg.ReplicaCount:
		return fmt.Errorf("replica %d not below replica count %d", cfg.Replica, cfg.ReplicaCount)
	case cfg.Auth && len(cfg.Secret) < wire.SharedSecretMinLen:
		return fmt.Errorf("shared secret of %d bytes, want at least %d", len(cfg.Secret), wire.SharedSecretMinLen)
	case cfg.Auth && len(cfg.PreviousSecret) != 0 && len(cfg.PreviousSecret) < wire.SharedSecretMinLen:
		return fmt.Errorf("previous shared secret of %d bytes, want 0 or at least %d", len(cfg.PreviousSecret),
			wire.SharedSecretMinLen)
	case cfg.TLS && !cfg.Auth:
		return errors.New("TLS requires auth")
	case cfg.PeerQueueFramesMax <= 0:
		return fmt.Errorf("peer queue of %d frames", cfg.PeerQueueFramesMax)
	case cfg.FrameSizeMax < wire.HeaderSize:
		return fmt.Errorf("frame size max %d below the header size", cfg.FrameSizeMax)
	case cfg.ReconnectTicks <= 0:
		return fmt.Errorf("reconnect period of %d ticks", cfg.ReconnectTicks)
	case cfg.HandshakeGraceTicks <= 0:
		return fmt.Errorf("handshake grace of %d ticks", cfg.HandshakeGraceTicks)
	}
	return nil
}

type role uint8

const (
	roleDialer role = iota + 1
	roleAcceptor
)

type phase uint8

const (
	phaseDialing        phase = iota + 1 // dialer: Dial issued, Connected or DialFailed to come
	phaseAwaitChallenge                  // dialer, auth on: Hello sent
	phaseAwaitHello                      // acceptor: nothing read yet
	phaseAwaitFinish                     // acceptor, auth on: Challenge sent
	phaseEstablished                     // handshake complete: consensus traffic both ways
)

// conn is one connection the bus tracks.
type conn struct {
	id    ConnID
	role  role
	phase phase
	// peer is the replica at the other end: the dialed one, or for an
	// inbound connection the one its Hello named (valid once peerKnown).
	peer      uint8
	peerKnown bool
	// deadlineTick is when an unfinished handshake is abandoned.
	deadlineTick uint64
	nonceD       wire.Bytes32
	nonceA       wire.Bytes32
}

// peerState is what the bus knows of one peer.
type peerState struct {
	established *conn // the pair's connection, or nil
	outbound    *conn // a dial or outbound handshake in progress (higher peers only), or nil
	stats       PeerStats
}

// Bus is one replica's message bus. It is not safe for concurrent use; every
// method runs on the simulation's one goroutine.
type Bus struct {
	cfg     Config
	t       Transport
	binder  ChannelBinder // non-nil when cfg.TLS
	rng     *rand.Rand
	handler Handler

	key     wire.Bytes32  // MAC key from Secret (signs and verifies)
	prevKey *wire.Bytes32 // from PreviousSecret (verifies only), or nil

	nowTick       uint64
	nextSweepTick uint64

	conns          []*conn // every tracked connection, in the order the bus learned of it
	byID           map[ConnID]*conn
	peers          []peerState // indexed by replica id
	acceptsPending int         // acceptor connections not yet established

	stats   Stats // Peers left nil: per-peer counters live in peers
	inEvent bool
	scratch wire.Header // handshake frames are built here; the transport copies them
}

// New returns the bus of replica cfg.Replica. rng supplies the handshake
// nonces (it must be non-nil when cfg.Auth is set); h receives consensus
// frames. A bad configuration is a programmer error and panics.
func New(cfg Config, t Transport, rng *rand.Rand, h Handler) *Bus {
	if err := cfg.validate(); err != nil {
		panic("bus: " + err.Error())
	}
	if t == nil || h == nil {
		panic("bus: nil transport or handler")
	}
	if cfg.Auth && rng == nil {
		panic("bus: auth needs a random source for nonces")
	}
	b := &Bus{
		cfg:           cfg,
		t:             t,
		rng:           rng,
		handler:       h,
		nextSweepTick: 1,
		byID:          make(map[ConnID]*conn),
		peers:         make([]peerState, cfg.ReplicaCount),
	}
	// The config's byte slices are the caller's: keep only derived keys.
	b.cfg.Secret, b.cfg.PreviousSecret = nil, nil
	if cfg.Auth {
		b.key = wire.DeriveMACKey(cfg.Secret)
		if len(cfg.PreviousSecret) != 0 {
			prev := wire.DeriveMACKey(cfg.PreviousSecret)
			b.prevKey = &prev
		}
	}
	if cfg.TLS {
		binder, ok := t.(ChannelBinder)
		if !ok {
			panic("bus: TLS configured on a transport without channel binding")
		}
		b.binder = binder
	}
	return b
}

func (b *Bus) enter() {
	if b.inEvent {
		panic("bus: event method re-entered (a Transport or Handler must not call it)")
	}
	b.inEvent = true
}

func (b *Bus) leave() { b.inEvent = false }

// Tick advances the bus by one tick: it abandons handshakes past their grace,
// then, on the first tick and every ReconnectTicks after it, dials every
// higher peer without an established or in-progress connection.
func (b *Bus) Tick() {
	b.enter()
	defer b.leave()
	b.nowTick++
	for i := 0; i < len(b.conns); {
		x := b.conns[i]
		if x.phase != phaseEstablished && b.nowTick >= x.deadlineTick {
			b.fail(x, FailTimeout) // removes b.conns[i]
			continue
		}
		i++
	}
	if b.nowTick >= b.nextSweepTick {
		b.nextSweepTick = b.nowTick + uint64(b.cfg.ReconnectTicks)
		b.sweep()
	}
}

// sweep dials, in id order, every higher peer with no connection.
func (b *Bus) sweep() {
	for p := int(b.cfg.Replica) + 1; p < len(b.peers); p++ {
		ps := &b.peers[p]
		if ps.established != nil || ps.outbound != nil {
			continue
		}
		id := b.t.Dial(uint8(p))
		x := &conn{id: id, role: roleDialer, phase: phaseDialing, peer: uint8(p), peerKnown: true,
			deadlineTick: b.nowTick + uint64(b.cfg.HandshakeGraceTicks)}
		b.track(x)
		ps.outbound = x
		ps.stats.Dials++
	}
}

func (b *Bus) track(x *conn) {
	if b.byID[x.id] != nil {
		panic(fmt.Sprintf("bus: connection id %d reused", x.id))
	}
	b.byID[x.id] = x
	b.conns = append(b.conns, x)
}

// Connected reports that the dial c completed. The dialer sends its Hello;
// without auth the connection is established at once (wire.md 6.4).
func (b *Bus) Connected(c ConnID) {
	b.enter()
	defer b.leave()
	x := b.byID[c]
	if x == nil {
		// A dial the bus abandoned: make sure the transport lets it go.
		b.stats.StaleEvents++
		b.t.Close(c)
		return
	}
	if x.role != roleDialer || x.phase != phaseDialing {
		panic(fmt.Sprintf("bus: Connected for connection %d in phase %d", c, x.phase))
	}
	b.dialerStart(x)
}

// DialFailed reports that the dial c was refused. The next sweep retries.
func (b *Bus) DialFailed(c ConnID) {
	b.enter()
	defer b.leave()
	x := b.byID[c]
	if x == nil {
		b.stats.StaleEvents++
		return
	}
	if x.role != roleDialer || x.phase != phaseDialing {
		panic(fmt.Sprintf("bus: DialFailed for connection %d in phase %d", c, x.phase))
	}
	b.peers[x.peer].stats.DialsFailed++
	b.forget(x)
}

// Accepted reports an inbound connection on the replica port. Its peer is
// unknown until its Hello.
func (b *Bus) Accepted(c ConnID) {
	b.enter()
	defer b.leave()
	b.stats.Accepted++
	if b.acceptsPending >= AcceptsPendingMax {
		if b.byID[c] != nil {
			panic(fmt.Sprintf("bus: connection id %d reused", c))
		}
		b.stats.AcceptsRefused++
		b.t.Close(c)
		return
	}
	b.track(&conn{id: c, role: roleAcceptor, phase: phaseAwaitHello,
		deadlineTick: b.nowTick + uint64(b.cfg.HandshakeGraceTicks)})
	b.acceptsPending++
}

// Received delivers one whole frame read from c, as the transport delimited
// it by its size field. frame is only read during the call.
func (b *Bus) Received(c ConnID, frame []byte) {
	b.enter()
	defer b.leave()
	x := b.byID[c]
	if x == nil {
		b.stats.StaleEvents++
		return
	}
	switch x.phase {
	case phaseEstablished:
		b.receive(x, frame)
	case phaseAwaitHello:
		b.onHello(x, frame)
	case phaseAwaitFinish:
		b.onFinish(x, frame)
	case phaseAwaitChallenge:
		b.onChallenge(x, frame)
	default:
		panic(fmt.Sprintf("bus: frame received on connection %d before it connected", c))
	}
}

// Closed reports that c is gone (reset, closed by the peer, or the peer went
// down). It is not expected for a connection the bus closed itself.
func (b *Bus) Closed(c ConnID) {
	b.enter()
	defer b.leave()
	x := b.byID[c]
	if x == nil {
		b.stats.StaleEvents++
		return
	}
	if x.phase != phaseEstablished {
		b.countFailure(x, FailClosed)
	}
	b.forget(x)
}

// receive runs the post-handshake checks of wire.md 1.1 and 4.1 on one frame
// and delivers it if it passes.
func (b *Bus) receive(x *conn, frame []byte) {
	ps := &b.peers[x.peer]
	ps.stats.FramesReceived++
	if err := wire.CheckFraming(frame, b.cfg.FrameSizeMax); err != nil {
		ps.stats.WireRejected[ruleOf(err)]++
		b.close(x)
		return
	}
	h := wire.HeaderOf(frame)
	if rule, drop := dispatchRule(h.Command()); drop {
		ps.stats.BusDropped[rule]++
		return
	}
	if err := wire.Validate(frame); err != nil {
		ps.stats.WireRejected[ruleOf(err)]++
		return
	}
	if h.Replica() >= b.cfg.ReplicaCount {
		ps.stats.BusDropped[DropReplicaRange]++
		return
	}
	ps.stats.FramesDelivered++
	b.handler.Deliver(x.peer, frame)
}

// dispatchRule is wire.md 4.1 step 3 plus section 15: the commands a replica
// drops before any typed decode.
func dispatchRule(c wire.Command) (DropRule, bool) {
	switch {
	case c < wire.CommandRequest:
		return DropNotReplicaPlane, true
	case c == wire.CommandRequest:
		return DropRequest, true
	case c.IsClientBound():
		return DropClientBound, true
	case c.IsHandshake():
		return DropHandshake, true
	}
	return 0, false
}

// isConsensus reports whether c is a frame one replica sends another after
// the handshake.
func isConsensus(c wire.Command) bool {
	_, drop := dispatchRule(c)
	return c.Valid() && !drop
}

// ruleOf returns the wire rule an error of the wire codec wraps.
func ruleOf(err error) wire.Rule {
	var r wire.Rule
	if !errors.As(err, &r) {
		panic("bus: wire error without a rule: " + err.Error())
	}
	return r
}

// Send hands frame to the transport for peer and reports whether it did. It
// drops the frame silently (returns false and counts it) when the peer has no
// established connection, when PeerQueueFramesMax frames are already in
// flight to it, or when the transport refuses it. frame must be a finished
// consensus frame (wire.Finish) within FrameSizeMax whose replica field is
// below ReplicaCount, to a peer other than this replica; anything else is a
// programmer error and panics. The transport copies frame.
func (b *Bus) Send(peer uint8, frame []byte) bool {
	b.checkPeer(peer)
	if err := wire.CheckFraming(frame, b.cfg.FrameSizeMax); err != nil {
		panic("bus: sending a malformed frame: " + err.Error())
	}
	h := wire.HeaderOf(frame)
	if !isConsensus(h.Command()) {
		panic("bus: sending a " + h.Command().String() + " frame to a replica")
	}
	if h.Replica() >= b.cfg.ReplicaCount {
		panic(fmt.Sprintf("bus: sending a frame with replica %d >= replica count %d", h.Replica(),
			b.cfg.ReplicaCount))
	}
	ps := &b.peers[peer]
	x := ps.established
	switch {
	case x == nil:
		ps.stats.SendDropped[SendDropNotEstablished]++
		return false
	case b.t.InFlight(x.id) >= b.cfg.PeerQueueFramesMax:
		ps.stats.SendDropped[SendDropQueueFull]++
		return false
	case !b.t.Send(x.id, frame):
		ps.stats.SendDropped[SendDropTransport]++
		return false
	}
	ps.stats.FramesSent++
	return true
}

// Established reports whether peer has an established connection.
func (b *Bus) Established(peer uint8) bool {
	b.checkPeer(peer)
	return b.peers[peer].established != nil
}

func (b *Bus) checkPeer(peer uint8) {
	if peer >= b.cfg.ReplicaCount || peer == b.cfg.Replica {
		panic(fmt.Sprintf("bus: replica %d of %d has no peer %d", b.cfg.Replica, b.cfg.ReplicaCount, peer))
	}
}

// Stats returns a snapshot of the counters.
func (b *Bus) Stats() Stats {
	s := b.stats
	s.Peers = make([]PeerStats, len(b.peers))
	for i := range b.peers {
		s.Peers[i] = b.peers[i].stats
	}
	return s
}

// PeerStats returns peer's counters alone, without the copy of every
// peer's that Stats makes: a harness that compares them around each frame it
// delivers learns what the bus did with that frame (passed it on, refused it
// by which rule, closed the connection).
func (b *Bus) PeerStats(peer uint8) PeerStats {
	b.checkPeer(peer)
	return b.peers[peer].stats
}

// Now returns the number of ticks the bus has seen.
func (b *Bus) Now() uint64 { return b.nowTick }

// forget drops every reference to x. It does not close x in the transport.
func (b *Bus) forget(x *conn) {
	if b.byID[x.id] != x {
		panic(fmt.Sprintf("bus: forgetting untracked connection %d", x.id))
	}
	delete(b.byID, x.id)
	for i, y := range b.conns {
		if y == x {
			b.conns = slices.Delete(b.conns, i, i+1)
			break
		}
	}
	switch {
	case x.phase == phaseEstablished:
		ps := &b.peers[x.peer]
		if ps.established != x {
			panic(fmt.Sprintf("bus: established connection %d is not peer %d's", x.id, x.peer))
		}
		ps.established = nil
		ps.stats.ConnectionsClosed++
	case x.role == roleDialer:
		ps := &b.peers[x.peer]
		if ps.outbound != x {
			panic(fmt.Sprintf("bus: dial %d is not peer %d's", x.id, x.peer))
		}
		ps.outbound = nil
	default:
		b.acceptsPending--
	}
	x.phase = 0
}

// close forgets x and closes it in the transport.
func (b *Bus) close(x *conn) {
	b.forget(x)
	b.t.Close(x.id)
}

// fail abandons x's handshake for reason f.
func (b *Bus) fail(x *conn, f HandshakeFailure) {
	b.countFailure(x, f)
	b.close(x)
}

func (b *Bus) countFailure(x *conn, f HandshakeFailure) {
	if x.peerKnown {
		b.peers[x.peer].stats.HandshakeFailures[f]++
	} else {
		b.stats.HandshakeFailuresAnonymous[f]++
	}
}

// establish completes x's handshake. On an inbound connection from a peer
// that already has one, the newer connection wins (see the package comment).
func (b *Bus) establish(x *conn) {
	ps := &b.peers[x.peer]
	switch x.role {
	case roleDialer:
		if ps.outbound != x || ps.established != nil {
			panic(fmt.Sprintf("bus: outbound connection %d to %d established out of turn", x.id, x.peer))
		}
		ps.outbound = nil
	case roleAcceptor:
		b.acceptsPending--
		if old := ps.established; old != nil {
			ps.stats.ConnectionsReplaced++
			b.close(old)
		}
	}
	x.phase = phaseEstablished
	x.nonceD, x.nonceA = wire.Bytes32{}, wire.Bytes32{}
	ps.established = x
	ps.stats.HandshakesOK++
}
