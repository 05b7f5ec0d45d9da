package journal

import (
	"bytes"
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"
	"slices"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
)

// Knowledge is what the journal can say about one op: the answer a replica
// needs for a DoViewChange (present, blank, or nack) and for repair.
type Knowledge uint8

// Knowledge values. The zero value is Unknown, the answer that is never
// unsafe.
const (
	// Unknown: the journal can neither produce the op nor prove it never
	// acknowledged it (its slot's header copy is damaged or being written,
	// holds a newer op, or holds this op with a header the journal does not
	// vouch for). The replica reports it blank and must not nack it.
	Unknown Knowledge = iota
	// Held: the journal holds the op's prepare frame (Frame returns it).
	Held
	// HeaderOnly: the journal knows the op's header from its durable header
	// copy (Header returns it) but not its body: the op may have been
	// acknowledged; the body must be repaired from a peer. Never nack it.
	HeaderOnly
	// Nackable: the journal can prove this replica never acknowledged the
	// op: the slot's durable header copy is readable and holds the empty
	// marker or an older op, and the journal does not hold the op. (An op
	// is acknowledged only after its header copy is durable.)
	Nackable
	// HeaderUnacked: the journal knows the op's header (Header returns it)
	// and can prove this replica never acknowledged it: Reconcile recorded
	// the header from an adopted canonical log while the slot showed no
	// acknowledgement of that op (the empty marker, an older op, or another
	// identity), and nothing was appended over it since. Report the header
	// with a nack. This is TigerBeetle's "dirty but not faulty": without it,
	// a replica that learned an op's header from a StartView but never got
	// its body could not nack it, and a view change whose other voters lost
	// the op would wait forever for a body nobody has (VOPR seed 2267).
	HeaderUnacked
)

var knowledgeNames = [...]string{"unknown", "held", "header-only", "nackable", "header-unacked"}

// String returns the knowledge's name.
func (k Knowledge) String() string {
	if int(k) < len(knowledgeNames) {
		return knowledgeNames[k]
	}
	return fmt.Sprintf("Knowledge(%d)", uint8(k))
}

// diskRecord is what the journal knows a stored copy (a header sector or a
// prepare chunk) durably holds.
type diskRecord struct {
	state diskState
	op    uint64
	id    wire.U128
	// unacked (header copies only): Reconcile recorded this header for an
	// op the replica had not acknowledged; an append of the op rewrites it
	// as an ordinary header copy before its done runs.
	unacked bool
}

type diskState uint8

const (
	diskDamaged diskState = iota // unreadable, invalid, or unknown
	diskEmpty                    // the empty marker
	diskValid                    // the record of (op, id)
	diskFlux                     // a write is in flight or not yet synced: after a crash, old, new or torn
)

// holds reports whether the copy is the record of (op, id) that an append
// writes: for a header copy, one that records a possible acknowledgement.
func (r diskRecord) holds(op uint64, id wire.U128) bool {
	return r.state == diskValid && r.op == op && r.id == id && !r.unacked
}

// knows reports whether the copy is a record of (op, id) of either kind.
func (r diskRecord) knows(op uint64, id wire.U128) bool {
	return r.state == diskValid && r.op == op && r.id == id
}

// entry is a prepare the journal holds in memory: an immutable copy of the
// frame, exactly its size (it is sealed and padded into a scratch buffer
// when written, which the device copies at the call).
type entry struct {
	frame []byte // nil: nothing held
	op    uint64
	id    wire.U128
}

func (e *entry) held() bool                      { return e.frame != nil }
func (e *entry) is(op uint64, id wire.U128) bool { return e.frame != nil && e.op == op && e.id == id }
func (e *entry) header() *wire.Header            { return wire.HeaderOf(e.frame) }

