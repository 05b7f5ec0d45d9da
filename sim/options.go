package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica"
)

// Options are every knob of one VOPR run. Swarm draws them all from the
// seed; any can be overridden (vopr's flags) before Run.
type Options struct {
	Seed uint64

	// Topology and load.
	Replicas int // 1..6
	Clients  int // more than the client table's slots sometimes, so evictions happen
	Requests int // requests in all, spread over the clients
	// ThinkTicks: a client waits this long after each request completes
	// before its next, in the safety phase (0: at once; the long preset
	// spreads its requests over its budget so).
	ThinkTicks int

	// Phases.
	Lite             bool // safety phase only
	SafetyTicksMax   int  // the safety phase ends after this many ticks at most
	LivenessTicksMax int  // the core must converge within this many ticks

	// Network (per frame unless said otherwise).
	DelayMinNs, DelayMeanNs int64
	ResetProbability        float64
	PartitionMode           network.PartitionMode
	PartitionSymmetry       network.PartitionSymmetry
	PartitionProbability    float64 // per tick
	UnpartitionProbability  float64 // per tick
	RepartitionProbability  float64 // per heal: a new partition replaces the old one at once
	ClogProbability         float64 // per tick per path
	ClogDurationMeanNs      int64
	CorruptProbability      float64
	// ChunkCorruptProbability: per StateChunk, a bit of its unsealed body
	// flips in flight (DEVIATIONS.md 63).
	ChunkCorruptProbability float64
	// LogoutProbability: per request a client would draw, the chance it
	// logs out instead and registers again under a fresh id (the SDK's
	// re-login, client-ops.md 6.1): Logout commits, forwarded Logouts and
	// table slots freed.
	LogoutProbability float64
	// BadRequestProbability: per request a client would draw, the chance it
	// sends a bad one instead (workload/badrequests.go: bodies that do not
	// decode, option values and counts past their bounds, internal
	// operations), each answered as the checker's model says.
	BadRequestProbability float64

	// Storage (per I/O).
	ReadLatencyMeanNs, WriteLatencyMeanNs, SyncLatencyMeanNs int64
	LatentProbability                                        float64
	CorruptSectorProbability                                 float64
	MisdirectProbability                                     float64
	CrashTornProbability                                     float64 // per unsynced sector at a crash
	CrashLostProbability                                     float64

	// Processes (per replica per tick).
	CrashProbability      float64
	CrashIOFactor         float64 // crash probability multiplier while the replica has I/O in flight
	RestartDelayMeanTicks int
	PauseProbability      float64
	PauseMeanTicks        int

	// Clocks.
	ClockOffsetMaxNs int64
	ClockDriftMaxPPB int64

	// Replica handshake.
	Auth           bool
	RotationWindow bool // replicas hold the old and new secret in both orders, as mid-rotation

	// Legal protocol variations (FoundationDB's BUGGIFY, for paths a
	// correct replica rarely takes).
	RepairAnyPeer bool // backups send half their first repair requests to a random peer (vsr.Config)

	// Targeted nemeses.
	Rollback bool // the rollback nemesis drives the partitions (rollback.go); needs PartitionMode none, 3 replicas or more to act
	// StaleAnswers: the stale-answer nemesis (stale.go) delivers a probe's
	// StartView to its addressee's next incarnation; needs 2 replicas to act.
	StaleAnswers bool
	// ViewChangeFaults: the view-change fault nemesis (vcfaults.go) crashes
	// a primary whose head ops no backup received, with their slots
	// damaged on its disk; needs 2 replicas to act.
	ViewChangeFaults bool
	// BadFrames: the bad-frames nemesis (badframes.go) injects sealed
	// frames that break one receiver rule of wire.md each on the replicas'
	// connections; needs 2 replicas to act.
	BadFrames bool

	// The partition planes. MemoryLossBounded: at most f = n - q_vc
	// replicas are without partition memory at once (down, or restarted
	// with a partition group not caught up): a crash that would exceed it
	// waits until one has caught up, and so does the liveness phase's
	// freeze. Sends: the workload sends messages to the partitions it
	// creates; it needs the bound, until the losses beyond it are reported
	// by name (issue 11 item 7) instead of failing the run.
	MemoryLossBounded bool
	Sends             bool
	// FlushMessages: a partition's segment log flushes once this many
	// committed messages are buffered (Iggy's default is 1024; with its 1
	// MiB the other threshold).
	FlushMessages int
	// EvictedRing: how many flushed ops a partition's memory journal keeps
	// for repair (0: Iggy's 4096).
	EvictedRing int
	// CheckpointInterval: the metadata plane checkpoints after each
	// multiple of this many ops (0: the profile's 256).
	CheckpointInterval int
	// JournalSlots: the metadata journal's ring (0: the profile's 4096). It
	// must hold a checkpoint interval and two pipelines (JournalSlotsMin).
	JournalSlots int
	// FormatExtentSlots: the journal's ring is formatted this many slots at
	// a time, the first extent at format and each next one before the
	// journal first writes into it (0: the journal's 256; at most the
	// ring, a larger value formats the whole ring at once).
	FormatExtentSlots int
	// FlushBytes: a partition's segment log also flushes once this many
	// bytes of committed batches are buffered (0: Iggy's 1 MiB).
	FlushBytes int
	// SegmentArtifactBytes: a partition state transfer's offer starts a new
	// segment artifact once this many bytes of batches fill one (0: the
	// replica's 64 KiB).
	SegmentArtifactBytes int
}

