package sim

import (
	"fmt"
	"io"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/checker/linearize"
	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/sim/plan"
	"github.com/iggy-vopr/vopr/storage"
	"github.com/iggy-vopr/vopr/workload"
)

// clusterOptions turns the VOPR's knobs into a cluster.
func clusterOptions(o Options) ClusterOptions {
	c := DefaultClusterOptions(o.Seed, o.Replicas, o.Clients)
	c.Requests = o.Requests
	c.ClientThinkTicks = o.ThinkTicks
	c.ClientLogoutProbability = o.LogoutProbability
	c.BadRequestProbability = o.BadRequestProbability
	c.Sends = o.Sends
	c.FlushMessages = o.FlushMessages
	c.FlushBytes, c.FormatExtentSlots = o.FlushBytes, o.FormatExtentSlots
	c.EvictedRing = o.EvictedRing
	c.SegmentArtifactBytes = o.SegmentArtifactBytes
	c.CheckpointInterval = o.CheckpointInterval
	if o.JournalSlots > 0 {
		c.Profile.JournalSlots = uint64(o.JournalSlots)
	}
	c.Auth, c.RotationWindow = o.Auth, o.RotationWindow
	c.Profile.RepairAnyPeer = o.RepairAnyPeer
	c.ClockOffsetMaxNs, c.ClockDriftMaxPPB = o.ClockOffsetMaxNs, o.ClockDriftMaxPPB
	n := network.DefaultOptions()
	n.DelayMinNs, n.DelayMeanNs = o.DelayMinNs, o.DelayMeanNs
	n.ResetProbability = o.ResetProbability
	n.PartitionMode, n.PartitionSymmetry = o.PartitionMode, o.PartitionSymmetry
	n.PartitionProbability, n.UnpartitionProbability = o.PartitionProbability, o.UnpartitionProbability
	n.RepartitionProbability = o.RepartitionProbability
	n.PartitionStabilityMinTicks, n.UnpartitionStabilityMinTicks = 100, 50
	n.ClogProbability, n.ClogDurationMeanNs = o.ClogProbability, o.ClogDurationMeanNs
	n.CorruptProbability = o.CorruptProbability
	n.ChunkCorruptProbability = o.ChunkCorruptProbability
	c.Network = n
	c.Storage = storage.Options{
		ReadLatency:          storage.Latency{MinNs: 5_000, MeanNs: o.ReadLatencyMeanNs},
		WriteLatency:         storage.Latency{MinNs: 5_000, MeanNs: o.WriteLatencyMeanNs},
		SyncLatency:          storage.Latency{MinNs: 20_000, MeanNs: o.SyncLatencyMeanNs},
		Faults:               storage.Faults{LatentProbability: o.LatentProbability, CorruptProbability: o.CorruptSectorProbability, MisdirectProbability: o.MisdirectProbability},
		CrashTornProbability: o.CrashTornProbability,
		CrashLostProbability: o.CrashLostProbability,
	}
	return c
}

// vopr is one run in progress.
type vopr struct {
	o       Options
	c       *Cluster
	chaos   *rand.Rand
	res     *Result
	trace   io.Writer
	tr      *tracer // nil without a trace
	faulted bool    // process faults on (the safety phase)
	core    []bool
	// unexcused: why a stall that looked unavoidable is not excused.
	unexcused string
	// The liveness phase's start: when, and the ops committed by then (for
	// the diagnosis's commit rate).
	livenessStartNs      int64
	livenessStartCommits uint64
	// livenessBacklog: the requests the clients had yet to see end when
	// the liveness phase began (livenessBudgetTicks).
	livenessBacklog int

	resetsByCause [network.ResetCauseCount]uint64
	repartitions  uint64       // partitions that replaced another without a heal
	diskFaults    [3]uint64    // latent sectors, corrupt sectors, misdirected writes
	rollback      *rollback    // the rollback nemesis, nil when off
	stale         *staleAnswer // the stale-answer nemesis, nil when off
	out           Outputs
	vcFaults      *vcFaults  // the view-change fault nemesis, nil when off
	badFrames     *badFrames // the bad-frames nemesis, nil when off
	// groups: the partition group ids any replica built (looked up only).
	groups  map[uint64]bool
	capture *captureWriter // nil without -capture
	frames  *frameTap      // nil without Outputs.Frames
	// partitionsCheckedNs, partitionsOK: when partitionsConverged last read
	// every group, and what it found.
	partitionsCheckedNs int64
	partitionsOK        bool
	// branched: Outputs.Branch has reseeded the fault streams.
	branched bool
	// crashWaits[i]: a crash drawn for replica i waits for the
	// memory-loss bound (Options.MemoryLossBounded) and fires at the first
	// tick the bound allows it, instead of being dropped.
	crashWaits []bool
	// formatFaults: of diskFaults and the torn sectors, those before each
	// replica's first format completed (ReplicaNode.formatFaults).
	formatFaults [4]uint64
}

// runVOPR is Run. hook, when set, sees the cluster once it is built and
// before anything runs: tests use it to script what the harness cannot reach
// otherwise (a replica that panics inside its own code); Run passes nil.
func runVOPR(o Options, out Outputs, hook func(*Cluster)) (res Result) {
	trace := out.Trace
	res = Result{Seed: o.Seed, Options: o, Probes: map[string]int{}, BranchedAtNs: -1}
	if err := o.Check(); err != nil {
		res.Outcome, res.Violation = SimError, "bad options: "+err.Error()
		return res
	}
	v := &vopr{o: o, res: &res, trace: trace, faulted: true, groups: map[uint64]bool{}, out: out}
	defer func() {
		if p := recover(); p != nil {
			v.recovered(p, string(debug.Stack()))
		}
		v.finish()
	}()
	co := clusterOptions(o)
	co.Network.Plan, co.Storage.Plan = out.Plan, out.Plan
	v.c = NewCluster(co)
	if out.Capture != nil {
		v.capture = &captureWriter{w: out.Capture}
	}
	v.res.PartitionFrames = map[string]uint64{}
	if out.Frames != nil {
		v.frames = newFrameTap(out.Frames)
		v.c.onPeerSent = func(from uint8, c network.ConnID, frame []byte) { v.frames.sent(v.c.Loop.Now(), from, c, frame) }
	}
	v.c.onPeerFrame = func(c network.ConnID, from, to uint8, frame []byte) {
		v.c.Checker.Delivered(v.c.Loop.Now(), from, to, frame)
		if g, ok := wire.GroupOf(frame); ok && g != wire.MetadataGroup {
			v.res.PartitionFrames[wire.HeaderOf(frame).Command().SnakeName()]++
		}
		if v.capture != nil {
			v.capture.frame(v.c.Loop.Now(), from, to, frame)
		}
		if v.frames != nil {
			v.frames.delivered(v.c.Loop.Now(), c, from, to, frame)
		}
	}
	v.chaos = v.c.Streams.Stream("vopr.process")
	v.c.OnEvent = v.onEvent
	if o.Rollback && o.Replicas >= 3 {
		v.rollback = newRollback(v)
	}
	if o.StaleAnswers && o.Replicas >= 2 {
		v.stale = newStaleAnswer(v)
		v.c.onPeerSend = v.stale.send
	}
	if o.ViewChangeFaults && o.Replicas >= 2 && v.c.Atlas != nil {
		v.vcFaults = newVCFaults(v)
	}
	if o.BadFrames && o.Replicas >= 2 {
		v.badFrames = newBadFrames(v)
		held := v.c.onPeerSend // the stale-answer nemesis's, or nil
		v.c.onPeerSend = func(from uint8, c network.ConnID, frame []byte) bool {
			return held != nil && held(from, c, frame) || v.badFrames.send(from, c, frame)
		}
	}
	if trace != nil {
		v.tr = newTracer(trace, v.c, &v.o)
	}
	if hook != nil {
		hook(v.c)
	}
	v.c.Loop.At(v.c.Loop.Now(), v, 0)
	if !v.safety() {
		return res
	}
	if o.Lite {
		res.Liveness = LivenessSkipped
		v.c.Checker.CheckSegments(false, nil, nil)
		v.violated()
		return res
	}
	v.liveness()
	if res.Outcome == Pass && res.Liveness != LivenessConverged {
		v.c.Checker.CheckSegments(false, nil, nil)
		v.violated()
	}
	return res
}

