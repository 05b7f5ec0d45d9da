package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Disks is what the checker may ask of the replicas' disks: their durable
// images (what a crash now would leave), read by the journal's own rules.
// The harness implements it over its simulated devices. Without Disks the
// checker skips the durability checks; the nack check still runs, with no
// misdirect excuses.
type Disks interface {
	// HoldsAcknowledged reports whether replica r's disk durably holds op's
	// prepare with identity id and its header copy, as an acknowledged
	// prepare must be (journal.SlotReport.HoldsAcknowledged).
	HoldsAcknowledged(r uint8, op uint64, id wire.U128) bool
	// DurableView returns the view and log_view a restart of r now would
	// open with.
	DurableView(r uint8) (view, logView uint32, err error)
	// Misdirected reports whether a write to r's journal slot of op was ever
	// misdirected, or a misdirected write aimed elsewhere ever landed on it
	// (faults the atlas allows): what r was told it wrote there may never
	// have landed, or may have been overwritten since, so its disk may break
	// what r promised.
	Misdirected(r uint8, op uint64) bool
	// HoldsPrepare reports whether replica r's disk durably holds op's
	// prepare with identity id, whatever its header copy says (a torn
	// rewrite of a header copy is repaired at recovery).
	HoldsPrepare(r uint8, op uint64, id wire.U128) bool
	// Faultable reports whether the fault atlas lets r's disk fault op's
	// journal slot (latent errors, corruption, misdirects).
	Faultable(r uint8, op uint64) bool
	// DurablePrepare returns the identity of the prepare of op that r's
	// disk durably holds intact, if any.
	DurablePrepare(r uint8, op uint64) (wire.U128, bool)
	// DurableCheckpoint returns the checkpoint op a restart of r now would
	// find recorded (0: none): the ops at or below it are in r's durable
	// state, and their journal slots may hold newer ops.
	DurableCheckpoint(r uint8) (uint64, error)
	// JournalSlots returns the size of r's journal ring: op k lives in slot
	// k % JournalSlots.
	JournalSlots(r uint8) uint64
}

// SetDisks lets the checker read the replicas' durable images.
func (c *Checker) SetDisks(d Disks) { c.disks = d }

// ackRecord is one replica's acknowledgement of one op: the prepare's
// identity, and when and in which view it was sent (a nack that breaks it
// names it).
type ackRecord struct {
	id   wire.U128
	atNs int64
	view uint32
}

// ackKey names one replica's acknowledgement of one op.
type ackKey struct {
	replica uint8
	op      uint64
}

// nackRecord is a DoViewChange's nack of an op its sender acknowledged
// with id, awaiting the op's commit (a nack of an op that stays
// uncommitted may be right: the op may be truncated).
type nackRecord struct {
	replica uint8
	view    uint32
	id      wire.U128
	atNs    int64
	// implicit: the vote reported head, below the op, rather than a nack
	// bit.
	implicit bool
	head     uint64
	ack      ackRecord // the acknowledgement it breaks
}

// nacksPendingMax bounds the nacks held until their op commits; past it the
// oldest are dropped (the check weakens, it never false-alarms).
const nacksPendingMax = 4096

// Sent checks one frame that replica from sent on the replica plane (the
// harness calls it for every frame, before the network has it). A frame is a
// promise about the sender's disk, whatever the replica reports of itself:
//
//   - a PrepareOk says the prepare is durable (acknowledged before durable);
//   - a Commit, PrepareOk, StartViewChange, DoViewChange or StartView says
//     its view, and log_view, are durable (sent before durable);
//   - a DoViewChange's nack says the sender never acknowledged the op (nack
//     of an acknowledged op, once the op is committed with the identity the
//     sender acknowledged).
func (c *Checker) Sent(nowNs int64, from uint8, to int, frame []byte) {
	c.nowNs = nowNs
	if c.violation != nil || int(from) >= c.replicas {
		return
	}
	c.noteCommitSeen(frame)
	if c.conform(from, to, frame); c.violation != nil || len(frame) < wire.HeaderSize {
		return
	}
	c.manifestSent(from, frame)
	c.forwardSent(from, frame)
	group, ok := wire.GroupOf(frame)
	if !ok {
		return
	}
	if group != wire.MetadataGroup {
		if h := wire.HeaderOf(frame); h.Command() == wire.CommandDoViewChange {
			var x wire.DoViewChangeHeader
			x.Decode(h)
			c.partitionVote(from, group, &x)
		}
		return
	}
	h := wire.HeaderOf(frame)
	switch view := h.View(); h.Command() {
	case wire.CommandPrepare:
		c.sentPrepare(from, frame)
	case wire.CommandPrepareOk:
		var x wire.PrepareOkHeader
		x.Decode(h)
		c.acknowledged(from, view, x.Op, x.PrepareChecksum, "PrepareOk")
		c.durableView(from, "PrepareOk", view, view)
	case wire.CommandCommit:
		c.durableView(from, "Commit", view, view)
	case wire.CommandStartView:
		c.durableView(from, "StartView", view, view)
	case wire.CommandStartViewChange:
		c.durableView(from, "StartViewChange", view, 0)
	case wire.CommandDoViewChange:
		var x wire.DoViewChangeHeader
		x.Decode(h)
		c.durableView(from, "DoViewChange", view, x.LogView)
		if c.violation == nil {
			c.voteReachesAdoptedLog(from, &x)
		}
		if c.violation == nil {
			c.vote(from, &x, frame[wire.HeaderSize:])
		}
	}
}

