package replica

import (
	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// metadataJournal adapts the durable journal to the consensus group's
// Journal, and lets the group allocator see every journaled prepare (a new
// primary must never mint a group id an uncommitted prepare already carries).
type metadataJournal struct {
	j     *journal.Journal
	alloc *metadata.GroupAllocator
	// retainedFrom is one past the durable checkpoint (1 without one).
	retainedFrom uint64
}

func (m *metadataJournal) Append(frame []byte, done func()) {
	m.observe(frame)
	m.j.Append(frame, done)
}

func (m *metadataJournal) observe(frame []byte) {
	var p wire.PrepareHeader
	p.Decode(wire.HeaderOf(frame))
	// A body the projection built always decodes; a journaled one that does
	// not is someone else's bug, which apply will report.
	_ = m.alloc.ObservePrepare(p.Operation, frame[wire.HeaderSize:])
}

func (m *metadataJournal) Frame(op uint64) ([]byte, bool)       { return m.j.Frame(op) }
func (m *metadataJournal) Durable(op uint64) bool               { return m.j.Durable(op) }
func (m *metadataJournal) Header(op uint64) (wire.Header, bool) { return m.j.Header(op) }
func (m *metadataJournal) Truncate(afterOp uint64)              { m.j.Truncate(afterOp) }

// RetainedFrom is one past the durable checkpoint: the ops a checkpoint
// covers are not served to a repair (RangeEvicted, wire.md 5.10: Iggy
// serves only above its snapshot op), whether or not the slots still hold
// them (DEVIATIONS.md 62). A replica that needs them takes a state
// transfer.
func (m *metadataJournal) RetainedFrom() uint64 { return max(m.retainedFrom, 1) }

func (m *metadataJournal) Knowledge(op uint64) vsr.Knowledge {
	switch m.j.Knowledge(op) {
	case journal.Held:
		return vsr.KnowledgeHeld
	case journal.HeaderOnly:
		return vsr.KnowledgeHeader
	case journal.Nackable:
		return vsr.KnowledgeNever
	case journal.HeaderUnacked:
		return vsr.KnowledgeHeaderNever
	}
	return vsr.KnowledgeNone
}

func (m *metadataJournal) Reconcile(head uint64, canonical []wire.Header, done func()) {
	m.j.Reconcile(head, canonical, done)
}

func (m *metadataJournal) WriteState(s wire.VsrState, done func()) { m.j.WriteState(s, done) }

// recoveredHead is the highest op the journal may have acknowledged
// (journal.Recovery.AckHead).
func recoveredHead(r *journal.Recovery, slots uint64) uint64 { return r.AckHead(slots) }
