package sim

import (
	"io"
	"time"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/sim/plan"
)

// Run runs one seed with its options: the safety phase, then (unless Lite)
// the liveness phase, and reports the result. With trace non-nil, every event
// is written to it as one JSON object per line. Run never panics: a panic
// inside replica code is a correctness failure, one inside the harness a
// simulator error.
func Run(o Options, trace io.Writer) Result {
	return runVOPR(o, Outputs{Trace: trace}, nil)
}

// Outputs are where a run writes beyond its result: the trace (JSON lines,
// trace.go) and the capture (every frame delivered between replicas,
// capture.go). Nil writers are off; a traced or captured run has the digest
// of a plain one.
type Outputs struct {
	Trace   io.Writer
	Capture io.Writer
	// Porcupine: after the run, check the clients' metadata history for
	// linearizability with porcupine under the checker's reference model
	// (checker/linearize); Result.Porcupine holds the verdict, and a
	// history porcupine finds not linearizable fails a run the checker
	// passed. PorcupineTimeout bounds the search in wall time (0: none): a
	// search that runs out is Unknown, which fails nothing.
	Porcupine        bool
	PorcupineTimeout time.Duration
	// RecordTrace, when non-nil, receives the kernel's per-event trace
	// (kernel.Loop.RecordTrace): every event folded into the digest, with
	// its time, kind, node and hash, from the first event on. Two runs of
	// one seed compared with kernel.DescribeDivergence name the first
	// event where they part (vopr -check-determinism). Off by default: it
	// holds every event in memory (a kernel.TraceEntry, some 48 bytes,
	// each), and recording changes nothing else, the digest included.
	RecordTrace *[]kernel.TraceEntry
	// Plan, when non-nil, records the run's fault firings (plan.Recorder)
	// or replays a fault plan (plan.Replayer): crashes, pauses, partitions
	// and heals, clogs, resets, frame and chunk corruption, sector faults
	// and the liveness core. The targeted nemeses (rollback, stale answers,
	// view-change faults) are not in it: their knobs turn them off. A
	// recording run has the digest of a plain one.
	Plan *plan.Gate
	// Branch, when non-nil, reseeds the run's fault streams at a moment
	// (kernel.Streams.Reseed): up to it the run is the seed's own, from it
	// its faults draw another future (vopr branch). It releases a
	// replaying Plan there too, so that the reseeded draws decide.
	Branch *Branch
	// Frames, when non-nil, sees every frame delivered from one replica to
	// another, with when it was sent (PeerFrame; frames.go), as the
	// capture does: a timeline's messages. A run with it has the digest of
	// a plain one.
	Frames func(PeerFrame)
}

// Branch is where and how a run branches: at the first tick that starts at
// or after AtNs (virtual time), with Salt (not 0) reseeding the fault
// streams. A branch at 0 reseeds before the first tick.
type Branch struct {
	AtNs int64
	Salt uint64
}

// RunWith is Run with every output.
func RunWith(o Options, out Outputs) Result {
	if out.RecordTrace == nil {
		return runVOPR(o, out, nil)
	}
	// The hook sees the cluster before its first event fires, so the
	// trace starts where the digest does.
	var loop *kernel.Loop
	res := runVOPR(o, out, func(c *Cluster) {
		loop = c.Loop
		loop.RecordTrace(true)
	})
	*out.RecordTrace = nil
	if loop != nil {
		*out.RecordTrace = loop.Trace()
	}
	return res
}

// Performance is the fixed, fault-free configuration of `vopr -performance`,
// so that its frames per committed op per command are a deterministic
// protocol-cost figure to track across changes. Every knob is set here, none
// drawn, so a change to Swarm cannot move the figure:
//
//   - six replicas (the largest cluster: replication costs the most), four
//     clients (fewer than the client table's slots: no evictions), 512
//     requests, seed 92 (it still draws the workload mix and the replicas'
//     timer jitter);
//   - a network of 0.5 ms minimum and 1 ms mean delay; a disk of 100 us
//     reads, 200 us writes and 2 ms syncs (means; the minimums are those of
//     every run). With syncs of 1 ms or less this seed also repairs an op or
//     two at start-up, which would blur the figure;
//   - no clock skew, no handshake auth (it adds no frames after the
//     handshake), every fault off;
//   - the partition workload on (sends, polls, consumer offsets, as the
//     swarm's mix draws them for the seed), so that the frames of the
//     partition planes per committed message are a figure too;
//   - the safety phase only (Lite): the liveness phase freezes the replicas
//     outside a drawn core, and the view change that forces when the primary
//     is frozen is not the cost of normal operation;
//   - the knobs of faults that are off (clog length, crash tears, restart and
//     pause lengths, the crash multiplier) hold moderate values, used only
//     when a knob flag turns their fault on over -performance.
func Performance() Options {
	return Options{
		Seed:     92,
		Replicas: 6, Clients: 4, Requests: 512,
		Lite:           true,
		SafetyTicksMax: 20_000, LivenessTicksMax: 60_000,

		DelayMinNs: 500_000, DelayMeanNs: 1_000_000,
		ResetProbability:     0,
		PartitionMode:        network.PartitionNone,
		PartitionSymmetry:    network.PartitionSymmetric,
		PartitionProbability: 0, UnpartitionProbability: 0.02,
		ClogProbability: 0, ClogDurationMeanNs: 200_000_000,
		CorruptProbability: 0,

		ReadLatencyMeanNs: 100_000, WriteLatencyMeanNs: 200_000, SyncLatencyMeanNs: 2_000_000,
		LatentProbability: 0, CorruptSectorProbability: 0, MisdirectProbability: 0,
		CrashTornProbability: 0.5, CrashLostProbability: 0.25,

		CrashProbability: 0, CrashIOFactor: 10, RestartDelayMeanTicks: 100,
		PauseProbability: 0, PauseMeanTicks: 100,

		ClockOffsetMaxNs: 0, ClockDriftMaxPPB: 0,
		Auth: false, RotationWindow: false,

		Sends: true,
	}
}
