package journal

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
)

// Open recovers a journal from dev: it syncs (so that whatever a previous
// process wrote and the device still caches is durable before it is
// trusted), reads the four superblock copies and chooses the durable state
// (see chooseSuperblock), then reads every header sector and every prepare
// chunk (the first sector, then only as many more as the header's size
// says; both in batches of reads, as a recovery scan submits them) of
// every formatted slot (the rest are Empty, unread: DEVIATIONS.md 42),
// classifies every slot (see classify), and runs done with the
// journal, which holds every Clean prepare in memory, and the Recovery
// report. Read faults are damage of what they cover. done gets an error,
// and no journal, when the superblock cannot be trusted or names another
// replica (ErrSuperblockQuorum, ErrSuperblockMismatch) or the device fails
// otherwise. At most Config.IOsMax reads are in flight at once. done runs
// from a device callback.
func Open(dev storage.Device, cfg Config, done func(*Journal, *Recovery, error)) {
	cfg.check()
	geo := newGeometry(cfg)
	geo.checkDevice(dev)
	if done == nil {
		panic("journal: Open with nil done")
	}
	o := &opener{
		dev:  dev,
		cfg:  cfg,
		geo:  geo,
		done: done,
	}
	o.inFlight++
	dev.Sync(func(err error) {
		if o.completed() {
			return
		}
		if err != nil {
			o.fail(err)
			return
		}
		o.readSuperblock()
	})
}

// opener is the state of one Open.
type opener struct {
	dev  storage.Device
	cfg  Config
	geo  geometry
	done func(*Journal, *Recovery, error)

	phase          openPhase
	copies         [SuperblockCopies]CopyReport
	copiesRead     int
	state          wire.VsrState
	sequence       uint64
	formatted      uint64  // slots [0, formatted) are formatted: read them
	head           LogHead // the log head recorded with the state
	headers        []headerCopy
	chunks         []prepareCopy
	headersRead    uint64     // header copies resolved
	chunksRead     uint64     // prepare chunks resolved
	nextHeaderSlot uint64     // next header run to read
	nextChunkSlot  uint64     // next prepare chunk's first sector to read
	retry          []uint64   // header sectors to read alone (their run failed)
	rests          []restRead // prepare chunks whose remaining sectors are to be read
	buffers        [][]byte   // batch buffers free for reuse
	inFlight       int
	err            error // a device failure: stop issuing, report once idle
	finished       bool

	j       *Journal
	r       *Recovery
	repairs []uint64 // slots whose header copy Open rewrites
	// restore: the slot of the log head, whose header copy Open writes from
	// the superblock's record of it (build); -1 when none.
	restore    int64
	nextRepair int
}

// openPhase is where an Open is.
type openPhase uint8

const (
	phaseSuperblock openPhase = iota // syncing, then reading the copies
	phaseSlots                       // reading the rings
	phaseRepair                      // rewriting damaged header copies of Clean slots
	phaseRepairSync                  // syncing them
	phaseDone
)

type restRead struct {
	slot uint64
	buf  []byte // padded; the first sector is filled in
	size int
}

// completed accounts for a completed I/O and reports whether the open has
// already failed (the caller then drops the result: done runs once idle).
func (o *opener) completed() bool {
	if o.inFlight <= 0 {
		panic("journal: open I/O completed with none in flight")
	}
	o.inFlight--
	if o.err != nil {
		o.maybeFinish()
		return true
	}
	return false
}

func (o *opener) fail(err error) {
	if o.err == nil {
		o.err = err
	}
	o.maybeFinish()
}

func (o *opener) readSuperblock() {
	for i := range SuperblockCopies {
		buf := make([]byte, int(o.geo.superblockChunkSectors)*o.geo.sectorBytes)
		o.inFlight++
		o.dev.Read(o.geo.superblockSector(i), buf, func(err error) {
			if o.completed() {
				return
			}
			if err != nil && !errors.Is(err, storage.ErrReadFault) {
				o.fail(err)
				return
			}
			o.copies[i] = decodeSuperblockChunk(o.cfg, buf, err)
			o.copiesRead++
			if o.copiesRead < SuperblockCopies {
				return
			}
			chosen, cerr := chooseSuperblock(o.cfg, &o.copies)
			if cerr != nil {
				o.fail(cerr)
				return
			}
			o.state, o.sequence, o.formatted, o.head = chosen.State, chosen.Sequence, chosen.Formatted, chosen.Head
			// Slots beyond the formatted extent were never written since
			// the device was new: empty, with nothing to read (build).
			o.headers = make([]headerCopy, o.formatted)
			o.chunks = make([]prepareCopy, o.formatted)
			o.phase = phaseSlots
			o.pump()
		})
	}
}