// recovered classifies a panic: one raised in replica (or checker) code is
// a correctness failure, anything else a simulator error.
func (v *vopr) recovered(p any, stack string) {
	if v.c != nil && v.violated() {
		// The checker named a broken promise before the replica's own
		// assertion tripped over it, in the same event: its name first.
		return
	}
	origin := panicOrigin(stack)
	v.res.Evidence = nil
	if v.c != nil {
		v.res.Evidence = v.c.Checker.Evidence()
		v.res.ViolationAtNs = v.c.Loop.Now()
	}
	if v.c != nil {
		v.c.receipts.panicked(p)
		if viol := v.c.Checker.Violation(); viol != nil && viol.Name == checker.FrameCrashed {
			v.violated() // the checker named the frame the replica panicked on
			return
		}
	}
	if strings.Contains(origin, "iggy-vopr/vopr/replica") || strings.Contains(origin, "iggy-vopr/vopr/storage.") {
		v.res.Outcome = Correctness
		v.res.Violation = fmt.Sprintf("replica panic: %v (in %s)", p, origin)
		return
	}
	v.res.Outcome = SimError
	v.res.Violation = fmt.Sprintf("simulator panic: %v (in %s)", p, origin)
}

// panicOrigin returns the first function below the panic in a stack trace,
// without its argument words: those are pointers and raw register values,
// which differ from run to run, and the violation is printed (output is
// deterministic).
func panicOrigin(stack string) string {
	lines := strings.Split(stack, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") && i+2 < len(lines) {
			f := strings.TrimSpace(lines[i+2])
			if j := strings.LastIndexByte(f, '('); j > 0 && strings.HasSuffix(f, ")") {
				f = f[:j]
			}
			return f
		}
	}
	return "unknown"
}

// Fire is the VOPR's own per-tick event: the rollback nemesis's round, then
// process faults (none while a quiet round runs).
func (v *vopr) Fire(nowNs int64, _ uint64) (string, int32, uint64) {
	v.c.Loop.After(kernel.TickNs, v, 0)
	if !v.faulted {
		return "", 0, 0
	}
	if v.rollback != nil {
		v.rollback.tick(nowNs)
		if v.rollback.quiet() {
			return "", 0, 0
		}
	}
	if v.stale != nil {
		v.stale.tick(nowNs)
	}
	if v.badFrames != nil {
		v.badFrames.tick(nowNs)
	}
	if v.vcFaults != nil {
		v.vcFaults.tick(nowNs)
		if v.vcFaults.quiet() {
			return "", 0, 0
		}
	}
	gate := v.out.Plan
	for _, n := range v.c.Replicas {
		switch {
		case !n.Up() && v.crashWaits != nil:
			v.crashWaits[n.ID()] = false // down already: the wait is over
		case n.Up() && !n.Paused():
			p := v.o.CrashProbability
			midIO := n.Device().InFlight() > 0
			if midIO {
				p *= v.o.CrashIOFactor
			}
			crash := plan.Site{Kind: plan.Crash, A: int32(n.ID()), B: -1}
			drawn := v.chaos.Float64() < p
			// A crash the bound deferred fires at the first tick it allows
			// (drawn again or not): dropping it cut the crashes of bounded
			// seeds to a third of what their knob draws (issue 28).
			waiting := v.crashWaits != nil && v.crashWaits[n.ID()]
			wants := drawn || waiting
			deferred := wants && v.memoryLossBeyondBound(n)
			args, fire := "", false
			if v.o.CrashProbability > 0 { // a knob off fires none of the plan's either
				args, fire = gate.Fire(nowNs, crash, wants && !deferred)
			}
			if deferred || fire && v.memoryLossBeyondBound(n) {
				if !waiting {
					v.res.Probes["crash deferred: the memory-loss bound"]++
				}
				if v.crashWaits == nil {
					v.crashWaits = make([]bool, len(v.c.Replicas))
				}
				v.crashWaits[n.ID()] = true
				continue
			}
			if fire {
				if waiting {
					v.crashWaits[n.ID()] = false
					v.res.Probes["crash deferred: fired once the memory-loss bound allowed it"]++
				}
				if midIO {
					v.res.CrashesMidIO++
				}
				n.Crash()
				v.tr.process("crash", n.ID(), midIO, "", 0)
				v.noteMemoryLoss()
				ticks := v.firingTicks(wants, args, v.o.RestartDelayMeanTicks)
				gate.Fired(nowNs, crash, strconv.FormatInt(ticks, 10))
				v.c.Loop.After(ticks*kernel.TickNs, restartEvent{v, n}, uint64(n.incarnation))
				return "vopr.crash", int32(n.ID()), 0
			}
			pause := plan.Site{Kind: plan.Pause, A: int32(n.ID()), B: -1}
			drawn = v.chaos.Float64() < v.o.PauseProbability
			if args, fire := gate.Fire(nowNs, pause, drawn); fire && v.o.PauseProbability > 0 {
				n.Pause()
				v.res.Pauses++
				ticks := v.firingTicks(drawn, args, v.o.PauseMeanTicks)
				gate.Fired(nowNs, pause, strconv.FormatInt(ticks, 10))
				v.tr.process("pause", n.ID(), false, "", ticks)
				v.c.Loop.After(ticks*kernel.TickNs, resumeEvent{v, n}, 0)
				return "vopr.pause", int32(n.ID()), 0
			}
		}
	}
	return "", 0, 0
}

// firingTicks is how long a crash or pause that fires lasts: drawn as
// without a plan when the draw fired it (a replay draws what the recording
// drew), and, replaying, the plan's ticks (args) whenever they are a count.
func (v *vopr) firingTicks(drawn bool, args string, meanTicks int) int64 {
	ticks := int64(1)
	if drawn {
		ticks = v.drawTicks(meanTicks)
	}
	if v.out.Plan.Replaying() {
		if t, err := strconv.ParseInt(args, 10, 64); err == nil && t >= 1 {
			ticks = t
		}
	}
	return ticks
}

