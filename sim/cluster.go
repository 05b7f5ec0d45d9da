package sim

import (
	"fmt"
	"github.com/iggy-vopr/vopr/sim/kernel"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/checker/refmodel"
	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/bus"
	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/transfer"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/storage"
	"github.com/iggy-vopr/vopr/workload"
)

// ClusterOptions describes a cluster of real replicas on the substrate.
type ClusterOptions struct {
	Seed     uint64
	Replicas int
	Clients  int
	Profile  replica.Profile
	Network  network.Options
	// Storage is the device template: latencies and fault rates (Layout,
	// Atlas, SectorSize and IOsMax are set by the cluster).
	Storage storage.Options
	// Auth turns the authenticated replica handshake on.
	Auth bool
	// ClockOffsetMaxNs and ClockDriftMaxPPB bound each node's drawn clock.
	ClockOffsetMaxNs, ClockDriftMaxPPB int64
	// Requests is how many requests the clients draw from the workload mix,
	// spread over them; 0 for scripted clients (Submit).
	Requests int
	// ClientTimeoutTicks is how long a client waits for a reply before it
	// tries the next replica.
	ClientTimeoutTicks int
	// ClientThinkTicks is how long a client waits after a request completes
	// before its next (0: at once).
	ClientThinkTicks int
	// ClientLogoutProbability: see Options.LogoutProbability.
	ClientLogoutProbability float64
	// BadRequestProbability: see Options.BadRequestProbability.
	BadRequestProbability float64
	// RotationWindow gives the replicas the old and new shared secrets in
	// both orders, as in the middle of a key rotation (needs Auth).
	RotationWindow bool
	// Sends lets the workload mix send messages to the partitions it
	// creates.
	Sends bool
	// FlushMessages is the segment logs' flush threshold in messages (0:
	// Iggy's 1024).
	FlushMessages int
	// FlushBytes is their threshold in bytes (0: Iggy's 1 MiB).
	FlushBytes int
	// SegmentArtifactBytes: where a partition offer starts a new segment
	// artifact (0: the replica's 64 KiB).
	SegmentArtifactBytes int
	// FormatExtentSlots: the journal's format extent (0: the journal's).
	FormatExtentSlots int
	// EvictedRing: flushed ops a partition journal keeps (0: Iggy's).
	EvictedRing int
	// CheckpointInterval: ops between metadata checkpoints (0: the
	// profile's).
	CheckpointInterval int
}

// DefaultClusterOptions is a fault-free cluster with the simulation profile.
func DefaultClusterOptions(seed uint64, replicas, clientCount int) ClusterOptions {
	return ClusterOptions{
		Seed:     seed,
		Replicas: replicas,
		Clients:  clientCount,
		Profile:  replica.SimulationProfile(),
		Network:  network.DefaultOptions(),
		Storage: storage.Options{
			ReadLatency:  storage.Latency{MinNs: 20_000, MeanNs: 50_000},
			WriteLatency: storage.Latency{MinNs: 20_000, MeanNs: 100_000},
			SyncLatency:  storage.Latency{MinNs: 100_000, MeanNs: 500_000},
		},
		ClockOffsetMaxNs:   2_000_000_000,
		ClockDriftMaxPPB:   100_000,
		ClientTimeoutTicks: 300,
	}
}