// scanDepthMax bounds the reads of the rings Open keeps in flight: a
// recovery scan with a queue depth of its own, so that its batch buffers
// are reused instead of one per batch of the whole ring at once.
const scanDepthMax = 4

// pump issues reads while the window allows, then finishes when all is read.
func (o *opener) pump() {
	for o.err == nil && o.inFlight < min(o.cfg.IOsMax, scanDepthMax) {
		switch {
		case len(o.rests) > 0:
			n := min(len(o.rests), batchSlotsMax)
			batch := append([]restRead(nil), o.rests[len(o.rests)-n:]...)
			o.rests = o.rests[:len(o.rests)-n]
			o.readRests(batch)
		case len(o.retry) > 0:
			s := o.retry[len(o.retry)-1]
			o.retry = o.retry[:len(o.retry)-1]
			o.readHeaders(s, 1)
		case o.nextHeaderSlot < o.formatted:
			n := min(o.formatted-o.nextHeaderSlot, headerRunSlotsMax)
			o.readHeaders(o.nextHeaderSlot, n)
			o.nextHeaderSlot += n
		case o.nextChunkSlot < o.formatted:
			n := min(o.formatted-o.nextChunkSlot, batchSlotsMax)
			o.readChunkFirsts(o.nextChunkSlot, n)
			o.nextChunkSlot += n
		default:
			o.maybeFinish()
			return
		}
	}
	o.maybeFinish()
}

func (o *opener) readHeaders(first, count uint64) {
	sector := o.geo.sectorBytes
	buf := o.batchBuffer(int(count) * sector)
	o.inFlight++
	o.dev.Read(o.geo.headerSector(first), buf, func(err error) {
		defer o.releaseBatchBuffer(buf)
		if o.completed() {
			return
		}
		switch {
		case err == nil:
			for k := range count {
				o.headers[first+k] = parseHeaderSector(o.cfg, first+k, buf[int(k)*sector:int(k+1)*sector])
			}
			o.headersRead += count
		case !errors.Is(err, storage.ErrReadFault):
			o.fail(err)
			return
		case count > 1:
			// Some sector of the run is unreadable: read each alone.
			for k := range count {
				o.retry = append(o.retry, first+count-1-k)
			}
		default:
			o.headers[first] = headerCopy{state: SectorDamaged}
			o.headersRead++
		}
		o.pump()
	})
}

// readChunkFirsts reads the first sector of the prepare chunks of count
// slots from first, as one batch (a recovery scan submits its reads
// together): each sector is its own read, with its own faults.
func (o *opener) readChunkFirsts(first, count uint64) {
	sector := o.geo.sectorBytes
	buf := o.batchBuffer(int(count) * sector)
	extents := make([]storage.Extent, count)
	for k := range count {
		extents[k] = storage.Extent{Sector: o.geo.prepareSector(first + k), Buf: buf[int(k)*sector : int(k+1)*sector]}
	}
	o.inFlight++
	o.dev.ReadBatch(extents, func() {
		defer o.releaseBatchBuffer(buf)
		if o.completed() {
			return
		}
		for k, e := range extents {
			slot := first + uint64(k)
			if e.Err != nil {
				if !errors.Is(e.Err, storage.ErrReadFault) {
					o.fail(e.Err)
					return
				}
				o.resolveChunk(slot, prepareCopy{state: SectorDamaged})
				continue
			}
			state, size := peekPrepareChunk(o.cfg, slot, e.Buf)
			switch state {
			case SectorEmpty, SectorDamaged:
				o.resolveChunk(slot, prepareCopy{state: state})
			default:
				padded := o.geo.paddedBytes(size + sealBytes)
				if padded <= len(e.Buf) {
					p := parsePrepareChunk(o.cfg, slot, e.Buf, size)
					if p.state == SectorValid {
						p.buf = bytes.Clone(p.frame()) // the batch buffer is reused
					}
					o.resolveChunk(slot, p)
					break
				}
				full := make([]byte, padded)
				copy(full, e.Buf)
				o.rests = append(o.rests, restRead{slot: slot, buf: full, size: size})
			}
		}
		o.pump()
	})
}

