package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
	"github.com/zeebo/xxh3"
	"pgregory.net/rapid"
)

// The synthetic all-faults world: three replica nodes and two clients that
// exchange sealed frames over the simulated network with every network fault
// on (partitions long enough for TCP timeouts to reset the connections they
// stall), close connections in order now and then, run under drop and hold
// filters a director installs and releases, stamp what they send and journal
// with skewed, drifting realtime clocks; replicas journal what they receive
// on simulated devices with every storage fault on, and nodes pause, and
// replicas crash and restart. There is no protocol here; the world exists to
// show that the substrate is deterministic under everything it can do: one
// seed, one digest.

const (
	synthReplicas   = 3
	synthClients    = 2
	synthLogSectors = 256
	synthSectorSize = 512

	// Clock bounds as the VOPR's swarm draws them at most: seconds of
	// offset, a drift that shows within one run.
	synthClockOffsetMaxNs = 5_000_000_000
	synthClockDriftMaxPPB = 200_000
)

type synthWorld struct {
	loop    *kernel.Loop
	streams kernel.Streams
	net     *network.Network
	nodes   []*synthNode
	chaos   *rand.Rand
	pauses  *rand.Rand
	filters synthDirector

	detected   uint64 // frames Validate rejected (corruption caught)
	validated  uint64 // frames Validate accepted
	readFaults uint64
	crashes    uint64
	restarts   uint64
	paused     uint64 // pauses of a node's ticks
	framesHeld uint64 // frames a Hold filter stopped
	releases   uint64 // Release calls on hold filters
}

type synthNode struct {
	w       *synthWorld
	id      network.NodeID
	replica bool
	up      bool
	rng     *rand.Rand
	ticker  *kernel.Ticker
	resume  synthResume
	clock   kernel.Clock
	closer  *rand.Rand // its own stream, so closes never shift the send draws
	dev     *storage.SimDevice
	peer    []network.ConnID // by peer node id: the open connection, or 0
	dialing []network.ConnID // by peer node id: a dial in flight, or 0
	seq     uint64

	logNext    uint64 // next log sector to write
	unsynced   int
	restartGen uint64

	// The skew of the realtime clock (realtime minus the true time) at the
	// node's first and latest tick: offset shows in the first, drift in
	// their difference.
	skewFirstNs, skewLastNs int64
	skewSeen                bool
}

// synthNetworkOptions turns every network fault on. Partitions last at least
// 0.5 s and about 1 s on average, against TCP timeouts of 0.2 s + Exp(0.3 s),
// so that most partitions end the connections they stall, as TCP does. The
// partition mode and symmetry are drawn per seed, so that seeds together
// cover every shape.
func synthNetworkOptions(knobs *rand.Rand) network.Options {
	o := network.DefaultOptions()
	o.ResetProbability = 0.002
	o.TCPTimeoutMinNs, o.TCPTimeoutMeanNs = 20*kernel.TickNs, 30*kernel.TickNs
	o.PartitionMode = []network.PartitionMode{network.PartitionIsolateSingle,
		network.PartitionUniformSize, network.PartitionUniformPartition}[knobs.IntN(3)]
	o.PartitionSymmetry = []network.PartitionSymmetry{network.PartitionSymmetric, network.PartitionOneWay}[knobs.IntN(2)]
	o.PartitionProbability = 0.01
	o.UnpartitionProbability = 0.02
	o.PartitionStabilityMinTicks = 50
	o.UnpartitionStabilityMinTicks = 10
	o.ClogProbability = 0.002
	o.ClogDurationMeanNs = 50 * kernel.TickNs
	o.CorruptProbability = 0.01
	return o
}