// slot is one journal slot: the entry held in memory, what the journal knows
// its two stored copies durably hold, and the writes queued for it.
type slot struct {
	mem entry

	header  diskRecord
	prepare diskRecord
	// headerBytes is the header copy's content when header is diskValid
	// (never written through: a new copy replaces it; a pointer, so that
	// the 4096 slots of a ring a replica opens cost little when empty).
	headerBytes *wire.Header
	// vouched: Header and Knowledge may report the header copy's op as
	// HeaderOnly. False after the caller truncated that op or replaced it
	// with another identity, and for a header that disagrees with the
	// prepare chunk on the same op at recovery.
	vouched bool

	// floorOp: the highest op ever written or recovered in this slot (0:
	// none known). Ops in a slot never go back, which is what lets recovery
	// read "header older than prepare" as a header write that never landed.
	floorOp uint64

	// The writes for this slot, oldest first; only the first is active.
	// Writes to one slot are serialized: two in flight at once would land
	// in an order the device does not promise.
	first, last *appendOp
}

// appendStep is where an append is in its sequence of I/Os.
type appendStep uint8

const (
	stepFree         appendStep = iota
	stepQueued                  // behind another write to its slot
	stepPrepareWrite            // writing the prepare chunk
	stepPrepareSync             // syncing it
	stepHeaderWrite             // writing the header sector
	stepHeaderSync              // syncing it
	stepSettle                  // already durable: a sync, only to run done later
	stepAwaitFormat             // its slot lies beyond the formatted extent (extent.go)
	stepThrottled               // AppendsMax writes run already: it waits its turn
)

// appendOp is one Append or Repair until its done runs. A fixed pool of
// Config.AppendsMax of them is allocated at Open; onIO is bound once, so
// the I/O path allocates nothing.
type appendOp struct {
	j    *Journal
	kind writeKind
	e    entry       // the entry to write (shares the immutable frame); for a clear or a header-only write, e.op only
	hdr  wire.Header // writeHeaderOnly: the header to record
	// unacked (writeHeaderOnly): the header is recorded as never
	// acknowledged (decided when its write starts).
	unacked bool
	done    func()
	step    appendStep
	next    *appendOp // next in the slot's queue, or in the free list
	onIO    func(error)
	extra   bool // a Reconcile's record beyond the pool: dropped when done
}

// writeKind is what a queued slot write puts on disk.
type writeKind uint8

const (
	// writeAppend: the prepare into the chunk, then its header copy.
	writeAppend writeKind = iota
	// writeClear: the empty marker into the chunk, then into the header
	// sector: the slot's op is durably forgotten (Reconcile).
	writeClear
	// writeHeaderOnly: the empty marker into the chunk, then a canonical
	// header into the header sector: the op is known by header, its body is
	// not held (Reconcile).
	writeHeaderOnly
)

// Journal is one replica's durable metadata journal and superblock on a
// storage.Device: a ring of Config.SlotCount slots (op k in slot
// k % SlotCount), each with a prepare chunk and a redundant header copy,
// plus the superblock copies. It is sans-I/O: it issues I/O through the
// device and continues in the completion callbacks, which the device runs
// later as loop events; it never blocks. Every done it takes runs from such
// a callback, never from inside the call that passed it.
//
// Get one from Open (after Format, once, when the cluster is created). It is
// not safe for concurrent use: one goroutine, one event loop.
type Journal struct {
	dev storage.Device
	cfg Config
	geo geometry

	// slots holds the ring in pages of slotPageSize, made on first use: a
	// page never touched holds only slots never written since Format (both
	// copies the empty marker), so a journal whose ops fill a few hundred
	// slots of 4096 costs a few pages. Pages never move: a *slot stays
	// valid.
	slots []*slotPage

	ops      []appendOp // the pool
	free     *appendOp
	inFlight int // appends, repairs and reconcile writes whose done has not run
	extra    int // of those, reconcile writes on records beyond the pool
	// running counts the writes with an I/O of theirs in flight: at most
	// AppendsMax (so the journal's I/Os stay within IOsMax, records beyond
	// the pool included); throttled holds, in order, the first writes of
	// their slots that wait for one to finish.
	running   int
	throttled []*appendOp
	ios       int // I/Os in flight

	headerScratch []byte // one sector: the header copy being written
	chunkScratch  []byte // the prepare chunk being written, grown on demand
	sb            superblock
	// head is the head of the caller's log as far as it is durable: the
	// highest op whose append or repair is done, or the head a Reconcile
	// made durable, lowered by Truncate. WriteState records it with the
	// state (DEVIATIONS.md 50): never an op whose slot does not hold it
	// yet, so that Open may restore it over whatever its slot shows.
	head LogHead

	// The formatted extent (extent.go): slots [0, formatted) are formatted
	// and durably recorded so; formatting runs toward formatTarget while
	// formatting; awaiting holds the writes parked until it covers them.
	formatted    uint64
	formatTarget uint64
	formatting   bool
	formatIO     bool // its marker write or sync is in flight
	awaiting     []*appendOp
}