// memoryLossBeyondBound reports whether crashing n would leave more than f
// replicas without partition memory at once (Options.MemoryLossBounded).
func (v *vopr) memoryLossBeyondBound(n *ReplicaNode) bool {
	if !v.o.MemoryLossBounded || v.withoutMemory(n) {
		return false
	}
	lost := 0
	for _, m := range v.c.Replicas {
		if m != n && v.withoutMemory(m) {
			lost++
		}
	}
	return lost+1 > v.o.Replicas-vsr.QuorumViewChange(v.o.Replicas)
}

// noteMemoryLoss tells the checker once more than f replicas are without
// partition memory at once (after a crash or the liveness phase's freeze):
// from then on it counts the losses Iggy's design permits instead of
// failing on them (checker.MemoryLostBeyondBound).
func (v *vopr) noteMemoryLoss() {
	if v.c.Checker.BeyondBound() {
		return
	}
	lost := 0
	for _, m := range v.c.Replicas {
		if v.withoutMemory(m) {
			lost++
		}
	}
	if f := v.o.Replicas - vsr.QuorumViewChange(v.o.Replicas); lost > f {
		v.res.Probes["memory lost beyond the bound"]++
		v.c.Checker.MemoryLostBeyondBound(lost, f)
	}
}

// withoutMemory: the replica is down or booting, or it restarted and has
// not yet caught up: its metadata replay (which rebuilds its partition
// groups, each amnesiac) has not reached what the cluster committed, or a
// partition group of it lost its memory journal and has not caught up.
func (v *vopr) withoutMemory(n *ReplicaNode) bool {
	r := n.Replica()
	if !n.Up() || r == nil {
		return true
	}
	if n.memoryLost {
		g := r.Metadata()
		if g.Status() != vsr.StatusNormal || g.CommitMin() < v.c.Checker.Committed() || r.PartitionMemoryLost() {
			return true
		}
		n.memoryLost = false
	}
	return r.PartitionMemoryLost()
}

// crashAndRestart crashes n as a nemesis does (traced, its memory loss
// noted) and restarts it restartTicks later.
func (v *vopr) crashAndRestart(n *ReplicaNode, restartTicks int64) {
	n.Crash()
	v.tr.process("crash", n.ID(), false, "", 0)
	v.noteMemoryLoss()
	v.c.Loop.After(restartTicks*kernel.TickNs, restartEvent{v, n}, uint64(n.incarnation))
}

func (v *vopr) drawTicks(mean int) int64 {
	return 1 + int64(v.chaos.ExpFloat64()*float64(mean))
}

type restartEvent struct {
	v *vopr
	n *ReplicaNode
}

func (e restartEvent) Fire(nowNs int64, incarnation uint64) (string, int32, uint64) {
	if e.n.Up() || uint64(e.n.incarnation) != incarnation || !e.v.faulted {
		return "", 0, 0
	}
	e.n.Restart()
	e.v.tr.process("restart", e.n.ID(), false, "", 0)
	return "vopr.restart", int32(e.n.ID()), 0
}

type resumeEvent struct {
	v *vopr
	n *ReplicaNode
}

func (e resumeEvent) Fire(nowNs int64, _ uint64) (string, int32, uint64) {
	if !e.n.Paused() {
		return "", 0, 0
	}
	e.n.Resume()
	e.v.tr.process("resume", e.n.ID(), false, "", 0)
	return "vopr.resume", int32(e.n.ID()), 0
}

// safety runs the safety phase: faults on, until every client is done or
// the budget ends. It reports false when the run failed.
func (v *vopr) safety() bool {
	for tick := 0; tick < v.o.SafetyTicksMax; tick++ {
		if clientsAllDone(v.c) {
			break
		}
		v.runTick()
		if v.violated() {
			return false
		}
	}
	v.c.Checker.AuditDurability(v.c.Loop.Now())
	return !v.violated()
}

func (v *vopr) violated() bool {
	if viol := v.c.Checker.Violation(); viol != nil {
		if v.res.Outcome != Correctness {
			// When the checker found it, not when the loop noticed: the
			// same tick, but the evidence's times are the checker's.
			v.res.ViolationAtNs = viol.AtNs
		}
		v.res.Outcome = Correctness
		if viol.Liveness {
			v.res.Outcome, v.res.Liveness = Liveness, LivenessFailed
		}
		v.res.Violation = viol.Error()
		v.res.Evidence = v.c.Checker.Evidence()
		return true
	}
	return false
}

func clientsAllDone(c *Cluster) bool {
	for _, cl := range c.Clients {
		if !cl.Done() {
			return false
		}
	}
	return true
}

// liveness heals a random core of at least a view-change quorum, freezes
// the rest, and requires convergence within the budget (DESIGN.md,
// "Phases"), and then that the core settles: stays converged in one view
// for settleTicks (settling).
func (v *vopr) liveness() {
	c, n := v.c, v.o.Replicas
	v.faulted = false
	size := vsr.QuorumViewChange(n) + v.chaos.IntN(n-vsr.QuorumViewChange(n)+1)
	perm := v.chaos.Perm(n)
	v.core = make([]bool, n)
	for _, i := range perm[:size] {
		v.core[i] = true
	}
	v.planCore()
	heal := []network.NodeID{}
	for _, i := range perm {
		if v.core[i] {
			heal = append(heal, network.NodeID(i))
		}
	}
	for _, cl := range c.Clients {
		heal = append(heal, cl.node)
	}
	c.Net.FaultsOff()
	for _, cl := range c.Clients {
		cl.wl.EndThinking()
	}
	if v.vcFaults != nil && v.vcFaults.requestsHeld != 0 {
		// A filter is no partition: Heal does not lift it (VOPR seed
		// 5550443: requests held for the replacer of a head round the
		// phase cut short, and a throughput collapse).
		v.vcFaults.releaseRequests()
		v.res.Probes["liveness: lifted the requests a head round held"]++
	}
	if n := c.Net.Filters(); n > 0 {
		panic(fmt.Sprintf("sim: %d network filters left into the liveness phase, which no heal lifts", n))
	}
	if v.o.MemoryLossBounded {
		v.catchUpBeforeFreeze()
	}
	c.Net.Heal(heal)
	for i, rn := range c.Replicas {
		if !v.core[i] {
			if rn.Up() {
				v.tr.process("freeze", rn.ID(), false, "", 0)
			}
			rn.Freeze() // it stays down, its disk as it is
			v.noteMemoryLoss()
			continue
		}
		rn.Device().FaultsOff()
		if rn.Paused() {
			rn.Resume()
			v.tr.process("resume", rn.ID(), false, "liveness", 0)
		}
		if !rn.Up() {
			v.tr.process("restart", rn.ID(), false, "liveness", 0)
		}
		rn.Restart()
	}
	v.tr.liveness(v.core)
	v.c.Checker.Quiet(v.c.Loop.Now(), v.core)
	v.livenessStartNs, v.livenessStartCommits = v.c.Loop.Now(), v.c.Checker.Committed()
	// The core must converge within the budget, and then settle (see
	// settling).
	for _, cl := range c.Clients {
		v.livenessBacklog += cl.Workload().Backlog()
	}
	if v.livenessBacklog > 0 {
		v.res.Probes["liveness: requests left to the phase"] += v.livenessBacklog
	}
	s := settling{budgetTicks: v.livenessBudgetTicks(), settleTicks: v.settleTicks(), rotation: uint32(n)}
	tick, verdict := 0, settleRunning
	for ; ; tick++ {
		converged, view := v.converged(), uint32(0)
		if converged {
			view = v.coreView()
		}
		changes := s.viewChanges
		verdict = s.observe(tick, converged, view, v.maxCoreView())
		if s.viewChanges > changes {
			v.res.Probes["liveness: the core changed view after it converged"]++
		}
		if verdict != settleRunning {
			break
		}
		v.runTick()
		v.c.Checker.QuietTick(v.c.Loop.Now(), kernel.TickNs)
		if v.violated() {
			return
		}
	}
	// A lost write is a correctness failure, settled or not, whatever stall
	// it caused.
	v.c.Checker.AuditDurability(v.c.Loop.Now())
	if v.violated() {
		return
	}
	if verdict == settleSettled {
		v.lostTails()
		v.res.Liveness = LivenessConverged
		v.finalFlush()
		return
	}
	if !s.ever {
		if why := v.explain(); why != "" {
			v.res.Liveness, v.res.Explanation = LivenessExplained, why
			return
		}
	}
	v.res.Outcome, v.res.Liveness = Liveness, LivenessFailed
	v.res.Evidence = c.Checker.Evidence()
	switch view := v.maxCoreView(); {
	case !s.ever && v.unexcused != "":
		v.res.Violation = "the core did not converge: " + v.unexcused + ": " + v.coreState()
	case !s.ever:
		v.res.Violation = "the core did not converge: " + v.coreState()
	case view != s.firstView:
		v.res.Violation = fmt.Sprintf("the core kept changing views after it converged: view %d -> %d in %d ticks, never %d ticks in one view: %s",
			s.firstView, view, tick-s.firstTick, s.settleTicks, v.coreState())
	default:
		v.res.Violation = fmt.Sprintf("the core did not stay converged in view %d: %s", s.firstView, v.coreState())
	}
}