// JournalSlotsMin is the smallest metadata journal ring for a checkpoint
// interval and a pipeline depth: replica.JournalSlotsMin.
func JournalSlotsMin(interval, pipeline int) int {
	return int(replica.JournalSlotsMin(uint64(interval), pipeline))
}

// Swarm draws every knob from the seed, so different seeds explore
// different worlds (from fault-free to harsh), as TigerBeetle's swarm
// testing does (vopr-notes.md section 2).
func Swarm(seed uint64) Options {
	r := rand.New(rand.NewPCG(seed, 0x5a77a))
	rate := func(maxRate float64) float64 {
		// A quarter of the seeds leave a fault off entirely.
		if r.IntN(4) == 0 {
			return 0
		}
		return r.Float64() * maxRate
	}
	o := Options{
		Seed:                     seed,
		Replicas:                 1 + r.IntN(6),
		SafetyTicksMax:           20_000,
		LivenessTicksMax:         60_000,
		DelayMinNs:               r.Int64N(2_000_000),
		DelayMeanNs:              100_000 + r.Int64N(10_000_000),
		ResetProbability:         rate(0.005),
		PartitionMode:            network.PartitionMode(r.IntN(4)),
		PartitionSymmetry:        network.PartitionSymmetry(r.IntN(2)),
		PartitionProbability:     rate(0.005),
		UnpartitionProbability:   0.005 + r.Float64()*0.05,
		ClogProbability:          rate(0.0005),
		ClogDurationMeanNs:       int64(r.IntN(50)+1) * 100_000_000, // 0.1 s to 5 s, as TigerBeetle
		CorruptProbability:       rate(0.001),
		ReadLatencyMeanNs:        10_000 + r.Int64N(500_000),
		WriteLatencyMeanNs:       10_000 + r.Int64N(1_000_000),
		SyncLatencyMeanNs:        100_000 + r.Int64N(5_000_000),
		LatentProbability:        rate(0.01),
		CorruptSectorProbability: rate(0.01),
		MisdirectProbability:     rate(0.005),
		CrashTornProbability:     0.2 + r.Float64()*0.6,
		CrashProbability:         rate(0.0005),
		RestartDelayMeanTicks:    10 + r.IntN(1000),
		PauseProbability:         rate(0.0002),
		PauseMeanTicks:           10 + r.IntN(300),
		ClockOffsetMaxNs:         r.Int64N(5_000_000_000),
		ClockDriftMaxPPB:         r.Int64N(200_000),
		Auth:                     r.IntN(2) == 0,
	}
	o.CrashLostProbability = (1 - o.CrashTornProbability) * r.Float64()
	o.RotationWindow = o.Auth && r.IntN(3) == 0
	// Clients: sometimes more than the simulation profile's 8 client-table
	// slots, so sessions get evicted.
	o.Clients = 1 + r.IntN(12)
	o.Requests = 20 + r.IntN(180)
	// Drawn last, so that every knob above keeps its value for a seed.
	// The crash multiplier while I/O is in flight is log-uniform over
	// [10, 1000] (rounded to an integer, so the printed value reproduces
	// it): some seeds crash replicas mostly in the windows between a write
	// and its sync, where "acknowledged before durable" bugs live (DESIGN.md,
	// "crash at any moment, more likely while I/O is in flight").
	o.CrashIOFactor = math.Round(10 * math.Pow(100, r.Float64()))
	// After it, for the same reason. A quarter of the seeds repair from any
	// peer, so a repaired prepare is checked by the hash chain often.
	o.RepairAnyPeer = r.IntN(4) == 0
	// After it: a third of the seeds with partitions use a partial one (a
	// bridge) or one that isolates the primary, and most seeds let a
	// partition give way to the next without a heal between them, so
	// replicas left behind on one side meet a new majority still behind
	// (stale voters, lagging primaries: the view change's hard cases).
	if o.PartitionMode != network.PartitionNone && r.IntN(3) == 0 {
		o.PartitionMode = network.PartitionBridge + network.PartitionMode(r.IntN(2))
	}
	o.RepartitionProbability = rate(0.75)
	// After it: a third of the seeds with three replicas or more hand
	// their partitions to the rollback nemesis, which builds on purpose
	// the replaced-prepare shapes random partitions almost never reach.
	if r.IntN(3) == 0 && o.Replicas >= 3 {
		o.Rollback, o.PartitionMode = true, network.PartitionNone
	}
	// After it: two thirds of the seeds with three replicas or more bound
	// the replicas without partition memory at f, and send messages; the
	// rest, and every one- or two-replica world (where f is 0), crash
	// freely and keep the metadata plane's coverage of whole-cluster
	// crashes (they send nothing until losses beyond the bound are
	// reported by name, DEVIATIONS.md 47).
	o.MemoryLossBounded = o.Replicas >= 3 && r.IntN(3) > 0
	o.Sends = true
	// Drawn last: the segment logs' flush threshold. Iggy's 1024 messages
	// in a quarter of the seeds (a run commits a few dozen, so these keep
	// their batches in memory until the final flush, as Iggy's in-memory
	// tail does), a flush after every commit in a quarter, log-uniform over
	// [1, 1024] otherwise (a configuration Iggy allows: its thresholds are
	// settings), so restarts find segment logs of every length.
	switch r.IntN(4) {
	case 0:
		o.FlushMessages = 1024
	case 1:
		o.FlushMessages = 1
	default:
		o.FlushMessages = int(math.Round(math.Pow(1024, r.Float64())))
	}
	// Drawn last: seven seeds in eight keep a small evicted ring, 1 to 8
	// flushed ops (log-uniform), so that a repair of an older op meets
	// RangeEvicted and the replica that needs it pulls the partition's
	// state (DEVIATIONS.md 55): a run commits a few ops per partition, so
	// only a ring this small is passed. The rest keep Iggy's 4096, more
	// than a run commits in one partition.
	// Those seeds flush small too: at most 64 messages (log-uniform), so
	// that the flushed ops the ring lets go are there to purge.
	if r.IntN(8) != 0 {
		o.EvictedRing = int(math.Round(math.Pow(8, r.Float64())))
		if o.FlushMessages > 64 {
			o.FlushMessages = int(math.Round(math.Pow(64, r.Float64())))
		}
	}
	// Drawn last: a sixth of the seeds with two replicas or more run the
	// stale-answer nemesis, which crashes a backup twice around a held
	// StartView: the path of consensus.md correction 6's incarnation guard,
	// which no random fault reaches.
	o.StaleAnswers = o.Replicas >= 2 && r.IntN(6) == 0
	// Drawn last: a sixth of the seeds with two replicas or more run the
	// view-change fault nemesis, so that merges meet ops whose only body is
	// damaged and must truncate them on a nack quorum.
	// Random partitions go off for it, as for the rollback nemesis: it
	// splits the replicas itself.
	o.ViewChangeFaults = o.Replicas >= 2 && r.IntN(6) == 0
	if o.ViewChangeFaults && !o.Rollback {
		o.PartitionMode = network.PartitionNone
	}
	// Drawn last: the checkpoint interval, 4 to 32 ops in three seeds of
	// four and up to 128 in the rest (log-uniform), far below the
	// profile's 256, so that a seed's few dozen to few hundred ops take
	// several checkpoints, wrap the journal's ring and restore them.
	spread := 8.0
	if r.IntN(4) == 0 {
		spread = 32
	}
	o.CheckpointInterval = int(math.Round(4 * math.Pow(spread, r.Float64())))
	// Drawn last: the journal's ring, from the smallest the interval and
	// the pipeline allow (replica.JournalSlotsMin) to 1024 slots. A quarter
	// of the seeds keep the smallest, where the primary meets the ring's
	// end at every checkpoint (backpressure, and the slots a checkpoint
	// frees reused as soon as it is durable: canary_slots_reused_early
	// lives there); five in eight stay within twice the smallest, so that
	// a seed's ops wrap it several times; the rest reach up to 1024
	// (wrapped by long runs).
	lo := JournalSlotsMin(o.CheckpointInterval, replica.SimulationProfile().PipelineMax)
	hi := 2 * lo
	switch r.IntN(8) {
	case 0:
		hi = 1024
	case 1, 2:
		hi = lo
	}
	o.JournalSlots = int(math.Round(float64(lo) * math.Pow(float64(max(hi, lo))/float64(lo), r.Float64())))
	// Drawn last: a third of the seeds flip a bit of a StateChunk's body
	// in 5% to 30% of those sent, which only the receiver's whole-artifact
	// checksum catches.
	if r.IntN(3) == 0 {
		o.ChunkCorruptProbability = 0.05 + 0.25*r.Float64()
	}
	// Drawn last: half the seeds log their clients out now and then, 1%
	// to 10% of the requests they draw (issue 26: no Logout had ever
	// committed, so CommitLogout and the forwarded Logout went unchecked).
	if r.IntN(2) == 0 {
		o.LogoutProbability = 0.01 + 0.09*r.Float64()
	}
	// From a stream of its own, so that every knob above keeps its value
	// for a seed and adding it changed no seed's draw: half the seeds with
	// two replicas or more run the bad-frames nemesis (issue 26: the swarm
	// sent only well-formed frames, and the receivers' refusals never ran).
	nb := rand.New(rand.NewPCG(seed, 0xbadf4a3e5))
	o.BadFrames = o.Replicas >= 2 && nb.IntN(2) == 0
	// From a stream of its own too, so that every knob above keeps its
	// value and a seed that sends no bad requests runs as before: half the
	// seeds send bad requests, 2% to 20% of the requests they draw (issue
	// 26: the preflight's refusals, the decoders and the option parsers
	// were never reached by a well-formed workload).
	if b := rand.New(rand.NewPCG(seed, 0xbad5eed)); b.IntN(2) == 0 {
		o.BadRequestProbability = 0.02 + 0.18*b.Float64()
	}
	// From a stream of its own too, so that every knob above keeps its
	// value and a seed that draws neither runs as before (issue 26: no
	// swarm ring ever had an op in slot 256 or above, so the journal never
	// formatted a next extent; and no seed buffered Iggy's 1 MiB, so the
	// bytes threshold never flushed a segment log). Half the seeds format
	// the ring 1 to 64 slots at a time (log-uniform), so a run's ops cross
	// several extents; half, independently, flush a segment log once 256
	// bytes to 16 KiB (log-uniform) of committed batches are buffered, a
	// few batches of the workload's, before most of the drawn message
	// thresholds.
	k := rand.New(rand.NewPCG(seed, 0xf0e47e57))
	if k.IntN(2) == 0 {
		o.FormatExtentSlots = int(math.Round(math.Pow(64, k.Float64())))
	}
	if k.IntN(2) == 0 {
		o.FlushBytes = int(math.Round(256 * math.Pow(64, k.Float64())))
	}
	// From a stream of its own, so that every knob above keeps its value:
	// half the seeds cut a partition offer into segment artifacts of 512
	// bytes to 16 KiB (log-uniform), a few batches each (issue 26: with the
	// replica's 64 KiB no run's partition held two segments, so a receiver
	// that refused every offer of more than one, or checked their order
	// wrongly, passed every seed).
	if sa := rand.New(rand.NewPCG(seed, 0x5e6a27)); sa.IntN(2) == 0 {
		o.SegmentArtifactBytes = int(math.Round(512 * math.Pow(32, sa.Float64())))
	}
	return o
}

