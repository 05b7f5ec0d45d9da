package vsr

import (
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"
	"math/bits"
	"math/rand/v2"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Deps are the group's ports to the rest of the replica.
type Deps struct {
	Out     Outbox
	Journal Journal
	Machine StateMachine
	Sink    Sink
	// Rand is the replica's own seeded stream (timeout jitter, nonces).
	Rand *rand.Rand
	// RealtimeUs reads the replica's realtime clock in microseconds, for
	// prepare timestamps.
	RealtimeUs func() uint64
	// Plane stamps and admits a partition plane's prepares; nil on the
	// metadata plane.
	Plane Plane
	// StateTransfer, when set, hears that a peer answered a repair with
	// RangeEvicted above commit_min + 1: the ops this replica needs next are
	// gone from that peer's journal, and only a state transfer from a
	// checkpoint at or above retained - 1 can bring it past them. nil: the
	// plane has no state transfer yet.
	StateTransfer func(peer uint8, retained uint64)
}

// Recovered is what the replica's storage knew when the group started.
type Recovered struct {
	// State is the durable (view, log_view, commit_max) from the superblock.
	State wire.VsrState
	// Head is the highest op the journal may have acknowledged: the highest
	// op it holds or knows the header of, and any op whose slot it cannot
	// read. The group never reports an op below it.
	Head uint64
	// Fresh is set when the replica was just formatted and never ran: it
	// starts Normal in view 0 instead of probing for the view.
	Fresh bool
	// Tick is the host's tick count when the group starts: the group's
	// clock, which its timers' deadlines count in, starts there (0 for a
	// group ticked from the replica's start).
	Tick uint64
	// Unwritten says no state of this group was ever made durable here (a
	// partition group just built): nothing that implies a view leaves the
	// replica until the first WriteState is done, so that after a crash the
	// absence of a state proves the group never acted here.
	Unwritten bool
	// LogHead is the op the superblock recorded as the head of its
	// log_view's log when it persisted it (DEVIATIONS.md 50), and
	// LogHeadKnown whether it recorded one: with its header, or op 0, the
	// head of an empty log, which has none (DEVIATIONS.md 74: the log_view
	// adopted an empty log, and any op above it stamped before the
	// log_view is a leftover). An op above it whose journaled
	// header was stamped in a view before the log_view is a leftover of a
	// log the log_view replaced, which the reconcile that adopted the
	// log_view meant to forget (a misdirected write can keep it): every op
	// the log_view appended above the adopted head was stamped in it. See
	// Group.leftover.
	LogHead      uint64
	LogHeadKnown bool
	// Checkpoint is the durable checkpoint the replica restored its state
	// from (Op 0: none, the state machine starts empty): the group starts
	// with commit_min at its op and applies only the ops above it.
	Checkpoint CheckpointRef
	// Amnesiac says the journal lost what it held before the restart (a
	// partition plane's memory journal): the replica may have acknowledged
	// ops it no longer knows of, so it must not vote until it has caught up
	// (see Group.Amnesiac).
	Amnesiac bool
}

// CheckpointRef names a checkpoint: the op whose state it holds, the
// prepare identity of that op (the parent of the next) and its timestamp.
type CheckpointRef struct {
	Op        uint64
	Identity  wire.U128
	Timestamp uint64
}

// Group is one replica's state in one consensus group.
type Group struct {
	cfg  Config
	deps Deps

	status    Status
	view      uint32
	logView   uint32
	durable   wire.VsrState // what the journal last made durable
	unwritten bool          // no state was ever made durable (Recovered.Unwritten)
	writing   bool          // a WriteState is in flight
	written   wire.VsrState // the state that write carries

	op        uint64 // head: highest op in this replica's log
	commitMin uint64 // highest op applied
	commitMax uint64 // highest op known committed

	// canon holds the headers known canonical in the current view for ops
	// above commitMin: from the primary's own prepares, prepares received
	// from the view's primary, a StartView, the view-change merge, or the
	// hash chain down from one of those. Applying or acknowledging an op
	// requires its canonical header. Only looked up, never iterated.
	canon map[uint64]wire.Header
	// appliedIdentity is the identity of op commitMin (zero at op 0), and
	// appliedTimestamp its prepare timestamp (a state transfer's server
	// offers both with its state at commit_min).
	appliedIdentity  wire.U128
	appliedTimestamp uint64
	// vouchedFrom: the journal's frames of ops vouchedFrom..commitMin are
	// the canonical ones (applied from the journal, or chained down to an
	// applied identity). Below it a frame may be a stale prepare an install
	// skipped past (the ops an install covers were never applied from this
	// journal): the primary, whose backups take its frames of committed ops
	// unchecked, does not serve those (VOPR seed 191 with -evicted-ring 1
	// -flush-messages 1: a primary that installed op 10 over a journal still
	// holding its old view's ops 6-9 served them, and a backup committed
	// them).
	vouchedFrom uint64
	// reconcileSeq numbers the reconciles (reconcileThen): only the latest
	// one's completion acts.
	reconcileSeq uint64

	// checkpointOp and checkpointSum are the checkpoint the superblock is
	// to record (Checkpoint); checkpointWaits run once it does.
	checkpointOp   uint64
	checkpointSum  wire.U128
	checkpointWait []checkpointWait

	timestampMax uint64 // the highest prepare timestamp seen in this group
	sentView     uint32 // the highest view this replica sent a message in
	sentLogView  uint32 // the log_view it last sent a message with
	sentAny      bool
	heartbeat    uint64 // the Commit liveness token (one counter per group)

	// Primary state.
	pipeline []*pending
	requests []Proposal

	// Backup state.
	ackedTo uint64 // PrepareOk sent for every op in (commitMin, ackedTo] in this view
	// appending holds, per op, the identity of the latest Append still in
	// flight. A frame the journal holds is durable unless its op is here:
	// after a restart everything the journal recovered is durable.
	appending map[uint64]wire.U128
	// leftover: journaled ops above the log_view's recorded head stamped
	// before it (markLeftovers), reported blank until appended again or
	// reconciled; nil when none.
	leftover map[uint64]bool

	// amnesiac: this replica lost its journal at a restart and has not yet
	// applied the log of a view it joined since (up to amnesiaUntil, the
	// head of the latest such log, known once amnesiaKnown). Until then it is quorum-invisible in view
	// changes: it sends no DoViewChange, so it neither nacks an op it may
	// have acknowledged before the crash nor counts towards a view-change
	// quorum that might then miss a committed op, and it cannot lead a view
	// (the new primary counts its own vote). Its acknowledgements stand:
	// it acknowledges only ops it holds again (partition-plane.md "When
	// more than f replicas of a group lose memory": Iggy's restarted
	// partition joins as a quorum-invisible backup).
	amnesiac     bool
	amnesiaUntil uint64
	amnesiaKnown bool

	vc       viewChange
	recovery recoveryState
	// catchUp: a StartView held until the journal's ring can hold its log.
	catchUp *catchUp
	repair  repairState
	// repairSilent: peers whose last repair request timed out and that
	// have sent nothing since; the rotation skips them while another peer
	// remains, so a peer that is down costs one repair timeout, not one per
	// stretch.
	repairSilent uint64

	prepareTimeout    timeout
	commitTimeout     timeout
	normalTimeout     timeout
	svcTimeout        timeout
	dvcTimeout        timeout
	viewChangeTimeout timeout
	rsvTimeout        timeout
	repairTimeout     timeout
	clock             timerClock
}

// checkpointWait is a done of Checkpoint, run once the superblock records
// op or a later checkpoint.
type checkpointWait struct {
	op   uint64
	done func()
}

// pending is one prepare in the primary's pipeline.
type pending struct {
	op     uint64
	header wire.Header
	frame  []byte
	acks   uint64 // bit r: replica r holds it durably (the primary's own bit once its journal has)
}

// New starts a group from what storage recovered.
func New(cfg Config, deps Deps, rec Recovered) *Group {
	cfg.validate()
	if deps.Out == nil || deps.Journal == nil || deps.Machine == nil || deps.Sink == nil || deps.Rand == nil || deps.RealtimeUs == nil {
		panic("vsr: missing dependency")
	}
	if rec.State.LogView > rec.State.View {
		panic("vsr: recovered log_view above view")
	}
	if c := rec.Checkpoint; c.Op > 0 && (c.Op != rec.State.CheckpointOp || c.Op > rec.State.CommitMax || c.Identity.IsZero()) {
		panic(fmt.Sprintf("vsr: restored checkpoint at op %d (identity %s), the superblock records checkpoint %d and commit_max %d",
			c.Op, c.Identity, rec.State.CheckpointOp, rec.State.CommitMax))
	}
	t := cfg.Timeouts
	g := &Group{
		cfg:       cfg,
		deps:      deps,
		view:      rec.State.View,
		logView:   rec.State.LogView,
		durable:   rec.State,
		unwritten: rec.Unwritten,
		commitMax: rec.State.CommitMax,
		commitMin: rec.Checkpoint.Op,
		// The head is at least the recorded checkpoint's op, readable or
		// not: that op is committed and was in the log this replica went
		// Normal with, and a vote whose head fell below it would say the
		// replica's log of its log_view ends before it (an implied nack of
		// a committed op, VOPR seed 3729636 -long: a checkpoint installed
		// by state transfer, unreadable after the next crash, and a journal
		// that never held op 390).
		op: max(rec.Head, rec.Checkpoint.Op, rec.State.CheckpointOp),
		// A checkpoint the replica could not read stays recorded (the
		// journal's ring has wrapped over the ops it covers, so they are
		// gone from here): the group applies from op 1 what it still can,
		// and a state transfer of that checkpoint or a later one restores
		// the rest (StateTransferNeed).
		checkpointOp:     rec.State.CheckpointOp,
		checkpointSum:    rec.State.CheckpointChecksum,
		appliedIdentity:  rec.Checkpoint.Identity,
		appliedTimestamp: rec.Checkpoint.Timestamp,
		timestampMax:     rec.Checkpoint.Timestamp,
		canon:            make(map[uint64]wire.Header),
		appending:        make(map[uint64]wire.U128),
		// A lone replica has nobody to be invisible to: losing its memory
		// is losing the group's (more than f replicas).
		amnesiac: rec.Amnesiac && cfg.ReplicaCount > 1 && !rec.Fresh && !bug.AmnesiaVotes,
	}
	r, clock := deps.Rand, &g.clock
	g.clock = timerClock{now: rec.Tick, stage: -1}
	// The stages are the order Tick checks the timers in.
	g.prepareTimeout = newTimeout("prepare", t.PrepareRetransmitTicks, true, r, clock, 0)
	g.commitTimeout = newTimeout("commit_message", t.CommitMessageTicks, false, r, clock, 1)
	g.normalTimeout = newTimeout("normal_heartbeat", t.NormalHeartbeatTicks, false, r, clock, 2)
	g.svcTimeout = newTimeout("start_view_change", t.StartViewChangeTicks, false, r, clock, 3)
	g.dvcTimeout = newTimeout("do_view_change", t.DoViewChangeTicks, false, r, clock, 4)
	g.viewChangeTimeout = newTimeout("view_change_status", t.ViewChangeStatusTicks, false, r, clock, 5)
	g.rsvTimeout = newTimeout("request_start_view", t.RequestStartViewTicks, false, r, clock, 6)
	g.repairTimeout = newTimeout("repair", t.RepairTicks, false, r, clock, 7)
	g.vc.reset(cfg.ReplicaCount)
	g.markLeftovers(rec)
	g.vouchedFrom = g.chainDown(g.commitMin, g.appliedIdentity)

	switch {
	case rec.Fresh || cfg.ReplicaCount == 1:
		g.startFresh(rec)
	default:
		g.startRecovering()
	}
	return g
}

// Status returns the replica's status.
func (g *Group) Status() Status { return g.status }

// View returns the current view.
func (g *Group) View() uint32 { return g.view }

// LogView returns the last view in which the replica was Normal.
func (g *Group) LogView() uint32 { return g.logView }

// Op returns the head op.
func (g *Group) Op() uint64 { return g.op }

// CommitMin returns the highest applied op.
func (g *Group) CommitMin() uint64 { return g.commitMin }

// Leftover reports whether the journal's op is a leftover of a replaced
// log (above the log_view's recorded head, stamped before the log_view;
// markLeftovers), which this replica's vote reports blank.
func (g *Group) Leftover(op uint64) bool { return g.leftover[op] }

// CommitMax returns the highest op known committed.
func (g *Group) CommitMax() uint64 { return g.commitMax }

// Primary returns the primary of the current view.
func (g *Group) Primary() uint8 { return PrimaryIndex(g.view, g.cfg.ReplicaCount) }

// IsPrimary reports whether this replica is the primary of its view and Normal.
func (g *Group) IsPrimary() bool { return g.status == StatusNormal && g.Primary() == g.cfg.Replica }

// Config returns the group's configuration.
func (g *Group) Config() Config { return g.cfg }

// Amnesiac reports whether the replica lost its journal at a restart and
// has not caught up since: it withholds its vote in view changes.
func (g *Group) Amnesiac() bool { return g.amnesiac }

// caughtUp ends amnesia once the replica has applied the log of the first
// view it joined after its restart.
func (g *Group) caughtUp() {
	if g.amnesiac && g.amnesiaKnown && g.commitMin >= g.amnesiaUntil {
		g.amnesiac = false
		g.probe("amnesiac replica caught up: it votes again")
	}
}

// PipelineLen returns the number of prepares in the primary's pipeline.
func (g *Group) PipelineLen() int { return len(g.pipeline) }

// PrepareRetransmit describes the primary's prepare retransmission: how
// many times it fired since the pipeline last moved, and the ticks it waits
// now before the next (its backoff), 0 when it is not running (for a
// liveness failure's diagnosis).
func (g *Group) PrepareRetransmit() (attempts, waitTicks int) {
	if !g.prepareTimeout.running {
		return 0, 0
	}
	return g.prepareTimeout.attempts, g.prepareTimeout.after
}

// Tick advances the group by one tick (10 ms) and runs the timers that fire.
func (g *Group) Tick() { g.TickTo(g.clock.now + 1) }

// TickTo advances the group's clock to tick now and runs the timers due
// then, in Tick's order. A host that calls it only at the ticks NextDue
// names, skipping the ticks at which nothing is due, sees the same fires as
// one that calls Tick every tick.
func (g *Group) TickTo(now uint64) {
	if now <= g.clock.now {
		panic(fmt.Sprintf("vsr: ticking to %d at tick %d", now, g.clock.now))
	}
	g.clock.now = now
	c := &g.clock
	c.stage = 0
	if g.prepareTimeout.tick() {
		g.onPrepareTimeout()
	}
	c.stage = 1
	if g.commitTimeout.tick() {
		g.onCommitTimeout()
	}
	c.stage = 2
	if g.normalTimeout.tick() {
		g.onNormalTimeout()
	}
	c.stage = 3
	if g.svcTimeout.tick() {
		g.sendStartViewChange()
	}
	c.stage = 4
	if g.dvcTimeout.tick() {
		g.sendDoViewChange()
	}
	c.stage = 5
	if g.viewChangeTimeout.tick() {
		g.onViewChangeTimeout()
	}
	c.stage = 6
	if g.rsvTimeout.tick() {
		g.onRequestStartViewTimeout()
	}
	c.stage = 7
	if g.repairTimeout.tick() {
		g.onRepairTimeout()
	}
	c.stage = -1
	g.checkInvariants()
}

// Now returns the group's tick count.
func (g *Group) Now() uint64 { return g.clock.now }

// SetNow moves the group's clock to tick now without running a timer: a
// host that ticks the group only when a timer is due (TickTo) calls it
// before handing the group anything else, so that timers armed then count
// from now. No timer may be due at or before now (the host would have
// ticked the group then).
func (g *Group) SetNow(now uint64) {
	if now < g.clock.now {
		panic(fmt.Sprintf("vsr: clock moving back from tick %d to %d", g.clock.now, now))
	}
	if now == g.clock.now {
		return
	}
	if due, ok := g.NextDue(); ok && due <= now {
		panic(fmt.Sprintf("vsr: clock jumping to tick %d over a timer due at %d", now, due))
	}
	g.clock.now = now
}

// NextDue returns the earliest tick at which a timer of the group fires,
// and false when none is running (an idle group waits for a frame).
func (g *Group) NextDue() (uint64, bool) {
	var due uint64
	any := false
	for _, t := range [...]*timeout{&g.prepareTimeout, &g.commitTimeout, &g.normalTimeout, &g.svcTimeout,
		&g.dvcTimeout, &g.viewChangeTimeout, &g.rsvTimeout, &g.repairTimeout} {
		if t.running && (!any || t.due < due) {
			due, any = t.due, true
		}
	}
	return due, any
}

// Receive handles one consensus frame from replica from. The frame has
// passed wire.Validate and the bus's rules (replica < replica count); it is
// valid only during the call.
func (g *Group) Receive(from uint8, frame []byte) {
	if from >= g.cfg.ReplicaCount || from == g.cfg.Replica {
		panic(fmt.Sprintf("vsr: frame from replica %d at replica %d of %d", from, g.cfg.Replica, g.cfg.ReplicaCount))
	}
	g.repairSilent &^= 1 << from // it talks again
	h := wire.HeaderOf(frame)
	switch h.Command() {
	case wire.CommandPrepare:
		g.onPrepare(from, frame)
	case wire.CommandPrepareOk:
		g.onPrepareOk(from, h)
	case wire.CommandCommit:
		g.onCommit(from, h)
	case wire.CommandStartViewChange:
		g.onStartViewChange(from, h)
	case wire.CommandDoViewChange:
		g.onDoViewChange(from, frame)
	case wire.CommandStartView:
		g.onStartView(from, frame)
	case wire.CommandRequestStartView:
		g.onRequestStartView(from, h)
	case wire.CommandRequestPrepares:
		g.onRequestPrepares(from, h)
	case wire.CommandRepairPrepare:
		g.onRepairPrepare(from, frame)
	case wire.CommandRepairDone, wire.CommandRangeEvicted:
		g.onRepairReply(from, h)
	default:
		// State transfer and session forwarding land in later work; a frame
		// the group does not speak is dropped, as Iggy drops unknown routes.
	}
	g.checkInvariants()
}

// setStatus changes the status and view, and reports it.
func (g *Group) setStatus(s Status, view uint32) {
	if view < g.view {
		panic(fmt.Sprintf("vsr: view going back from %d to %d", g.view, view))
	}
	changed := s != g.status || view != g.view
	g.status, g.view = s, view
	if s != StatusRecovering || g.catchUp != nil && g.catchUp.view < view {
		g.catchUp = nil
	}
	if changed {
		g.emit(Event{Kind: EventStatus, Status: s, View: view, LogView: g.logView, Op: g.op, Commit: g.commitMax})
	}
}

// stateDurable reports whether the in-memory (view, log_view) is durable:
// the gate every message that implies it must pass (consensus.md
// correction 1).
func (g *Group) stateDurable() bool {
	return !g.unwritten && g.durable.View == g.view && g.durable.LogView == g.logView
}

// persist makes (view, log_view, commit_max, checkpoint) durable if it is
// not, then resumes whatever was waiting for it.
func (g *Group) persist() {
	// A checkpoint wait runs after a state write: an install of the
	// checkpoint the superblock already records (a lost one, received
	// again) writes the same record once more.
	if g.writing || (g.stateDurable() && g.durable.CommitMax >= g.commitMax && !g.unwritten &&
		g.durable.CheckpointOp == g.checkpointOp && g.durable.CheckpointChecksum == g.checkpointSum && len(g.checkpointWait) == 0) {
		return
	}
	s := g.durable
	s.View, s.LogView, s.CommitMax = g.view, g.logView, max(g.commitMax, g.durable.CommitMax)
	s.CheckpointOp, s.CheckpointChecksum = g.checkpointOp, g.checkpointSum
	g.writing, g.written = true, s
	g.deps.Journal.WriteState(s, func() {
		if !g.writing || g.written != s {
			panic("vsr: a state write completed out of order")
		}
		g.writing = false
		freed := s.CheckpointOp > g.durable.CheckpointOp
		g.durable, g.unwritten = s, false
		g.checkpointRecorded()
		if freed {
			g.ringFreed()
		}
		g.onStateDurable()
		g.persist() // the state may have moved on while this write was in flight
	})
}

// Checkpoint asks the superblock to record the checkpoint of op, whose
// snapshot (with checksum checksum) is durable in the replica's checkpoint
// store, and runs done once it does. op must be applied here and above the
// checkpoint recorded now.
func (g *Group) Checkpoint(op uint64, checksum wire.U128, done func()) {
	if op == 0 || op > g.commitMin || op <= g.checkpointOp || checksum.IsZero() {
		panic(fmt.Sprintf("vsr: replica %d: checkpoint at op %d with commit_min %d and checkpoint %d", g.cfg.Replica, op, g.commitMin, g.checkpointOp))
	}
	g.checkpointOp, g.checkpointSum = op, checksum
	g.checkpointWait = append(g.checkpointWait, checkpointWait{op: op, done: done})
	g.persist()
}

// Install adopts a checkpoint another replica sent (state transfer): the
// superblock records it (op, checksum), and once that is durable, unless the
// group applied op on its own meanwhile, install runs (the replica swaps in
// the checkpoint's state) and the group goes on from commit_min = op,
// applying and repairing only what lies above. op must be above commit_min
// and above the checkpoint recorded now; it is committed (a checkpoint is of
// applied ops), so commit_max rises to it. done runs after, installed or not.
func (g *Group) Install(ref CheckpointRef, checksum wire.U128, install func(), done func(installed bool)) {
	if ref.Op <= g.StateTransferNeed() || ref.Identity.IsZero() || checksum.IsZero() ||
		ref.Op == g.checkpointOp && checksum != g.checkpointSum {
		panic(fmt.Sprintf("vsr: replica %d: install of checkpoint %d (identity %s) with commit_min %d and checkpoint %d",
			g.cfg.Replica, ref.Op, ref.Identity, g.commitMin, g.checkpointOp))
	}
	g.commitMax = max(g.commitMax, ref.Op)
	g.checkpointOp, g.checkpointSum = ref.Op, checksum
	g.checkpointWait = append(g.checkpointWait, checkpointWait{op: ref.Op, done: func() {
		if g.commitMin >= ref.Op {
			done(false)
			return
		}
		install()
		g.installCheckpoint(ref)
		done(true)
	}})
	g.persist()
}

// installCheckpoint moves the group to the state after ref.Op.
func (g *Group) installCheckpoint(ref CheckpointRef) {
	for op := g.commitMin + 1; op <= ref.Op; op++ {
		delete(g.canon, op)
		delete(g.leftover, op)
	}
	// A primary's pipeline may hold ops the checkpoint covers (re-proposed
	// after a view change, committed in an earlier view): they are
	// committed, and the installed state holds them and their replies.
	for len(g.pipeline) > 0 && g.pipeline[0].op <= ref.Op {
		if e := g.pipeline[0]; e.op == ref.Op && e.header.Checksum() != ref.Identity {
			panic(fmt.Sprintf("vsr: replica %d: installed checkpoint %d has identity %s, the pipeline's op %d is %s",
				g.cfg.Replica, ref.Op, ref.Identity, e.op, e.header.Checksum()))
		}
		g.pipeline = g.pipeline[1:]
	}
	if len(g.pipeline) == 0 {
		g.prepareTimeout.stop()
	}
	g.commitMin, g.appliedIdentity, g.appliedTimestamp = ref.Op, ref.Identity, ref.Timestamp
	g.vouchedFrom = g.chainDown(ref.Op, ref.Identity)
	g.timestampMax = max(g.timestampMax, ref.Timestamp)
	if g.op < ref.Op {
		g.op = ref.Op
	}
	g.ackedTo = max(g.ackedTo, ref.Op)
	g.repair.reset()
	g.repairTimeout.stop()
	g.probe("state transfer installed")
	g.caughtUp()
	g.commitJournal()
	g.requestRepair()
}

// chainDown returns the lowest op from which the journal's frames up to op
// chain to identity (the identity of op, then each frame's parent): the
// frames the replica can vouch for as canonical. op+1 when the journal
// does not hold op with that identity.
func (g *Group) chainDown(op uint64, identity wire.U128) uint64 {
	floor := max(g.deps.Journal.RetainedFrom(), 1)
	from := op + 1
	for ; op >= floor; op-- {
		frame, held := g.deps.Journal.Frame(op)
		if !held || wire.HeaderOf(frame).Checksum() != identity {
			break
		}
		from = op
		var p wire.PrepareHeader
		p.Decode(wire.HeaderOf(frame))
		identity = p.Parent
	}
	return from
}

// Applied returns the applied op (commit_min), its prepare identity and its
// timestamp (zeros at op 0).
func (g *Group) Applied() (op uint64, identity wire.U128, timestampUs uint64) {
	return g.commitMin, g.appliedIdentity, g.appliedTimestamp
}

// CheckpointOp returns the op of the checkpoint the superblock records (or
// is about to).
func (g *Group) CheckpointOp() uint64 { return g.checkpointOp }

// StateTransferNeed is the op an installed checkpoint must be above: the
// applied op, or, while the recorded checkpoint is above it (it could not
// be read back at recovery, and the ring no longer holds the ops it
// covers), the op below that checkpoint: the same checkpoint, received from
// a peer, is of use (replicas at one op hold identical bytes).
func (g *Group) StateTransferNeed() uint64 {
	if g.commitMin < g.checkpointOp {
		return g.checkpointOp - 1
	}
	return g.commitMin
}

// ringFreed: a durable checkpoint moved up, and with it the ops the
// journal's ring may hold (Journal.AdmitsThrough). What waited for a slot
// goes on: the primary's queued requests, a new primary's start of view,
// a backup's repair of the prepares it dropped.
func (g *Group) ringFreed() {
	switch g.status {
	case StatusNormal:
		if g.IsPrimary() {
			g.proposeQueued()
		}
		g.requestRepair()
		g.commitJournal()
	case StatusViewChange:
		g.tryStartView()
	case StatusRecovering:
		g.resumeCatchUp()
	}
}

// checkpointRecorded runs, in order, the dones of the checkpoints the
// durable superblock now covers.
func (g *Group) checkpointRecorded() {
	for len(g.checkpointWait) > 0 && g.checkpointWait[0].op <= g.durable.CheckpointOp {
		w := g.checkpointWait[0]
		g.checkpointWait = g.checkpointWait[1:]
		w.done()
	}
}

// onStateDurable sends what was held back until the state was durable.
func (g *Group) onStateDurable() {
	if !g.stateDurable() {
		return
	}
	switch g.status {
	case StatusViewChange:
		g.sendStartViewChange()
		g.maybeSendDoViewChange()
	case StatusNormal:
		if g.IsPrimary() {
			g.countOwnAcks()
			if g.vc.startViewPending {
				g.vc.startViewPending = false
				g.broadcastStartView()
				g.retransmitPipeline(true)
			}
		} else {
			g.sendAcks()
		}
	}
}

func (g *Group) emit(e Event) {
	e.Group, e.Replica = g.cfg.Group, g.cfg.Replica
	g.deps.Sink.Event(e)
}

func (g *Group) probe(name string) {
	g.emit(Event{Kind: EventProbe, Probe: name, View: g.view, Op: g.op})
}

// send sends a consensus frame to one replica, if the state it implies is
// durable; otherwise the frame is dropped (a timer retransmits it).
func (g *Group) send(to uint8, frame []byte) bool {
	if to == g.cfg.Replica {
		panic("vsr: sending to self")
	}
	if !g.stateDurable() {
		g.persist()
		return false
	}
	g.deps.Out.Send(to, frame)
	g.noteSent()
	return true
}

// noteSent reports, once per (view, log_view), that the replica sent a
// message implying them: after a restart its view must be at least that,
// and a checker holds both durable from then on.
func (g *Group) noteSent() {
	if g.view > g.sentView || g.logView > g.sentLogView || !g.sentAny {
		g.sentView, g.sentLogView, g.sentAny = g.view, g.logView, true
		g.emit(Event{Kind: EventSent, View: g.view, LogView: g.logView})
	}
}

// broadcast sends a frame to every other replica.
func (g *Group) broadcast(frame []byte) {
	if !g.stateDurable() {
		g.persist()
		return
	}
	for r := range g.cfg.ReplicaCount {
		if r != g.cfg.Replica {
			g.deps.Out.Send(r, frame)
		}
	}
	g.noteSent()
}

func (g *Group) prefix() wire.Prefix {
	return wire.Prefix{Cluster: g.cfg.Cluster, View: g.view, Replica: g.cfg.Replica}
}

func (g *Group) quorumReplication() int { return QuorumReplication(int(g.cfg.ReplicaCount)) }

func popcount(x uint64) int { return bits.OnesCount64(x) }

// checkInvariants asserts what must hold between any two events.
func (g *Group) checkInvariants() {
	switch {
	case g.commitMin > g.commitMax:
		panic(fmt.Sprintf("vsr: commit_min %d above commit_max %d", g.commitMin, g.commitMax))
	case g.commitMin > g.op:
		panic(fmt.Sprintf("vsr: commit_min %d above op %d", g.commitMin, g.op))
	case g.logView > g.view:
		panic(fmt.Sprintf("vsr: log_view %d above view %d", g.logView, g.view))
	case g.durable.View > g.view:
		panic(fmt.Sprintf("vsr: durable view %d above view %d", g.durable.View, g.view))
	case len(g.pipeline) > wire.SuffixEntriesMax-1:
		panic("vsr: pipeline above the suffix limit")
	case len(g.requests) > g.cfg.RequestQueueMax:
		panic("vsr: request queue above its bound")
	}
	if g.status == StatusNormal {
		if _, ok := g.canon[g.op]; !ok && g.op > g.commitMin {
			panic(fmt.Sprintf("vsr: normal with no canonical header for head op %d", g.op))
		}
	}
	if g.IsPrimary() {
		for i, p := range g.pipeline {
			if p.op != g.commitMax+uint64(i)+1 && p.op != g.pipeline[0].op+uint64(i) {
				panic("vsr: pipeline not consecutive")
			}
		}
		if n := len(g.pipeline); n > 0 && g.pipeline[n-1].op != g.op {
			panic(fmt.Sprintf("vsr: pipeline ends at %d, head is %d", g.pipeline[n-1].op, g.op))
		}
	}
}

// markLeftovers records the journal's ops above the recorded head of the
// log_view whose headers were stamped before it (Recovered.LogHead): ops
// of a log the log_view replaced, which the reconcile that adopted it
// failed to forget on disk. The vote reports them blank, without a body
// or a nack, as for a slot it cannot read: a merge must never take one as
// the log_view's op (VOPR seed 31915 with -stale-answers
// -view-change-faults: a misdirected write kept a view-6 op 37 in a slot
// the reconcile of view 8 forgot, the restarted replica voted it present
// under log_view 8, and as view 9's primary it adopted it for an op
// view 8 had committed otherwise: a divergent commit). A new append or a
// reconcile at the op clears it.
func (g *Group) markLeftovers(rec Recovered) {
	if !rec.LogHeadKnown || rec.Fresh || g.cfg.ReplicaCount == 1 || rec.State.LogView == 0 {
		return
	}
	for op := rec.LogHead + 1; op <= rec.Head; op++ {
		h, ok := g.deps.Journal.Header(op)
		if ok && h.View() < rec.State.LogView {
			if g.leftover == nil {
				g.leftover = make(map[uint64]bool)
			}
			g.leftover[op] = true
			g.probe("journal leftover above the log_view's head reported blank")
		}
	}
}
