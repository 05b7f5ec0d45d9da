package network

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/plan"
)

// Event is the loop's event type. It is an alias of the same interface
// literal as kernel.Event, so that *kernel.Loop satisfies Scheduler without this
// package importing sim (sim imports network).
type Event = interface {
	Fire(nowNs int64, arg uint64) (kind string, node int32, hash uint64)
}

// Scheduler is the event loop as the network needs it: virtual time in
// nanoseconds, and a way to run an event later. *kernel.Loop implements it.
type Scheduler interface {
	// Now returns the virtual time in nanoseconds.
	Now() int64
	// At schedules ev to fire at atNs (never in the past) with arg.
	At(atNs int64, ev Event, arg uint64)
}

// Streams hands out one seeded generator per label. kernel.Streams implements
// it. The network asks once per fault site and keeps the generator, so adding
// a site or drawing more at one never shifts the draws of another.
type Streams interface {
	Stream(label string) *rand.Rand
}

// TickNs is the period of the network's own tick, 10 ms of virtual time (one
// consensus tick): per-tick probabilities (partitions, clogs) are drawn on it
// and minimum partition durations are counted in it.
const TickNs int64 = 10_000_000

// NodeID names a node: a replica or a client. Ids are chosen by the harness;
// they must be non-negative (AnyNode is -1).
type NodeID int32

// AnyNode, as a Filter's From or To, matches every node.
const AnyNode NodeID = -1

// ConnID names one connection. Ids are unique per Network and never reused,
// so a stale id can never reach a newer connection.
type ConnID uint64

// Endpoint receives one node's network events; the harness adapts replicas
// and clients to it. Every call runs inside a loop event, never inside a call
// into the Network, so an Endpoint may call back into the Network (Send,
// Dial, Close) freely.
type Endpoint interface {
	// Accepted reports an inbound connection opened at the node's listener,
	// dialed by peer. Only replicas listen.
	Accepted(c ConnID, peer NodeID)
	// Connected reports that an outbound dial (Dial's c) completed.
	Connected(c ConnID)
	// DialFailed reports that an outbound dial was refused: the target was
	// down, not listening (a client), or cut off by a partition. c is gone.
	DialFailed(c ConnID)
	// Received delivers one whole frame on c, in send order. frame is valid
	// only during the call: the receiver copies what it keeps.
	Received(c ConnID, frame []byte)
	// Closed reports that c is gone: reset, closed by the peer, or the peer
	// went down. It is not called for a connection the node closed itself.
	Closed(c ConnID)
}

// PartitionMode chooses how a random partition splits the replicas (as
// TigerBeetle's packet simulator does). Clients are never partitioned.
type PartitionMode uint8

const (
	// PartitionNone: no random partitions (scripted ones still work).
	PartitionNone PartitionMode = iota
	// PartitionIsolateSingle: one replica alone on one side.
	PartitionIsolateSingle
	// PartitionUniformSize: a side of U[1, n-1] replicas, chosen by shuffle.
	PartitionUniformSize
	// PartitionUniformPartition: a coin flip per replica, never an empty side.
	PartitionUniformPartition
	// PartitionBridge: a partial partition. One replica, the bridge, still
	// reaches every other; the rest split into two non-empty sides that
	// cannot reach each other (Jepsen's "bridge" nemesis). A replica cut off
	// from the primary can then still talk to replicas that follow it, and
	// stay in an old view for as long as the partition lasts. With fewer
	// than three replicas it isolates one.
	PartitionBridge
	// PartitionPrimary: a minority side that holds the primary (as the
	// harness names it, SetPrimaryHint), which goes on taking requests it
	// cannot commit while the majority elects a new one (Jepsen's "isolate
	// the leader"). Without a primary it draws as PartitionUniformSize.
	PartitionPrimary
	partitionModeCount
)

// String returns the mode's name, as TigerBeetle spells it.
func (m PartitionMode) String() string {
	switch m {
	case PartitionNone:
		return "none"
	case PartitionIsolateSingle:
		return "isolate_single"
	case PartitionUniformSize:
		return "uniform_size"
	case PartitionUniformPartition:
		return "uniform_partition"
	case PartitionBridge:
		return "bridge"
	case PartitionPrimary:
		return "primary"
	}
	return fmt.Sprintf("PartitionMode(%d)", uint8(m))
}

// PartitionSymmetry says which paths across a partition are cut.
type PartitionSymmetry uint8

const (
	// PartitionSymmetric cuts both directions across the partition.
	PartitionSymmetric PartitionSymmetry = iota
	// PartitionOneWay cuts one direction: one side, drawn at random, can
	// send to the other but not receive from it. This is the asymmetric case
	// behind the livelocks TigerBeetle describes.
	PartitionOneWay
	partitionSymmetryCount
)