// NoFaults turns every fault off (vopr -faults=none): the protocol alone.
// The rollback nemesis is a fault too (it partitions the replicas), so it
// goes off with the random ones.
func (o *Options) NoFaults() {
	o.ResetProbability, o.PartitionProbability, o.ClogProbability, o.CorruptProbability = 0, 0, 0, 0
	o.ChunkCorruptProbability = 0
	o.LatentProbability, o.CorruptSectorProbability, o.MisdirectProbability = 0, 0, 0
	o.CrashProbability, o.PauseProbability = 0, 0
	o.ClockOffsetMaxNs, o.ClockDriftMaxPPB = 0, 0
	o.Rollback = false
	o.StaleAnswers = false
	o.ViewChangeFaults = false
	o.BadFrames = false
}

// LongSafetyTicks is the safety phase's tick budget of a long run (vopr
// -long): 10 M ticks, 27.8 hours of virtual time, where crashes and
// restarts pile up far past what a swarm seed's 20,000 ticks reach.
const LongSafetyTicks = 10_000_000

// LongRequestsMax is the request count of a long run whose clients fit the
// client table: each request is one op and each client's Register one
// more. The journal's ring wraps (the swarm draws its size), so the count
// bounds only the run's length.
const LongRequestsMax = 3500

// LongRequests is the request count of a long run with clients clients.
// With more clients than the client table's slots, sessions get evicted
// and an evicted client registers again, which costs an op too: at most
// one Register per request it sends, so the cap halves (keeping a run's
// length close to that of one whose clients fit).
func LongRequests(clients int) int {
	if clients > replica.SimulationProfile().ClientTableMax {
		return LongRequestsMax / 2
	}
	return LongRequestsMax
}

