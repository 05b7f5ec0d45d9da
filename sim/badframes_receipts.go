package sim

import (
	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/bus"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// peerReceipts hands every frame a replica reads from a peer to the
// replica's bus, and tells the checker what the bus did with it
// (checker.Receipt): the receiver's per-peer counters before and after
// the call (replica/bus PeerStats: counted, passed on, refused by which
// rule, connection closed), the events it emitted during the call, and,
// for a frame the bad-frames nemesis injected, the frames it sent and the
// disk I/Os it started. The delivery is one synchronous call, so what
// changed during it is the frame's doing. It draws nothing and schedules
// nothing: a run's digest is the same with it.
type peerReceipts struct {
	c *Cluster
	// at is the replica a frame is being delivered to, nil between
	// deliveries; events and probes what it emitted during the call.
	at     *ReplicaNode
	events []string
	probes []string
	// from is the peer the frame came from; injected whether the
	// bad-frames nemesis built it, and answers what the receiver sent
	// back to from during the call (for injected frames only).
	from     uint8
	injected bool
	answers  [][]byte
	// delivering: the call in progress, nil between calls.
	delivering *delivery
	// conns: per (from, to), the last connection on which to's bus
	// counted a frame from from, i.e. established at to then (the
	// bad-frames nemesis injects there). Looked up only.
	conns map[[2]uint8]network.ConnID
	// established: the connections (at one end) whose bus counted a
	// frame read on them, so their handshake is done; handshakes: the
	// others' handshake so far. Looked up only.
	established map[connEnd]bool
	handshakes  map[connEnd]*handshakeSoFar
}

// connEnd is one end of a connection: the replica reading on it.
type connEnd struct {
	conn network.ConnID
	at   uint8
}

// handshakeSoFar is what one end of a connection read in its handshake.
type handshakeSoFar struct {
	// helloPassed: the acceptor read a Hello that passed (auth on: the
	// next frame is its Finish).
	helloPassed bool
	// injected: the next frame read was put there by the bad-frames
	// nemesis in place of the one sent.
	injected bool
}

func newPeerReceipts(c *Cluster) *peerReceipts {
	return &peerReceipts{c: c, conns: map[[2]uint8]network.ConnID{}, established: map[connEnd]bool{},
		handshakes: map[connEnd]*handshakeSoFar{}}
}

// handshake returns the handshake so far of the end of c at replica at.
func (r *peerReceipts) handshake(c network.ConnID, at uint8) *handshakeSoFar {
	k := connEnd{c, at}
	h := r.handshakes[k]
	if h == nil {
		h = &handshakeSoFar{}
		r.handshakes[k] = h
	}
	return h
}

// event notes an event of the replica a frame is being delivered to.
func (r *peerReceipts) event(e replica.Event) {
	if r.at == nil || e.Replica != r.at.id {
		return
	}
	switch {
	case e.Kind == replica.EventProbe:
		r.probes = append(r.probes, e.Probe)
	case e.Kind == replica.EventGroup && e.Group.Kind == vsr.EventProbe:
		r.probes = append(r.probes, e.Group.Probe)
	case e.Kind == replica.EventGroup && e.Group.Kind == vsr.EventSent:
		// A message sent, not a change of state: what it implies the
		// checker holds elsewhere.
	case e.Kind == replica.EventGroup:
		r.events = append(r.events, "group "+e.Group.Kind.String())
	default:
		r.events = append(r.events, eventKindName(e.Kind))
	}
}

func eventKindName(k replica.EventKind) string {
	switch k {
	case replica.EventReply:
		return "reply"
	case replica.EventReplay:
		return "replay"
	case replica.EventEviction:
		return "eviction"
	case replica.EventDeny:
		return "deny"
	case replica.EventPartitionBuilt:
		return "partition built"
	case replica.EventPoll:
		return "poll"
	case replica.EventCheckpoint:
		return "checkpoint"
	case replica.EventRestored:
		return "restored"
	case replica.EventInstalled:
		return "installed"
	case replica.EventPartitionInstalled:
		return "partition installed"
	}
	return "event"
}

// receive delivers frame to n, read on connection c from peer (known:
// the network knew the connection's other end when it delivered the frame;
// n's replica is up), and reports whether n's bus counted it as read on an
// established connection. injected: the bad-frames nemesis built it.
func (r *peerReceipts) receive(n *ReplicaNode, c network.ConnID, peer network.NodeID, known bool, frame []byte, injected bool) bool {
	rep := n.rep
	if !known || int(peer) >= len(r.c.Replicas) || uint8(peer) == n.id {
		if !injected {
			rep.PeerReceived(bus.ConnID(c), frame)
		}
		return false
	}
	from := uint8(peer)
	b := rep.Bus()
	end := connEnd{c, n.id}
	// A connection whose handshake may not be done: every counter, to
	// see which handshake failure or establishment the frame caused.
	var step *wirespec.HandshakeStep
	var statsBefore bus.Stats
	if !r.established[end] {
		s := r.handshakeStep(n, c, from)
		step, statsBefore = &s, b.Stats()
	}
	before := b.PeerStats(from)
	var sentBefore uint64
	var ioBefore int
	if injected {
		r.c.Checker.Injecting(from, n.id, frame)
		sentBefore = r.c.Net.Stats().FramesSent + busSends(b.Stats())
		ioBefore = n.dev.InFlight()
	}
	groupRun := false
	if len(frame) >= wire.HeaderSize {
		if g, ok := wirespec.GroupOf(frame); ok {
			_, runs := rep.PartitionGroup(g)
			groupRun = g == wire.MetadataGroup || runs
		}
	}
	r.at, r.from, r.injected = n, from, injected
	r.events, r.probes, r.answers = r.events[:0], r.probes[:0], r.answers[:0]
	r.deliver(n, c, from, frame, step)
	r.at = nil
	after := b.PeerStats(from)
	rc := checker.Receipt{
		Counted:   after.FramesReceived > before.FramesReceived,
		Delivered: after.FramesDelivered > before.FramesDelivered,
		Closed:    after.ConnectionsClosed > before.ConnectionsClosed,
		Events:    r.events,
		Probes:    r.probes,
		Answers:   r.answers,
		GroupRun:  groupRun,
	}
	if rc.Counted && !rc.Delivered {
		for i := range after.WireRejected {
			if after.WireRejected[i] > before.WireRejected[i] {
				rc.WireRule = wire.Rule(i)
			}
		}
		for i := range after.BusDropped {
			if after.BusDropped[i] > before.BusDropped[i] {
				rc.BusRule = bus.DropRule(i).String()
			}
		}
	}
	if injected {
		for i := range after.SendDropped {
			rc.AnswersDropped += int(after.SendDropped[i] - before.SendDropped[i])
		}
		rc.Sends = int(r.c.Net.Stats().FramesSent + busSends(b.Stats()) - sentBefore)
		rc.IOs = max(n.dev.InFlight()-ioBefore, 0)
	}
	if !rc.Counted && step != nil {
		r.handshakeFrame(n, c, from, frame, *step, statsBefore, b.Stats())
		return false
	}
	r.c.Checker.PeerFrame(r.c.Loop.Now(), from, n.id, frame, injected, rc)
	if rc.Counted {
		r.established[end] = true
		delete(r.handshakes, end)
		if !rc.Closed {
			r.conns[[2]uint8{from, n.id}] = c
		}
	}
	return rc.Counted
}

// deliver hands frame to n's replica, noting what it delivers while the
// call runs: a panic on the way out is the replica's, and the checker
// hears of it (panicked), so that a panic on a frame the receiver's rules
// refuse is named for the rule (checker.FrameCrashed). Nothing recovers
// here: the panic keeps its stack for the run's report.
func (r *peerReceipts) deliver(n *ReplicaNode, c network.ConnID, from uint8, frame []byte, step *wirespec.HandshakeStep) {
	r.delivering = &delivery{from: from, to: n.id, frame: frame, step: step}
	n.rep.PeerReceived(bus.ConnID(c), frame)
	r.delivering = nil
}

// delivery is a frame being handed to a replica.
type delivery struct {
	from, to uint8
	frame    []byte
	step     *wirespec.HandshakeStep
}

// panicked tells the checker of a replica panic (p) that unwound a
// delivery, if one was running.
func (r *peerReceipts) panicked(p any) {
	if d := r.delivering; d != nil {
		r.delivering = nil
		r.c.Checker.PeerFramePanicked(r.c.Loop.Now(), d.from, d.to, d.frame, d.step, p)
	}
}

// clientBegin and clientEnd bracket n's handling of a client's frame: the
// checker hears of the probes it emitted (checker.AdmissionProbes).
func (r *peerReceipts) clientBegin(n *ReplicaNode) {
	r.at, r.injected = n, false
	r.events, r.probes = r.events[:0], r.probes[:0]
}

func (r *peerReceipts) clientEnd(n *ReplicaNode, frame []byte) {
	r.at = nil
	if len(r.probes) > 0 {
		r.c.Checker.AdmissionProbes(r.c.Loop.Now(), n.id, frame, r.probes)
	}
}

// sent notes a frame replica from hands the network for replica to:
// during an injected frame's delivery, an answer to its sender.
func (r *peerReceipts) sent(from uint8, to int, frame []byte) {
	if r.at != nil && r.injected && from == r.at.id && to == int(r.from) {
		r.answers = append(r.answers, append([]byte(nil), frame...))
	}
}

// handshakeStep is where a frame read on c at n meets n's handshake.
func (r *peerReceipts) handshakeStep(n *ReplicaNode, c network.ConnID, from uint8) wirespec.HandshakeStep {
	h := r.handshakes[connEnd{c, n.id}]
	cfg := n.rep.Config()
	cluster := cfg.Cluster()
	s := wirespec.HandshakeStep{Acceptor: from < n.id, Cluster: wirespec.U128{Lo: cluster.Lo, Hi: cluster.Hi},
		Replica: n.id, Replicas: len(r.c.Replicas), Auth: cfg.Auth, SizeMax: cfg.Profile.FrameSizeMax}
	for _, secret := range [][]byte{cfg.Secret, cfg.PreviousSecret} {
		if len(secret) > 0 {
			s.Secrets = append(s.Secrets, secret)
		}
	}
	if h != nil {
		s.Second = h.helloPassed
	}
	return s
}

// handshakeFrame tells the checker what n did with a frame it read on
// connection c, from the replica at its other end, in its handshake:
// the failure its bus counted, the peer it established, whether it closed
// c (the transport forgot c: peerTransport.Close).
func (r *peerReceipts) handshakeFrame(n *ReplicaNode, c network.ConnID, from uint8, frame []byte, step wirespec.HandshakeStep, before, after bus.Stats) {
	if after.StaleEvents > before.StaleEvents {
		return // the bus had let the connection go
	}
	end := connEnd{c, n.id}
	h := r.handshake(c, n.id)
	hr := checker.HandshakeReceipt{Step: step, Established: -1, Conn: uint64(c), SenderSecret: r.c.replicaConfig(from).Secret}
	fa, fb := after.HandshakeFailures(), before.HandshakeFailures()
	for i := range fa {
		if fa[i] > fb[i] {
			hr.Failure = bus.HandshakeFailure(i).String()
		}
	}
	for p := range after.Peers {
		if after.Peers[p].HandshakesOK > before.Peers[p].HandshakesOK {
			hr.Established = p
		}
	}
	_, open := n.conns[c]
	hr.Closed = !open
	injected := h.injected
	h.injected = false
	r.c.Checker.HandshakeFrame(r.c.Loop.Now(), from, n.id, frame, injected, hr)
	switch {
	case hr.Closed:
		delete(r.handshakes, end)
	case hr.Established >= 0:
		delete(r.handshakes, end)
		r.established[end] = true
	case step.Acceptor && !step.Second && hr.Failure == "":
		h.helloPassed = true
	}
}

// busSends counts every frame a bus handed its transport or dropped on
// the way: a refused frame must cause neither.
func busSends(s bus.Stats) uint64 {
	var n uint64
	for _, p := range s.Peers {
		n += p.FramesSent
		for _, d := range p.SendDropped {
			n += d
		}
	}
	return n
}