// String returns the symmetry's name.
func (s PartitionSymmetry) String() string {
	switch s {
	case PartitionSymmetric:
		return "symmetric"
	case PartitionOneWay:
		return "one_way"
	}
	return fmt.Sprintf("PartitionSymmetry(%d)", uint8(s))
}

// Options are the network's knobs. Durations are in nanoseconds of virtual
// time unless the name says Ticks (TickNs each); probabilities are in [0, 1].
// A delay drawn as "min + Exp(mean)" is DelayMinNs plus an exponential
// variable of mean DelayMeanNs (capped at 50 means, so one draw cannot stall a
// run forever).
type Options struct {
	// DelayMinNs and DelayMeanNs: the one-way delay of each frame.
	DelayMinNs, DelayMeanNs int64
	// ConnectDelayMinNs and ConnectDelayMeanNs: how long a dial takes to
	// complete or be refused.
	ConnectDelayMinNs, ConnectDelayMeanNs int64

	// InFlightFramesMax and InFlightBytesMax bound each connection direction
	// (the socket buffers of both ends). A Send that would exceed either
	// resets the connection (ResetOverflow) and returns false, as an
	// overflowing socket buffer would end it: a bounded queue that fails
	// loudly, never one that grows without limit.
	InFlightFramesMax int
	InFlightBytesMax  int64
	// FrameSizeMax is the largest frame Send accepts; a larger one is a
	// programmer error (the message bus must refuse it first).
	FrameSizeMax int

	// ResetProbability: per frame sent, the chance that the connection
	// resets instead of carrying it.
	ResetProbability float64
	// TCPTimeoutMinNs and TCPTimeoutMeanNs: how long frames may stall across
	// a partition before the connection resets (TCP's retransmission
	// timeout giving up).
	TCPTimeoutMinNs, TCPTimeoutMeanNs int64

	// PartitionMode and PartitionSymmetry shape random partitions.
	PartitionMode     PartitionMode
	PartitionSymmetry PartitionSymmetry
	// PartitionProbability: per tick, while healed for at least
	// UnpartitionStabilityMinTicks, the chance a partition starts.
	PartitionProbability float64
	// UnpartitionProbability: per tick, while partitioned for at least
	// PartitionStabilityMinTicks, the chance the partition heals.
	UnpartitionProbability float64
	// RepartitionProbability: when a partition heals, the chance that it is
	// replaced at once by a newly drawn one instead (the network never
	// becomes whole between them), so replicas that fell behind on one side
	// meet a new majority without a chance to catch up.
	RepartitionProbability float64
	// PartitionStabilityMinTicks: a partition lasts at least this long.
	PartitionStabilityMinTicks int64
	// UnpartitionStabilityMinTicks: a healed network stays whole at least
	// this long before the next partition.
	UnpartitionStabilityMinTicks int64

	// ClogProbability: per tick and per ordered node pair, the chance the
	// path clogs (stalls without loss) for Exp(ClogDurationMeanNs).
	ClogProbability    float64
	ClogDurationMeanNs int64

	// CorruptProbability: per frame sent, the chance one bit flips inside
	// the frame's protected ranges (wire.ProtectedRanges). Frames without
	// protected ranges are never corrupted.
	CorruptProbability float64
	// ChunkCorruptProbability: per StateChunk (25) sent, the chance one bit
	// of its body flips. No seal covers a StateChunk's body (wire.md 5.14:
	// checksum_body is 0), so the receiver accepts the frame and only the
	// whole artifact's checksum can catch it (DEVIATIONS.md 63).
	ChunkCorruptProbability float64

	// Plan, when non-nil, records the faults that fire (resets, frame
	// and chunk corruption, partitions, heals, clogs) or, replaying a
	// fault plan, decides them (sim/plan); the draws happen as without it.
	Plan *plan.Gate

	// PoisonBuffers overwrites a frame's buffer after Received returns, so a
	// receiver that keeps the slice instead of copying it reads garbage at
	// once rather than someone else's frame much later.
	PoisonBuffers bool
}

// DefaultOptions returns a fault-free network with datacenter-like delays
// (0.5 ms + Exp(1 ms) per frame, a few ms to connect), generous buffers, and
// TCP timeouts of 2 s + Exp(3 s). The harness draws the fault knobs per seed.
func DefaultOptions() Options {
	return Options{
		DelayMinNs:                   500_000,
		DelayMeanNs:                  1_000_000,
		ConnectDelayMinNs:            1_000_000,
		ConnectDelayMeanNs:           2_000_000,
		InFlightFramesMax:            4096,
		InFlightBytesMax:             256 << 20,
		FrameSizeMax:                 wire.MaxFrameSizeDefault,
		TCPTimeoutMinNs:              2_000_000_000,
		TCPTimeoutMeanNs:             3_000_000_000,
		PartitionMode:                PartitionNone,
		PartitionSymmetry:            PartitionSymmetric,
		PartitionStabilityMinTicks:   100,
		UnpartitionStabilityMinTicks: 20,
		ClogDurationMeanNs:           1_000_000_000,
		PoisonBuffers:                true,
	}
}