func newSynthWorld(seed uint64) *synthWorld {
	w := &synthWorld{loop: kernel.NewLoop(), streams: kernel.NewStreams(seed)}
	w.loop.RecordTrace(true)
	w.chaos = w.streams.Stream("synthetic.chaos")
	w.pauses = w.streams.Stream("synthetic.pause")
	w.net = network.New(w.loop, w.streams, synthNetworkOptions(w.streams.Stream("synthetic.knobs")))
	layout := storage.NewLayout(
		storage.Zone{Name: "superblock", ChunkSectors: 1, Chunks: 4},
		storage.Zone{Name: "log", ChunkSectors: 8, Chunks: synthLogSectors / 8},
	)
	atlas := storage.NewAtlas(layout, synthReplicas, w.streams.Stream("synthetic.atlas"), storage.AtlasOptions{})
	total := synthReplicas + synthClients
	for i := range total {
		n := &synthNode{
			w: w, id: network.NodeID(i), replica: i < synthReplicas, up: true,
			rng:    w.streams.Stream(fmt.Sprintf("synthetic.node.%d", i)),
			closer: w.streams.Stream(fmt.Sprintf("synthetic.close.%d", i)),
			clock: kernel.DrawClock(w.streams.Stream(fmt.Sprintf("synthetic.clock.%d", i)),
				synthClockOffsetMaxNs, synthClockDriftMaxPPB),
			peer:    make([]network.ConnID, total),
			dialing: make([]network.ConnID, total),
		}
		n.resume.n = n
		if n.replica {
			n.dev = storage.NewSimDevice(w.loop, w.streams, int32(i), storage.Options{
				SectorSize: synthSectorSize, Layout: layout, Atlas: atlas, IOsMax: 256,
				ReadLatency:          storage.Latency{MinNs: 50_000, MeanNs: 200_000},
				WriteLatency:         storage.Latency{MinNs: 100_000, MeanNs: 500_000},
				SyncLatency:          storage.Latency{MinNs: 500_000, MeanNs: 2_000_000},
				Faults:               storage.Faults{LatentProbability: 0.01, CorruptProbability: 0.01, MisdirectProbability: 0.01},
				CrashLostProbability: 0.3, CrashTornProbability: 0.4,
			})
		}
		w.net.AddNode(n.id, n.replica, n)
		n.ticker = kernel.NewTicker(w.loop, int32(i), n.tick)
		w.nodes = append(w.nodes, n)
	}
	w.filters = synthDirector{w: w, rng: w.streams.Stream("synthetic.filters")}
	w.loop.At(50*kernel.TickNs, &w.filters, 0)
	return w
}

func (w *synthWorld) run(durationNs int64) uint64 {
	w.loop.RunUntil(durationNs, 0)
	return w.loop.Digest()
}

// tick is one node's 10 ms of activity: dial, send, sometimes read back,
// sometimes close a connection, sometimes pause, sometimes crash.
func (n *synthNode) tick() {
	w := n.w
	now := w.loop.Now()
	skew := n.clock.RealtimeNs(now) - kernel.EpochNs - now
	if !n.skewSeen {
		n.skewFirstNs, n.skewSeen = skew, true
	}
	n.skewLastNs = skew
	if n.replica && w.chaos.Float64() < 0.002 {
		n.crash()
		return
	}
	if w.pauses.Float64() < 0.002 {
		// A stalled process (a GC pause, a VM migration): no ticks for a
		// while; the network still buffers what arrives.
		w.paused++
		n.ticker.Pause()
		w.loop.After(int64(1+w.pauses.IntN(100))*kernel.TickNs, &n.resume, n.restartGen)
		return
	}
	if n.closer.Float64() < 0.01 {
		if p := n.closer.IntN(len(n.peer)); n.peer[p] != 0 {
			// An orderly close; the dialer's next tick dials again.
			w.net.Close(n.peer[p], n.id)
			n.peer[p] = 0
		}
	}
	for p := range n.peer {
		if !n.wantsPeer(p) || n.peer[p] != 0 || n.dialing[p] != 0 || !w.net.Up(network.NodeID(p)) {
			continue
		}
		n.dialing[p] = w.net.Dial(n.id, network.NodeID(p))
	}
	for _, c := range n.peer {
		if c == 0 || n.rng.Float64() > 0.5 {
			continue
		}
		n.seq++
		w.net.Send(c, n.id, n.frame())
	}
	if n.replica && n.rng.Float64() < 0.1 {
		buf := make([]byte, synthSectorSize)
		sector := uint64(4 + n.rng.IntN(synthLogSectors))
		n.dev.Read(sector, buf, func(err error) {
			if errors.Is(err, storage.ErrReadFault) {
				w.readFaults++
			}
		})
	}
}

// wantsPeer: replicas dial higher replicas (the replica plane's rule);
// clients dial every replica; nobody dials a client.
func (n *synthNode) wantsPeer(p int) bool {
	if p >= synthReplicas || p == int(n.id) {
		return false
	}
	return !n.replica || p > int(n.id)
}

