package vsr

import (
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Outbox carries frames to other replicas (the message bus). A frame may be
// dropped on the way; the protocol retransmits.
type Outbox interface {
	Send(to uint8, frame []byte)
}

// Knowledge is what a journal knows about one op.
type Knowledge uint8

const (
	// KnowledgeNone: the slot cannot be read or makes no sense; nothing is
	// known, so the op must not be nacked.
	KnowledgeNone Knowledge = iota
	// KnowledgeNever: the journal can prove it never acknowledged this op
	// (an empty slot, a slot holding a different op, a torn unacknowledged
	// write): the op may be nacked.
	KnowledgeNever
	// KnowledgeHeader: the header is known but the body is not (corrupt
	// body of an entry that may have been acknowledged).
	KnowledgeHeader
	// KnowledgeHeld: the journal holds the whole prepare.
	KnowledgeHeld
	// KnowledgeHeaderNever: the header is known (Header returns it) and the
	// journal can prove this replica never acknowledged the op: it recorded
	// the header from an adopted log without ever holding the body. The op
	// is reported with its header and the nack bit (DEVIATIONS.md 29).
	KnowledgeHeaderNever
)

// Journal stores the prepares of one group and the group's durable state
// (view, log_view, commit_max). The metadata plane's journal is durable; a
// partition plane's lives in memory.
type Journal interface {
	// Append stores a prepare frame (a valid Prepare, command 6) for its op,
	// replacing whatever the slot held. done runs once the frame is durable
	// (and recorded as possibly acknowledged); never if the replica crashes
	// first. done may run later than Append returns, never inside it.
	Append(frame []byte, done func())
	// Frame returns the journaled prepare for op, if it holds that op.
	Frame(op uint64) ([]byte, bool)
	// Durable reports whether the journal holds op durably and recorded as
	// possibly acknowledged: what an Append's done promises. A prepare found
	// at recovery but never recorded as acknowledged is held, not durable:
	// Append it again to record it before acknowledging it.
	Durable(op uint64) bool
	// Header returns the header of op when the journal knows it (held, or
	// header only).
	Header(op uint64) (wire.Header, bool)
	// Knowledge says what the journal knows of op (for nacks).
	Knowledge(op uint64) Knowledge
	// WrittenOnly reports whether op's slot shows that no prepare of op but
	// the one whose header checksum is id was ever written there (for nacks:
	// when the replica can prove id is not the op of its log, it never
	// acknowledged that op). False whenever the journal cannot tell.
	WrittenOnly(op uint64, id wire.U128) bool
	// Admits says whether the journal may write op now: a ring reuses a
	// slot only once the durable checkpoint covers the op it holds, and an
	// op never goes into a slot that held a newer one. The group journals
	// nothing it does not admit: a prepare waits (the primary), is dropped
	// and comes again (a backup), and a canonical header is recorded later.
	Admits(op uint64) Admission
	// AdmitsThrough is the highest op the ring can hold now without
	// overwriting an op above the durable checkpoint (the checkpoint's op
	// plus the ring's size); every op above it is AdmitAfterCheckpoint.
	AdmitsThrough() uint64
	// RetainedFrom is the lowest op the journal can still serve: ops below
	// it are evicted (a partition plane purges what it flushed to its
	// segments; the metadata plane will drop what a checkpoint covers), so
	// a repair asking for them is answered RangeEvicted. 1 for a journal
	// that never evicts.
	RetainedFrom() uint64
	// Reconcile makes the durable journal agree with a canonical log the
	// replica adopts in a new view, before that view's log_view is
	// persisted: every op above head is durably forgotten (it was never part
	// of the adopted log, so nacking it later is safe), and for every header
	// in canonical whose op the journal does not hold with that identity the
	// header is durably recorded with its body unknown, so that a restart
	// never reports a stale entry under the new log_view. done runs once
	// that is durable.
	Reconcile(head uint64, canonical []wire.Header, done func())
	// Truncate forgets every op above afterOp in memory; the durable slots
	// are left as they are (they will be overwritten).
	Truncate(afterOp uint64)
	// WriteState makes the state durable, then runs done (never inside the
	// call). States are written in order; done runs in order.
	WriteState(state wire.VsrState, done func())
}

// StateMachine applies committed prepares, in op order, exactly once per
// replica lifetime.
type StateMachine interface {
	// Commit applies the committed prepare (a valid Prepare frame) and
	// returns nothing: what the plane does with the result (replies,
	// client table) is its own business.
	Commit(prepare []byte)
}

// Sink receives the group's events: the checkers' view of the replica.
type Sink interface {
	Event(e Event)
}

// EventKind says what happened.
type EventKind uint8

// The events a group emits.
const (
	// EventCommitted: op was applied; Header is its prepare header.
	EventCommitted EventKind = iota + 1
	// EventStatus: the status or the view changed (Status, View, LogView).
	EventStatus
	// EventStartView: this replica, as primary, installed a view and sent
	// StartView with Op, Commit and Headers (the suffix).
	EventStartView
	// EventSent: the replica sent a consensus message implying View
	// (a checker holds it to "after a restart the view is at least that").
	EventSent
	// EventProbe: a rare protocol path was taken; Probe names it.
	EventProbe
	// EventPrepared: this replica, as primary, built a new prepare (Header)
	// in View: a checker holds one prepare per (group, view, op).
	EventPrepared
	// EventAcked: this replica, as primary of View, counted its own
	// acknowledgement of op (Header): the prepare must be durable, as for a
	// backup's PrepareOk (which a checker sees on the wire).
	EventAcked
	// EventReconciled: this replica adopted a log whose head is Op and
	// begins to forget every op above it: in memory when a view change's
	// merge truncates its log, durably when the reconcile that follows runs
	// (Journal.Reconcile). Its acknowledgements of those ops no longer
	// stand, and its votes under its old log_view end at Op.
	EventReconciled
)

// Status is a replica's status in a group.
type Status uint8

const (
	StatusNormal Status = iota + 1
	StatusViewChange
	StatusRecovering
)

func (k EventKind) String() string {
	switch k {
	case EventCommitted:
		return "committed"
	case EventStatus:
		return "status"
	case EventStartView:
		return "start_view"
	case EventSent:
		return "sent"
	case EventProbe:
		return "probe"
	case EventPrepared:
		return "prepared"
	case EventAcked:
		return "acked"
	case EventReconciled:
		return "reconciled"
	}
	return "event(?)"
}

func (s Status) String() string {
	switch s {
	case StatusNormal:
		return "normal"
	case StatusViewChange:
		return "view_change"
	case StatusRecovering:
		return "recovering"
	}
	return "status(?)"
}

// Event is one thing a group reports. Fields beyond Kind, Group and Replica
// are set as the kind says.
type Event struct {
	Kind    EventKind
	Group   uint64
	Replica uint8
	Status  Status
	View    uint32
	LogView uint32
	Op      uint64
	Commit  uint64
	Header  wire.Header   // EventCommitted, EventPrepared, EventAcked
	Body    []byte        // EventCommitted: the prepare's body (read-only, shared with the journal)
	Headers []wire.Header // EventStartView: the suffix sent, highest op first
	Probe   string        // EventProbe
}

// Admission is a journal's answer to Admits.
type Admission uint8

// Admission values.
const (
	// Admitted: the journal may write the op now.
	Admitted Admission = iota + 1
	// AdmitAfterCheckpoint: the op's slot holds an op above the durable
	// checkpoint; a later checkpoint frees it.
	AdmitAfterCheckpoint
	// AdmitNever: the op's slot held a newer op; only a state transfer
	// past that op lets the replica go on.
	AdmitNever
)