func (o *Options) validate() {
	for _, d := range []struct {
		name string
		ns   int64
	}{
		{"DelayMinNs", o.DelayMinNs}, {"DelayMeanNs", o.DelayMeanNs},
		{"ConnectDelayMinNs", o.ConnectDelayMinNs}, {"ConnectDelayMeanNs", o.ConnectDelayMeanNs},
		{"TCPTimeoutMinNs", o.TCPTimeoutMinNs}, {"TCPTimeoutMeanNs", o.TCPTimeoutMeanNs},
		{"ClogDurationMeanNs", o.ClogDurationMeanNs},
		{"PartitionStabilityMinTicks", o.PartitionStabilityMinTicks},
		{"UnpartitionStabilityMinTicks", o.UnpartitionStabilityMinTicks},
	} {
		if d.ns < 0 {
			panic(fmt.Sprintf("network: option %s is negative (%d)", d.name, d.ns))
		}
	}
	for _, p := range []struct {
		name string
		p    float64
	}{
		{"ResetProbability", o.ResetProbability}, {"PartitionProbability", o.PartitionProbability},
		{"UnpartitionProbability", o.UnpartitionProbability}, {"RepartitionProbability", o.RepartitionProbability},
		{"ClogProbability", o.ClogProbability},
		{"CorruptProbability", o.CorruptProbability},
		{"ChunkCorruptProbability", o.ChunkCorruptProbability},
	} {
		if !(p.p >= 0 && p.p <= 1) {
			panic(fmt.Sprintf("network: option %s = %v outside [0, 1]", p.name, p.p))
		}
	}
	if o.InFlightFramesMax <= 0 || o.InFlightBytesMax <= 0 {
		panic("network: InFlightFramesMax and InFlightBytesMax must be positive (start from DefaultOptions)")
	}
	if int64(o.FrameSizeMax) > o.InFlightBytesMax {
		panic("network: FrameSizeMax above InFlightBytesMax: every such frame would reset its connection")
	}
	if o.FrameSizeMax < wire.HeaderSize || o.FrameSizeMax > 1<<poolClassMax {
		panic(fmt.Sprintf("network: FrameSizeMax %d outside [%d, %d]", o.FrameSizeMax, wire.HeaderSize, 1<<poolClassMax))
	}
	if o.PartitionMode >= partitionModeCount || o.PartitionSymmetry >= partitionSymmetryCount {
		panic("network: undefined partition mode or symmetry")
	}
}

// node is one registered node; nodes are kept in the order AddNode saw them,
// and that index names them inside the package.
type node struct {
	id      NodeID
	replica bool
	up      bool
	ep      Endpoint
}

// path is the ordered pair (from, to) of nodes: its fault state and counters.
type path struct {
	cut         bool  // a partition stops from -> to
	clogUntilNs int64 // nothing crosses before this time
	clogAtNs    int64 // the tick it clogs at, once eligible (0: not drawn yet)
	stats       Counters
}

// Network is the simulated network of one run. It is driven by the loop
// (Scheduler) and by its nodes' calls; it is not safe for concurrent use, as
// nothing in a simulation is.
type Network struct {
	sched Scheduler
	opts  Options

	// One generator per fault site, so the draws of one never shift another.
	rngDelay, rngConnect, rngReset, rngTimeout *rand.Rand
	rngPartition, rngClog, rngCorrupt          *rand.Rand
	rngChunkCorrupt                            *rand.Rand

	primaryHint func() (NodeID, bool)

	nodes    []node
	index    map[NodeID]int32 // lookup only, never iterated
	byID     []int32          // node indices sorted by NodeID: the iteration order
	replicas []int32          // replica node indices sorted by NodeID
	paths    [][]path         // [from][to], by node index

	conns    map[ConnID]*conn // lookup only, never iterated
	live     []*conn          // unfinished connections, sorted by id (ids only grow)
	lastConn ConnID
	lastArg  uint64 // event arguments are unique per Network, so a stale one never matches

	faultsOn           bool
	partitioned        bool  // some path is cut
	partitionChangedNs int64 // when partitioned last changed
	clogScanNs         int64 // the earliest tick a path may clog or unclog
	ticker             ticker

	filters    []filterEntry // sorted by id
	lastFilter FilterID

	pool     bufferPool
	ranges   []wire.Range // scratch for ProtectedRanges
	scratch  []*conn      // scratch for walks that may finish connections
	stats    Stats
	commands [256]Counters
}