// frame is a sealed Commit from a replica, an unsealed Request from a client.
// A client stamps its request with its own realtime clock, in microseconds,
// so the clock's offset and drift reach the digest through the frames.
func (n *synthNode) frame() []byte {
	if n.replica {
		return wire.BuildFrame(&wire.CommitHeader{Prefix: wire.Prefix{Replica: uint8(n.id)},
			TimestampMonotonic: n.seq, Commit: n.seq, Group: wire.MetadataGroup}, nil)
	}
	return wire.BuildFrame(&wire.RequestHeader{Client: wire.U128From64(uint64(n.id)), Request: n.seq,
		Timestamp: uint64(n.clock.RealtimeNs(n.w.loop.Now()) / 1000),
		Session:   1, Operation: wire.OperationCreateStream}, []byte("stream"))
}

func (n *synthNode) crash() {
	w := n.w
	w.crashes++
	n.up = false
	n.ticker.Pause()
	n.dev.Crash()
	w.net.SetUp(n.id, false)
	clear(n.peer)
	clear(n.dialing)
	n.restartGen++
	w.loop.After(int64(1+w.chaos.IntN(200))*kernel.TickNs, n, n.restartGen)
}

// synthResume ends a node's pause; gen is the node's restartGen when it
// paused, so a pause outlived by a crash never resumes the crashed node.
type synthResume struct{ n *synthNode }

// Fire resumes the node's ticks.
func (r *synthResume) Fire(nowNs int64, gen uint64) (string, int32, uint64) {
	n := r.n
	if gen != n.restartGen || !n.up || !n.ticker.Paused() {
		return "", 0, 0
	}
	n.ticker.Resume()
	return "synthetic.resume", int32(n.id), gen
}

// synthDirector is the scenario script of the world: now and then it installs
// a drop or hold filter on a drawn path (matching about a quarter of the
// frames), releases a hold filter halfway through its life, and removes the
// filter at its end. Its argument is 0 for its own periodic firing, else
// (filter id << 1) | 1 to remove, or (filter id << 1) to release.
type synthDirector struct {
	w   *synthWorld
	rng *rand.Rand
}

// Fire runs the director's periodic step, or a release or removal.
func (d *synthDirector) Fire(nowNs int64, arg uint64) (string, int32, uint64) {
	w := d.w
	if arg != 0 {
		id := network.FilterID(arg >> 1)
		if arg&1 == 0 {
			w.releases++
			w.net.Release(id)
			return "synthetic.filter_release", -1, uint64(id)
		}
		w.net.RemoveFilter(id)
		return "synthetic.filter_remove", -1, uint64(id)
	}
	node := func() network.NodeID {
		if d.rng.IntN(4) == 0 {
			return network.AnyNode
		}
		return network.NodeID(d.rng.IntN(len(w.nodes)))
	}
	from, to := node(), node()
	hold := d.rng.IntN(2) == 0
	action := network.Drop
	if hold {
		action = network.Hold
	}
	id := w.net.AddFilter(network.Filter{From: from, To: to, Action: action, Match: func(f []byte) bool {
		if xxh3.Hash(f)%4 != 0 {
			return false
		}
		if hold {
			w.framesHeld++
		}
		return true
	}})
	lifeNs := (10 + d.rng.Int64N(90)) * kernel.TickNs
	if hold {
		w.loop.After(lifeNs/2, d, uint64(id)<<1)
	}
	w.loop.After(lifeNs, d, uint64(id)<<1|1)
	w.loop.After((50+d.rng.Int64N(100))*kernel.TickNs, d, 0)
	return "synthetic.filter", int32(from), uint64(id)<<1 | uint64(action)
}

// Fire restarts a crashed node.
func (n *synthNode) Fire(nowNs int64, gen uint64) (string, int32, uint64) {
	if gen != n.restartGen || n.up {
		return "", 0, 0
	}
	n.w.restarts++
	n.up = true
	n.w.net.SetUp(n.id, true)
	n.ticker.Resume()
	return "synthetic.restart", int32(n.id), gen
}

func (n *synthNode) Accepted(c network.ConnID, peer network.NodeID) { n.peer[peer] = c }

func (n *synthNode) Connected(c network.ConnID) {
	for p, d := range n.dialing {
		if d == c {
			n.dialing[p] = 0
			n.peer[p] = c
		}
	}
}

func (n *synthNode) DialFailed(c network.ConnID) {
	for p, d := range n.dialing {
		if d == c {
			n.dialing[p] = 0
		}
	}
}

func (n *synthNode) Closed(c network.ConnID) {
	for p := range n.peer {
		if n.peer[p] == c {
			n.peer[p] = 0
		}
	}
}