// LongThinkTicks is how long each client of a long run with clients
// clients waits between its requests: its share of LongRequests spread
// over four fifths of LongSafetyTicks, so that the run's history spans
// most of its budget (without it the requests are done in some 20,000
// ticks) and the requests' own latency still ends them within it (a lone
// client thinking over the whole budget had 474 requests left for the
// liveness phase's 60,000 ticks: long seed 1079834944).
func LongThinkTicks(clients int) int {
	return LongSafetyTicks * 4 / 5 / max(LongRequests(clients)/max(clients, 1), 1)
}

// Long is the long-run preset (vopr -long): the swarm's draw for seed,
// with LongSafetyTicks of safety phase and LongRequests requests spread
// over it (LongThinkTicks), so that replicas crash and restart, and the
// journal wraps, all through a long history.
func Long(seed uint64) Options {
	o := Swarm(seed)
	o.SafetyTicksMax = LongSafetyTicks
	o.Requests = LongRequests(o.Clients)
	o.ThinkTicks = LongThinkTicks(o.Clients)
	return o
}

// checkpointInterval is the interval the run uses.
func (o *Options) checkpointInterval() int {
	if o.CheckpointInterval > 0 {
		return o.CheckpointInterval
	}
	return int(replica.SimulationProfile().CheckpointInterval)
}