// newJournal builds a journal with no slot page made (every slot Empty) and
// nothing held; Open fills in what it read.
func newJournal(dev storage.Device, cfg Config, geo geometry) *Journal {
	j := &Journal{
		dev:           dev,
		cfg:           cfg,
		geo:           geo,
		slots:         make([]*slotPage, (cfg.SlotCount+slotPageSize-1)/slotPageSize),
		ops:           make([]appendOp, cfg.AppendsMax),
		headerScratch: make([]byte, geo.sectorBytes),
	}
	for i := len(j.ops) - 1; i >= 0; i-- {
		a := &j.ops[i]
		a.j = j
		a.onIO = a.ioDone
		a.next = j.free
		j.free = a
	}
	return j
}

// Config returns the journal's configuration.
func (j *Journal) Config() Config { return j.cfg }

// InFlight returns the number of appends and repairs whose done has not run.
func (j *Journal) InFlight() int { return j.inFlight }

func (j *Journal) slotOf(op uint64) *slot {
	if op == 0 {
		panic("journal: op 0 (ops are 1-based)")
	}
	return j.slotAt(op % j.cfg.SlotCount)
}

// slotPageSize is how many slots one page of the ring holds.
const slotPageSize = 64

type slotPage [slotPageSize]slot

// slotAt returns slot i, making its page (every slot of it Empty) on first
// use.
func (j *Journal) slotAt(i uint64) *slot {
	p := j.slots[i/slotPageSize]
	if p == nil {
		p = new(slotPage)
		for k := range p {
			p[k].header.state, p[k].prepare.state = diskEmpty, diskEmpty
		}
		j.slots[i/slotPageSize] = p
	}
	return &p[i%slotPageSize]
}

// eachSlot calls fn for every slot of every page made so far, in slot
// order; the others are Empty and untouched.
func (j *Journal) eachSlot(fn func(i uint64, s *slot)) {
	for pi, p := range j.slots {
		if p == nil {
			continue
		}
		for k := range p {
			if i := uint64(pi)*slotPageSize + uint64(k); i < j.cfg.SlotCount {
				fn(i, &p[k])
			}
		}
	}
}

// Append journals a prepare: frame is a complete, valid Prepare (command 6)
// of this cluster, with a nonzero identity and body seal (so its body can be
// verified when read back), at most Config.FrameSizeMax bytes. The journal
// copies it (the caller may reuse frame at once) and holds the copy in
// memory, so Frame serves it from then on without touching the disk. Then,
// in order: the prepare is written to its slot's chunk and synced, its header
// is written to the slot's header sector and synced, and done runs. done
// means the op is durable and recorded as maybe acknowledged: only then may
// the replica send PrepareOk for it (or count its own ack). A crash before
// done leaves the op, at recovery, either held or provably never
// acknowledged (Nackable) or unknown, never falsely Nackable after done.
//
// Appends to different slots proceed concurrently and complete in any
// order; an append to a slot with a write in flight waits for it (writes to
// one slot are serialized). Every done runs exactly once, unless the process
// crashes first.
//
// Ops in a slot never go back: op must be at least every op written to its
// slot so far (or found there by Open). An append of another op to the slot
// overwrites the slot; the caller decides when that is safe. An append of
// the op the slot holds with the same identity is idempotent: nothing is
// rewritten that is already durable (done still runs later, after a sync);
// with another identity it replaces the entry (a view change replacing an
// uncommitted op). At most Config.AppendsMax appends and repairs may be
// waiting for their done; one more panics. Appending the frame of a Clean
// slot that Open found unacknowledged writes its header: that is how the
// caller acknowledges such a prepare.
func (j *Journal) Append(frame []byte, done func()) { j.enqueue(frame, done, "Append") }

