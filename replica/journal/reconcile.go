package journal

import (
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Reconcile makes the durable journal agree with a canonical log the
// replica adopts in a new view (a StartView, or a view-change merge), before
// the replica persists that view as its log_view:
//
//   - every op above head is durably forgotten: the empty marker is written
//     into its prepare chunk, then into its header sector, so a recovery finds
//     the slot Empty (Nackable). It was never part of the adopted log, so a
//     later nack is safe; leaving it would let a restart report it, held,
//     under the new log_view, and a later merge adopt it;
//   - for every header in canonical (ops at most head) whose op the journal
//     does not hold with that identity, the empty marker is written into the
//     prepare chunk and then the header into the header sector, so a
//     recovery finds the op HeaderOnly with its canonical header, never a
//     stale body of the same op;
//   - every canonical op it holds whose append has not made it durable yet
//     is waited for (the caller persists the new log_view next).
//
// Memory follows at once: Frame, Header and Knowledge stop reporting what
// is forgotten or stale. done runs once every write is durable (after a
// sync, never inside the call). The writes go through the slots' queues, so
// they land after any append in flight to the same slot; each takes one
// record of the AppendsMax pool until it is done.
//
// Ops in a slot never go back: recording a canonical header in a slot that
// already held a newer op is refused with a panic, since the newer op's
// header copy is what proves its acknowledgement; so is recording one whose
// slot holds an op above the durable checkpoint (Admits: the caller passes
// only admitted ops).
func (j *Journal) Reconcile(head uint64, canonical []wire.Header, done func()) {
	if done == nil {
		panic("journal: Reconcile with nil done")
	}
	pending := 1 // released after the last write is queued
	newHead := LogHead{Op: head}
	finish := func() {
		pending--
		if pending == 0 {
			j.head = newHead
			done()
		}
	}
	// enqueue queues a write of kind for entry e of slot s behind the
	// writes already there; done waits for it.
	enqueue := func(kind writeKind, s *slot, e entry, h *wire.Header) {
		a := j.reconcileRecord()
		a.kind, a.step, a.e, a.done = kind, stepQueued, e, finish
		if h != nil {
			a.hdr = *h
		}
		pending++
		j.queue(s, a)
	}

	// Forget every op above head: in memory, and on disk where anything of
	// it may be there or may land (a write still queued for it).
	j.eachSlot(func(_ uint64, s *slot) {
		above := s.mem.held() && s.mem.op > head ||
			s.header.state == diskValid && s.header.op > head ||
			s.prepare.state == diskValid && s.prepare.op > head ||
			s.floorOp > head && (s.header.state == diskFlux || s.prepare.state == diskFlux)
		for a := s.first; a != nil && !above; a = a.next {
			above = a.e.op > head
		}
		if s.mem.held() && s.mem.op > head {
			s.mem = entry{}
		}
		if s.header.state == diskValid && s.header.op > head {
			s.vouched = false
		}
		if above {
			enqueue(writeClear, s, entry{op: s.floorOp}, nil)
		}
	})

	// Record the canonical header of every op not held with its identity.
	for i := range canonical {
		h := &canonical[i]
		op, id := opOf(h), h.Checksum()
		if op == 0 || op > head {
			panic(fmt.Sprintf("journal: Reconcile with a canonical header for op %d, head %d", op, head))
		}
		s := j.slotOf(op)
		if s.mem.is(op, id) {
			// Held. If it is not durable yet (its append is in flight), done
			// must wait for it: the caller persists the new log_view next,
			// and a crash that then lost the append would leave a log_view
			// whose log is shorter than the one adopted, which a later merge
			// trusts (VOPR seed 11918477101899531798: a new primary repaired
			// a committed op, went Normal, crashed, and its log_view-1 vote
			// of head 2 dropped the committed op 3). An append of what the
			// slot holds rewrites only what is not durable, behind the
			// writes queued there.
			if bug.ReconcileUnsynced {
				continue // canary_reconcile_unsynced: held in memory counts as durable
			}
			if s.first != nil || !s.prepare.holds(op, id) || !s.header.holds(op, id) {
				enqueue(writeAppend, s, s.mem, nil)
			}
			continue
		}
		if s.floorOp > op {
			panic(fmt.Sprintf("journal: Reconcile of op %d into a slot that held op %d", op, s.floorOp))
		}
		if s.header.knows(op, id) && s.vouched && s.prepare.state == diskEmpty && s.first == nil {
			continue // already recorded
		}
		s.mem = entry{}
		s.floorOp = op
		enqueue(writeHeaderOnly, s, entry{op: op, id: id}, h)
	}

	if head > 0 {
		if h, ok := j.Header(head); ok {
			newHead.Header = h
		}
	}
	for i := range canonical {
		if opOf(&canonical[i]) == head {
			newHead.Header = canonical[i]
		}
	}

	if pending == 1 {
		// Nothing to write: a sync, so that done still runs later.
		pending++
		j.sync(func(err error) {
			j.ioCompleted(err)
			finish()
		})
	}
	finish()
}

// reconcileRecord takes a write record for a Reconcile: from the pool, or,
// when the pool is empty, a new one beyond it. A reconcile may need a record
// for every slot it touches (a replica that restarted with hundreds of holes
// records the canonical header of each: VOPR long run
// 11400220681770072258), and its writes must be queued on their slots at
// the call, in order with the writes already there. Records beyond the pool
// are dropped when done; at most two per slot are ever needed at once.
func (j *Journal) reconcileRecord() *appendOp {
	j.inFlight++
	if a := j.free; a != nil {
		j.free, a.next = a.next, nil
		return a
	}
	if j.extra >= 2*int(j.cfg.SlotCount)+2 {
		panic(fmt.Sprintf("journal: Reconcile needs more than %d records beyond AppendsMax = %d", j.extra, j.cfg.AppendsMax))
	}
	j.extra++
	a := &appendOp{j: j, extra: true}
	a.onIO = a.ioDone
	return a
}

// startReconcileWrite begins a clear or a header-only write: the empty
// marker into the chunk first (unless it is there), then the header sector.
func (j *Journal) startReconcileWrite(a *appendOp, s *slot) {
	if s.prepare.state != diskEmpty {
		a.step = stepPrepareWrite
		s.prepare = diskRecord{state: diskFlux}
		slot := a.e.op % j.cfg.SlotCount
		var marker wire.Header
		encodeMarker(&marker, j.cfg, markerKindPrepare, slot)
		n := j.geo.paddedBytes(wire.HeaderSize + sealBytes)
		if cap(j.chunkScratch) < n {
			j.chunkScratch = make([]byte, n)
		}
		putRecord(j.chunkScratch[:n], marker[:])
		j.write(j.geo.prepareSector(slot), j.chunkScratch[:n], a.onIO)
		return
	}
	j.reconcileHeader(a, s)
}

// reconcileHeader writes the header sector of a clear or header-only write,
// or settles when it already holds what the write wants.
func (j *Journal) reconcileHeader(a *appendOp, s *slot) {
	if j.reached(a, s) {
		a.step = stepSettle
		j.sync(a.onIO)
		return
	}
	// A header-only record says the op was never acknowledged here when the
	// header copy it replaces shows no acknowledgement of it: the empty
	// marker, an older op, the op under another identity, or an earlier
	// unacknowledged record. Over a damaged copy it proves nothing.
	a.unacked = a.kind == writeHeaderOnly && (s.header.state == diskEmpty ||
		s.header.state == diskValid && (s.header.op < a.e.op || s.header.id != a.e.id || s.header.unacked))
	a.step = stepHeaderWrite
	s.header = diskRecord{state: diskFlux}
	s.vouched = false
	switch {
	case a.kind == writeClear:
		var marker wire.Header
		encodeMarker(&marker, j.cfg, markerKindHeader, a.e.op%j.cfg.SlotCount)
		putRecord(j.headerScratch, marker[:])
	case a.unacked:
		putRecordUnacked(j.headerScratch, a.hdr[:])
	default:
		putRecord(j.headerScratch, a.hdr[:])
	}
	j.write(j.geo.headerSector(a.e.op%j.cfg.SlotCount), j.headerScratch, a.onIO)
}

// reconcileHeaderDone records what the header sector now durably holds.
func (j *Journal) reconcileHeaderDone(a *appendOp, s *slot) {
	if a.kind == writeClear {
		s.header = diskRecord{state: diskEmpty}
	} else {
		s.header = diskRecord{state: diskValid, op: a.e.op, id: a.e.id, unacked: a.unacked}
		s.headerBytes = cloneHeader(&a.hdr)
		// Vouched unless an append of this op with another identity came
		// in meanwhile (the caller's newer word wins).
		s.vouched = !s.mem.held() || s.mem.is(a.e.op, a.e.id) || s.mem.op > a.e.op
	}
	j.finish(a, s)
}

// reached reports whether the slot's durable copies hold what write a is
// for.
func (j *Journal) reached(a *appendOp, s *slot) bool {
	switch a.kind {
	case writeClear:
		return s.prepare.state == diskEmpty && s.header.state == diskEmpty
	case writeHeaderOnly:
		return s.prepare.state == diskEmpty && s.header.knows(a.e.op, a.e.id)
	}
	return s.prepare.holds(a.e.op, a.e.id) && s.header.holds(a.e.op, a.e.id)
}