// planCore notes the liveness core in the fault plan or, replaying one,
// takes the plan's core if it names at least a view-change quorum of
// replicas (a plan of another cluster size does not).
func (v *vopr) planCore() {
	gate, site := v.out.Plan, plan.Site{Kind: plan.Core, A: -1, B: -1}
	now := v.c.Loop.Now()
	// Drawn is false replaying: a plan without a core keeps the drawn one
	// (nothing suppressed).
	if args, fire := gate.Fire(now, site, !gate.Replaying()); fire && gate.Replaying() {
		core, ok := make([]bool, v.o.Replicas), true
		count := 0
		for _, f := range strings.Split(args, ",") {
			i, err := strconv.Atoi(f)
			if err != nil || i < 0 || i >= v.o.Replicas || core[i] {
				ok = false
				break
			}
			core[i] = true
			count++
		}
		if ok && count >= vsr.QuorumViewChange(v.o.Replicas) {
			v.core = core
		}
	}
	var ids []string
	for i, in := range v.core {
		if in {
			ids = append(ids, strconv.Itoa(i))
		}
	}
	gate.Fired(now, site, strings.Join(ids, ","))
}

// finalFlush ends a converged liveness phase as a clean shutdown would:
// every core replica writes the committed batches its segment logs still
// buffer, and then each core replica's logs must hold every committed
// batch of its partitions (checker.CheckSegments).
func (v *vopr) finalFlush() {
	var core []uint8
	left := 0
	flushed := make([]bool, len(v.c.Replicas))
	for i, rn := range v.c.Replicas {
		if !v.core[i] || rn.Replica() == nil {
			continue
		}
		core = append(core, uint8(i))
		left++
		rn.Replica().FlushSegments(func() { left--; flushed[i] = true })
	}
	for tick := 0; left > 0 && tick < finalFlushTicksMax; tick++ {
		v.runTick()
		if v.violated() {
			return
		}
	}
	if left > 0 {
		v.res.Outcome, v.res.Liveness = Liveness, LivenessFailed
		v.res.Violation = fmt.Sprintf("the core's final flush of its segment logs did not finish in %d ticks", finalFlushTicksMax)
		for _, r := range core {
			if n := v.c.Replicas[r]; !flushed[r] && n.Replica() != nil && !n.Paused() && n.dev.InFlight() == 0 {
				// Nothing left to wait for: a flush whose done never runs.
				v.res.Violation = fmt.Sprintf("%s: replica %d's final flush of its segment logs never finished, with no I/O in flight on its device %d ticks after it began",
					SegmentFlushLost, r, finalFlushTicksMax)
				break
			}
		}
		return
	}
	var groups []uint64
	if len(core) > 0 {
		groups = v.c.Replicas[core[0]].Replica().PartitionGroups()
	}
	v.c.Checker.CheckSegments(true, core, groups)
	v.violated()
}

// throughputCollapseTicks: a core that commits, but needs this many ticks
// (a second) or more per commit in the liveness phase, is named a
// throughput collapse in the diagnosis (a retransmit backoff stuck at its
// maximum, say), not a stall.
const throughputCollapseTicks = 100

// livenessBudgetTicks is the ticks the core has to converge: the
// configured budget, and throughputCollapseTicks more for each request the
// clients had yet to see end when the phase began. A safety phase whose
// faults slowed every request leaves work behind (long seed 1079834944:
// some 1,900 of 3,500 requests, at some 25 ticks each with two frozen
// replicas breaking the replication chain), and a core that gets through
// it faster than a throughput collapse is not stalled (DEVIATIONS.md 67).
func (v *vopr) livenessBudgetTicks() int {
	return v.o.LivenessTicksMax + v.livenessBacklog*throughputCollapseTicks
}

// SegmentFlushLost names a final flush that never finished although its
// replica's device had nothing in flight: SegmentLog.Flush promises its done
// once everything buffered is durable, and an idle device makes nothing
// durable later.
const SegmentFlushLost = "segment flush never finished"

// finalFlushTicksMax bounds the final flush: a few flushes per partition,
// each a write and a sync of a few milliseconds.
const finalFlushTicksMax = 1000

// settleVerdict is where the liveness phase stands (settling.observe).
type settleVerdict uint8

const (
	settleRunning    settleVerdict = iota // go on ticking
	settleSettled                         // converged, and stayed so in one view for settleTicks
	settleNoConverge                      // never converged within the budget
	settleUnsettled                       // converged, but did not settle (settling)
)

// settling follows the core through the liveness phase, one observation per
// tick. The core must converge within budgetTicks, and then settle: stay
// converged in one view (every core replica Normal, so no view change) for
// settleTicks. It may change view after it first converged, but at most
// rotation views (the replica count: one turn of every replica as primary)
// before it settles, and the settled stretch must begin within the budget
// (one begun by then may finish after it).
//
// The protocol allows such view changes (wire.md correction 0.1): the
// heartbeat token is one counter per group, and a replica that counted it
// past its peers (a primary whose heartbeats went unheard in a partition)
// ignores the heartbeats of every primary whose token is lower, until they
// catch up, so it may start a needless view change after the core converged,
// and again in each following view (swarm seed 1726: four in a row) until a
// primary holds the highest token, at the latest when that replica's turn
// comes. A core whose view changes go on, as with canary_heartbeat_reset
// (every new primary restarts its token from zero), passes a full rotation.
type settling struct {
	budgetTicks, settleTicks int
	rotation                 uint32

	ever        bool   // the core has converged
	firstTick   int    // the tick it first converged at
	firstView   uint32 // its view then
	lastView    uint32 // the view it was last seen converged in
	stretch     int    // ticks it has stayed converged in lastView
	viewChanges int    // times it was seen converged in a new view
}