// Cluster is a whole simulated cluster: replicas with their devices, clients,
// the network, and a checker listening to every replica.
type Cluster struct {
	Options ClusterOptions
	Loop    *kernel.Loop
	Streams kernel.Streams
	Net     *network.Network
	Layout  *storage.Layout
	Atlas   *storage.Atlas

	Replicas []*ReplicaNode
	Clients  []*ClientNode
	Checker  *checker.Checker
	// Requests counts the invocations the clients made.
	Requests uint64
	// Probes counts every named probe that fired, by name.
	Probes map[string]int
	// OnEvent, when set, sees every replica event after the checker.
	OnEvent func(replica.Event)
	// Crashes and Restarts count the process faults.
	Crashes, Restarts uint64
	// Checkpoints counts the checkpoints the replicas recorded, and
	// StateTransfersMetadata and StateTransfersPartition the states they
	// installed, by plane.
	Checkpoints, StateTransfersMetadata, StateTransfersPartition uint64
	// onPeerFrame, when set, sees every frame a replica receives from a
	// peer, as it is delivered, with the connection it came on (the
	// -capture file, Outputs.Frames).
	onPeerFrame func(c network.ConnID, from, to uint8, frame []byte)
	// onPeerSent, when set, sees every frame a replica hands the network
	// for a peer, before anything may hold it (Outputs.Frames: when it was
	// sent).
	onPeerSent func(from uint8, c network.ConnID, frame []byte)
	// onPeerSend, when set, sees every frame a replica hands the network
	// for a peer, after the checker; it reports whether it took the frame
	// (the stale-answer nemesis holds one).
	onPeerSend func(from uint8, c network.ConnID, frame []byte) bool
	// metadataLimits: the replicas' metadata ceilings, as the checker's
	// model takes them.
	metadataLimits refmodel.Limits
	// receipts hands every peer frame to its replica and tells the
	// checker what the replica did with it (badframes_receipts.go).
	receipts *peerReceipts

	disks *clusterDisks
}

// NewCluster builds and formats a cluster; its replicas boot on the loop
// (RunUntil the first ticks to let them come up).
func NewCluster(o ClusterOptions) *Cluster {
	if o.Replicas < 1 || o.Replicas > bus.ReplicasMax {
		panic(fmt.Sprintf("sim: %d replicas", o.Replicas))
	}
	c := &Cluster{Options: o, Loop: kernel.NewLoop(), Streams: kernel.NewStreams(o.Seed), Probes: map[string]int{}}
	c.Net = network.New(c.Loop, c.Streams, o.Network)
	c.Net.SetPrimaryHint(func() (network.NodeID, bool) {
		if p := c.Primary(); p != nil {
			return network.NodeID(p.id), true
		}
		return 0, false
	})
	cfg0 := c.replicaConfig(0)
	c.Layout = replica.Layout(cfg0)
	c.Atlas = storage.NewAtlas(c.Layout, o.Replicas, c.Streams.Stream("storage.atlas"),
		storage.AtlasOptions{Clean: []string{journal.ZoneSuperblock, partition.ZoneSuperblocks}, Linked: [][2]string{{journal.ZoneHeaders, journal.ZonePrepares}},
			Shared: []string{transfer.ZoneCheckpoints}})
	c.Checker = checker.New(o.Replicas)
	l := cfg0.MetadataLimits()
	c.metadataLimits = refmodel.Limits{Streams: l.Streams, TopicsPerStream: l.TopicsPerStream, PartitionID: l.PartitionID,
		Partitions: l.Partitions}
	c.Checker.SetMetadataLimits(c.metadataLimits)
	c.Checker.SetCheckpointInterval(cfg0.CheckpointIntervalOps())
	c.Checker.SetClientTableCapacity(cfg0.Profile.ClientTableMax)
	c.Checker.SetFrameSizeMax(cfg0.Profile.FrameSizeMax)
	c.receipts = newPeerReceipts(c)
	for i := range o.Replicas {
		n := &ReplicaNode{c: c, id: uint8(i), conns: map[network.ConnID]connKind{}}
		n.clock = kernel.DrawClock(c.Streams.Stream(fmt.Sprintf("clock.%d", i)), o.ClockOffsetMaxNs, o.ClockDriftMaxPPB)
		dopts := o.Storage
		dopts.SectorSize = cfg0.Profile.SectorSize
		dopts.Layout = c.Layout
		dopts.Atlas = c.Atlas
		dopts.IOsMax = cfg0.DeviceIOsMax()
		n.dev = storage.NewSimDevice(c.Loop, c.Streams, int32(i), dopts)
		c.Net.AddNode(network.NodeID(i), true, n)
		c.Net.SetUp(network.NodeID(i), false)
		c.Replicas = append(c.Replicas, n)
	}
	var mix *workload.Mix
	if o.Requests > 0 {
		mix = workload.NewMix(c.Streams.Stream("workload.mix"), o.Sends)
	}
	var bad *workload.BadMix
	if mix != nil && o.BadRequestProbability > 0 {
		bad = workload.NewBadMix(c.Streams.Stream("workload.bad"), mix, o.BadRequestProbability)
	}
	for i := range o.Clients {
		requests := o.Requests / o.Clients
		if i < o.Requests%o.Clients {
			requests++
		}
		cn := newClientNode(c, network.NodeID(o.Replicas+i), i, mix, requests, o.ClientTimeoutTicks, o.ClientThinkTicks)
		cn.wl.SetBad(bad)
		c.Clients = append(c.Clients, cn)
	}
	c.disks = newClusterDisks(c)
	c.Checker.SetDisks(c.disks)
	c.Checker.SetSegments(newClusterSegments(c))
	c.Checker.SetArtifacts(c.disks)
	rc := c.replicaConfig(0)
	sc := rc.SegmentConfig()
	c.Checker.SetSegmentFlush(sc.FlushMessages, sc.FlushBytes)
	c.Checker.SetLinks(c.peerLinked)
	for _, n := range c.Replicas {
		n.format()
	}
	return c
}

