package vsr

import (
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Proposal is what the plane above asks the primary to replicate: the
// opaque fields a prepare carries besides those the group stamps (op,
// parent, commit, timestamp, view, replica, group).
type Proposal struct {
	Client          wire.U128
	Request         uint64
	RequestChecksum wire.U128
	Operation       wire.Operation
	UserID          uint32
	Body            []byte
}

// ProposeResult says what became of a proposal.
type ProposeResult uint8

const (
	// Proposed: the prepare is built, journaled and on its way.
	Proposed ProposeResult = iota + 1
	// Queued: the pipeline is full, or the journal's ring cannot take the
	// next op until a checkpoint frees its slot; the request waits in the
	// request queue.
	Queued
	// Refused: not a Normal primary, or both queues full.
	Refused
)

// Propose asks the primary to replicate p. p.Body is copied when kept: the
// caller may reuse it once Propose returns.
func (g *Group) Propose(p Proposal) ProposeResult {
	if !g.IsPrimary() || !g.stateDurable() {
		return Refused
	}
	if len(g.pipeline) >= g.cfg.PipelineMax || len(g.requests) > 0 || !g.admitsNext() {
		if len(g.requests) >= g.cfg.RequestQueueMax {
			return Refused
		}
		// The caller's body may live in a buffer it reuses (a network
		// receive buffer): a queued proposal keeps its own copy.
		p.Body = append([]byte(nil), p.Body...)
		g.requests = append(g.requests, p)
		return Queued
	}
	if !g.prepare(p) {
		return Refused
	}
	return Proposed
}

// InFlight reports whether a prepare or a queued request of client is
// pending at the primary (the plane's preflight refuses a second one).
func (g *Group) InFlight(client wire.U128) bool {
	for _, p := range g.pipeline {
		var h wire.PrepareHeader
		h.Decode(&p.header)
		if h.Client == client {
			return true
		}
	}
	for _, r := range g.requests {
		if r.Client == client {
			return true
		}
	}
	return false
}

// prepare builds, journals and replicates the next op; false when the
// plane refused to stamp it (nothing is prepared).
func (g *Group) prepare(p Proposal) bool {
	if !g.IsPrimary() || len(g.pipeline) >= g.cfg.PipelineMax {
		panic("vsr: prepare without a pipeline slot")
	}
	parent := g.identityOf(g.op)
	timestamp := max(g.deps.RealtimeUs(), g.timestampMax+1)
	x := wire.PrepareHeader{
		Prefix:          wire.Prefix{Cluster: g.cfg.Cluster, View: g.view, Replica: g.cfg.Replica, Command: wire.CommandPrepare},
		Client:          p.Client,
		Parent:          parent,
		RequestChecksum: p.RequestChecksum,
		Op:              g.op + 1,
		Commit:          g.commitMax,
		Timestamp:       timestamp,
		Request:         p.Request,
		Operation:       p.Operation,
		Group:           g.cfg.Group,
		UserID:          p.UserID,
	}
	body := p.Body
	if g.deps.Plane != nil {
		var ok bool
		if body, ok = g.deps.Plane.Stamp(&x, p.Body); !ok {
			g.probe("plane refused to stamp a prepare")
			return false
		}
	}
	g.timestampMax = timestamp
	frame := wire.BuildFrame(&x, body)
	h := *wire.HeaderOf(frame)
	g.emit(Event{Kind: EventPrepared, View: g.view, Op: x.Op, Header: h})
	g.op = x.Op
	g.canon[g.op] = h
	entry := &pending{op: g.op, header: h, frame: frame}
	g.pipeline = append(g.pipeline, entry)
	g.journalAppend(frame)
	g.forward(frame)
	if !g.prepareTimeout.running {
		g.prepareTimeout.start()
	}
	return true
}

// identityOf returns the canonical identity of op (zero for op 0).
func (g *Group) identityOf(op uint64) wire.U128 {
	if op == 0 {
		return wire.U128{}
	}
	if op == g.commitMin {
		return g.appliedIdentity
	}
	h, ok := g.canon[op]
	if !ok {
		panic(fmt.Sprintf("vsr: no canonical header for op %d", op))
	}
	return h.Checksum()
}

// journalAppend journals a canonical frame and, once durable, records it
// and acknowledges or self-acknowledges.
func (g *Group) journalAppend(frame []byte) {
	h := wire.HeaderOf(frame)
	op, identity, view := u64op(h), h.Checksum(), g.view
	switch g.deps.Journal.Admits(op) {
	case AdmitAfterCheckpoint:
		// The ring wraps only over ops a durable checkpoint covers: the
		// prepare stays unjournaled (unacknowledged) and comes again, by
		// retransmission or repair, once the checkpoint frees its slot.
		g.probe("journal wrap: a prepare waits for a checkpoint to free its slot")
		return
	case AdmitNever:
		g.probe("journal wrap: a prepare's slot already held a newer op")
		return
	}
	g.appending[op] = identity
	delete(g.leftover, op)
	g.deps.Journal.Append(frame, func() {
		if g.appending[op] == identity {
			delete(g.appending, op)
		}
		if g.view != view {
			return // a newer view decides what to acknowledge
		}
		g.onDurable(op, identity)
	})
	if bug.AckBeforeSync {
		g.onDurable(op, identity) // canary_ack_before_sync: acknowledged on Append, not in done
	}
}

func u64op(h *wire.Header) uint64 {
	var p wire.PrepareHeader
	p.Decode(h)
	return p.Op
}

// onDurable runs when the journal made op durable in the current view.
func (g *Group) onDurable(op uint64, identity wire.U128) {
	if c, ok := g.canon[op]; !ok || c.Checksum() != identity {
		return // truncated or replaced meanwhile
	}
	if g.IsPrimary() {
		g.countOwnAcks()
		return
	}
	g.sendAcks()
	g.commitJournal()
}

// countOwnAcks counts the primary's own acknowledgement of every pipeline
// op it holds durably with the view's identity, once the view itself is
// durable: an acknowledgement implies the log_view, as a backup's does
// (consensus.md trap "ungated acks"). A new primary rebuilt its pipeline,
// and counted its own acks, before its log_view was written; a crash then
// brought it back with an older log_view, from which its vote nacked an op
// its ack had counted toward the op's commit (VOPR seed 2430102557).
func (g *Group) countOwnAcks() {
	if !g.IsPrimary() || g.status != StatusNormal || !g.stateDurable() {
		return
	}
	counted := false
	for _, e := range g.pipeline {
		if e.acks&(1<<g.cfg.Replica) == 0 && g.durableCanonical(e.op) {
			e.acks |= 1 << g.cfg.Replica
			g.emit(Event{Kind: EventAcked, View: g.view, Op: e.op, Header: e.header})
			counted = true
		}
	}
	if counted {
		g.commitPipeline()
	}
}

// forward sends a prepare to the next replica in the chain, stopping before
// the primary.
func (g *Group) forward(frame []byte) {
	next := (g.cfg.Replica + 1) % g.cfg.ReplicaCount
	if next == g.Primary() {
		return
	}
	g.send(next, frame)
}

func (g *Group) pending(op uint64) *pending {
	if len(g.pipeline) == 0 || op < g.pipeline[0].op || op > g.pipeline[len(g.pipeline)-1].op {
		return nil
	}
	return g.pipeline[op-g.pipeline[0].op]
}

// onPrepare: a backup journals and forwards the next op of its view.
func (g *Group) onPrepare(from uint8, frame []byte) {
	var x wire.PrepareHeader
	h := wire.HeaderOf(frame)
	x.Decode(h)
	if x.Group != g.cfg.Group {
		panic("vsr: prepare of another group routed here")
	}
	if g.status != StatusNormal || x.View != g.view {
		if x.View > g.view && g.status != StatusRecovering {
			g.probe("prepare from a newer view")
			g.startRecoveryProbe()
		} else {
			g.rejoinStartedView(from, x.View)
		}
		return
	}
	if g.IsPrimary() {
		return // a retransmission that came round the chain
	}
	g.timestampMax = max(g.timestampMax, x.Timestamp)
	g.learnCommit(x.Commit)
	switch {
	case x.Op <= g.commitMin:
		// Committed here already, but the primary re-proposes it: its view
		// started from votes sent before we learned the commit, so to it
		// the op is uncommitted and it waits for a quorum of
		// acknowledgements in its view. Acknowledge it again (it is
		// durable, with this identity), or with the other backups also
		// past it the primary waits forever (VOPR seed 90202304419227697).
		f, held := g.deps.Journal.Frame(x.Op)
		switch {
		case held && wire.HeaderOf(f).Checksum() == x.Checksum && g.deps.Journal.Durable(x.Op) && g.stateDurable():
			g.probe("committed prepare acknowledged again")
			g.sendAckOf(*wire.HeaderOf(f))
		case held && wire.HeaderOf(f).Checksum() != x.Checksum:
			// consensus.md trap "re-ack by slot occupancy": the slot is
			// occupied, by another prepare; acknowledging would vouch for
			// one we do not hold.
			g.probe("prepare of another identity than the slot's: not acknowledged")
		}
		return
	case x.Op <= g.op:
		// Already in our log: fill a hole or re-acknowledge.
		c, ok := g.canon[x.Op]
		if ok && c.Checksum() != x.Checksum {
			g.probe("prepare of another identity than the view's: ignored") // trap "re-ack by slot occupancy"
		}
		if ok && c.Checksum() == x.Checksum {
			if f, held := g.deps.Journal.Frame(x.Op); !held || wire.HeaderOf(f).Checksum() != x.Checksum {
				if g.deps.Plane != nil && !g.deps.Plane.Intact(frame) {
					g.probe("prepare dropped: its body is corrupt")
					return
				}
				if held {
					g.probe("prepare replaces another prepare in its slot") // trap "re-ack by slot occupancy"
				}
				g.journalAppend(frame)
			} else if x.Op <= g.ackedTo {
				// A retransmission: our acknowledgement was lost. Re-ack.
				g.sendAck(x.Op)
			} else {
				g.sendAcks()
			}
			g.forward(frame)
		}
		return
	case x.Op > g.op+1:
		g.probe("prepare gap")
		g.requestRepair()
		return
	}
	// The next op of the view's primary: it must chain to our head, whose
	// canonical header a Normal replica always knows.
	if want := g.identityOf(g.op); x.Parent != want {
		panic(fmt.Sprintf("vsr: replica %d: prepare %d of view %d does not chain to head %d (parent %s, head %s)",
			g.cfg.Replica, x.Op, x.View, g.op, x.Parent, want))
	}
	if g.deps.Plane != nil && !g.deps.Plane.Admit(frame) {
		g.probe("prepare refused by the plane: stamp not this replica's next")
		return
	}
	g.op = x.Op
	g.canon[x.Op] = *h
	g.journalAppend(frame)
	g.forward(frame)
	g.commitJournal()
}

// learnCommit raises commit_max.
func (g *Group) learnCommit(commit uint64) {
	if commit > g.commitMax {
		g.commitMax = commit
	}
}

// sendAcks acknowledges, in order, every op the backup holds durably with
// the view's identity, contiguously above commit_min: never above a hole
// (consensus.md trap "acking above a hole").
func (g *Group) sendAcks() {
	if g.status != StatusNormal || g.IsPrimary() {
		return
	}
	if !g.stateDurable() {
		if g.op > max(g.ackedTo, g.commitMin) {
			// consensus.md trap "ungated acks": an ack implies our
			// log_view, which is only in memory yet.
			g.probe("acks held until the view is durable")
		}
		return
	}
	if g.ackedTo < g.commitMin {
		g.ackedTo = g.commitMin
	}
	for op := g.commitMin + 1; op <= g.op; op++ {
		if !g.durableCanonical(op) {
			if op > g.ackedTo && g.durableAbove(op) {
				g.probe("acks stop below a hole") // consensus.md trap "acking above a hole"
			}
			return
		}
		if op <= g.ackedTo {
			continue
		}
		if !g.sendAck(op) {
			return
		}
		g.ackedTo = op
	}
}

// durableAbove reports whether some op above hole, up to the head, is held
// durably with its canonical identity: an ack of it would be above a hole.
func (g *Group) durableAbove(hole uint64) bool {
	for op := hole + 1; op <= g.op; op++ {
		if g.durableCanonical(op) {
			return true
		}
	}
	return false
}

// sendAck sends the PrepareOk of op (held durably with its canonical
// identity) to the primary.
func (g *Group) sendAck(op uint64) bool { return g.sendAckOf(g.canon[op]) }

// sendAckOf sends the PrepareOk of the prepare whose header is c.
func (g *Group) sendAckOf(c wire.Header) bool {
	var p wire.PrepareHeader
	p.Decode(&c)
	ok := wire.PrepareOkHeader{Prefix: g.prefix(), Parent: p.Parent, PrepareChecksum: p.Checksum,
		Op: p.Op, Commit: g.commitMax, Timestamp: p.Timestamp, Request: p.Request, Operation: p.Operation,
		Group: g.cfg.Group}
	return g.send(g.Primary(), wire.BuildFrame(&ok, nil))
}

// onPrepareOk: the primary counts an acknowledgement.
func (g *Group) onPrepareOk(from uint8, h *wire.Header) {
	var x wire.PrepareOkHeader
	x.Decode(h)
	if !g.IsPrimary() || x.View != g.view || x.Group != g.cfg.Group {
		return
	}
	e := g.pending(x.Op)
	if e == nil || e.header.Checksum() != x.PrepareChecksum {
		return
	}
	e.acks |= 1 << from
	g.commitPipeline()
}

// commitPipeline commits the pipeline's prefix that a replication quorum
// holds, applies it, and admits queued requests.
func (g *Group) commitPipeline() {
	for len(g.pipeline) > 0 {
		e := g.pipeline[0]
		if bug.CommitOneAck && g.cfg.Group == wire.MetadataGroup && e.acks != 0 && (e.acks&(1<<g.cfg.Replica) == 0 || popcount(e.acks) < g.quorumReplication()) {
			g.probe("canary: committed on the first ack") // canary_commit_one_ack: the first ack counts as a quorum
			e.acks = 1<<g.cfg.ReplicaCount - 1
		}
		if e.acks&(1<<g.cfg.Replica) == 0 || popcount(e.acks) < g.quorumReplication() {
			break
		}
		if e.op != g.commitMax+1 {
			panic(fmt.Sprintf("vsr: committing op %d above commit_max %d", e.op, g.commitMax))
		}
		g.commitMax = e.op
		g.pipeline[0] = nil
		g.pipeline = g.pipeline[1:]
		g.commitJournal()
		g.prepareTimeout.reset()
	}
	if len(g.pipeline) == 0 {
		g.prepareTimeout.stop()
	}
	g.proposeQueued()
}

// proposeQueued prepares the queued requests the pipeline and the journal's
// ring have room for.
func (g *Group) proposeQueued() {
	for len(g.requests) > 0 && len(g.pipeline) < g.cfg.PipelineMax && g.IsPrimary() && g.admitsNext() {
		p := g.requests[0]
		g.requests = g.requests[1:]
		if !g.prepare(p) {
			g.probe("queued request dropped: the plane refused to stamp it")
		}
	}
}

// admitsNext reports whether the journal may write the next op: the ring
// holds the ops above the durable checkpoint, and a primary prepares no op
// whose slot is still needed (journal backpressure, which the next durable
// checkpoint lifts).
func (g *Group) admitsNext() bool {
	switch g.deps.Journal.Admits(g.op + 1) {
	case Admitted:
		return true
	case AdmitNever:
		g.probe("journal wrap: the primary's next slot already held a newer op")
		g.needStateTransfer(g.repairPeerFor(), g.op+1)
		return false
	}
	g.probe("journal wrap: backpressure until a checkpoint frees the next slot")
	return false
}

// leavePipeline takes op, which the journal walk just applied, out of a
// primary's pipeline. The walk applies what commit_max covers, and an
// install raises commit_max past ops the pipeline may still hold: when the
// group applied them on its own before the install's state was durable,
// the install does nothing and they stayed in the pipeline, to be
// committed a second time by the next acknowledgement (VOPR seed
// 2430104096: a new primary behind its log, ops 63 and 64 in its pipeline,
// installed a peer's checkpoint at 63 and applied 57..63 from its journal
// meanwhile).
func (g *Group) leavePipeline(op uint64, c wire.Header) {
	if len(g.pipeline) == 0 || g.pipeline[0].op > op {
		return
	}
	if e := g.pipeline[0]; e.op != op || e.header.Checksum() != c.Checksum() {
		panic(fmt.Sprintf("vsr: replica %d applied op %d as %s, the pipeline's head is op %d as %s",
			g.cfg.Replica, op, c.Checksum(), e.op, e.header.Checksum()))
	}
	g.probe("pipeline op applied by the journal walk: it leaves the pipeline")
	g.pipeline[0] = nil
	g.pipeline = g.pipeline[1:]
	if len(g.pipeline) == 0 {
		g.prepareTimeout.stop()
	}
}

// commitJournal applies, in order, every op up to commit_max whose
// canonical header is known and whose body the journal holds with that
// identity (consensus.md trap: never apply an op whose identity is not the
// view's). It stops at the first op it cannot apply and asks for repair.
func (g *Group) commitJournal() {
	for g.commitMin < g.commitMax {
		op := g.commitMin + 1
		c, ok := g.canon[op]
		if bug.ApplyUnchecked {
			c, ok = g.canaryJournalHeader(op, c, ok) // canary_apply_unchecked: the journal's frame, unchecked
		}
		if !ok {
			g.requestRepair()
			return
		}
		frame, held := g.deps.Journal.Frame(op)
		if !held || wire.HeaderOf(frame).Checksum() != c.Checksum() {
			if held {
				// consensus.md trap "commit walk without identity check".
				g.probe("commit walk met another prepare at the op: repaired, not applied")
			}
			if !held && g.deps.Journal.Admits(op) == AdmitNever {
				// The op's slot held a newer op: the replica restarted from
				// below a checkpoint it could not read back, and its ring
				// wrapped past the op. No repair can land it; a state
				// transfer to the lost checkpoint or above can.
				g.probe("commit walk met an op its ring wrapped past: state transfer")
				g.needStateTransfer(g.repairPeerFor(), op)
			}
			g.requestRepair()
			return
		}
		var p wire.PrepareHeader
		p.Decode(&c)
		if p.Parent != g.appliedIdentity {
			panic(fmt.Sprintf("vsr: replica %d: op %d parent %s does not chain to applied op %d %s",
				g.cfg.Replica, op, p.Parent, g.commitMin, g.appliedIdentity))
		}
		g.deps.Machine.Commit(frame)
		g.commitMin = op
		g.leavePipeline(op, c)
		g.appliedIdentity, g.appliedTimestamp = c.Checksum(), p.Timestamp
		delete(g.canon, op)
		g.emit(Event{Kind: EventCommitted, Op: op, Commit: g.commitMax, View: g.view, Header: c, Body: frame[wire.HeaderSize:]})
		g.caughtUp()
	}
	g.resumeAppliedCatchUp()
}

// onCommit: a backup hears the primary's heartbeat.
func (g *Group) onCommit(from uint8, h *wire.Header) {
	var x wire.CommitHeader
	x.Decode(h)
	if x.Group != g.cfg.Group {
		return
	}
	// The liveness token is one counter per group: it resets the heartbeat
	// timer only when strictly newer than any seen (wire.md correction 0.1).
	newer := x.TimestampMonotonic > g.heartbeat
	if newer {
		g.heartbeat = x.TimestampMonotonic
	}
	if x.View < g.view {
		if g.IsPrimary() {
			// The primary of an older view is still talking: tell it
			// (wire.md correction 0.2: a StartView with no body).
			g.probe("stale primary answered with StartView")
			sv := wire.StartViewHeader{Prefix: g.prefix(), Op: g.op, Commit: g.commitMax, Group: g.cfg.Group}
			g.send(from, wire.BuildFrame(&sv, nil))
		}
		return
	}
	if x.View > g.view {
		if g.status != StatusRecovering {
			g.probe("commit from a newer view")
			g.startRecoveryProbe()
		}
		return
	}
	if g.rejoinStartedView(from, x.View) {
		return
	}
	if g.status != StatusNormal || from != g.Primary() || g.IsPrimary() {
		return
	}
	if newer {
		g.normalTimeout.reset()
	}
	g.learnCommit(x.Commit)
	g.commitJournal()
}

// rejoinStartedView probes for the StartView, and reports true, when a
// Prepare or Commit of view from from shows that view started while this
// replica, in view change for it, never got its StartView (lost, or sent
// before a partition healed): the view's primary is talking. The replica
// asks at once rather than sit out its view change timeout and start the
// next view (TigerBeetle asks too). It stops serving meanwhile, which also
// ends the window in which it serves prepares the view it missed may have
// replaced.
func (g *Group) rejoinStartedView(from uint8, view uint32) bool {
	if g.status != StatusViewChange || view != g.view || from != g.Primary() || g.Primary() == g.cfg.Replica {
		return false
	}
	g.probe("view started without us: StartView requested")
	g.startRecoveryProbe()
	return true
}

// onCommitTimeout: the primary's heartbeat.
func (g *Group) onCommitTimeout() {
	if !g.IsPrimary() {
		g.commitTimeout.stop()
		return
	}
	g.heartbeat++
	c := wire.CommitHeader{Prefix: g.prefix(), TimestampMonotonic: g.heartbeat, Commit: g.commitMin, Group: g.cfg.Group}
	g.broadcast(wire.BuildFrame(&c, nil))
}

// onPrepareTimeout: the primary resends each unacknowledged prepare directly
// to each backup that has not acknowledged it, so one dead link in the
// chain cannot stall the group (DEVIATIONS.md 4).
func (g *Group) onPrepareTimeout() {
	if !g.IsPrimary() {
		g.prepareTimeout.stop()
		return
	}
	g.retransmitPipeline(false)
}

// retransmitPipeline resends the pipeline's prepares, re-stamped with the
// current view (only bytes 52..56 change; the identity excludes them, wire.md
// 3.5): a backup accepts only prepares of its own view, which is what keeps
// a delayed prepare of an older primary out of its log.
func (g *Group) retransmitPipeline(all bool) {
	for r := range g.cfg.ReplicaCount {
		if r == g.cfg.Replica {
			continue
		}
		for _, e := range g.pipeline {
			if all || e.acks&(1<<r) == 0 {
				g.send(r, g.restamped(e))
			}
		}
	}
}

// restamped returns the entry's frame with the current view, copying it only
// when the view differs (the journal's frame is shared and read-only).
func (g *Group) restamped(e *pending) []byte {
	if bug.NoRestamp && wire.HeaderOf(e.frame).View() != g.view {
		g.probe("canary: prepare retransmitted with its old view") // canary_no_restamp: not re-stamped
		return e.frame
	}
	if wire.HeaderOf(e.frame).View() == g.view {
		return e.frame
	}
	f := append([]byte(nil), e.frame...)
	wire.HeaderOf(f).SetView(g.view)
	e.frame = f
	return f
}

// onNormalTimeout: a backup that heard no heartbeat suspects the primary.
func (g *Group) onNormalTimeout() {
	if g.status != StatusNormal || g.IsPrimary() {
		g.normalTimeout.stop()
		return
	}
	g.probe("primary suspected")
	g.startViewChange(g.view + 1)
}

// becomeNormal enters Normal status in the current view with log_view =
// view, and arms the timers of the role.
func (g *Group) becomeNormal() {
	g.logView = g.view
	g.setStatus(StatusNormal, g.view)
	g.svcTimeout.stop()
	g.dvcTimeout.stop()
	g.viewChangeTimeout.stop()
	g.rsvTimeout.stop()
	g.ackedTo = g.commitMin
	if bug.HeartbeatReset && g.IsPrimary() && g.heartbeat > 0 {
		g.probe("canary: new primary restarted its heartbeat token") // canary_heartbeat_reset
		g.heartbeat = 0
	}
	if g.IsPrimary() {
		g.normalTimeout.stop()
		g.commitTimeout.start()
	} else {
		g.commitTimeout.stop()
		g.prepareTimeout.stop()
		g.normalTimeout.start()
		g.pipeline, g.requests = nil, nil
	}
	g.persist()
}

// startFresh starts a just-formatted replica in view 0, or a single
// replica from whatever its journal holds: every op it journaled was
// committed by its own acknowledgement.
//
// A single replica that restarts begins a new view, its own view change
// with a quorum of one. Its crash may have lost prepares it built but never
// made durable; preparing different ones under the same numbers would put
// two prepares on one (view, op), which VSR rules out (VOPR seed 1045).
// Propose waits for the new view to be durable, so no prepare of the new
// view can be lost this way twice.
func (g *Group) startFresh(rec Recovered) {
	if g.cfg.ReplicaCount == 1 && !rec.Fresh {
		g.view++
		if rec.Head > 0 {
			g.adoptOwnLog(rec.Head)
		}
	}
	g.becomeNormal()
}

// adoptOwnLog makes a single replica's journal canonical after a restart:
// the ops it holds from op 1 up, each chained to the one below. A single
// replica commits an op only once it and every op below it are durable, so
// whatever lies above the first op missing or off the chain was never
// committed: writes in flight at a crash can be lost out of order (VOPR
// seed 15 with -crash-io-factor=100), and a slot above the head of a later
// view can still hold an op of an earlier one. Those are forgotten; the new
// view prepares over them.
func (g *Group) adoptOwnLog(head uint64) {
	parent := g.appliedIdentity
	held := g.commitMin
	for op := g.commitMin + 1; op <= head; op++ {
		f, ok := g.deps.Journal.Frame(op)
		if !ok {
			break
		}
		var p wire.PrepareHeader
		p.Decode(wire.HeaderOf(f))
		if p.Parent != parent {
			break
		}
		if p.View >= g.view {
			panic(fmt.Sprintf("vsr: single replica journaled op %d in view %d, restarting into view %d", op, p.View, g.view))
		}
		g.canon[op] = *wire.HeaderOf(f)
		g.timestampMax = max(g.timestampMax, p.Timestamp)
		parent, held = p.Checksum, op
	}
	if held < g.durable.CommitMax {
		panic(fmt.Sprintf("vsr: single replica holds ops 1..%d of its log, but committed %d", held, g.durable.CommitMax))
	}
	if held < head {
		g.probe("single replica forgot ops above a hole in its log")
		g.deps.Journal.Truncate(held)
	}
	g.op = held
	g.commitMax = held
	g.commitJournal()
}

// durableCanonical reports whether the journal holds op durably, recorded
// as possibly acknowledged, with its canonical identity. A canonical frame
// the journal holds but has not recorded (found at recovery, never
// acknowledged) is appended again, which records it; the acknowledgement
// waits for that.
func (g *Group) durableCanonical(op uint64) bool {
	if !g.holdsCanonical(op) {
		return false
	}
	if bug.AckBeforeSync && !g.deps.Journal.Durable(op) {
		g.probe("canary: acknowledged before durable") // canary_ack_before_sync: held in memory counts as durable
		return true
	}
	if g.deps.Journal.Durable(op) {
		return true
	}
	if _, inFlight := g.appending[op]; !inFlight {
		f, _ := g.deps.Journal.Frame(op)
		g.journalAppend(f)
	}
	return false
}