// Check reports the first knob out of its range.
func (o *Options) Check() error {
	prob := func(name string, p float64) error {
		if p < 0 || p > 1 {
			return fmt.Errorf("%s %v outside [0, 1]", name, p)
		}
		return nil
	}
	switch {
	case o.Replicas < 1 || o.Replicas > 6:
		return fmt.Errorf("replicas %d outside 1..6", o.Replicas)
	case o.Clients < 1 || o.Clients > 64:
		return fmt.Errorf("clients %d outside 1..64", o.Clients)
	case o.Requests < 0 || o.Requests > 100_000:
		return fmt.Errorf("requests %d outside 0..100000", o.Requests)
	case o.ThinkTicks < 0 || o.ThinkTicks > 1<<24:
		return fmt.Errorf("think-ticks %d outside 0..16777216", o.ThinkTicks)
	case o.SafetyTicksMax < 1 || o.LivenessTicksMax < 1:
		return fmt.Errorf("tick budgets must be positive")
	case o.DelayMinNs < 0 || o.DelayMeanNs < 0 || o.ClogDurationMeanNs < 0:
		return fmt.Errorf("negative network delay")
	case o.ReadLatencyMeanNs < 0 || o.WriteLatencyMeanNs < 0 || o.SyncLatencyMeanNs < 0:
		return fmt.Errorf("negative storage latency")
	case o.RestartDelayMeanTicks < 0 || o.PauseMeanTicks < 0 || o.CrashIOFactor < 0:
		return fmt.Errorf("negative process knob")
	case o.ClockOffsetMaxNs < 0 || o.ClockDriftMaxPPB < 0 || o.ClockDriftMaxPPB > 1_000_000:
		return fmt.Errorf("clock knobs outside their range")
	case o.PartitionMode > network.PartitionPrimary || o.PartitionSymmetry > network.PartitionOneWay:
		return fmt.Errorf("partition mode or symmetry out of range")
	case o.RotationWindow && !o.Auth:
		return fmt.Errorf("a rotation window needs auth")
	case o.Rollback && o.PartitionMode != network.PartitionNone:
		return fmt.Errorf("the rollback nemesis drives the partitions: partition mode must be none, not %s", partitionModeName(o.PartitionMode))
	case o.CheckpointInterval < 0 || o.CheckpointInterval > 1<<20:
		return fmt.Errorf("checkpoint-interval %d outside 0..1048576 (0: the profile's 256)", o.CheckpointInterval)
	case o.JournalSlots < 0 || o.JournalSlots > 1<<16:
		return fmt.Errorf("journal-slots %d outside 0..65536 (0: the profile's 4096)", o.JournalSlots)
	case o.JournalSlots > 0 && o.JournalSlots < JournalSlotsMin(o.checkpointInterval(), replica.SimulationProfile().PipelineMax):
		return fmt.Errorf("journal-slots %d below %d, the smallest ring for checkpoint-interval %d and a pipeline of %d (the interval plus two pipelines)",
			o.JournalSlots, JournalSlotsMin(o.checkpointInterval(), replica.SimulationProfile().PipelineMax), o.checkpointInterval(), replica.SimulationProfile().PipelineMax)
	case o.JournalSlots == 0 && o.CheckpointInterval > 0 && JournalSlotsMin(o.CheckpointInterval, replica.SimulationProfile().PipelineMax) > int(replica.SimulationProfile().JournalSlots):
		return fmt.Errorf("checkpoint-interval %d needs a ring of %d slots, above the profile's %d: set -journal-slots",
			o.CheckpointInterval, JournalSlotsMin(o.CheckpointInterval, replica.SimulationProfile().PipelineMax), replica.SimulationProfile().JournalSlots)
	case o.EvictedRing < 0 || o.EvictedRing > 1<<20:
		return fmt.Errorf("evicted-ring %d outside 0..1048576 (0: Iggy's 4096)", o.EvictedRing)
	case o.FlushMessages < 0 || o.FlushMessages > 1<<20:
		return fmt.Errorf("flush-messages %d outside 0..1048576 (0: Iggy's 1024)", o.FlushMessages)
	case o.FormatExtentSlots < 0 || o.FormatExtentSlots > 1<<16:
		return fmt.Errorf("format-extent %d outside 0..65536 (0: the journal's 256)", o.FormatExtentSlots)
	case o.FlushBytes < 0 || o.FlushBytes > 1<<30:
		return fmt.Errorf("flush-bytes %d outside 0..1073741824 (0: Iggy's 1 MiB)", o.FlushBytes)
	case o.SegmentArtifactBytes < 0 || o.SegmentArtifactBytes > 1<<30:
		return fmt.Errorf("segment-artifact-bytes %d outside 0..1073741824 (0: the replica's 64 KiB)", o.SegmentArtifactBytes)
	case o.CrashTornProbability+o.CrashLostProbability > 1:
		return fmt.Errorf("crash torn + lost probabilities above 1")
	}
	for _, p := range []struct {
		name string
		v    float64
	}{
		{"reset", o.ResetProbability}, {"partition", o.PartitionProbability}, {"unpartition", o.UnpartitionProbability},
		{"repartition", o.RepartitionProbability}, {"clog", o.ClogProbability}, {"corrupt", o.CorruptProbability}, {"chunk-corrupt", o.ChunkCorruptProbability}, {"logout", o.LogoutProbability}, {"bad-requests", o.BadRequestProbability}, {"latent", o.LatentProbability},
		{"corrupt-sector", o.CorruptSectorProbability}, {"misdirect", o.MisdirectProbability},
		{"crash", o.CrashProbability}, {"pause", o.PauseProbability},
	} {
		if err := prob(p.name, p.v); err != nil {
			return err
		}
	}
	return nil
}