// observe takes the core's state at tick (ticks from 0, one call each):
// whether it is converged, its view if so, and the highest view of a core
// replica.
func (s *settling) observe(tick int, converged bool, view, maxView uint32) settleVerdict {
	if s.ever && maxView > s.firstView+s.rotation {
		return settleUnsettled
	}
	if !converged {
		s.stretch = 0
		switch {
		case tick < s.budgetTicks:
			return settleRunning
		case s.ever:
			return settleUnsettled
		}
		return settleNoConverge
	}
	switch {
	case !s.ever:
		s.ever, s.firstTick, s.firstView, s.lastView = true, tick, view, view
	case view != s.lastView:
		s.viewChanges++
		s.lastView, s.stretch = view, 0
	}
	if s.stretch == 0 && tick > s.budgetTicks {
		return settleUnsettled // a stretch must begin within the budget
	}
	s.stretch++
	if s.stretch > s.settleTicks {
		return settleSettled
	}
	return settleRunning
}

// settleTicks is how long a converged core must stay converged in one view
// (settling): three normal-heartbeat timeouts at their longest. A backup
// starts a view change when it hears no new heartbeat for
// NormalHeartbeatTicks plus a jitter of up to half of it (500..750 ticks
// with vsr.DefaultTimeouts), so a core whose backups ignore their primary's
// heartbeats changes view within any 750 ticks; three of them (2250 ticks,
// 22.5 s) leave room for a view change already under way at convergence,
// and cost little, since the core is idle by then.
// catchUpBeforeFreeze defers the liveness phase's freeze, a crash of every
// replica outside the core, while it would exceed the memory-loss bound:
// every replica is healed and restarted, and the phase waits until none is
// without partition memory (or half its budget is spent), so the core does
// not start with its partition groups' only memory frozen outside it.
func (v *vopr) catchUpBeforeFreeze() {
	all := []network.NodeID{}
	for _, rn := range v.c.Replicas {
		all = append(all, network.NodeID(rn.ID()))
		rn.Device().FaultsOff()
		if rn.Paused() {
			rn.Resume()
		}
		if !rn.Up() {
			v.tr.process("restart", rn.ID(), false, "liveness", 0)
			rn.Restart()
		}
	}
	v.c.Net.Heal(all)
	for tick := 0; tick < v.o.LivenessTicksMax/2; tick++ {
		caught := true
		for _, rn := range v.c.Replicas {
			if v.withoutMemory(rn) {
				caught = false
				break
			}
		}
		if caught {
			return
		}
		v.runTick()
		if v.violated() {
			return
		}
	}
	v.res.Probes["liveness: froze replicas before every partition group caught up"]++
}

func (v *vopr) settleTicks() int {
	t := v.c.Options.Profile.Timeouts.NormalHeartbeatTicks
	return 3 * (t + t/2)
}

// maxCoreView is the highest view of a core replica that is up.
func (v *vopr) maxCoreView() uint32 {
	view := uint32(0)
	for i, rn := range v.c.Replicas {
		if v.core[i] && rn.Replica() != nil {
			view = max(view, rn.Replica().Metadata().View())
		}
	}
	return view
}

// coreView is the view of the first core replica (converged: every core
// replica is in it).
func (v *vopr) coreView() uint32 {
	for i, rn := range v.c.Replicas {
		if v.core[i] && rn.Replica() != nil {
			return rn.Replica().Metadata().View()
		}
	}
	return 0
}

// converged: every client is done, and every core replica is up, Normal, in
// one view whose primary is a core replica, and has applied everything
// committed anywhere. (A core whose view's primary is frozen is not done: its
// backups will time out and change view.)
func (v *vopr) converged() bool {
	if !clientsAllDone(v.c) {
		return false
	}
	if !v.metadataConverged() {
		// The partition groups are read only once the metadata plane has
		// converged: a replica replaying its metadata has not rebuilt its
		// groups yet, and a verdict cached from then (no groups: nothing
		// to converge) would call the core converged once the metadata
		// caught up, before its groups were even built (canary build of
		// seed 2061: "did not stay converged", two amnesiac replicas).
		v.partitionsCheckedNs = 0
		return false
	}
	return v.partitionsConverged()
}

// metadataConverged: every core replica is up and Normal in one view whose
// primary is in the core, with every committed metadata op applied.
func (v *vopr) metadataConverged() bool {
	top := v.c.Checker.Committed()
	view, first := uint32(0), true
	for i, rn := range v.c.Replicas {
		if !v.core[i] {
			continue
		}
		r := rn.Replica()
		if r == nil {
			return false
		}
		g := r.Metadata()
		if g.Status() != vsr.StatusNormal || g.CommitMin() < top {
			return false
		}
		if first {
			view, first = g.View(), false
			if !v.core[g.Primary()] {
				return false
			}
		} else if g.View() != view {
			return false
		}
	}
	return true
}

// partitionsConverged: every core replica runs the same partition groups,
// none without memory, each Normal in one view across the core and with
// every op committed anywhere in it applied. It reads every group, so it
// runs once the metadata plane has converged and then at most every
// partitionCheckTicks ticks (the simulator adds no per-group cost of its
// own to every tick).
func (v *vopr) partitionsConverged() bool {
	now := v.c.Loop.Now()
	if v.partitionsCheckedNs != 0 && now-v.partitionsCheckedNs < partitionCheckTicks*kernel.TickNs {
		return v.partitionsOK
	}
	v.partitionsCheckedNs, v.partitionsOK = now, false
	var ids []uint64
	for i, rn := range v.c.Replicas {
		if !v.core[i] {
			continue
		}
		r := rn.Replica()
		if r == nil || r.PartitionMemoryLost() {
			return false
		}
		got := r.PartitionGroups()
		if ids == nil {
			ids = got
		} else if !slices.Equal(ids, got) {
			return false
		}
	}
	for _, id := range ids {
		top := v.partitionTop(id)
		view, first := uint32(0), true
		for i, rn := range v.c.Replicas {
			if !v.core[i] {
				continue
			}
			g, _ := rn.Replica().PartitionGroup(id)
			if g.Status() != vsr.StatusNormal || g.CommitMin() < top || !first && g.View() != view {
				return false
			}
			view, first = g.View(), false
		}
	}
	v.partitionsOK = true
	return true
}