// Repair journals a prepare received from a peer to fill a slot Open found
// Corrupt, Torn or Faulty (or any op the replica is missing). It takes the
// same path as Append, with the same rules: the frame must be a Prepare
// (convert a RepairPrepare with wire.ToPrepare first), and the caller must
// have checked its identity against the header it expects. When the header
// copy already holds this op's header, only the prepare is rewritten.
func (j *Journal) Repair(frame []byte, done func()) { j.enqueue(frame, done, "Repair") }

func (j *Journal) enqueue(frame []byte, done func(), what string) {
	if done == nil {
		panic("journal: " + what + " with nil done")
	}
	if len(frame) > j.cfg.FrameSizeMax {
		panic(fmt.Sprintf("journal: %s of a %d-byte frame, FrameSizeMax %d", what, len(frame), j.cfg.FrameSizeMax))
	}
	if len(frame) < wire.HeaderSize {
		panic(fmt.Sprintf("journal: %s of a %d-byte frame", what, len(frame)))
	}
	h := wire.HeaderOf(frame)
	op := opOf(h)
	s := j.slotOf(op)
	slotIndex := op % j.cfg.SlotCount
	if p := prepareProblem(j.cfg, frame, slotIndex); p != "" {
		panic(fmt.Sprintf("journal: %s of an invalid prepare (op %d): %s", what, op, p))
	}
	if op < s.floorOp {
		panic(fmt.Sprintf("journal: %s of op %d into slot %d, which already had op %d (ops in a slot never go back)", what, op, slotIndex, s.floorOp))
	}
	if j.free == nil {
		panic(fmt.Sprintf("journal: more than AppendsMax = %d appends and repairs in flight", j.cfg.AppendsMax))
	}
	id := h.Checksum()
	s.floorOp = op
	if !s.mem.is(op, id) {
		s.mem = entry{frame: bytes.Clone(frame), op: op, id: id}
	}
	switch {
	case s.header.knows(op, id):
		s.vouched = true // the caller vouches for it again
	case s.header.state == diskValid && s.header.op == op:
		s.vouched = false // replaced
	}

	a := j.free
	j.free, a.next = a.next, nil
	j.inFlight++
	a.e, a.done, a.step = s.mem, done, stepQueued
	j.queue(s, a)
}

// queue puts write a last in slot s's queue, starting it if the slot has
// no write in flight.
func (j *Journal) queue(s *slot, a *appendOp) {
	if s.last == nil {
		s.first, s.last = a, a
		j.start(a)
		return
	}
	s.last.next = a
	s.last = a
}

// start begins the I/O of the first write queued on its slot: only what is
// not durable already.
func (j *Journal) start(a *appendOp) {
	s := j.slotOf(a.e.op)
	if s.first != a || a.step != stepQueued {
		panic("journal: start of a write that is not first in its slot")
	}
	if slot := a.e.op % j.cfg.SlotCount; slot >= j.formatted {
		j.awaitFormat(a, slot)
		return
	}
	if j.running >= j.cfg.AppendsMax {
		a.step = stepThrottled
		j.throttled = append(j.throttled, a)
		return
	}
	j.running++
	if a.kind != writeAppend {
		j.startReconcileWrite(a, s)
		return
	}
	switch {
	case !s.prepare.holds(a.e.op, a.e.id):
		a.step = stepPrepareWrite
		s.prepare = diskRecord{state: diskFlux}
		n := j.geo.paddedBytes(len(a.e.frame) + sealBytes)
		if cap(j.chunkScratch) < n {
			j.chunkScratch = make([]byte, n)
		}
		putRecord(j.chunkScratch[:n], a.e.frame)
		j.write(j.geo.prepareSector(a.e.op%j.cfg.SlotCount), j.chunkScratch[:n], a.onIO)
	case !s.header.holds(a.e.op, a.e.id):
		j.writeHeader(a, s)
	default:
		a.step = stepSettle
		j.sync(a.onIO)
	}
}

func (j *Journal) writeHeader(a *appendOp, s *slot) {
	if !s.prepare.holds(a.e.op, a.e.id) {
		panic(fmt.Sprintf("journal: header write for op %d before its prepare is durable", a.e.op))
	}
	a.step = stepHeaderWrite
	s.header = diskRecord{state: diskFlux}
	s.vouched = false
	putRecord(j.headerScratch, a.e.frame[:wire.HeaderSize])
	j.write(j.geo.headerSector(a.e.op%j.cfg.SlotCount), j.headerScratch, a.onIO)
}