// Field is one knob as printed: its flag name and value.
type Field struct {
	Name  string
	Value string
}

// Fields lists the knobs in a fixed order, named as vopr's flags, for the
// options lines printed at the start of a run.
func (o *Options) Fields() []Field {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	i := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []Field{
		{"replicas", i(int64(o.Replicas))}, {"clients", i(int64(o.Clients))}, {"requests", i(int64(o.Requests))},
		{"think-ticks", i(int64(o.ThinkTicks))},
		{"lite", strconv.FormatBool(o.Lite)}, {"safety-ticks", i(int64(o.SafetyTicksMax))},
		{"liveness-ticks", i(int64(o.LivenessTicksMax))},
		{"delay-min-ns", i(o.DelayMinNs)}, {"delay-mean-ns", i(o.DelayMeanNs)},
		{"reset", f(o.ResetProbability)}, {"partition-mode", partitionModeName(o.PartitionMode)},
		{"partition-symmetry", partitionSymmetryName(o.PartitionSymmetry)},
		{"partition", f(o.PartitionProbability)}, {"unpartition", f(o.UnpartitionProbability)},
		{"repartition", f(o.RepartitionProbability)},
		{"clog", f(o.ClogProbability)}, {"clog-mean-ns", i(o.ClogDurationMeanNs)},
		{"corrupt", f(o.CorruptProbability)},
		{"read-latency-ns", i(o.ReadLatencyMeanNs)}, {"write-latency-ns", i(o.WriteLatencyMeanNs)},
		{"sync-latency-ns", i(o.SyncLatencyMeanNs)},
		{"latent", f(o.LatentProbability)}, {"corrupt-sector", f(o.CorruptSectorProbability)},
		{"misdirect", f(o.MisdirectProbability)}, {"crash-torn", f(o.CrashTornProbability)},
		{"crash-lost", f(o.CrashLostProbability)},
		{"crash", f(o.CrashProbability)}, {"crash-io-factor", f(o.CrashIOFactor)},
		{"restart-ticks", i(int64(o.RestartDelayMeanTicks))}, {"pause", f(o.PauseProbability)},
		{"pause-ticks", i(int64(o.PauseMeanTicks))},
		{"clock-offset-ns", i(o.ClockOffsetMaxNs)}, {"clock-drift-ppb", i(o.ClockDriftMaxPPB)},
		{"auth", strconv.FormatBool(o.Auth)}, {"rotation", strconv.FormatBool(o.RotationWindow)},
		{"repair-any-peer", strconv.FormatBool(o.RepairAnyPeer)},
		{"rollback", strconv.FormatBool(o.Rollback)}, {"stale-answers", strconv.FormatBool(o.StaleAnswers)},
		{"view-change-faults", strconv.FormatBool(o.ViewChangeFaults)}, {"bad-frames", strconv.FormatBool(o.BadFrames)},
		{"memory-loss-bounded", strconv.FormatBool(o.MemoryLossBounded)}, {"sends", strconv.FormatBool(o.Sends)},
		{"flush-messages", i(int64(o.FlushMessages))}, {"evicted-ring", i(int64(o.EvictedRing))},
		{"checkpoint-interval", i(int64(o.CheckpointInterval))},
		{"journal-slots", i(int64(o.JournalSlots))},
		{"chunk-corrupt", f(o.ChunkCorruptProbability)},
		{"logout", f(o.LogoutProbability)},
		{"bad-requests", f(o.BadRequestProbability)},
		{"format-extent", i(int64(o.FormatExtentSlots))},
		{"flush-bytes", i(int64(o.FlushBytes))},
		{"segment-artifact-bytes", i(int64(o.SegmentArtifactBytes))},
	}
}