// Received validates the frame and, on a replica, journals its hash; every
// fourth write is followed by a sync.
func (n *synthNode) Received(c network.ConnID, frame []byte) {
	w := n.w
	if err := wire.Validate(frame); err != nil {
		var fe *wire.FrameError
		var ge *wire.FramingError
		if !errors.As(err, &fe) && !errors.As(err, &ge) {
			panic(err)
		}
		w.detected++
		return
	}
	w.validated++
	if !n.replica {
		return
	}
	sector := make([]byte, synthSectorSize)
	put := xxh3.Hash(frame)
	for i := 0; i+8 <= len(sector); i += 8 {
		put = put*0x9e3779b97f4a7c15 + uint64(i)
		sector[i] = byte(put >> 56)
	}
	// A journal record carries its writer's realtime, as prepares do.
	binary.LittleEndian.PutUint64(sector[1:9], uint64(n.clock.RealtimeNs(w.loop.Now())))
	n.dev.Write(4+n.logNext, sector, func(error) {})
	n.logNext = (n.logNext + 1) % synthLogSectors
	if n.unsynced++; n.unsynced == 4 {
		n.unsynced = 0
		n.dev.Sync(func(error) {})
	}
}

// TestSyntheticDeterminism: one seed, one digest and one trace; other seeds,
// other digests.
func TestSyntheticDeterminism(t *testing.T) {
	const durationNs = 20_000_000_000 // 20 s of virtual time
	a, b := newSynthWorld(1), newSynthWorld(1)
	da, db := a.run(durationNs), b.run(durationNs)
	if d := kernel.DescribeDivergence(a.loop.Trace(), b.loop.Trace()); da != db || d != "" {
		t.Fatalf("seed 1 twice: digests %016x %016x; %s", da, db, d)
	}
	seen := map[uint64]uint64{da: 1}
	for seed := uint64(2); seed <= 6; seed++ {
		d := newSynthWorld(seed).run(durationNs)
		if other, dup := seen[d]; dup {
			t.Fatalf("seeds %d and %d gave the same digest %016x", other, seed, d)
		}
		seen[d] = seed
	}
}

// TestPropertySyntheticDeterminism: over drawn seeds, one seed run twice
// gives the same digest and the same per-event trace, and two distinct seeds
// give different digests. Runs are 2 s of virtual time, enough for every
// network, storage and process fault to have begun.
func TestPropertySyntheticDeterminism(t *testing.T) {
	const durationNs = 2_000_000_000
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		other := rapid.Uint64().Filter(func(s uint64) bool { return s != seed }).Draw(t, "other")
		a, b := newSynthWorld(seed), newSynthWorld(seed)
		da, db := a.run(durationNs), b.run(durationNs)
		if d := kernel.DescribeDivergence(a.loop.Trace(), b.loop.Trace()); da != db || d != "" {
			t.Fatalf("seed %d twice: digests %016x %016x; %s", seed, da, db, d)
		}
		if a.net.Stats().FramesDelivered == 0 || len(a.loop.Trace()) == 0 {
			t.Fatalf("seed %d: nothing delivered in %d events, the comparison is empty", seed, a.loop.Processed())
		}
		if dc := newSynthWorld(other).run(durationNs); dc == da {
			t.Fatalf("seeds %d and %d gave the same digest %016x", seed, other, da)
		}
	})
}

