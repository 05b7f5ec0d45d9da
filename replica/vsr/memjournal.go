package vsr

import (
	"fmt"
	"math"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// MemJournal is a journal in memory: what a partition plane keeps (Iggy's
// partition journal is in memory, so a restart loses its uncommitted
// prepares, DESIGN.md). Completions are deferred through Later, which must
// run the function as a later step of the caller's loop, never inside the
// call; the loop is what makes a MemJournal deterministic.
type MemJournal struct {
	later   func(func())
	frames  map[uint64][]byte // only looked up, never iterated
	durable map[uint64]bool   // ops whose latest append's done has run
	head    uint64
	// purged: every op at or below it is gone (Purge); RetainedFrom is
	// purged+1.
	purged uint64
	state  wire.VsrState
}

// NewMemJournal returns an empty journal whose completions run through later.
func NewMemJournal(later func(func())) *MemJournal {
	if later == nil {
		panic("vsr: MemJournal needs a way to defer completions")
	}
	return &MemJournal{later: later, frames: make(map[uint64][]byte), durable: make(map[uint64]bool)}
}

// Append stores a copy of frame.
func (j *MemJournal) Append(frame []byte, done func()) {
	h := wire.HeaderOf(frame)
	if h.Command() != wire.CommandPrepare {
		panic(fmt.Sprintf("vsr: journaling a %v", h.Command()))
	}
	op := u64op(h)
	f := append([]byte(nil), frame...)
	j.frames[op] = f
	j.durable[op] = false
	j.head = max(j.head, op)
	j.later(func() {
		if g, ok := j.frames[op]; ok && &g[0] == &f[0] {
			j.durable[op] = true
		}
		done()
	})
}

// Durable reports whether op's latest append has completed.
func (j *MemJournal) Durable(op uint64) bool {
	_, held := j.frames[op]
	return held && j.durable[op]
}

// Frame returns the frame of op.
func (j *MemJournal) Frame(op uint64) ([]byte, bool) {
	f, ok := j.frames[op]
	return f, ok
}

// Header returns the header of op.
func (j *MemJournal) Header(op uint64) (wire.Header, bool) {
	f, ok := j.frames[op]
	if !ok {
		return wire.Header{}, false
	}
	return *wire.HeaderOf(f), true
}

// Knowledge: a memory journal either holds an op or never had it, except
// below its purge floor, where it held the op and knows no more of it.
func (j *MemJournal) Knowledge(op uint64) Knowledge {
	if op <= j.purged {
		return KnowledgeNone
	}
	if _, ok := j.frames[op]; ok {
		return KnowledgeHeld
	}
	return KnowledgeNever
}

// WrittenOnly is false: a memory journal drops a stale op when it
// reconciles, so it never holds one to vouch for.
func (j *MemJournal) WrittenOnly(uint64, wire.U128) bool { return false }

// Truncate forgets every op above afterOp.
func (j *MemJournal) Truncate(afterOp uint64) {
	for op := afterOp + 1; op <= j.head; op++ {
		delete(j.frames, op)
		delete(j.durable, op)
	}
	j.head = min(j.head, afterOp)
}

// Reconcile forgets ops above head and ops whose identity differs from the
// canonical headers (a memory journal can simply drop what is stale).
func (j *MemJournal) Reconcile(head uint64, canonical []wire.Header, done func()) {
	j.Truncate(head)
	for i := range canonical {
		op := u64op(&canonical[i])
		if f, ok := j.frames[op]; ok && wire.HeaderOf(f).Checksum() != canonical[i].Checksum() {
			delete(j.frames, op)
			delete(j.durable, op)
		}
	}
	j.later(done)
}

// WriteState keeps the state.
func (j *MemJournal) WriteState(s wire.VsrState, done func()) {
	j.state = s
	j.later(done)
}

// State returns the last state written.
func (j *MemJournal) State() wire.VsrState { return j.state }

// Purge forgets every op at or below throughOp, as a partition plane does
// with prepares it flushed to its segment log. It must not reach above the
// head; ops once purged are never served again (RetainedFrom).
func (j *MemJournal) Purge(throughOp uint64) {
	if throughOp > j.head {
		panic(fmt.Sprintf("vsr: purging through op %d above the head %d", throughOp, j.head))
	}
	for op := j.purged + 1; op <= throughOp; op++ {
		delete(j.frames, op)
		delete(j.durable, op)
	}
	j.purged = max(j.purged, throughOp)
}

// Admits admits every op: a memory journal has no ring to wrap.
func (j *MemJournal) Admits(uint64) Admission { return Admitted }

// AdmitsThrough is unbounded: a memory journal has no ring to wrap.
func (j *MemJournal) AdmitsThrough() uint64 { return math.MaxUint64 }

// RetainedFrom is the lowest op not purged.
func (j *MemJournal) RetainedFrom() uint64 { return j.purged + 1 }

// Head returns the highest op held.
func (j *MemJournal) Head() uint64 { return j.head }