// explainAmnesia excuses a partition group's stall beyond the memory-loss
// bound: more than f replicas were without partition memory at once, and
// in the core the group has no Normal primary and fewer replicas that kept
// (or caught up with) their memory than a view-change quorum. The others
// withhold their votes until they have caught up (they may have
// acknowledged what nobody else holds), and nobody can catch them up; Iggy
// elects after its probes and loses what they held (DEVIATIONS.md 51). The
// stall is counted as a loss ("groups stalled without memory"). "" when
// there is none.
func (v *vopr) explainAmnesia() string {
	if !v.c.Checker.BeyondBound() || !v.metadataConverged() {
		return "" // a stall of the metadata plane is not excused by the partitions'
	}
	stalled, example := 0, ""
	for _, id := range v.coreGroups() {
		amnesia, converged, detail := v.amnesiaStall(id)
		if !amnesia {
			if !converged {
				// A group that did not converge for another reason is not
				// excused by the ones amnesia stalls.
				v.unexcused = fmt.Sprintf("partition group %d did not converge, and lost memory does not explain it", id)
				if detail, evicted := v.evictedStall(id); evicted {
					v.unexcused += " (" + detail + ")"
				}
				return ""
			}
			continue
		}
		if stalled == 0 {
			example = detail
		}
		stalled++
	}
	if stalled == 0 {
		return ""
	}
	v.res.Losses = append(v.res.Losses, checker.Loss{Name: "groups stalled without memory", Count: uint64(stalled)})
	return fmt.Sprintf("beyond the memory-loss bound, %d partition groups cannot elect: %s", stalled, example)
}

// coreGroups returns the partition groups of the first core replica up.
func (v *vopr) coreGroups() []uint64 {
	for i, rn := range v.c.Replicas {
		if v.core[i] && rn.Replica() != nil {
			return rn.Replica().PartitionGroups()
		}
	}
	return nil
}

// amnesiaStall reports whether partition group id is stalled by lost
// memory on the core (explainAmnesia: amnesiac replicas, none its Normal
// primary, fewer that kept their memory than a view-change quorum), whether
// the core converged on it, and the stall's description.
func (v *vopr) amnesiaStall(id uint64) (stalled, converged bool, detail string) {
	qvc := vsr.QuorumViewChange(v.o.Replicas)
	kept, amnesiac, primary := 0, 0, false
	converged, view, first := true, uint32(0), true
	for i, rn := range v.c.Replicas {
		if !v.core[i] || rn.Replica() == nil {
			continue
		}
		g, ok := rn.Replica().PartitionGroup(id)
		switch {
		case !ok:
			converged = false
			continue
		case g.Amnesiac():
			amnesiac++
		default:
			kept++
			primary = primary || g.Status() == vsr.StatusNormal && g.IsPrimary()
		}
		if g.Status() != vsr.StatusNormal || g.Amnesiac() || g.CommitMin() < v.partitionTop(id) || !first && g.View() != view {
			converged = false
		}
		view, first = g.View(), false
	}
	if !converged && v.c.Checker.BeyondBound() {
		if op, ok := v.bodyLostEverywhere(id); ok {
			return true, converged, fmt.Sprintf("partition group %d: op %d is committed, and no core replica's memory journal holds its prepare (lost with the memory journals of the replicas that held it)", id, op)
		}
	}
	if amnesiac == 0 || primary || kept >= qvc || !v.c.Checker.BeyondBound() {
		return false, converged, ""
	}
	return true, converged, fmt.Sprintf("partition group %d: %d core replicas lost its memory journal and withhold their votes, %d kept it, fewer than a view-change quorum (%d), and none is its Normal primary", id, amnesiac, kept, qvc)
}

// bodyLostEverywhere returns the lowest op of partition group id that a
// core replica knows committed (commit_max) but no core replica has applied
// and no core replica's memory journal holds: beyond the memory-loss bound
// the replicas that held its prepare may all have lost it (seed
// 15397073285662094362: a primary that knew op 1 by header alone, after
// both replicas that had committed it restarted), and nothing can repair it.
func (v *vopr) bodyLostEverywhere(id uint64) (uint64, bool) {
	low, high := ^uint64(0), uint64(0)
	for i, rn := range v.c.Replicas {
		if !v.core[i] || rn.Replica() == nil {
			continue
		}
		g, ok := rn.Replica().PartitionGroup(id)
		if !ok {
			return 0, false
		}
		low, high = min(low, g.CommitMin()+1), max(high, g.CommitMax())
	}
	for op := low; op <= high && op < low+partitionLostScanMax; op++ {
		held, applied := false, false
		for i, rn := range v.c.Replicas {
			if !v.core[i] || rn.Replica() == nil {
				continue
			}
			g, _ := rn.Replica().PartitionGroup(id)
			has, _ := rn.Replica().PartitionJournalHolds(id, op)
			held = held || has
			applied = applied || g.CommitMin() >= op
		}
		if !held && !applied {
			return op, true
		}
	}
	return 0, false
}

// partitionLostScanMax bounds bodyLostEverywhere's scan of one group.
const partitionLostScanMax = 4096

// evictedStall reports whether partition group id is stalled on the core
// with a core replica that needs an op every core replica's journal purged
// (a flushed op beyond the evicted ring, answered RangeEvicted): partition
// state transfer should have brought it the state, so the description
// goes into the failure's evidence.
func (v *vopr) evictedStall(id uint64) (string, bool) {
	top := v.partitionTop(id)
	for i, rn := range v.c.Replicas {
		if !v.core[i] || rn.Replica() == nil {
			continue
		}
		g, ok := rn.Replica().PartitionGroup(id)
		if !ok || g.CommitMin() >= top {
			continue
		}
		need := g.CommitMin() + 1
		evicted, held := []string{}, false
		for j, peer := range v.c.Replicas {
			if !v.core[j] || peer.Replica() == nil || j == i {
				continue
			}
			has, from := peer.Replica().PartitionJournalHolds(id, need)
			if has {
				held = true
				break
			}
			if from > need {
				evicted = append(evicted, fmt.Sprintf("replica %d retains from op %d", j, from))
			}
		}
		if !held && len(evicted) > 0 {
			return fmt.Sprintf("partition group %d: replica %d needs op %d, which every core replica that committed it purged after its flush (%s), and no partition state transfer brought it",
				id, i, need, strings.Join(evicted, ", ")), true
		}
	}
	return "", false
}

// partitionTop is the op the core must have applied in partition group id
// to have converged: the highest committed anywhere, or beyond the
// memory-loss bound the highest commit the core's replicas know (what was
// committed above it may be gone with the memory journals: lostTails
// counts it).
func (v *vopr) partitionTop(id uint64) uint64 {
	top := v.c.Checker.PartitionCommitted(id)
	if !v.c.Checker.BeyondBound() {
		return top
	}
	known := uint64(0)
	for i, rn := range v.c.Replicas {
		if v.core[i] && rn.Replica() != nil {
			if g, ok := rn.Replica().PartitionGroup(id); ok {
				known = max(known, g.CommitMax())
			}
		}
	}
	return min(top, known)
}

// lostTails, once the core has converged beyond the memory-loss bound,
// tells the checker where each partition group's log now ends: the ops
// committed above it are lost, and counted (checker.PartitionLogEnds).
func (v *vopr) lostTails() {
	if !v.c.Checker.BeyondBound() {
		return
	}
	for i, rn := range v.c.Replicas {
		if !v.core[i] || rn.Replica() == nil {
			continue
		}
		for _, id := range rn.Replica().PartitionGroups() {
			if g, ok := rn.Replica().PartitionGroup(id); ok {
				v.c.Checker.PartitionLogEnds(id, g.CommitMin())
			}
		}
		return
	}
}

// partitionCheckTicks is how often the liveness phase reads every
// partition group once the metadata plane converged.
const partitionCheckTicks = 10