// TestSyntheticExercisesEveryFault: the demo is only evidence if the faults
// happened; every kind must fire, and every corrupted frame that arrived was
// caught.
func TestSyntheticExercisesEveryFault(t *testing.T) {
	w := newSynthWorld(1)
	w.run(20_000_000_000)
	ns := w.net.Stats()
	var ds storage.Stats
	for _, n := range w.nodes[:synthReplicas] {
		s := n.dev.Stats()
		ds.Writes += s.Writes
		ds.Syncs += s.Syncs
		ds.Reads += s.Reads
		ds.LatentMarked += s.LatentMarked
		ds.CorruptMarked += s.CorruptMarked
		ds.Misdirected += s.Misdirected
		ds.Crashes += s.Crashes
		ds.CrashTorn += s.CrashTorn
		ds.CrashLost += s.CrashLost
		ds.CrashKept += s.CrashKept
	}
	// A node's clock is offset if its realtime was off at its first tick,
	// and drifting if the skew changed between its first and latest tick.
	var offset, drifting uint64
	for _, n := range w.nodes {
		if n.skewSeen && n.skewFirstNs != 0 {
			offset++
		}
		if n.skewSeen && n.skewLastNs != n.skewFirstNs {
			drifting++
		}
	}
	t.Logf("network %+v", ns)
	t.Logf("storage %+v", ds)
	t.Logf("frames validated %d, corruption detected %d, read faults %d, crashes %d, restarts %d, pauses %d, "+
		"frames held %d, releases %d, clocks offset %d drifting %d, events %d",
		w.validated, w.detected, w.readFaults, w.crashes, w.restarts, w.paused, w.framesHeld, w.releases,
		offset, drifting, w.loop.Processed())
	checks := []struct {
		name string
		n    uint64
	}{
		{"frames delivered", ns.FramesDelivered}, {"connections opened", ns.ConnectionsOpened},
		{"dials refused", ns.DialsFailed},
		{"random resets", ns.Resets[network.ResetRandom]}, {"TCP-timeout resets", ns.Resets[network.ResetTimeout]},
		{"down-node resets", ns.Resets[network.ResetDown]}, {"orderly closes", ns.Closes},
		{"frames lost to a reset", ns.FramesLost[network.LostReset]}, {"frames lost to a down node", ns.FramesLost[network.LostDown]},
		{"frames lost to a close", ns.FramesLost[network.LostClosed]}, {"frames dropped by a filter", ns.FramesLost[network.LostFiltered]},
		{"frames held by a filter", w.framesHeld}, {"hold filter releases", w.releases},
		{"partitions", ns.Partitions}, {"clogs", ns.Clogs}, {"corruptions", ns.FramesCorrupted},
		{"corruption detected", w.detected},
		{"writes", ds.Writes}, {"syncs", ds.Syncs}, {"reads", ds.Reads}, {"latent sectors", ds.LatentMarked},
		{"corrupt sectors", ds.CorruptMarked}, {"misdirected writes", ds.Misdirected}, {"device crashes", ds.Crashes},
		{"torn sectors", ds.CrashTorn}, {"lost sectors", ds.CrashLost}, {"kept sectors", ds.CrashKept},
		{"read faults", w.readFaults}, {"crashes", w.crashes}, {"restarts", w.restarts}, {"pauses", w.paused},
		{"clocks with an offset", offset}, {"clocks drifting", drifting},
	}
	for _, c := range checks {
		if c.n == 0 {
			t.Errorf("no %s in 20 s of the all-faults world", c.name)
		}
	}
	if w.detected > ns.FramesCorrupted {
		t.Errorf("%d frames rejected but only %d corrupted: Validate rejected an intact frame", w.detected, ns.FramesCorrupted)
	}
}

// TestSyntheticInterleaved: two worlds stepped alternately, event by event,
// end with the digests each has alone: no state is shared between
// simulations in one process.
func TestSyntheticInterleaved(t *testing.T) {
	const durationNs = 5_000_000_000
	alone1, alone2 := newSynthWorld(11).run(durationNs), newSynthWorld(12).run(durationNs)
	a, b := newSynthWorld(11), newSynthWorld(12)
	for {
		na, oka := a.loop.NextAt()
		nb, okb := b.loop.NextAt()
		moreA, moreB := oka && na <= durationNs, okb && nb <= durationNs
		if !moreA && !moreB {
			break
		}
		if moreA {
			a.loop.Step()
		}
		if moreB {
			b.loop.Step()
		}
	}
	a.loop.RunUntil(durationNs, 0)
	b.loop.RunUntil(durationNs, 0)
	if a.loop.Digest() != alone1 || b.loop.Digest() != alone2 {
		t.Fatalf("interleaved digests %016x %016x, alone %016x %016x", a.loop.Digest(), b.loop.Digest(), alone1, alone2)
	}
}

// TestSyntheticParallel: worlds on several goroutines at once give the
// digests they give one at a time (run with -race to check sharing too).
func TestSyntheticParallel(t *testing.T) {
	const durationNs = 3_000_000_000
	seeds := []uint64{21, 22, 23, 24}
	want := make([]uint64, len(seeds))
	for i, s := range seeds {
		want[i] = newSynthWorld(s).run(durationNs)
	}
	got := make([]uint64, len(seeds))
	var wg sync.WaitGroup
	for i, s := range seeds {
		wg.Go(func() { got[i] = newSynthWorld(s).run(durationNs) })
	}
	wg.Wait()
	for i := range seeds {
		if got[i] != want[i] {
			t.Errorf("seed %d: parallel digest %016x, alone %016x", seeds[i], got[i], want[i])
		}
	}
}

func BenchmarkSyntheticAllFaults(b *testing.B) {
	events := uint64(0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		w := newSynthWorld(uint64(i))
		w.loop.RecordTrace(false)
		w.run(1_000_000_000)
		events += w.loop.Processed()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