// readRests reads the remaining sectors of prepare chunks whose first
// sector says the frame extends past it, as one batch.
func (o *opener) readRests(rests []restRead) {
	sector := o.geo.sectorBytes
	extents := make([]storage.Extent, len(rests))
	for k, r := range rests {
		extents[k] = storage.Extent{Sector: o.geo.prepareSector(r.slot) + 1, Buf: r.buf[sector:]}
	}
	o.inFlight++
	o.dev.ReadBatch(extents, func() {
		if o.completed() {
			return
		}
		for k, e := range extents {
			r := rests[k]
			switch {
			case e.Err == nil:
				o.resolveChunk(r.slot, parsePrepareChunk(o.cfg, r.slot, r.buf, r.size))
			case errors.Is(e.Err, storage.ErrReadFault):
				o.resolveChunk(r.slot, prepareCopy{state: SectorDamaged})
			default:
				o.fail(e.Err)
				return
			}
		}
		o.pump()
	})
}

// batchBuffer returns a buffer of n bytes for a batch of first sectors,
// reused across the batches of one open.
func (o *opener) batchBuffer(n int) []byte {
	if k := len(o.buffers); k > 0 {
		b := o.buffers[k-1]
		o.buffers = o.buffers[:k-1]
		if cap(b) >= n {
			return b[:n]
		}
	}
	return make([]byte, n)
}

func (o *opener) releaseBatchBuffer(b []byte) { o.buffers = append(o.buffers, b) }

func (o *opener) resolveChunk(slot uint64, p prepareCopy) {
	if o.chunks[slot].state != SectorUnread {
		panic(fmt.Sprintf("journal: prepare chunk %d resolved twice", slot))
	}
	o.chunks[slot] = p
	o.chunksRead++
}

// maybeFinish moves the open on once nothing is in flight: to done on a
// failure, from reading to rewriting damaged header copies once everything
// is read, to a sync once they are written, to done once synced.
func (o *opener) maybeFinish() {
	if o.finished || o.inFlight > 0 {
		return
	}
	if o.err != nil {
		o.finished = true
		o.done(nil, nil, o.err)
		return
	}
	switch o.phase {
	case phaseSlots:
		if o.headersRead < o.formatted || o.chunksRead < o.formatted {
			return
		}
		o.j, o.r = o.build()
		for i := range o.r.Slots {
			if o.r.Slots[i].HeaderRepaired || int64(i) == o.restore {
				o.repairs = append(o.repairs, uint64(i))
			}
		}
		o.phase = phaseRepair
		o.pumpRepairs()
	case phaseRepair:
		if o.nextRepair < len(o.repairs) {
			return
		}
		if len(o.repairs) == 0 {
			o.phase = phaseDone
			o.maybeFinish()
			return
		}
		o.phase = phaseRepairSync
		o.inFlight++
		o.dev.Sync(func(err error) {
			if o.completed() {
				return
			}
			if err != nil {
				o.fail(err)
				return
			}
			for _, i := range o.repairs {
				s := o.j.slotAt(i)
				if int64(i) == o.restore {
					h := o.head.Header
					s.header = diskRecord{state: diskValid, op: o.head.Op, id: h.Checksum()}
					s.headerBytes = &h
					s.vouched = true
					s.floorOp = max(s.floorOp, o.head.Op)
					continue
				}
				if s.header.state != diskFlux || !s.mem.held() {
					panic(fmt.Sprintf("journal: header repair of slot %d in state %d", i, s.header.state))
				}
				s.header = diskRecord{state: diskValid, op: s.mem.op, id: s.mem.id}
				s.headerBytes = s.mem.header()
				s.vouched = true
			}
			o.phase = phaseDone
			o.maybeFinish()
		})
	case phaseDone:
		o.finished = true
		o.done(o.j, o.r, nil)
	}
}