func (c *Cluster) replicaConfig(id uint8) replica.Config {
	cfg := replica.Config{
		ClusterName: "vopr", Replica: id, ReplicaCount: uint8(c.Options.Replicas),
		Auth: c.Options.Auth, Secret: []byte(secretOld), Profile: c.Options.Profile,
		FlushMessages:        uint64(max(c.Options.FlushMessages, 0)),
		FlushBytes:           uint64(max(c.Options.FlushBytes, 0)),
		SegmentArtifactBytes: uint64(max(c.Options.SegmentArtifactBytes, 0)),
		FormatExtentSlots:    uint64(max(c.Options.FormatExtentSlots, 0)),
		EvictedRing:          uint64(max(c.Options.EvictedRing, 0)),
		CheckpointInterval:   uint64(max(c.Options.CheckpointInterval, 0)),
	}
	if c.Options.RotationWindow && id%2 == 1 {
		// Mid-rotation: half the replicas already sign with the new secret
		// and keep the old one for verification, the other half the reverse.
		cfg.Secret, cfg.PreviousSecret = []byte(secretNew), []byte(secretOld)
	} else if c.Options.RotationWindow {
		cfg.PreviousSecret = []byte(secretNew)
	}
	return cfg
}

const (
	secretOld = "vopr-simulated-cluster-secret-old-32"
	secretNew = "vopr-simulated-cluster-secret-new-32"
)

// event receives every replica event: the checker first, then probes.
func (c *Cluster) event(e replica.Event) {
	c.Checker.Replica(c.Loop.Now(), e)
	c.receipts.event(e)
	switch e.Kind {
	case replica.EventCheckpoint:
		c.Checkpoints++
	case replica.EventInstalled:
		c.StateTransfersMetadata++
	case replica.EventPartitionInstalled:
		c.StateTransfersPartition++
	case replica.EventProbe:
		c.Probes[e.Probe]++
	case replica.EventGroup:
		if e.Group.Kind == vsr.EventProbe {
			c.Probes[e.Group.Probe]++
		}
		if e.Group.Kind == vsr.EventCommitted {
			c.Loop.FoldDigest("commit", int32(e.Replica), e.Group.Header.Checksum().Lo^e.Group.Op)
		}
	}
	if c.OnEvent != nil {
		c.OnEvent(e)
	}
}

// Run runs the loop for durationNs of virtual time.
func (c *Cluster) Run(durationNs int64) { c.Loop.RunUntil(c.Loop.Now()+durationNs, 0) }

