package replica

import (
	"fmt"

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
	probe        func(string)
}

func (m *metadataJournal) Append(frame []byte, done func()) {
	op := m.observe(frame)
	m.mustAdmit(op, "Append")
	if op > m.j.Config().SlotCount {
		m.probe("journal wrapped: a slot reused")
	}
	m.j.Append(frame, done)
}

// mustAdmit asserts that the group writes only what the ring admits: an op
// above the durable checkpoint is never overwritten (the group asks Admits
// first).
func (m *metadataJournal) mustAdmit(op uint64, what string) {
	if a := m.j.Admits(op); a != journal.Admitted {
		panic(fmt.Sprintf("replica: journal %s of op %d, which the ring does not admit (%d; durable checkpoint %d, %d slots)",
			what, op, a, m.j.Covered(), m.j.Config().SlotCount))
	}
}

// observe shows the allocator a journaled prepare and returns its op.
func (m *metadataJournal) observe(frame []byte) uint64 {
	var p wire.PrepareHeader
	p.Decode(wire.HeaderOf(frame))
	// A body the projection built always decodes; a journaled one that does
	// not is someone else's bug, which apply will report.
	_ = m.alloc.ObservePrepare(p.Operation, frame[wire.HeaderSize:])
	return p.Op
}

func (m *metadataJournal) Frame(op uint64) ([]byte, bool)       { return m.j.Frame(op) }
func (m *metadataJournal) Durable(op uint64) bool               { return m.j.Durable(op) }
func (m *metadataJournal) Header(op uint64) (wire.Header, bool) { return m.j.Header(op) }
func (m *metadataJournal) Truncate(afterOp uint64)              { m.j.Truncate(afterOp) }
func (m *metadataJournal) WrittenOnly(op uint64, id wire.U128) bool {
	return m.j.WrittenOnly(op, id)
}

// RetainedFrom is one past the durable checkpoint: the ops a checkpoint
// covers are not served to a repair (RangeEvicted, wire.md 5.10: Iggy
// serves only above its snapshot op), whether or not the slots still hold
// them (DEVIATIONS.md 62). A replica that needs them takes a state
// transfer. A replica whose checkpoint is unreadable retains its ring's
// reach instead, until it holds a checkpoint again.
func (m *metadataJournal) RetainedFrom() uint64 { return max(m.retainedFrom, 1) }

func (m *metadataJournal) Admits(op uint64) vsr.Admission {
	switch m.j.Admits(op) {
	case journal.Admitted:
		return vsr.Admitted
	case journal.AdmitAfterCheckpoint:
		return vsr.AdmitAfterCheckpoint
	}
	return vsr.AdmitNever
}

func (m *metadataJournal) AdmitsThrough() uint64 { return m.j.AdmitsThrough() }

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
	for i := range canonical {
		var p wire.PrepareHeader
		p.Decode(&canonical[i])
		if f, held := m.j.Frame(p.Op); !held || wire.HeaderOf(f).Checksum() != canonical[i].Checksum() {
			m.mustAdmit(p.Op, "Reconcile")
		}
	}
	m.j.Reconcile(head, canonical, done)
}

func (m *metadataJournal) WriteState(s wire.VsrState, done func()) { m.j.WriteState(s, done) }

// recoveredHead is the highest op the journal may have acknowledged
// (journal.Recovery.AckHead).
func recoveredHead(r *journal.Recovery, slots uint64) uint64 { return r.AckHead(slots) }