// String is the options as `key=value` words.
func (o *Options) String() string {
	var b strings.Builder
	for i, f := range o.Fields() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f.Name + "=" + f.Value)
	}
	return b.String()
}

// PartitionModeNames and PartitionSymmetryNames name the modes as flags take them.
var (
	partitionModeNames     = []string{"none", "isolate-single", "uniform-size", "uniform-partition", "bridge", "primary"}
	partitionSymmetryNames = []string{"symmetric", "one-way"}
)

func partitionModeName(m network.PartitionMode) string {
	if int(m) < len(partitionModeNames) {
		return partitionModeNames[m]
	}
	return strconv.Itoa(int(m))
}

func partitionSymmetryName(s network.PartitionSymmetry) string {
	if int(s) < len(partitionSymmetryNames) {
		return partitionSymmetryNames[s]
	}
	return strconv.Itoa(int(s))
}

// ParsePartitionMode reads a partition mode by name.
func ParsePartitionMode(s string) (network.PartitionMode, error) {
	for i, n := range partitionModeNames {
		if n == s {
			return network.PartitionMode(i), nil
		}
	}
	return 0, fmt.Errorf("partition mode %q: want one of %s", s, strings.Join(partitionModeNames, ", "))
}

// ParsePartitionSymmetry reads a partition symmetry by name.
func ParsePartitionSymmetry(s string) (network.PartitionSymmetry, error) {
	for i, n := range partitionSymmetryNames {
		if n == s {
			return network.PartitionSymmetry(i), nil
		}
	}
	return 0, fmt.Errorf("partition symmetry %q: want one of %s", s, strings.Join(partitionSymmetryNames, ", "))
}