// explain names a stall the protocol cannot avoid: a committed op that no
// core replica holds (with its committed identity) can never be applied by
// the core; the frozen replicas may have it. "" when there is none, or when
// the loss is a bug (unexcused says why: a core replica that acknowledged
// the op lost it, though no fault the atlas allows could take it).
func (v *vopr) explain() string {
	lowest := v.c.Checker.Committed()
	for i, rn := range v.c.Replicas {
		if v.core[i] && rn.Replica() != nil {
			lowest = min(lowest, rn.Replica().Metadata().CommitMin())
		}
	}
	for op := lowest + 1; op <= v.c.Checker.Committed(); op++ {
		h, _ := v.c.Checker.Header(op)
		held := false
		for i, rn := range v.c.Replicas {
			if !v.core[i] || rn.Replica() == nil {
				continue
			}
			if f, ok := rn.Replica().Journal().Frame(op); ok && wire.HeaderOf(f).Checksum() == h.Checksum() {
				held = true
				break
			}
			// A core replica whose durable checkpoint covers the op holds
			// it in its state: a state transfer carries a replica past it
			// (its ring may have reused the op's slot).
			if covered, err := v.c.disks.DurableCheckpoint(uint8(i)); err == nil && covered >= op && rn.Replica().Metadata().CommitMin() >= op {
				held = true
				break
			}
		}
		if !held {
			if r, ok := v.mustHold(op, h.Checksum()); ok {
				v.unexcused = fmt.Sprintf("committed op %d is missing on every core replica, but core replica %d acknowledged it and its disk may not fault that slot", op, r)
				return ""
			}
			return fmt.Sprintf("committed op %d is missing on every core replica", op)
		}
	}
	if why := v.explainMissingPrepare(); why != "" {
		return why
	}
	if why := v.explainAmnesia(); why != "" {
		return why
	}
	return ""
}

// mustHold returns a core replica that acknowledged op with identity id and
// whose disk may not lose it: the atlas grants it no fault on op's slot and
// no write to the slot was misdirected. An acknowledgement is checked
// durable when it is sent (checker.AckedBeforeDurable), so such a replica
// can lose a committed op only through a bug.
func (v *vopr) mustHold(op uint64, id wire.U128) (uint8, bool) {
	for i := range v.c.Replicas {
		r := uint8(i)
		if !v.core[i] {
			continue
		}
		if acked, ok := v.c.Checker.Acknowledged(r, op); ok && acked == id && !v.c.disks.Faultable(r, op) && !v.c.disks.Misdirected(r, op) {
			if covered, err := v.c.disks.DurableCheckpoint(r); err == nil && covered >= op {
				continue // its ring may reuse the slot: the checkpoint holds the op
			}
			return r, true
		}
	}
	return 0, false
}

func (v *vopr) coreState() string {
	var parts []string
	for i, rn := range v.c.Replicas {
		if !v.core[i] {
			continue
		}
		r := rn.Replica()
		if r == nil {
			parts = append(parts, fmt.Sprintf("replica %d down", i))
			continue
		}
		g := r.Metadata()
		part := fmt.Sprintf("replica %d %v view %d op %d commit %d/%d", i, g.Status(), g.View(), g.Op(), g.CommitMin(), g.CommitMax())
		if g.IsPrimary() && g.PipelineLen() > 0 {
			attempts, wait := g.PrepareRetransmit()
			part += fmt.Sprintf(" (primary: %d prepares in flight, retransmitted %d times, next in %d ticks)", g.PipelineLen(), attempts, wait)
		}
		parts = append(parts, part)
	}
	done, waiting := 0, ""
	for _, cl := range v.c.Clients {
		if cl.Done() {
			done++
		} else if waiting == "" {
			waiting = " (" + cl.Workload().Describe() + ")"
		}
	}
	s := fmt.Sprintf("%s; %d of %d clients done%s; %d ops committed", strings.Join(parts, ", "), done, len(v.c.Clients), waiting, v.c.Checker.Committed())
	if ticks := int64(v.c.Loop.Now()-v.livenessStartNs) / kernel.TickNs; v.livenessStartNs > 0 && ticks > 0 {
		commits := v.c.Checker.Committed() - v.livenessStartCommits
		switch {
		case commits == 0:
			s += fmt.Sprintf(", none of them in the liveness phase's %d ticks", ticks)
		case ticks/int64(commits) >= throughputCollapseTicks:
			s += fmt.Sprintf(", %d of them in the liveness phase's %d ticks: a throughput collapse (%d ticks per commit)", commits, ticks, ticks/int64(commits))
		default:
			s += fmt.Sprintf(", %d of them in the liveness phase's %d ticks (%d ticks per commit)", commits, ticks, ticks/int64(commits))
		}
	}
	if v.livenessStartNs > 0 {
		s += fmt.Sprintf("; %d requests were left when the phase began (a budget of %d ticks)", v.livenessBacklog, v.livenessBudgetTicks())
	}
	if p := v.partitionState(); p != "" {
		s += "; " + p
	}
	return s
}

// partitionState describes the first partition group the core has not
// converged on (partitionsConverged), "" when there is none.
func (v *vopr) partitionState() string {
	var ids []uint64
	for i, rn := range v.c.Replicas {
		if v.core[i] && rn.Replica() != nil {
			ids = rn.Replica().PartitionGroups()
			break
		}
	}
	for _, id := range ids {
		top := v.c.Checker.PartitionCommitted(id)
		var parts []string
		converged, view, first := true, uint32(0), true
		for i, rn := range v.c.Replicas {
			if !v.core[i] || rn.Replica() == nil {
				continue
			}
			g, ok := rn.Replica().PartitionGroup(id)
			if !ok {
				parts = append(parts, fmt.Sprintf("replica %d has no such group", i))
				converged = false
				continue
			}
			state := fmt.Sprintf("replica %d %v view %d log_view %d op %d commit %d/%d", i, g.Status(), g.View(), g.LogView(), g.Op(), g.CommitMin(), g.CommitMax())
			if g.Amnesiac() {
				state += " amnesiac"
			}
			parts = append(parts, state)
			if g.Status() != vsr.StatusNormal || g.CommitMin() < v.partitionTop(id) || !first && g.View() != view || g.Amnesiac() {
				converged = false
			}
			view, first = g.View(), false
		}
		if !converged {
			return fmt.Sprintf("partition group %d (%d ops committed): %s", id, top, strings.Join(parts, ", "))
		}
	}
	return ""
}

// onEvent counts and traces replica events.
func (v *vopr) onEvent(e replica.Event) {
	switch {
	case e.Kind == replica.EventGroup && e.Group.Kind == vsr.EventStartView && e.Group.Group == wire.MetadataGroup:
		v.res.ViewChanges++
	case e.Kind == replica.EventPartitionBuilt && !v.groups[e.PartitionGroup]:
		v.groups[e.PartitionGroup] = true
		v.res.Groups++
	}
	v.tr.replica(e)
	if v.rollback != nil && v.faulted {
		v.rollback.onEvent(v.c.Loop.Now())
	}
	if v.vcFaults != nil {
		v.vcFaults.event(e)
	}
}