// pumpRepairs writes the header copy of each Clean slot found with a damaged
// one: the held prepare's header, sealed and padded, as Append writes it.
func (o *opener) pumpRepairs() {
	for o.err == nil && o.inFlight < o.cfg.IOsMax && o.nextRepair < len(o.repairs) {
		i := o.repairs[o.nextRepair]
		o.nextRepair++
		s := o.j.slotAt(i)
		s.header = diskRecord{state: diskFlux}
		if int64(i) == o.restore {
			putRecord(o.j.headerScratch, o.head.Header[:])
		} else {
			putRecord(o.j.headerScratch, s.mem.frame[:wire.HeaderSize]) // the device copies it
		}
		o.inFlight++
		o.dev.Write(o.geo.headerSector(i), o.j.headerScratch, func(err error) {
			if o.completed() {
				return
			}
			if err != nil {
				o.fail(err)
				return
			}
			o.pumpRepairs()
		})
	}
	o.maybeFinish()
}

// build classifies every slot and assembles the journal and the report.
func (o *opener) build() (*Journal, *Recovery) {
	cfg := o.cfg
	r := &Recovery{
		Head:      o.head,
		State:     o.state,
		Sequence:  o.sequence,
		Formatted: o.formatted,
		Copies:    o.copies,
		Slots:     make([]SlotReport, o.formatted),
		slotCount: cfg.SlotCount,
	}
	for i := range o.formatted {
		h, p := &o.headers[i], &o.chunks[i]
		if h.state == SectorUnread || p.state == SectorUnread {
			panic(fmt.Sprintf("journal: slot %d not read", i))
		}
		r.Slots[i] = classify(h, p)
		if h.state == SectorValid {
			r.HeadOp = max(r.HeadOp, h.op)
			r.HeaderOpMax = max(r.HeaderOpMax, h.op)
		}
		if p.state == SectorValid {
			r.HeadOp = max(r.HeadOp, p.op)
		}
		if r.Slots[i].HeaderRepaired {
			r.HeaderOpMax = max(r.HeaderOpMax, p.op) // as rewritten
		}
	}
	o.restoreHead(r)
	for i := range o.formatted {
		label(&r.Slots[i], uint64(i), cfg.SlotCount, r.HeadOp)
	}

	j := newJournal(o.dev, cfg, o.geo)
	for i := range o.formatted {
		s, h, p, rep := j.slotAt(i), &o.headers[i], &o.chunks[i], &r.Slots[i]
		switch h.state {
		case SectorEmpty:
			s.header = diskRecord{state: diskEmpty}
		case SectorValid:
			s.header = diskRecord{state: diskValid, op: h.op, id: h.id, unacked: h.unacked}
			s.headerBytes = h.header
			s.vouched = rep.Class != ClassConflict
			s.floorOp = h.op
		default:
			s.header = diskRecord{state: diskDamaged}
		}
		switch p.state {
		case SectorEmpty:
			s.prepare = diskRecord{state: diskEmpty}
		case SectorValid:
			s.prepare = diskRecord{state: diskValid, op: p.op, id: p.id}
			s.floorOp = max(s.floorOp, p.op)
		default:
			s.prepare = diskRecord{state: diskDamaged}
		}
		if rep.Class == ClassClean {
			if rep.Op != p.op {
				panic("journal: a Clean slot that does not hold its prepare")
			}
			// The read's own buffer (a copy of the frame, or a chunk's
			// whole padded sectors read for it alone): frame() is capped.
			s.mem = entry{frame: p.frame(), op: p.op, id: p.id}
		}
	}
	j.formatted, j.formatTarget = o.formatted, o.formatted
	j.sb.init(j, o.state, o.sequence, o.formatted, o.head)
	// The caller's log starts at the recorded head, or at the highest op
	// above it the log_view appended (set again by whatever the caller does
	// with it: a Truncate, a Reconcile, appends).
	top := o.logViewTop()
	j.head = LogHead{Op: top}
	switch {
	case top == o.head.Op && o.head.Known():
		j.head = o.head
	case top > 0:
		s := j.slotOf(top)
		if s.mem.held() && s.mem.op == top {
			j.head.Header = *s.mem.header()
		} else if s.header.state == diskValid && s.header.op == top && s.vouched {
			j.head.Header = *s.headerBytes
		}
	}
	return j, r
}