// New returns a network with no nodes, driven by sched, drawing from streams.
// Faults are on (as far as opts enables them) until FaultsOff.
func New(sched Scheduler, streams Streams, opts Options) *Network {
	opts.validate()
	n := &Network{
		sched:           sched,
		opts:            opts,
		rngDelay:        streams.Stream("network.delay"),
		rngConnect:      streams.Stream("network.connect"),
		rngReset:        streams.Stream("network.reset"),
		rngTimeout:      streams.Stream("network.timeout"),
		rngPartition:    streams.Stream("network.partition"),
		rngClog:         streams.Stream("network.clog"),
		rngCorrupt:      streams.Stream("network.corrupt"),
		rngChunkCorrupt: streams.Stream("network.chunk_corrupt"),
		index:           make(map[NodeID]int32),
		conns:           make(map[ConnID]*conn),
		faultsOn:        true,
		pool:            bufferPool{freeBytesMax: poolFreeBytesMax},
	}
	n.partitionChangedNs = sched.Now()
	n.ticker.n = n
	if n.tickNeeded() {
		n.ticker.arm()
	}
	return n
}

// AddNode registers node id with its endpoint, up. Replicas listen for
// connections and take part in partitions; clients do not listen (dials to a
// client are refused) and are never cut by partitions, but their connections
// reset, clog and are filtered like any other.
func (n *Network) AddNode(id NodeID, replica bool, ep Endpoint) {
	if id < 0 {
		panic(fmt.Sprintf("network: node id %d is negative", id))
	}
	if ep == nil {
		panic(fmt.Sprintf("network: node %d has a nil endpoint", id))
	}
	if _, ok := n.index[id]; ok {
		panic(fmt.Sprintf("network: node %d added twice", id))
	}
	idx := int32(len(n.nodes))
	n.nodes = append(n.nodes, node{id: id, replica: replica, up: true, ep: ep})
	n.index[id] = idx
	n.byID = insertByID(n, n.byID, idx)
	if replica {
		n.replicas = insertByID(n, n.replicas, idx)
	}
	for i := range n.paths {
		n.paths[i] = append(n.paths[i], path{})
	}
	n.clogScanNs = 0 // its paths draw their first clog
	n.paths = append(n.paths, make([]path, len(n.nodes)))
}

func insertByID(n *Network, s []int32, idx int32) []int32 {
	at, _ := slices.BinarySearchFunc(s, n.nodes[idx].id, func(i int32, id NodeID) int {
		return int(n.nodes[i].id) - int(id)
	})
	return slices.Insert(s, at, idx)
}

// lookup returns the index of node id; an unknown id is a programmer error.
func (n *Network) lookup(id NodeID) int32 {
	idx, ok := n.index[id]
	if !ok {
		panic(fmt.Sprintf("network: unknown node %d", id))
	}
	return idx
}

// Up reports whether node id is up.
func (n *Network) Up(id NodeID) bool { return n.nodes[n.lookup(id)].up }

// SetUp brings node id up or down. Going down resets every connection of the
// node: frames in flight are lost (LostDown), peers see Closed, the node
// itself is told nothing (it is down), and its pending dials vanish. While
// down, dials to it are refused. Coming up starts it with no connections.
func (n *Network) SetUp(id NodeID, up bool) {
	idx := n.lookup(id)
	nd := &n.nodes[idx]
	if nd.up == up {
		return
	}
	nd.up = up
	if up {
		return
	}
	for _, c := range n.walk() {
		for e := range 2 {
			if c.node[e] == idx {
				c.down(e)
			}
		}
	}
}

// walk returns the live connections in id order, in a scratch slice, so the
// caller may finish connections (which edits live) while iterating.
func (n *Network) walk() []*conn {
	n.scratch = append(n.scratch[:0], n.live...)
	return n.scratch
}

// nextArg returns a fresh event argument.
func (n *Network) nextArg() uint64 {
	n.lastArg++
	return n.lastArg
}

// expCap bounds an exponential draw at 50 means: e^-50 is never seen in
// practice, and the cap keeps a pathological draw from stalling a run.
const expCap = 50

// draw returns minNs + Exp(meanNs) from r. A zero mean draws nothing.
func draw(r *rand.Rand, minNs, meanNs int64) int64 {
	if meanNs == 0 {
		return minNs
	}
	return minNs + int64(min(r.ExpFloat64(), expCap)*float64(meanNs))
}

func (n *Network) finish(c *conn) {
	i, ok := slices.BinarySearchFunc(n.live, c.id, func(x *conn, id ConnID) int {
		switch {
		case x.id < id:
			return -1
		case x.id > id:
			return 1
		}
		return 0
	})
	if !ok {
		panic(fmt.Sprintf("network: finishing connection %d that is not live", c.id))
	}
	n.live = slices.Delete(n.live, i, i+1)
	delete(n.conns, c.id)
}