// finish fills the result's counters from the cluster.
func (v *vopr) finish() {
	c, r := v.c, v.res
	if c == nil {
		return
	}
	r.Ticks = uint64(c.Loop.Now() / kernel.TickNs)
	r.Requests = c.Requests
	r.Commits = c.Checker.Committed()
	r.Messages = c.Checker.PartitionMessages()
	r.Polls = c.Checker.Polls()
	r.Checkpoints, r.StateTransfersMetadata, r.StateTransfersPartition = c.Checkpoints, c.StateTransfersMetadata, c.StateTransfersPartition
	r.BeyondBound = c.Checker.BeyondBound()
	r.Losses = append(c.Checker.LossesBeyondBound(), r.Losses...)
	slices.SortFunc(r.Losses, func(a, b checker.Loss) int { return strings.Compare(a.Name, b.Name) })
	r.Crashes, r.Restarts = c.Crashes, c.Restarts
	ns := c.Net.Stats()
	// A reset because a replica went down is a consequence of the crash,
	// not a network fault of its own.
	r.Partitions, r.Clogs, r.Corruptions = ns.Partitions, ns.Clogs, ns.FramesCorrupted
	r.Resets = ns.ResetsTotal() - ns.Resets[network.ResetDown]
	v.resetsByCause = ns.Resets
	v.repartitions = ns.Repartitions
	r.Frames = ns.FramesSent
	r.FramesByCommand = map[string]uint64{}
	for _, s := range c.Net.CommandStats() {
		r.FramesByCommand[wire.Command(s.Command).SnakeName()] = s.FramesSent
	}
	for _, rn := range c.Replicas {
		s := rn.Device().Stats()
		r.StorageFaults += s.LatentMarked + s.CorruptMarked + s.Misdirected
		v.diskFaults[0] += s.LatentMarked
		v.diskFaults[1] += s.CorruptMarked
		v.diskFaults[2] += s.Misdirected
		r.TornSectors += s.CrashTorn
		if f := rn.formatFaults; f != nil {
			s = *f
		}
		v.formatFaults[0] += s.LatentMarked
		v.formatFaults[1] += s.CorruptMarked
		v.formatFaults[2] += s.Misdirected
		v.formatFaults[3] += s.CrashTorn
	}
	for _, cl := range c.Clients {
		r.Evictions += uint64(cl.Workload().Evictions)
		for _, d := range cl.Completions {
			switch d.Kind {
			case workload.Replied, workload.Denied:
				r.Replies++
			case workload.Indefinite:
				r.Indefinite++
			}
		}
	}
	for name, count := range c.Probes {
		r.Probes[name] = count
	}
	// Evictions are the workload's rare path (more clients than client-table
	// slots): probes, so a campaign's table shows they happen.
	if r.Evictions > 0 {
		r.Probes["workload: session evicted"] += int(r.Evictions)
	}
	if r.Indefinite > 0 {
		r.Probes["workload: request indefinite"] += int(r.Indefinite)
	}
	for _, cl := range c.Clients {
		w := cl.Workload()
		if w.RouteMoves > 0 {
			r.Probes["workload: request sent where its route was last admitted"] += w.RouteMoves
		}
		if w.Transients > 0 {
			r.Probes["workload: transient refusal"] += w.Transients
		}
		if w.Timeouts > 0 {
			r.Probes["workload: request timed out"] += w.Timeouts
		}
	}
	v.faultProbes()
	r.Digest = c.Loop.Digest()
	r.Events = c.Loop.Processed()
	if v.out.Porcupine {
		v.porcupine()
	}
	if r.Outcome != Pass && r.ViolationAtNs == 0 {
		// A stall, porcupine's verdict, a final check: found at the end.
		r.ViolationAtNs = c.Loop.Now()
	}
}

// porcupine asks porcupine about the clients' metadata history, and fails
// a run the checker passed if no order explains what the clients saw.
func (v *vopr) porcupine() {
	var invocations []workload.Invocation
	var completions []workload.Completion
	for _, cl := range v.c.Clients {
		invocations = append(invocations, cl.Invocations...)
		completions = append(completions, cl.Completions...)
	}
	verdict, err := linearize.Check(invocations, completions, v.c.metadataLimits, v.out.PorcupineTimeout)
	if err != nil {
		if v.res.Outcome == Pass {
			v.res.Outcome, v.res.Violation = SimError, err.Error()
		}
		return
	}
	v.res.Porcupine = &verdict
	if v.res.Outcome == Pass && verdict.Result == porcupine.Illegal {
		v.res.Outcome = Correctness
		v.res.Violation = fmt.Sprintf("non-linearizable history (porcupine): no order of the %d metadata operations explains every reply the clients saw, though the checker found none wrong", verdict.Operations)
		if verdict.First != "" {
			v.res.Violation += "; the first reply none explains: " + verdict.First
		}
	}
}

// faultProbes names every fault class that occurred in the run as a probe
// ("fault: ..."), so that a campaign's probe table shows which classes its
// seeds actually exercised: partitions by mode and symmetry, crashes with
// I/O in flight, clock skew, and the rest.
func (v *vopr) faultProbes() {
	r := v.res
	var lowNs, highNs int64
	for i, rn := range v.c.Replicas {
		t := rn.clock.RealtimeNs(v.c.Loop.Now())
		if i == 0 || t < lowNs {
			lowNs = t
		}
		if i == 0 || t > highNs {
			highNs = t
		}
	}
	r.ClockSkewNs = highNs - lowNs
	count := func(name string, n uint64) {
		if n > 0 {
			r.Probes["fault: "+name] += int(n)
		}
	}
	count("crash", r.Crashes)
	count("crash with I/O in flight", r.CrashesMidIO)
	count("restart", r.Restarts)
	count("pause", r.Pauses)
	if v.rollback != nil {
		count("partition by the rollback nemesis", r.Partitions)
	} else {
		count(fmt.Sprintf("partition %s %s", partitionModeName(v.o.PartitionMode), partitionSymmetryName(v.o.PartitionSymmetry)), r.Partitions)
	}
	count("partition replaced by another without a heal", v.repartitions)
	for _, cause := range []network.ResetCause{network.ResetRandom, network.ResetTimeout, network.ResetOverflow} {
		count("connection reset ("+cause.String()+")", v.resetsByCause[cause])
	}
	count("clog", r.Clogs)
	count("frame corrupted on the wire", r.Corruptions)
	count("latent sector error on disk", v.diskFaults[0])
	count("sector corrupted on disk", v.diskFaults[1])
	count("write misdirected on disk", v.diskFaults[2])
	count("sector torn by a crash", r.TornSectors)
	// Of those, the ones that hit a replica's device before its first
	// format completed: the journal's format writes and the crashes that
	// tore them, no op's bytes (issue 28: at bfd3529, which formatted the
	// whole ring at boot, 279 of the 286 misdirects and 36,881 of the
	// 37,068 torn sectors of seeds 1..40 came before the replica's first
	// event, and the totals fell x0.05 and x0.01 once e328337 formatted an
	// extent at a time).
	count("latent sector error on disk while formatting", v.formatFaults[0])
	count("sector corrupted on disk while formatting", v.formatFaults[1])
	count("write misdirected on disk while formatting", v.formatFaults[2])
	count("sector torn by a crash while formatting", v.formatFaults[3])
	if r.ClockSkewNs >= 1_000_000 {
		count("clock skew over 1 ms", 1)
	}
	if r.ClockSkewNs >= 1_000_000_000 {
		count("clock skew over 1 s", 1)
	}
}