// ioDone advances an append by one completed I/O.
func (a *appendOp) ioDone(err error) {
	j := a.j
	j.ioCompleted(err)
	s := j.slotOf(a.e.op)
	if s.first != a {
		panic("journal: I/O completed for a write that is not active in its slot")
	}
	switch a.step {
	case stepPrepareWrite:
		a.step = stepPrepareSync
		j.sync(a.onIO)
	case stepPrepareSync:
		if a.kind != writeAppend {
			s.prepare = diskRecord{state: diskEmpty}
			j.reconcileHeader(a, s)
			return
		}
		s.prepare = diskRecord{state: diskValid, op: a.e.op, id: a.e.id}
		if s.header.holds(a.e.op, a.e.id) {
			j.finish(a, s) // a repair under a header copy that was intact
		} else {
			j.writeHeader(a, s)
		}
	case stepHeaderWrite:
		a.step = stepHeaderSync
		j.sync(a.onIO)
	case stepHeaderSync:
		if a.kind != writeAppend {
			j.reconcileHeaderDone(a, s)
			return
		}
		s.header = diskRecord{state: diskValid, op: a.e.op, id: a.e.id}
		s.headerBytes = a.e.header() // the entry's frame is immutable: share it
		// Vouch for it unless the caller truncated or replaced the op while
		// it was being written (an entry for a newer op is not a withdrawal).
		s.vouched = s.mem.is(a.e.op, a.e.id) || s.mem.held() && s.mem.op > a.e.op
		j.finish(a, s)
	case stepSettle:
		j.finish(a, s)
	default:
		panic(fmt.Sprintf("journal: I/O completed for a write at step %d", a.step))
	}
}

// finish retires the first write of s, starts the next, and runs done last,
// when the journal is consistent (done may call back into it).
func (j *Journal) finish(a *appendOp, s *slot) {
	if !j.reached(a, s) {
		panic(fmt.Sprintf("journal: op %d done before its write is durable", a.e.op))
	}
	done := a.done
	if a.kind == writeAppend && a.e.op >= j.head.Op && s.mem.is(a.e.op, a.e.id) {
		j.head = LogHead{Op: a.e.op, Header: *a.e.header()}
	}
	s.first = a.next
	if s.first == nil {
		s.last = nil
	}
	j.inFlight--
	j.running--
	if a.extra {
		j.extra--
		*a = appendOp{}
	} else {
		*a = appendOp{j: j, onIO: a.onIO, next: j.free}
		j.free = a
	}
	if s.first != nil {
		j.start(s.first)
	}
	if len(j.throttled) > 0 && j.running < j.cfg.AppendsMax {
		next := j.throttled[0]
		j.throttled = j.throttled[1:]
		next.step = stepQueued
		j.start(next)
	}
	done()
}

// Truncate forgets, in memory, every op above afterOp: Frame, Header and
// Knowledge stop reporting them (Knowledge reports Unknown for an op whose
// header copy may be durable: it may have been acknowledged). Nothing is
// written: the durable header copies still say those ops may have been
// acknowledged, which is right (a later recovery will not nack them, and
// may find them held: recovery reports the disk, not the caller's log).
// Writes in flight for truncated ops complete and run their done.
func (j *Journal) Truncate(afterOp uint64) {
	j.eachSlot(func(_ uint64, s *slot) {
		if s.mem.held() && s.mem.op > afterOp {
			s.mem = entry{}
		}
		if s.header.state == diskValid && s.header.op > afterOp {
			s.vouched = false
		}
	})
	if j.head.Op > afterOp {
		j.setHead(afterOp)
	}
}

// setHead makes op the log's head, with its header when the journal knows
// it and the slot's header copy holds it durably: a recorded head's header
// is one Open may write back into the slot, so it must never be one whose
// append is still in flight (rapid seed 16815872842783330051: ops 1..4
// appended, op 4 done first, a truncate after op 2 made op 2 the head while
// its slot was not even formatted yet, and the superblock recorded its
// header).
func (j *Journal) setHead(op uint64) {
	j.head = LogHead{Op: op}
	if op == 0 {
		return
	}
	if h, ok := j.Header(op); ok && j.slotOf(op).header.holds(op, h.Checksum()) {
		j.head.Header = h
	}
}