// RunUntil runs until cond holds (checked every tick) or budgetNs passes; it
// reports whether cond held.
func (c *Cluster) RunUntil(budgetNs int64, cond func() bool) bool {
	end := c.Loop.Now() + budgetNs
	for c.Loop.Now() < end {
		if cond() {
			return true
		}
		c.Loop.RunUntil(min(end, c.Loop.Now()+kernel.TickNs), 0)
	}
	return cond()
}

// Primary returns the up replica that is a Normal primary of the highest
// view, or nil.
func (c *Cluster) Primary() *ReplicaNode {
	var best *ReplicaNode
	for _, n := range c.Replicas {
		if n.rep != nil && n.rep.Metadata().IsPrimary() && (best == nil || n.rep.Metadata().View() > best.rep.Metadata().View()) {
			best = n
		}
	}
	return best
}

// CommittedEverywhere reports whether every running replica (up, and done
// booting) applied op; a crashed replica does not count, a booting one does.
func (c *Cluster) CommittedEverywhere(op uint64) bool {
	for _, n := range c.Replicas {
		if !n.up {
			continue
		}
		if n.rep == nil || n.rep.Metadata().CommitMin() < op {
			return false
		}
	}
	return true
}

// connKind says which port a connection is on.
type connKind uint8

const (
	connPeer connKind = iota + 1
	connClient
)

// ReplicaNode is one replica's machine: its device survives crashes, its
// process (rep) does not.
type ReplicaNode struct {
	c           *Cluster
	id          uint8
	dev         *storage.SimDevice
	clock       kernel.Clock
	rep         *replica.Replica // nil while down or booting
	ticker      *kernel.Ticker
	up          bool // the process is running (or booting)
	paused      bool
	formatted   bool     // its format completed
	held        []func() // what happened while paused, in order
	incarnation int
	conns       map[network.ConnID]connKind // only looked up, never iterated
	// memoryLost: the process died since it last had every partition
	// group's memory (vopr.withoutMemory clears it).
	memoryLost bool
	// formatFaults: the device's counts when its first format completed
	// (the faults that hit the format of the whole disk, not the replica's
	// own writes and reads: issue 28's comparison); set once.
	formatFaults *storage.Stats
}

// ID returns the replica id.
func (n *ReplicaNode) ID() uint8 { return n.id }

// Replica returns the running replica, or nil while down or booting.
func (n *ReplicaNode) Replica() *replica.Replica { return n.rep }

// Device returns the replica's simulated device.
func (n *ReplicaNode) Device() *storage.SimDevice { return n.dev }

// Up reports whether the process is running.
func (n *ReplicaNode) Up() bool { return n.up }

func (n *ReplicaNode) format() {
	cfg := n.c.replicaConfig(n.id)
	n.up = true
	inc := n.incarnation
	replica.Format(cfg, pausableDevice{n, n.dev}, func(err error) {
		if err != nil {
			panic(fmt.Sprintf("sim: formatting replica %d: %v", n.id, err))
		}
		if !n.up || n.incarnation != inc {
			return
		}
		n.formatted = true
		if n.formatFaults == nil {
			st := n.dev.Stats()
			n.formatFaults = &st
		}
		n.c.Checker.Formatted(n.c.Loop.Now(), n.id)
		n.boot(true)
	})
}

// boot opens the replica from its device; it joins the network when open.
func (n *ReplicaNode) boot(fresh bool) {
	inc := n.incarnation
	env := replica.Env{
		Peers:      peerTransport{n},
		Clients:    clientTransport{n},
		Device:     pausableDevice{n, n.dev},
		Sink:       nodeSink{n},
		Rand:       n.c.Streams.Stream(fmt.Sprintf("replica.%d.%d", n.id, inc)),
		RealtimeUs: func() uint64 { return uint64(n.clock.RealtimeNs(n.c.Loop.Now()) / 1000) },
	}
	replica.Open(n.c.replicaConfig(n.id), env, fresh, func(r *replica.Replica, err error) {
		if err != nil {
			// A correct replica opens every disk the fault model leaves
			// it: this one stays down, and the checker names it.
			n.c.Checker.OpenFailed(n.c.Loop.Now(), n.id, err)
			return
		}
		if !n.up || n.incarnation != inc {
			return // crashed while booting
		}
		n.rep = r
		n.c.Net.SetUp(network.NodeID(n.id), true)
		if n.ticker == nil {
			n.ticker = kernel.NewTicker(n.c.Loop, int32(n.id), n.tick)
		} else {
			n.ticker.Resume()
		}
	})
}