// logViewTop returns the head of the caller's log as the slots and the
// superblock show it: the recorded head's op, or the highest op above it
// of a valid copy stamped in the state's log_view or later. Every op the
// log_view appended above the head it adopted was stamped in it (one
// primary per view stamps its prepares; a retransmission re-stamps later);
// an op above the recorded head stamped before the log_view belongs to a
// log the log_view replaced, which its reconcile meant to forget and a
// misdirected write kept (DEVIATIONS.md 50's leftover). HeadOp still counts
// it (nothing of the slot may be nacked on the strength of a head below
// it), but the log head must not: the next WriteState in the same log_view
// would record the leftover, with its stale header, as the log_view's head,
// which then hides it from the leftover rule and which restoreHead would
// write back as possibly acknowledged once its slot rotted (VOPR seed
// 3449264250: view 8's op 2 recorded as log_view 9's head; DEVIATIONS.md
// 74). With log_view 0 every op counts (nothing was replaced).
func (o *opener) logViewTop() uint64 {
	top := o.head.Op
	for i := range o.formatted {
		h, p := &o.headers[i], &o.chunks[i]
		if h.state == SectorValid && h.op > top && h.header.View() >= o.state.LogView {
			top = h.op
		}
		if p.state == SectorValid && p.op > top && wire.HeaderOf(p.frame()).View() >= o.state.LogView {
			top = p.op
		}
	}
	return top
}

// restoreHead makes the recovery know the log head the superblock recorded
// with its log_view, when its slot no longer shows it (DEVIATIONS.md 50).
// A log_view is persisted only once its log is durable, so the head's slot
// held at least its header then; a sector fault since (one slot, within the
// fault model) must not shorten the log the replica votes with under that
// log_view: the merge trusts the highest log_view's heads to drop ops, a
// committed one among them (VOPR seed 9342398579007997777: a backup adopted
// a StartView's head op 18 by header alone, its ops 15..17 unknown and
// empty, went Normal in log_view 2, and after the header sector of op 18
// rotted it restarted and voted log_view 2 with head op 14).
//
// The head raises HeadOp. When its header is known and its slot holds no
// valid copy of that op or a newer one, Open writes the header into the
// slot's header copy (Open's repair phase), recorded as possibly
// acknowledged (the superblock cannot say it was not): the op is then
// HeaderOnly, never nacked, and its body is repaired like a Corrupt slot's.
func (o *opener) restoreHead(r *Recovery) {
	o.restore = -1
	h := o.head
	if h.Op == 0 {
		return
	}
	r.HeadOp = max(r.HeadOp, h.Op)
	if !h.Known() {
		return
	}
	if h.Op <= o.state.CheckpointOp {
		// The durable checkpoint covers the head: its slot may hold a newer
		// op since (the ring wraps past covered ops), acknowledged, whose
		// damaged copies a restore would overwrite; and the replica votes
		// no op at or below its checkpoint's (they are committed). Above
		// it, the slot never held a newer op: a write of op h+SlotCount
		// needs a durable checkpoint at h or above (Admits), which the
		// superblock would record (checkpoint_op never goes back).
		return
	}
	slot := h.Op % o.cfg.SlotCount
	if slot >= o.formatted {
		panic(fmt.Sprintf("journal: the superblock's log head op %d lies in slot %d, beyond the %d formatted", h.Op, slot, o.formatted))
	}
	rep := &r.Slots[slot]
	if rep.Header.State == SectorValid && rep.Header.Op >= h.Op || rep.Prepare.State == SectorValid && rep.Prepare.Op >= h.Op || rep.HeaderRepaired {
		return // the slot shows the op (or a newer one): its own copies win
	}
	o.restore = int64(slot)
	rep.HeadRestored = true
	r.HeaderOpMax = max(r.HeaderOpMax, h.Op)
}