// Head returns the head of the caller's log as the journal knows it.
func (j *Journal) Head() LogHead { return j.head }

// Admission says whether the journal may write an op now (Admits).
type Admission uint8

// Admission values.
const (
	// Admitted: the op's slot is free for it (never written, or holding an
	// op the durable checkpoint covers, or the op itself).
	Admitted Admission = iota + 1
	// AdmitAfterCheckpoint: the slot holds an op above the durable
	// checkpoint, which a restart would replay from this journal; the op
	// may be written once a checkpoint covering the slot's op is durable.
	AdmitAfterCheckpoint
	// AdmitNever: the slot already held a newer op (ops in a slot never go
	// back); only a state past the newer op helps (a replica whose
	// checkpoint rotted, rebuilding from below it).
	AdmitNever
)

// Covered returns the op of the durable checkpoint: the ops at or below it
// are in the replica's durable state, so their slots may be reused. The
// ring holds the ops in (Covered, Covered + SlotCount] without ever
// overwriting one of them.
func (j *Journal) Covered() uint64 {
	if bug.SlotsReusedEarly {
		return j.sb.latest.CheckpointOp // canary_slots_reused_early: the checkpoint requested, not yet durable
	}
	return j.sb.durable.CheckpointOp
}

// Admits says whether an Append, Repair or Reconcile may write op now: the
// journal wraps, and a slot is reused only once the durable checkpoint
// covers the op it holds (DEVIATIONS.md 18). The journal leaves that to its
// caller (a test wraps a ring freely), and Open's restore of the recorded
// log head relies on it.
func (j *Journal) Admits(op uint64) Admission {
	s := j.slotOf(op)
	switch {
	case op < s.floorOp:
		return AdmitNever
	case op > j.Covered()+j.cfg.SlotCount:
		return AdmitAfterCheckpoint
	}
	return Admitted
}

// AdmitsThrough is the highest op the ring can take without overwriting an
// op above the durable checkpoint: Covered() + SlotCount.
func (j *Journal) AdmitsThrough() uint64 { return j.Covered() + j.cfg.SlotCount }

// Frame returns the prepare frame of op, if the journal holds it in memory
// (appended, repaired, or found Clean by Open), whether or not it is durable
// yet (Durable says). The slice is shared and must not be modified: copy it
// before re-stamping its view.
func (j *Journal) Frame(op uint64) ([]byte, bool) {
	s := j.slotOf(op)
	if s.mem.held() && s.mem.op == op {
		return s.mem.frame, true
	}
	return nil, false
}

// Header returns the header of op: from the frame held in memory, or else
// from the slot's durable header copy when Knowledge(op) is HeaderOnly.
func (j *Journal) Header(op uint64) (wire.Header, bool) {
	s := j.slotOf(op)
	if s.mem.held() && s.mem.op == op {
		return *s.mem.header(), true
	}
	if s.header.state == diskValid && s.header.op == op && s.vouched {
		return *s.headerBytes, true
	}
	return wire.Header{}, false
}

// WrittenOnly reports whether op's slot shows that no prepare of op but the
// one of identity id was ever written there: each stored copy holds the
// empty marker, an older op, or op with that identity, and no write to the
// slot is in flight. A prepare is acknowledged only once both copies hold
// it (Append), so the replica then never acknowledged another prepare of
// op, unless both of that prepare's writes were lost: two misdirected
// writes in one slot, or a misdirected prepare write under a header copy
// damaged since and rewritten by Open, the faults a false Nackable needs
// too (package doc). The caller pairs it with proof that id is not the op
// its log holds, and nacks that op (vsr: the vote's stale entries).
func (j *Journal) WrittenOnly(op uint64, id wire.U128) bool {
	s := j.slotOf(op)
	if s.first != nil || s.mem.held() && !s.mem.is(op, id) {
		return false
	}
	only := func(r diskRecord) bool {
		switch r.state {
		case diskEmpty:
			return true
		case diskValid:
			return r.op < op || r.op == op && r.id == id
		}
		return false // damaged, or a write in flight
	}
	return only(s.header) && only(s.prepare)
}