func (n *ReplicaNode) tick() {
	if n.rep != nil {
		n.rep.Tick()
	}
}

// Crash kills the process: unsynced writes are lost, kept or torn, pending
// I/O never completes, connections reset.
func (n *ReplicaNode) Crash() {
	if n.up {
		n.c.Crashes++
		if n.rep != nil && n.rep.StateTransferInstalling() {
			n.c.Probes["state transfer: a crash landed during the install"]++
		}
		if n.rep != nil && n.rep.PartitionTransferInstalling() {
			n.c.Probes["partition state transfer: a crash landed during the install"]++
		}
	}
	n.Freeze()
}

// Freeze stops the process as a crash does, as the liveness phase does to
// the replicas outside its core; it is not counted as a fault.
func (n *ReplicaNode) Freeze() {
	if !n.up {
		return
	}
	n.up = false
	n.paused = false
	n.held = nil
	n.incarnation++
	n.memoryLost = true
	n.rep = nil
	if n.ticker != nil {
		n.ticker.Pause()
	}
	n.dev.Crash()
	n.c.Checker.AuditReplica(n.id, n.c.Loop.Now())
	n.c.Net.SetUp(network.NodeID(n.id), false)
	clear(n.conns)
	n.c.Checker.Crashed(n.id)
}

// Restart boots the process again from its device.
func (n *ReplicaNode) Restart() {
	if n.up {
		return
	}
	n.up = true
	n.c.Restarts++
	if !n.formatted {
		// It crashed before its format finished: an operator formats again.
		n.format()
		return
	}
	n.boot(false)
}

// Endpoint: the network's events for this node.

func (n *ReplicaNode) Accepted(c network.ConnID, peer network.NodeID) {
	n.hold(func() { n.accepted(c, peer) })
}

func (n *ReplicaNode) accepted(c network.ConnID, peer network.NodeID) {
	if n.rep == nil {
		return
	}
	if int(peer) < n.c.Options.Replicas {
		n.conns[c] = connPeer
		n.rep.PeerAccepted(bus.ConnID(c))
	} else {
		n.conns[c] = connClient
		n.rep.ClientAccepted(replica.ConnID(c))
	}
}

func (n *ReplicaNode) Connected(c network.ConnID) {
	n.hold(func() { n.connected(c) })
}

func (n *ReplicaNode) connected(c network.ConnID) {
	if n.rep != nil {
		n.rep.PeerConnected(bus.ConnID(c))
	}
}

func (n *ReplicaNode) DialFailed(c network.ConnID) {
	n.hold(func() { n.dialFailed(c) })
}

func (n *ReplicaNode) dialFailed(c network.ConnID) {
	delete(n.conns, c)
	if n.rep != nil {
		n.rep.PeerDialFailed(bus.ConnID(c))
	}
}

func (n *ReplicaNode) Received(c network.ConnID, frame []byte) {
	// The sender, looked up while the network delivers: a frame held
	// through a pause is handled when the connection may have finished,
	// and the checker must still hear whose it was.
	peer, known := n.c.Net.Peer(c, network.NodeID(n.id))
	if n.paused {
		f := append([]byte(nil), frame...) // the network reuses its buffer
		n.held = append(n.held, func() { n.received(c, f, peer, known) })
		return
	}
	n.received(c, frame, peer, known)
}