// ownAck takes a primary's count of its own acknowledgement
// (vsr.EventAcked): the same promise as a PrepareOk, the prepare durable
// and the view and log_view it implies too (VOPR seed 2430102557: a new
// primary counted its own acks before its log_view was written, came back
// from a crash with an older one, and its vote nacked an op its ack had
// counted toward the op's commit; the check named the nack, 45 s later).
func (c *Checker) ownAck(r uint8, g vsr.Event) {
	c.acknowledged(r, g.View, g.Op, g.Header.Checksum(), "its own acknowledgement")
	if c.violation == nil {
		c.durableView(r, "its own acknowledgement", g.View, g.View)
	}
}

// reconciled voids r's acknowledgements of every op above head: r adopted a
// log that ends there and forgets the rest (vsr.EventReconciled). Such an
// op may still be committed later, as the same prepare, by replicas that
// kept it (a view r led may never have started), so without this r would
// be held to an acknowledgement it has legitimately taken back.
//
// The reconcile also durably forgets r's ops above head before it persists
// the new log_view (DEVIATIONS.md 9): a crash in between leaves r's old
// log_view over a log that ends at head (ops the new view's merge proved
// uncommitted), so the log r adopted for its old log_view is held to head
// at most from now on.
//
// A log only grows within a view: every op r acknowledged in view was
// prepared by the view's primary, whose log holds it from then on, so no
// log of that view r can adopt ends below it. A reconcile in view below an
// op r acknowledged in view is a replica taking back an acknowledgement
// that may have committed the op (consensus.md correction 6: a StartView
// that answered an earlier incarnation's probe, installed).
func (c *Checker) reconciled(r uint8, view uint32, head uint64) {
	for op := head + 1; op <= c.ackMax[r]; op++ {
		if ack, ok := c.acks[ackKey{r, op}]; ok && ack.view == view {
			c.fail(Violation{Name: AckedOpTruncated, Replicas: []uint8{r}, Ops: []uint64{op},
				Detail: fmt.Sprintf("replica %d adopted a log of view %d that ends at op %d, after acknowledging op %d as %s in that view (at %.3f s): a view's log only grows",
					r, view, head, op, ack.id, float64(ack.atNs)/1e9)})
			return
		}
	}
	for op := head + 1; op <= c.ackMax[r]; op++ {
		delete(c.acks, ackKey{r, op})
	}
	c.ackMax[r] = min(c.ackMax[r], head)
	c.adopted[r].head = min(c.adopted[r].head, head)
}