// Durable reports whether the journal holds op and both its prepare and its
// header copy are durable: what a done promises. False for an append still
// in flight, and for a prepare Open found unacknowledged.
func (j *Journal) Durable(op uint64) bool {
	s := j.slotOf(op)
	return s.mem.held() && s.mem.op == op && s.prepare.holds(op, s.mem.id) && s.header.holds(op, s.mem.id)
}

// Knowledge says what the journal knows of op now (see the Knowledge
// values). It is what a recovery would conclude if the process crashed now,
// at worst: a write in flight counts as possibly torn.
func (j *Journal) Knowledge(op uint64) Knowledge {
	s := j.slotOf(op)
	held := s.mem.held() && s.mem.op == op
	var hs SectorState
	switch s.header.state {
	case diskEmpty:
		hs = SectorEmpty
	case diskValid:
		hs = SectorValid
	default:
		hs = SectorDamaged
	}
	return knowledgeOf(op, held, hs, s.header.op, s.vouched, s.header.unacked, s.prepare.state == diskDamaged)
}

// knowledgeOf is the rule behind Knowledge, for the journal and for a
// Recovery: held first; then the header copy decides. An op is acknowledged
// only once its header copy is durable, and ops in a slot never go back, so
// a readable header copy holding the empty marker or an older op proves op
// was never acknowledged; one holding this op (vouched) gives its header;
// anything else proves nothing.
//
// A header copy Reconcile recorded as unacknowledged (unacked) proves op
// was never acknowledged: its header is reported when vouched
// (HeaderUnacked), else the op is plainly Nackable.
//
// Unless the prepare chunk is damaged (prepareDamaged): then the empty
// marker or an older op in the header copy proves nothing, since a
// misdirected write can leave the header copy stale after the op's header
// write was done (and the op acknowledged), and the damaged chunk may be
// the op's prepare. The op is Unknown, as TigerBeetle's recovery makes such
// a slot faulty (VOPR seed 3637399597563653381: two replicas; op 23's
// header write misdirected, its prepare unreadable at the restart; the slot
// read as a torn write, its nack truncated committed op 23 on a nack quorum
// of one).
func knowledgeOf(op uint64, held bool, header SectorState, headerOp uint64, vouched, unacked, prepareDamaged bool) Knowledge {
	switch {
	case held:
		return Held
	case header == SectorEmpty && prepareDamaged:
		return Unknown
	case header == SectorEmpty:
		return Nackable
	case header != SectorValid:
		return Unknown
	case headerOp < op && prepareDamaged:
		return Unknown
	case headerOp < op:
		return Nackable
	case headerOp == op && unacked && vouched:
		return HeaderUnacked
	case headerOp == op && unacked:
		return Nackable
	case headerOp == op && vouched:
		return HeaderOnly
	}
	return Unknown
}

// write, sync and ioCompleted count the journal's I/Os in flight.
func (j *Journal) write(sector uint64, data []byte, done func(error)) {
	j.ioIssued()
	j.dev.Write(sector, data, done)
}

func (j *Journal) sync(done func(error)) {
	j.ioIssued()
	j.dev.Sync(done)
}

func (j *Journal) ioIssued() {
	j.ios++
	if j.ios > j.cfg.IOsMax {
		panic(fmt.Sprintf("journal: %d I/Os in flight, IOsMax %d", j.ios, j.cfg.IOsMax))
	}
}

// ioCompleted accounts for a completed write or sync. The device reports
// errors on them only on real hardware, where the state of what was written
// is then unknown: the replica must restart from what is durable, so the
// journal stops here.
func (j *Journal) ioCompleted(err error) {
	if j.ios <= 0 {
		panic("journal: I/O completed with none in flight")
	}
	j.ios--
	if err != nil {
		panic(fmt.Sprintf("journal: write or sync failed (fatal: restart from what is durable): %v", err))
	}
}