func (n *ReplicaNode) received(c network.ConnID, frame []byte, peer network.NodeID, known bool) {
	if n.rep == nil {
		return
	}
	switch n.conns[c] {
	case connPeer:
		if n.c.onPeerFrame != nil && known {
			n.c.onPeerFrame(c, uint8(peer), n.id, frame)
		}
		n.c.receipts.receive(n, c, peer, known, frame, false)
	case connClient:
		n.c.Checker.ClientDelivered(n.c.Loop.Now(), n.id, uint64(c), frame)
		n.c.Checker.ClientRequestArrived(n.c.Loop.Now(), n.id, frame)
		n.c.receipts.clientBegin(n)
		n.rep.ClientReceived(replica.ConnID(c), frame)
		n.c.receipts.clientEnd(n, frame)
		n.c.Checker.ClientHandled(n.c.Loop.Now(), n.id)
		n.c.Checker.ClientRequestHandled(n.id)
	}
}

func (n *ReplicaNode) Closed(c network.ConnID) {
	n.hold(func() { n.closed(c) })
}

func (n *ReplicaNode) closed(c network.ConnID) {
	kind := n.conns[c]
	delete(n.conns, c)
	if n.rep == nil {
		return
	}
	switch kind {
	case connPeer:
		n.rep.PeerClosed(bus.ConnID(c))
	case connClient:
		n.c.Checker.ClientConnClosed(n.c.Loop.Now(), n.id, uint64(c))
		n.rep.ClientClosed(replica.ConnID(c))
	}
}

// peerTransport adapts the network to the replica's bus.
type peerTransport struct{ n *ReplicaNode }

func (t peerTransport) Dial(peer uint8) bus.ConnID {
	c := t.n.c.Net.Dial(network.NodeID(t.n.id), network.NodeID(peer))
	t.n.conns[c] = connPeer
	return bus.ConnID(c)
}

// Send shows the checker every frame before the network takes it: a frame
// is a promise about its sender's disk (checker.Sent).
func (t peerTransport) Send(c bus.ConnID, frame []byte) bool {
	to := -1
	if peer, ok := t.n.c.Net.Peer(network.ConnID(c), network.NodeID(t.n.id)); ok {
		to = int(peer)
	}
	t.n.c.Checker.Sent(t.n.c.Loop.Now(), t.n.id, to, frame)
	t.n.c.receipts.sent(t.n.id, to, frame)
	if t.n.c.onPeerSent != nil {
		t.n.c.onPeerSent(t.n.id, network.ConnID(c), frame)
	}
	if t.n.c.onPeerSend != nil && t.n.c.onPeerSend(t.n.id, network.ConnID(c), frame) {
		return true // held: as if queued
	}
	return t.n.c.Net.Send(network.ConnID(c), network.NodeID(t.n.id), frame)
}

func (t peerTransport) Close(c bus.ConnID) {
	delete(t.n.conns, network.ConnID(c))
	t.n.c.Net.Close(network.ConnID(c), network.NodeID(t.n.id))
}

func (t peerTransport) InFlight(c bus.ConnID) int {
	return t.n.c.Net.InFlight(network.ConnID(c), network.NodeID(t.n.id))
}

// clientTransport adapts the network to the replica's client port.
type clientTransport struct{ n *ReplicaNode }

func (t clientTransport) Send(c replica.ConnID, frame []byte) bool {
	t.n.c.Checker.ToClient(t.n.c.Loop.Now(), t.n.id, frame)
	return t.n.c.Net.Send(network.ConnID(c), network.NodeID(t.n.id), frame)
}

func (t clientTransport) Close(c replica.ConnID) {
	t.n.c.Checker.ClientConnClosed(t.n.c.Loop.Now(), t.n.id, uint64(c))
	delete(t.n.conns, network.ConnID(c))
	t.n.c.Net.Close(network.ConnID(c), network.NodeID(t.n.id))
}

type nodeSink struct{ n *ReplicaNode }

func (s nodeSink) Event(e replica.Event) { s.n.c.event(e) }