// acknowledged records that r acknowledged op with identity id and checks
// that the prepare is durable.
func (c *Checker) acknowledged(r uint8, view uint32, op uint64, id wire.U128, what string) {
	c.acks[ackKey{r, op}] = ackRecord{id: id, atNs: c.nowNs, view: view}
	c.ackMax[r] = max(c.ackMax[r], op)
	c.note("replica %d acknowledged op %d %s in view %d", r, op, id, view)
	if c.disks == nil {
		return
	}
	if slots := c.disks.JournalSlots(r); op > slots {
		// The ring reuses a slot only once the durable checkpoint covers
		// the op it held (DEVIATIONS.md 18): else a restart replays that op
		// from a slot that no longer holds it.
		if covered, err := c.disks.DurableCheckpoint(r); err == nil && op-slots > covered {
			c.fail(Violation{Name: SlotReusedEarly, Replicas: []uint8{r}, Ops: []uint64{op, op - slots},
				Detail: fmt.Sprintf("replica %d sent %s for op %d in view %d, journaled in the slot of op %d, but its durable checkpoint is op %d: a restart now would replay op %d from a slot that no longer holds it",
					r, what, op, view, op-slots, covered, op-slots)})
			return
		}
	}
	if c.disks.HoldsAcknowledged(r, op, id) || c.disks.Misdirected(r, op) {
		return
	}
	if other, ok := c.disks.DurablePrepare(r, op); ok && other != id {
		// Not a write that is late: the disk holds another prepare of op
		// (issue 12 item 2: such a mismatch read as "acknowledged before
		// durable").
		c.fail(Violation{Name: AckedOtherPrepare, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d sent %s for op %d as %s in view %d, but its disk durably holds op %d as %s", r, what, op, id, view, op, other)})
		return
	}
	c.fail(Violation{Name: AckedBeforeDurable, Replicas: []uint8{r}, Ops: []uint64{op},
		Detail: fmt.Sprintf("replica %d sent %s for op %d (%s) in view %d, but its disk does not hold that prepare durably", r, what, op, id, view)})
}

// durableView checks that r's disk would restart it in view (and log_view)
// at least those a message it sent implies. logView 0 checks the view only.
func (c *Checker) durableView(r uint8, what string, view, logView uint32) {
	c.sentView[r] = max(c.sentView[r], view)
	if c.disks == nil {
		return
	}
	v, lv, err := c.disks.DurableView(r)
	switch {
	case err != nil:
		c.fail(Violation{Name: SentBeforeDurable, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d sent %s in view %d, but its disk would not restart: %v", r, what, view, err)})
	case v < view || lv < logView:
		c.fail(Violation{Name: SentBeforeDurable, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d sent %s in view %d (log_view %d), but its disk would restart it in view %d (log_view %d)", r, what, view, logView, v, lv)})
	}
}

// adoptedLog is the log a replica went Normal with: its log_view and head.
type adoptedLog struct {
	logView uint32
	head    uint64
	atNs    int64
}

// wentNormal records that r is Normal in logView with head: its reconcile
// made that log durable before it went Normal (DEVIATIONS.md 9), so its
// disk holds (or knows by header) every op up to head under logView from
// now on. Within one log_view the head only grows.
func (c *Checker) wentNormal(r uint8, logView uint32, head uint64) {
	a := &c.adopted[r]
	if logView != a.logView {
		*a = adoptedLog{logView: logView, head: head, atNs: c.nowNs}
		return
	}
	if head > a.head {
		a.head, a.atNs = head, c.nowNs
	}
}

// voteReachesAdoptedLog checks that a DoViewChange of the log_view r last
// adopted does not end below that log's head: a vote with the log_view but
// a shorter log is a log_view made durable before its log, and the merge
// trusts it to drop ops (VOPR seeds 11918477101899531798 and
// 11918477101899531114: a committed op lost that way). A misdirected write
// on a slot in between excuses it (the atlas allows the loss).
func (c *Checker) voteReachesAdoptedLog(r uint8, x *wire.DoViewChangeHeader) {
	a := c.adopted[r]
	if x.LogView != a.logView || a.logView == 0 || x.Op >= a.head {
		return
	}
	if c.disks != nil {
		for op := x.Op + 1; op <= a.head; op++ {
			if c.disks.Misdirected(r, op) {
				return
			}
		}
	}
	c.fail(Violation{Name: LogShorterThanView, Replicas: []uint8{r}, Ops: []uint64{a.head},
		Detail: fmt.Sprintf("replica %d voted in view %d with log_view %d and head op %d, but it went Normal in log_view %d with head op %d (at %.3f s): its log_view is durable without its log",
			r, x.View, x.LogView, x.Op, a.logView, a.head, float64(a.atNs)/1e9)})
}

// vote checks a DoViewChange's nacks against what its sender acknowledged:
// the nack bits of its suffix, and the ops above the op it reports (a
// vote's head below an op it acknowledged is an implicit nack of that op,
// which the merge may truncate just as well: a replica that cut an
// acknowledged tail and voted was caught only as a divergent commit 100
// seeds later).
func (c *Checker) vote(r uint8, x *wire.DoViewChangeHeader, body []byte) {
	for op := x.Op + 1; op <= c.ackMax[r]; op++ {
		ack, acked := c.acks[ackKey{r, op}]
		if !acked || c.disks != nil && c.disks.Misdirected(r, op) {
			continue
		}
		c.recordNack(op, nackRecord{replica: r, view: x.View, id: ack.id, atNs: c.nowNs, implicit: true, head: x.Op, ack: ack})
		if c.violation != nil {
			return
		}
	}
	if x.NackBitset.IsZero() {
		return
	}
	entries, err := wire.DecodeSuffix(body, x.Op)
	if err != nil {
		return // an invalid frame: the receivers drop it
	}
	for i := range entries {
		if !x.NackBitset.Bit(i) {
			continue
		}
		op := x.Op - uint64(i)
		ack, acked := c.acks[ackKey{r, op}]
		id := ack.id
		if !acked || !wire.IsBlank(&entries[i]) && entries[i].Checksum() != id {
			continue // never acknowledged, or nacks another prepare of op
		}
		if c.disks != nil && c.disks.Misdirected(r, op) {
			continue
		}
		c.recordNack(op, nackRecord{replica: r, view: x.View, id: id, atNs: c.nowNs, ack: ack})
		if c.violation != nil {
			return
		}
	}
}

// recordNack checks a nack of an op its sender acknowledged now if the op
// is committed, or holds it until the op commits.
func (c *Checker) recordNack(op uint64, rec nackRecord) {
	if op <= uint64(len(c.canon)) {
		c.checkNack(op, rec)
		return
	}
	if c.nacksPending >= nacksPendingMax {
		return
	}
	c.nacks[op] = append(c.nacks[op], rec)
	c.nacksPending++
}

// checkNack fails if op was committed with the identity rec's replica
// acknowledged: a committed op is never truncated, so the replica's journal
// must still know it (a corrupt copy is reported blank, not nacked).
func (c *Checker) checkNack(op uint64, rec nackRecord) {
	if c.canon[op-1].header.Checksum() != rec.id {
		return
	}
	how := "nacked op %d"
	if rec.implicit {
		how = fmt.Sprintf("voted head op %d, below op %%d,", rec.head)
	}
	c.fail(Violation{Name: NackOfAcknowledged, Replicas: []uint8{rec.replica}, Ops: []uint64{op},
		Detail: fmt.Sprintf("replica %d "+how+" in its DoViewChange for view %d (at %.3f s) after acknowledging it as %s in view %d (at %.3f s), and op %d is committed as that prepare",
			rec.replica, op, rec.view, float64(rec.atNs)/1e9, rec.id, rec.ack.view, float64(rec.ack.atNs)/1e9, op)})
}

// committedNacks checks the nacks held for op, just committed for the first
// time.
func (c *Checker) committedNacks(op uint64) {
	recs, ok := c.nacks[op]
	if !ok {
		return
	}
	delete(c.nacks, op)
	c.nacksPending -= len(recs)
	for _, rec := range recs {
		c.checkNack(op, rec)
		if c.violation != nil {
			return
		}
	}
}

// AuditDurability checks every replica's disk for the committed ops it
// acknowledged above its durable checkpoint: each must still hold the
// prepare durably, unless the atlas lets that disk fault the slot or a
// write to it was misdirected. A replica's acknowledgement was checked
// durable when it was sent, a committed op is never truncated, and a slot
// is reused only once a durable checkpoint covers the op it held (the ring
// wraps over covered ops, DEVIATIONS.md 18 and 33), so a missing one was
// lost by the replica: a lost write, or a slot reused too early. The
// harness calls it at the end of each phase and for each crashed replica
// (AuditReplica). Replicas are checked in order, ops upward.
func (c *Checker) AuditDurability(nowNs int64) {
	for r := range uint8(c.replicas) {
		c.AuditReplica(r, nowNs)
	}
}

// AuditReplica audits replica r's disk as AuditDurability does: the
// harness calls it when r crashes, since what its disk holds then is what
// its restart finds.
func (c *Checker) AuditReplica(r uint8, nowNs int64) {
	c.nowNs = nowNs
	if c.violation != nil || c.disks == nil {
		return
	}
	covered, err := c.disks.DurableCheckpoint(r)
	if err != nil {
		return // no trustworthy superblock: the restart refuses to open
	}
	for op := covered + 1; op <= uint64(len(c.canon)); op++ {
		ack, ok := c.acks[ackKey{r, op}]
		id, want := ack.id, c.canon[op-1].header.Checksum()
		if !ok || id != want || c.disks.Faultable(r, op) || c.disks.Misdirected(r, op) {
			continue
		}
		if !c.disks.HoldsPrepare(r, op, id) {
			c.fail(Violation{Name: CommittedOpLost, Replicas: []uint8{r}, Ops: []uint64{op},
				Detail: fmt.Sprintf("replica %d acknowledged op %d (%s) in view %d (at %.3f s), which is committed and above its durable checkpoint (op %d), and its disk no longer holds it, though no fault may touch that slot",
					r, op, id, ack.view, float64(ack.atNs)/1e9, covered)})
			return
		}
	}
}

// Acknowledged returns the identity replica r last acknowledged op with, if
// it ever did (PrepareOk or a primary's own acknowledgement).
func (c *Checker) Acknowledged(r uint8, op uint64) (wire.U128, bool) {
	ack, ok := c.acks[ackKey{r, op}]
	return ack.id, ok
}