// checkInvariants panics unless the journal's bookkeeping is consistent. It
// walks every slot, so the tests call it (after every action of the
// property test); the hot paths assert only what they touch.
func (j *Journal) checkInvariants() {
	free := 0
	for a := j.free; a != nil; a = a.next {
		if a.step != stepFree || a.done != nil {
			panic("journal: a free append record in use")
		}
		free++
	}
	if free+j.inFlight-j.extra != j.cfg.AppendsMax || j.extra < 0 {
		panic(fmt.Sprintf("journal: %d free and %d in flight (%d beyond the pool), AppendsMax %d", free, j.inFlight, j.extra, j.cfg.AppendsMax))
	}
	queued, active, parked, throttled := 0, 0, 0, 0
	for i := range j.cfg.SlotCount {
		if j.slots[i/slotPageSize] == nil {
			continue // never touched: Empty
		}
		s := j.slotAt(i)
		if s.mem.held() {
			h := s.mem.header()
			if opOf(h) != s.mem.op || h.Checksum() != s.mem.id || s.mem.op%j.cfg.SlotCount != uint64(i) || s.mem.op > s.floorOp {
				panic(fmt.Sprintf("journal: slot %d holds a frame that is not its entry", i))
			}
		}
		if s.header.state == diskValid {
			if s.header.op%j.cfg.SlotCount != uint64(i) || s.header.op > s.floorOp || s.headerBytes.Checksum() != s.header.id || opOf(s.headerBytes) != s.header.op {
				panic(fmt.Sprintf("journal: slot %d header copy bookkeeping", i))
			}
		}
		if s.prepare.state == diskValid && (s.prepare.op%j.cfg.SlotCount != uint64(i) || s.prepare.op > s.floorOp) {
			panic(fmt.Sprintf("journal: slot %d prepare bookkeeping", i))
		}
		if (s.first == nil) != (s.last == nil) {
			panic(fmt.Sprintf("journal: slot %d queue ends", i))
		}
		var prev *appendOp
		for a := s.first; a != nil; a = a.next {
			if a.e.op%j.cfg.SlotCount != uint64(i) || a.done == nil {
				panic(fmt.Sprintf("journal: slot %d queues a foreign write", i))
			}
			if a == s.first {
				switch a.step {
				case stepAwaitFormat:
					if uint64(i) < j.formatted || !slices.Contains(j.awaiting, a) {
						panic(fmt.Sprintf("journal: slot %d waits for a format it has, or unlisted", i))
					}
					parked++
				case stepThrottled:
					if !slices.Contains(j.throttled, a) {
						panic(fmt.Sprintf("journal: slot %d's write is throttled, unlisted", i))
					}
					throttled++
				default:
					active++
				}
				if a.step == stepQueued || a.step == stepFree {
					panic(fmt.Sprintf("journal: slot %d's first write is not started", i))
				}
			} else if a.step != stepQueued {
				panic(fmt.Sprintf("journal: slot %d has two writes started", i))
			}
			queued++
			prev = a
		}
		if prev != s.last {
			panic(fmt.Sprintf("journal: slot %d queue last", i))
		}
		if s.first == nil && (s.header.state == diskFlux || s.prepare.state == diskFlux) {
			panic(fmt.Sprintf("journal: slot %d in flux with no write", i))
		}
	}
	if queued != j.inFlight {
		panic(fmt.Sprintf("journal: %d writes queued, %d in flight", queued, j.inFlight))
	}
	if sbIOs := b2i(j.sb.active); j.ios != active+sbIOs+b2i(j.formatIO) {
		panic(fmt.Sprintf("journal: %d I/Os in flight, %d active writes, %d superblock and format %v", j.ios, active, sbIOs, j.formatIO))
	}
	if active != j.running || j.running > j.cfg.AppendsMax || throttled != len(j.throttled) {
		panic(fmt.Sprintf("journal: %d writes active, %d running, %d throttled (%d listed)", active, j.running, throttled, len(j.throttled)))
	}
	if parked != len(j.awaiting) || parked > 0 && !j.formatting || j.formatIO && !j.formatting {
		panic(fmt.Sprintf("journal: %d writes parked, %d listed, formatting %v", parked, len(j.awaiting), j.formatting))
	}
	if j.formatted == 0 || j.formatted > j.formatTarget || j.formatTarget > j.cfg.SlotCount ||
		j.formatted != j.sb.durableFormatted && !j.formatting {
		panic(fmt.Sprintf("journal: formatted %d, target %d, durable %d, of %d slots", j.formatted, j.formatTarget, j.sb.durableFormatted, j.cfg.SlotCount))
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
