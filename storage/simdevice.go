package storage

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/zeebo/xxh3"

	"github.com/iggy-vopr/vopr/sim/plan"
)

// Latency is the distribution of one kind of I/O's latency: MinNs plus an
// exponential draw of mean MeanNs (a fast common case and a long tail, as
// real devices have).
type Latency struct {
	MinNs  int64 // every I/O of the kind takes at least this long
	MeanNs int64 // mean of the exponential part added to MinNs; 0 for none
}

func (l Latency) drawNs(rng *rand.Rand) int64 {
	if l.MeanNs == 0 {
		return l.MinNs
	}
	return l.MinNs + int64(rng.ExpFloat64()*float64(l.MeanNs))
}

// Options configures a SimDevice. Latencies are in nanoseconds of virtual
// time; probabilities are in [0, 1].
type Options struct {
	// SectorSize is the sector size in bytes: a power of two of at least 64.
	SectorSize int
	// AtomBytes is the unit a crash tears at: a torn sector is made of whole
	// atoms, each old or new. It divides SectorSize, with at most 64 atoms a
	// sector; 0 means SectorSize/8 (512 bytes for 4 KiB sectors, the atomic
	// unit of many drives).
	AtomBytes int
	// Layout lays the device out in zones; the device's size is the layout's.
	Layout *Layout
	// Atlas says which chunks this device's replica may fault. Nil means no
	// read errors, corruption or misdirects ever (a one-replica cluster, or a
	// test); crash tears still happen.
	Atlas *Atlas
	// IOsMax bounds the I/Os (reads, writes and syncs together) in flight at
	// once, in 1..65535; one more panics. The replica's own I/O bound must
	// stay below it.
	IOsMax int

	ReadLatency  Latency
	WriteLatency Latency
	SyncLatency  Latency

	// Faults are the per-I/O probabilities of new faults; SetFaults changes
	// them during a run.
	Faults Faults

	// CrashLostProbability and CrashTornProbability (summing to at most 1)
	// split the fate of each non-durable sector at a crash: lost (its durable bytes remain), torn (a
	// mix of durable and new atoms), or else kept (the new bytes land).
	CrashLostProbability float64
	CrashTornProbability float64

	// Plan, when non-nil, records the sector faults that fire (latent,
	// corrupt, misdirect; a crash's tears belong to the crash) or, replaying
	// a fault plan, decides them (sim/plan); the draws happen as without it.
	Plan *plan.Gate
}

// Faults are the per-I/O probabilities, each in [0, 1], of the faults the
// atlas bounds. A fault lands only on sectors of chunks the atlas grants the
// device's replica; an I/O with no such sector is never faulted.
type Faults struct {
	// LatentProbability is the chance that a read or a write leaves one
	// sector of its range (among those in granted chunks) unreadable until
	// rewritten. A read that marks a sector fails at once.
	LatentProbability float64
	// CorruptProbability is the chance that a read or a write leaves one
	// sector of its range (among those in granted chunks) silently corrupt
	// until rewritten: reads return it with one bit flipped, the same bit on
	// every read.
	CorruptProbability float64
	// MisdirectProbability is the chance that a write lands on another chunk
	// of its zone, at the same offset within the chunk, instead of its
	// target. Only a write that lies within one chunk, where both that chunk
	// and the landing chunk are granted to this replica, is misdirected:
	// both the target (left stale) and the landing chunk (overwritten) go bad.
	MisdirectProbability float64
}

func (f Faults) check() {
	for _, p := range []float64{f.LatentProbability, f.CorruptProbability, f.MisdirectProbability} {
		if !(p >= 0 && p <= 1) {
			panic(fmt.Sprintf("storage: fault probability %v outside [0, 1] in %+v", p, f))
		}
	}
}

// Stats counts what a device has done, for run summaries and tests.
type Stats struct {
	Reads, Writes, Syncs    uint64 // completed I/Os
	BytesRead, BytesWritten uint64 // by completed I/Os
	ReadFaults              uint64 // reads completed with ErrReadFault
	LatentMarked            uint64 // sectors made unreadable
	CorruptMarked           uint64 // sectors made corrupt
	Misdirected             uint64 // completed writes that landed elsewhere
	Crashes                 uint64
	CrashLost               uint64 // non-durable sectors that kept their durable bytes at a crash
	CrashKept               uint64 // ... that took one new write's bytes
	CrashTorn               uint64 // ... that became a mix
}

// Sector fault flags.
const (
	faultLatent  uint8 = 1 << iota // reads fail with ErrReadFault
	faultCorrupt                   // reads return one flipped bit
)

type ioKind uint8

const (
	ioFree ioKind = iota
	ioRead
	ioWrite
	ioSync
	ioReadBatch
	ioWriteBatch
)

// ioSlot is one I/O in flight. Slots are preallocated (IOsMax of them) and
// reused, so steady-state I/O allocates nothing.
type ioSlot struct {
	id          uint64 // unique per I/O on this device; 0 while free
	kind        ioKind
	sector      uint64 // where the I/O lands (for a misdirected write, not its target)
	buf         []byte // read: the caller's buffer; write: owned[:len(data)]
	owned       []byte // the slot's own buffer for write data, kept across I/Os
	boundarySeq uint64 // sync: the writes completed before the call are those with seq <= boundarySeq
	done        func(error)
	// A batch's extents: a read batch's are the caller's; a write batch's
	// are the slot's own (kept across I/Os), each Sector where the write
	// lands and Buf a piece of owned.
	extents     []Extent
	ownedExts   []Extent
	batchDone   func()
	misdirected int // a write's, or a write batch's extents, that land elsewhere
}

// version is a completed write's bytes for one sector, not yet durable. seq
// is the write's completion sequence number.
type version struct {
	seq  uint64
	data []byte
}

// sectorState is what the device knows of one sector that was ever written
// or faulted. Sectors absent from the map are pristine: never written, they
// read as garbage derived from (seed, sector).
type sectorState struct {
	durable []byte // nil: never durably written (reads as garbage)
	// versions holds completed writes not yet durable, in completion order;
	// the last is what reads see. It keeps only what a pending sync may still
	// make durable plus the newest, so it is at most one longer than the
	// number of syncs in flight.
	versions []version
	flags    uint8
	dirty    bool // listed in SimDevice.dirty
}

// SimDevice is the simulated Device: sparse durable bytes under a volatile
// write cache, seeded latencies, and the faults of Options, driven by a
// Scheduler. It implements Device; Crash, FaultsOff and the Peek and Inject
// methods are for the harness and tests.
//
// Model. Each sector has durable bytes (or none: never-written sectors read
// as garbage derived from (seed, sector), never zeros) and a list of
// completed-but-unsynced versions. A read sees the newest version, else the
// durable bytes, as of the read's completion event. A write's bytes join the
// versions when it completes. A sync records the completion sequence number
// at its call and, when it completes, makes durable each sector's newest
// version completed before the call.
//
// Crash. Every sector with a non-durable write (a completed-but-unsynced
// version, or a write in flight) has one candidate "new" content per such
// write (the device keeps, of the completed ones, the newest and those a
// pending sync could still cover). Each such sector independently, in sector
// order, from the crash stream, is lost (its durable bytes, or garbage if
// none, remain), kept (one candidate, drawn uniformly, becomes durable), or
// torn: with one candidate drawn uniformly as new and the durable bytes as
// old, the sector is cut into atoms of AtomBytes and each atom is taken whole
// from old or from new, at least one atom from each (so a torn sector equals
// neither old nor new when the two differ in every atom). A sector of a
// single atom cannot tear, and is lost or kept instead (a coin decides).
// In-flight I/Os are dropped: every I/O carries an id unique on the device,
// which its completion event checks against its slot, so the ids act as the
// generation that a crash bumps and no stale completion ever runs a callback.
//
// Faults. Latent errors and corruption are flags on a sector, cleared when a
// write to the sector completes (or a crash lands new bytes on it), and left
// alone by FaultsOff. The flipped bit of a corrupt sector is a function of
// (device seed, sector), so every read of it returns the same bytes.
//
// Memory. The device stores only sectors ever written or faulted (a map), so
// a 1 GiB device costs what was written.
type SimDevice struct {
	sched Scheduler
	node  int32
	opts  Options

	sectorSize int
	atoms      int // atoms per sector

	rngReadLatency  *rand.Rand
	rngWriteLatency *rand.Rand
	rngSyncLatency  *rand.Rand
	rngLatent       *rand.Rand
	rngCorrupt      *rand.Rand
	rngMisdirect    *rand.Rand
	rngCrash        *rand.Rand
	seedGarbage     uint64 // never-written contents derive from (seedGarbage, sector)
	seedCorrupt     uint64 // the flipped bit derives from (seedCorrupt, sector)

	faultsOn bool
	// grantedChunks[z]: the chunks of zone z this replica may fault, ascending.
	grantedChunks [][]uint64

	sectors map[uint64]*sectorState
	dirty   []uint64 // sectors with versions, in the order they became dirty

	slots     []ioSlot
	slotsFree []uint16 // a stack of free slot indices
	ev        completion

	ioSeq           uint64 // ids handed to I/Os; the next is ioSeq+1
	completedSeq    uint64 // writes completed; the last completed has seq completedSeq
	syncBoundaryMax uint64 // the largest boundarySeq of any sync issued

	buffersFree [][]byte // sector-sized buffers for reuse
	stats       Stats
	// missed holds every sector a write aimed at but, misdirected, never
	// reached: a checker asking why durable bytes are not what a replica
	// was told it wrote finds the answer here. Only looked up, never
	// iterated; never cleared (a later write does not undo the lie).
	missed map[uint64]struct{}
	// hit holds every sector a misdirected write aimed elsewhere landed on
	// (or, torn by a crash, may have): what was durable there was
	// overwritten by no fault of the replica's. Like missed, never cleared.
	hit map[uint64]struct{}
	// armed, armedSector: the next write aimed at armedSector is
	// misdirected (MisdirectNextWrite).
	armed       bool
	armedSector uint64
}

// completion is the device's loop event: one long-lived object, so that
// scheduling a completion allocates nothing and Fire stays off SimDevice's
// API. arg is (I/O id << 16 | slot index).
type completion struct{ d *SimDevice }

// Fire completes one I/O, or ignores a firing whose I/O a crash dropped.
func (c *completion) Fire(nowNs int64, arg uint64) (string, int32, uint64) {
	return c.d.complete(arg)
}

const slotBits = 16

// NewSimDevice returns a device for replica node (its index in the atlas),
// scheduled on sched, drawing from streams under labels
// "storage.<node>.<site>". It panics on invalid options.
func NewSimDevice(sched Scheduler, streams Streams, node int32, opts Options) *SimDevice {
	if opts.SectorSize < 64 || opts.SectorSize&(opts.SectorSize-1) != 0 {
		panic(fmt.Sprintf("storage: sector size %d, want a power of two >= 64", opts.SectorSize))
	}
	if opts.AtomBytes == 0 {
		opts.AtomBytes = opts.SectorSize / 8
	}
	if opts.AtomBytes <= 0 || opts.SectorSize%opts.AtomBytes != 0 || opts.SectorSize/opts.AtomBytes > 64 {
		panic(fmt.Sprintf("storage: atom of %d bytes for %d-byte sectors, want a divisor giving at most 64 atoms", opts.AtomBytes, opts.SectorSize))
	}
	if opts.Layout == nil {
		panic("storage: no layout")
	}
	if opts.IOsMax < 1 || opts.IOsMax >= 1<<slotBits {
		panic(fmt.Sprintf("storage: IOsMax %d, want 1..%d", opts.IOsMax, 1<<slotBits-1))
	}
	for _, l := range []Latency{opts.ReadLatency, opts.WriteLatency, opts.SyncLatency} {
		if l.MinNs < 0 || l.MeanNs < 0 {
			panic(fmt.Sprintf("storage: negative latency %+v", l))
		}
	}
	opts.Faults.check()
	for _, p := range []float64{opts.CrashLostProbability, opts.CrashTornProbability, opts.CrashLostProbability + opts.CrashTornProbability} {
		if !(p >= 0 && p <= 1) {
			panic(fmt.Sprintf("storage: crash probability %v outside [0, 1] in %+v", p, opts))
		}
	}
	site := func(name string) *rand.Rand { return streams.Stream(fmt.Sprintf("storage.%d.%s", node, name)) }
	d := &SimDevice{
		sched:           sched,
		node:            node,
		opts:            opts,
		sectorSize:      opts.SectorSize,
		atoms:           opts.SectorSize / opts.AtomBytes,
		rngReadLatency:  site("read.latency"),
		rngWriteLatency: site("write.latency"),
		rngSyncLatency:  site("sync.latency"),
		rngLatent:       site("fault.latent"),
		rngCorrupt:      site("fault.corrupt"),
		rngMisdirect:    site("fault.misdirect"),
		rngCrash:        site("crash"),
		faultsOn:        true,
		sectors:         make(map[uint64]*sectorState),
		slots:           make([]ioSlot, opts.IOsMax),
		slotsFree:       make([]uint16, 0, opts.IOsMax),
	}
	seeds := site("seed")
	d.seedGarbage, d.seedCorrupt = seeds.Uint64(), seeds.Uint64()
	d.ev.d = d
	d.resetSlots()
	if a := opts.Atlas; a != nil {
		if !a.Layout().sameAs(opts.Layout) {
			panic("storage: the atlas covers another layout")
		}
		if node < 0 || int(node) >= a.Replicas() {
			panic(fmt.Sprintf("storage: node %d is not a replica of the atlas's %d", node, a.Replicas()))
		}
		d.grantedChunks = make([][]uint64, opts.Layout.ZoneCount())
		for z := range d.grantedChunks {
			for c := range opts.Layout.Zone(z).Chunks {
				if a.Granted(node, z, c) {
					d.grantedChunks[z] = append(d.grantedChunks[z], c)
				}
			}
		}
	}
	return d
}

// resetSlots frees every slot, stacking the indices so that slot 0 is handed
// out first.
func (d *SimDevice) resetSlots() {
	d.slotsFree = d.slotsFree[:0]
	for i := len(d.slots) - 1; i >= 0; i-- {
		d.slots[i] = ioSlot{owned: d.slots[i].owned, ownedExts: d.slots[i].ownedExts[:0]}
		d.slotsFree = append(d.slotsFree, uint16(i))
	}
}

// SectorSize implements Device.
func (d *SimDevice) SectorSize() int { return d.sectorSize }

// Sectors implements Device.
func (d *SimDevice) Sectors() uint64 { return d.opts.Layout.Sectors() }

// Node returns the replica the device belongs to.
func (d *SimDevice) Node() int32 { return d.node }

// InFlight returns the number of I/Os in flight.
func (d *SimDevice) InFlight() int { return len(d.slots) - len(d.slotsFree) }

// Stats returns the device's counters.
func (d *SimDevice) Stats() Stats { return d.stats }

// FaultsOff stops new faults (read errors, corruption, misdirects) for the
// liveness phase or a clean restart. Sectors already faulty stay faulty until
// rewritten: the protocol must repair them. Crash tears are the crash model,
// not a fault, and are governed by whether the harness crashes the replica.
func (d *SimDevice) FaultsOff() { d.faultsOn = false }

// FaultsOn lets new faults happen again (the harness keeps a replica clean
// at first start, or after a restart that would put a quorum at risk).
func (d *SimDevice) FaultsOn() { d.faultsOn = true }

// SetFaults changes the probabilities of new faults (the swarm may vary them
// between phases). It does not turn faults back on after FaultsOff.
func (d *SimDevice) SetFaults(f Faults) {
	f.check()
	d.opts.Faults = f
}

// Faulty reports whether new faults may happen.
func (d *SimDevice) Faulty() bool { return d.faultsOn }

// checkRange panics unless n bytes from sector are a valid I/O.
func (d *SimDevice) checkRange(op string, sector uint64, n int, done func(error)) uint64 {
	if done == nil {
		panic(fmt.Sprintf("storage: %s with nil done", op))
	}
	if n == 0 || n%d.sectorSize != 0 {
		panic(fmt.Sprintf("storage: %s of %d bytes, not a nonzero multiple of the %d-byte sector", op, n, d.sectorSize))
	}
	count := uint64(n / d.sectorSize)
	if sector >= d.Sectors() || count > d.Sectors()-sector {
		panic(fmt.Sprintf("storage: %s of sectors [%d, %d+%d) past the end of %d sectors", op, sector, sector, count, d.Sectors()))
	}
	return count
}

// acquire takes a free slot for an I/O and returns its index, panicking when
// IOsMax are in flight.
func (d *SimDevice) acquire(kind ioKind, done func(error)) int {
	if len(d.slotsFree) == 0 {
		panic(fmt.Sprintf("storage: more than IOsMax = %d I/Os in flight on node %d", len(d.slots), d.node))
	}
	i := int(d.slotsFree[len(d.slotsFree)-1])
	d.slotsFree = d.slotsFree[:len(d.slotsFree)-1]
	d.ioSeq++
	s := &d.slots[i]
	s.id, s.kind, s.done = d.ioSeq, kind, done
	return i
}

func (d *SimDevice) schedule(i int, latency Latency, rng *rand.Rand) {
	d.sched.At(d.sched.Now()+latency.drawNs(rng), &d.ev, d.slots[i].id<<slotBits|uint64(i))
}

// Read implements Device. The contents are taken when the read completes.
func (d *SimDevice) Read(sector uint64, buf []byte, done func(error)) {
	d.checkRange("read", sector, len(buf), done)
	i := d.acquire(ioRead, done)
	s := &d.slots[i]
	s.sector, s.buf = sector, buf
	d.schedule(i, d.opts.ReadLatency, d.rngReadLatency)
}

// ReadBatch implements Device: one slot and one completion event for the
// whole batch, and for each extent the faults a read of its own draws.
func (d *SimDevice) ReadBatch(extents []Extent, done func()) {
	if done == nil {
		panic("storage: read batch with nil done")
	}
	if len(extents) == 0 {
		panic("storage: empty read batch")
	}
	for k := range extents {
		d.checkRange("read", extents[k].Sector, len(extents[k].Buf), noDone)
	}
	i := d.acquire(ioReadBatch, nil)
	s := &d.slots[i]
	s.extents, s.batchDone = extents, done
	d.schedule(i, d.opts.ReadLatency, d.rngReadLatency)
}

// noDone stands for a done callback in argument checks of batches, whose
// done has another type.
func noDone(error) {}

// Write implements Device. A misdirect is decided here, so that a crash
// while the write is in flight tears where the write was going to land.
func (d *SimDevice) Write(sector uint64, data []byte, done func(error)) {
	count := d.checkRange("write", sector, len(data), done)
	i := d.acquire(ioWrite, done)
	s := &d.slots[i]
	s.sector = d.land(sector, count)
	if s.sector != sector {
		s.misdirected = 1
	}
	s.owned = append(s.owned[:0], data...)
	s.buf = s.owned
	d.schedule(i, d.opts.WriteLatency, d.rngWriteLatency)
}

// WriteBatch implements Device: each extent is copied and may be
// misdirected as a write of its own; one completion event for the batch.
func (d *SimDevice) WriteBatch(extents []Extent, done func(error)) {
	if len(extents) == 0 {
		panic("storage: empty write batch")
	}
	total := 0
	for k := range extents {
		d.checkRange("write", extents[k].Sector, len(extents[k].Buf), done)
		total += len(extents[k].Buf)
	}
	i := d.acquire(ioWriteBatch, done)
	s := &d.slots[i]
	if cap(s.owned) < total {
		s.owned = make([]byte, 0, total)
	}
	s.owned = s.owned[:0]
	s.ownedExts = s.ownedExts[:0]
	s.misdirected = 0
	for _, e := range extents {
		count := uint64(len(e.Buf) / d.sectorSize)
		at := len(s.owned)
		s.owned = append(s.owned, e.Buf...)
		landing := d.land(e.Sector, count)
		if landing != e.Sector {
			s.misdirected++
		}
		s.ownedExts = append(s.ownedExts, Extent{Sector: landing, Buf: s.owned[at:len(s.owned):len(s.owned)]})
	}
	s.extents = s.ownedExts
	d.schedule(i, d.opts.WriteLatency, d.rngWriteLatency)
}

// land decides where a write of count sectors aimed at sector lands, and
// records a misdirect for the checkers.
func (d *SimDevice) land(sector, count uint64) uint64 {
	landing := d.misdirect(sector, count)
	if landing != sector {
		if d.missed == nil {
			d.missed, d.hit = make(map[uint64]struct{}), make(map[uint64]struct{})
		}
		for k := range count {
			d.missed[sector+k] = struct{}{}
			d.hit[landing+k] = struct{}{}
		}
	}
	return landing
}

// Sync implements Device.
func (d *SimDevice) Sync(done func(error)) {
	if done == nil {
		panic("storage: sync with nil done")
	}
	i := d.acquire(ioSync, done)
	d.slots[i].boundarySeq = d.completedSeq
	d.syncBoundaryMax = d.completedSeq
	d.schedule(i, d.opts.SyncLatency, d.rngSyncLatency)
}

// complete runs when an I/O's completion event fires.
func (d *SimDevice) complete(arg uint64) (string, int32, uint64) {
	i := int(arg & (1<<slotBits - 1))
	s := &d.slots[i]
	if s.kind == ioFree || s.id != arg>>slotBits {
		return "", d.node, 0 // dropped by a crash
	}
	var kind string
	var hash uint64
	var err error
	switch s.kind {
	case ioRead:
		kind = "storage.read"
		err = d.completeRead(s.sector, s.buf)
		hash = xxh3.HashSeed(s.buf, s.sector)
		if err != nil {
			hash = ^hash
		}
	case ioWrite:
		kind = "storage.write"
		d.completeWrite(s.sector, s.buf)
		d.stats.Misdirected += uint64(s.misdirected)
		hash = xxh3.HashSeed(s.buf, s.sector)
	case ioSync:
		kind = "storage.sync"
		d.completeSync(s.boundarySeq)
		hash = s.boundarySeq
	case ioReadBatch:
		kind = "storage.read_batch"
		for k := range s.extents {
			e := &s.extents[k]
			e.Err = d.completeRead(e.Sector, e.Buf)
			h := xxh3.HashSeed(e.Buf, e.Sector)
			if e.Err != nil {
				h = ^h
			}
			hash = mix64(hash ^ h)
		}
	case ioWriteBatch:
		kind = "storage.write_batch"
		for _, e := range s.extents {
			d.completeWrite(e.Sector, e.Buf)
			hash = mix64(hash ^ xxh3.HashSeed(e.Buf, e.Sector))
		}
		d.stats.Misdirected += uint64(s.misdirected)
	}
	// Free the slot before done runs: done may issue I/O, and the write's
	// buffer may then be reused.
	done, batchDone := s.done, s.batchDone
	*s = ioSlot{owned: s.owned, ownedExts: s.ownedExts[:0]} // and drop the caller's buffers
	d.slotsFree = append(d.slotsFree, uint16(i))
	if batchDone != nil {
		batchDone()
	} else {
		done(err)
	}
	return kind, d.node, hash
}

// completeRead fills buf from the sectors at sector as a read completing
// now, drawing this read's faults.
func (d *SimDevice) completeRead(first uint64, buf []byte) error {
	count := uint64(len(buf) / d.sectorSize)
	d.maybeMark(d.rngLatent, d.opts.Faults.LatentProbability, first, count, faultLatent)
	d.maybeMark(d.rngCorrupt, d.opts.Faults.CorruptProbability, first, count, faultCorrupt)
	var err error
	for k := range count {
		sector := first + k
		dst := buf[k*uint64(d.sectorSize) : (k+1)*uint64(d.sectorSize)]
		st := d.sectors[sector]
		d.visible(sector, st, dst)
		if st == nil {
			continue
		}
		if st.flags&faultCorrupt != 0 {
			bit := d.corruptBit(sector)
			dst[bit/8] ^= 1 << (bit % 8)
		}
		if st.flags&faultLatent != 0 {
			// The contract leaves buf unspecified on an error: hand back
			// garbage, so a replica that uses it anyway fails its checksum
			// rather than getting lucky.
			d.garbage(^sector, dst)
			err = ErrReadFault
		}
	}
	d.stats.Reads++
	d.stats.BytesRead += uint64(len(buf))
	if err != nil {
		d.stats.ReadFaults++
	}
	return err
}

// completeWrite lands buf on the sectors at first as a write completing
// now, drawing this write's faults.
func (d *SimDevice) completeWrite(first uint64, buf []byte) {
	count := uint64(len(buf) / d.sectorSize)
	d.completedSeq++
	for k := range count {
		sector := first + k
		src := buf[k*uint64(d.sectorSize) : (k+1)*uint64(d.sectorSize)]
		st := d.sectorOf(sector)
		st.flags = 0 // rewritten
		// Overwrite the newest version in place when no sync issued since it
		// completed could want it; otherwise keep it for that sync.
		if n := len(st.versions); n > 0 && st.versions[n-1].seq > d.syncBoundaryMax {
			copy(st.versions[n-1].data, src)
			st.versions[n-1].seq = d.completedSeq
		} else {
			buf := d.buffer()
			copy(buf, src)
			st.versions = append(st.versions, version{seq: d.completedSeq, data: buf})
		}
		if !st.dirty {
			st.dirty = true
			d.dirty = append(d.dirty, sector)
		}
	}
	d.maybeMark(d.rngLatent, d.opts.Faults.LatentProbability, first, count, faultLatent)
	d.maybeMark(d.rngCorrupt, d.opts.Faults.CorruptProbability, first, count, faultCorrupt)
	d.stats.Writes++
	d.stats.BytesWritten += uint64(len(buf))
}

// completeSync makes durable, per sector, the newest version completed at or
// before boundarySeq, and drops the versions it supersedes.
func (d *SimDevice) completeSync(boundarySeq uint64) {
	stillDirty := d.dirty[:0]
	for _, sector := range d.dirty {
		st := d.sectors[sector]
		newest := -1
		for k, v := range st.versions {
			if v.seq > boundarySeq {
				break
			}
			newest = k
		}
		if newest >= 0 {
			for _, v := range st.versions[:newest] {
				d.release(v.data)
			}
			if st.durable != nil {
				d.release(st.durable)
			}
			st.durable = st.versions[newest].data
			n := copy(st.versions, st.versions[newest+1:])
			clear(st.versions[n:])
			st.versions = st.versions[:n]
		}
		if len(st.versions) > 0 {
			stillDirty = append(stillDirty, sector)
		} else {
			st.dirty = false
		}
	}
	d.dirty = stillDirty
	d.stats.Syncs++
}

// visible copies into dst what a fault-free read of sector sees now.
func (d *SimDevice) visible(sector uint64, st *sectorState, dst []byte) {
	switch {
	case st != nil && len(st.versions) > 0:
		copy(dst, st.versions[len(st.versions)-1].data)
	case st != nil && st.durable != nil:
		copy(dst, st.durable)
	default:
		d.garbage(sector, dst)
	}
}

// durableInto copies into dst what sector holds durably.
func (d *SimDevice) durableInto(sector uint64, st *sectorState, dst []byte) {
	if st != nil && st.durable != nil {
		copy(dst, st.durable)
	} else {
		d.garbage(sector, dst)
	}
}

// garbage fills dst with the contents of a never-written sector: a
// SplitMix64 stream seeded by (device seed, sector), so it is the same on
// every read, differs between sectors, replicas and seeds, and is never all
// zeros in practice. (SplitMix64 rather than PCG: this runs on every read of
// a never-written sector, and its quality is ample for garbage.)
func (d *SimDevice) garbage(sector uint64, dst []byte) {
	state := d.seedGarbage ^ mix64(sector)
	for k := 0; k+8 <= len(dst); k += 8 { // sectors are a multiple of 64 bytes
		state += 0x9e3779b97f4a7c15
		binary.LittleEndian.PutUint64(dst[k:], mix64(state))
	}
}

// corruptBit returns the bit a corrupt sector's reads flip, derived from
// (device seed, sector) so that retries see the same bytes.
func (d *SimDevice) corruptBit(sector uint64) uint64 {
	return mix64(d.seedCorrupt^mix64(sector)) % uint64(d.sectorSize*8)
}

// mix64 is SplitMix64's finalizer: a bijective, well-mixed hash of x.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func (d *SimDevice) sectorOf(sector uint64) *sectorState {
	st := d.sectors[sector]
	if st == nil {
		st = &sectorState{}
		d.sectors[sector] = st
	}
	return st
}

// buffer returns a sector-sized buffer, reused if one is free.
func (d *SimDevice) buffer() []byte {
	if n := len(d.buffersFree); n > 0 {
		buf := d.buffersFree[n-1]
		d.buffersFree[n-1] = nil
		d.buffersFree = d.buffersFree[:n-1]
		return buf
	}
	return make([]byte, d.sectorSize)
}

func (d *SimDevice) release(buf []byte) { d.buffersFree = append(d.buffersFree, buf) }

// faultable reports whether the device may draw new faults at all.
func (d *SimDevice) faultable() bool { return d.faultsOn && d.opts.Atlas != nil }

// eachGrantedRun calls fn for each run of sectors within [first, first+count)
// that lies in one chunk the atlas grants this replica, in sector order.
func (d *SimDevice) eachGrantedRun(first, count uint64, fn func(run0, runCount uint64)) {
	layout, atlas := d.opts.Layout, d.opts.Atlas
	for sector, end := first, first+count; sector < end; {
		z, c := layout.Locate(sector)
		chunkEnd := layout.ChunkStart(z, c) + layout.Zone(z).ChunkSectors
		n := min(end, chunkEnd) - sector
		if atlas.Granted(d.node, z, c) {
			fn(sector, n)
		}
		sector += n
	}
}

// maybeMark, with probability p drawn from rng, sets flag on one sector of
// [first, first+count) drawn uniformly among those in granted chunks (none
// if there are none).
func (d *SimDevice) maybeMark(rng *rand.Rand, p float64, first, count uint64, flag uint8) {
	if !d.faultable() || p == 0 {
		return
	}
	drawn := rng.Float64() < p
	var eligible uint64
	if drawn || d.opts.Plan.Replaying() {
		d.eachGrantedRun(first, count, func(_, n uint64) { eligible += n })
	}
	drawn = drawn && eligible > 0 // a write with no sector to fault fires nothing
	site := plan.Site{Kind: plan.CorruptSector, A: d.node, B: -1}
	if flag == faultLatent {
		site.Kind = plan.Latent
	}
	args, fire := d.opts.Plan.Fire(d.sched.Now(), site, drawn)
	if !drawn && !fire || eligible == 0 {
		return
	}
	marked := uint64(math.MaxUint64)
	if drawn {
		pick := rng.Uint64N(eligible)
		d.eachGrantedRun(first, count, func(run0, n uint64) {
			if pick < n {
				marked = run0 + pick
			}
			pick -= n // wraps once past the pick; never < n again
		})
	}
	if d.opts.Plan.Replaying() {
		marked = math.MaxUint64
		if sector, err := strconv.ParseUint(args, 10, 64); err == nil && fire && sector >= first && sector < first+count {
			d.eachGrantedRun(first, count, func(run0, n uint64) {
				if sector >= run0 && sector < run0+n {
					marked = sector // the plan's sector, where this write may fault it
				}
			})
		}
	}
	if marked == math.MaxUint64 || !fire {
		return
	}
	d.opts.Plan.Fired(d.sched.Now(), site, strconv.FormatUint(marked, 10))
	d.sectorOf(marked).flags |= flag
	if flag == faultLatent {
		d.stats.LatentMarked++
	} else {
		d.stats.CorruptMarked++
	}
}

// MisdirectNextWrite arms a misdirect, for a targeted nemesis: the next
// write aimed at sector (within one chunk) lands on the same place of
// another chunk of its zone, as a random misdirect does, recorded for the
// checkers (Missed, Hit). It reports false, arming nothing, where a
// random misdirect could not happen: the atlas grants this replica no
// faults of the sector's chunk or of any other chunk of its zone, or
// faults are off. One write at a time: arming again replaces the last.
func (d *SimDevice) MisdirectNextWrite(sector uint64) bool {
	d.checkRange("misdirect", sector, d.sectorSize, func(error) {})
	if !d.faultable() {
		return false
	}
	z, c := d.opts.Layout.Locate(sector)
	granted := d.grantedChunks[z]
	if _, found := slices.BinarySearch(granted, c); !found || len(granted) < 2 {
		return false
	}
	d.armed, d.armedSector = true, sector
	return true
}

// misdirect returns where a write of count sectors to sector lands.
func (d *SimDevice) misdirect(sector, count uint64) uint64 {
	forced := d.armed && d.armedSector >= sector && d.armedSector < sector+count
	if forced {
		d.armed = false
	}
	if !forced {
		if !d.faultable() || d.opts.Faults.MisdirectProbability == 0 {
			return sector
		}
		// A write no misdirect can move fires nothing.
		drawn := d.rngMisdirect.Float64() < d.opts.Faults.MisdirectProbability && d.misdirectable(sector, count)
		site := plan.Site{Kind: plan.Misdirect, A: d.node, B: -1}
		args, fire := d.opts.Plan.Fire(d.sched.Now(), site, drawn)
		if !fire {
			return sector
		}
		landing := d.misdirectLanding(sector, count, drawn || !d.opts.Plan.Replaying())
		if d.opts.Plan.Replaying() {
			// The plan's landing, if it is one this write could take.
			if at, err := strconv.ParseUint(args, 10, 64); err == nil && at != sector && d.sameZoneOffset(sector, count, at) {
				landing = at
			} else {
				landing = sector
			}
		}
		if landing != sector {
			d.opts.Plan.Fired(d.sched.Now(), site, strconv.FormatUint(landing, 10))
		}
		return landing
	}
	return d.misdirectLanding(sector, count, true)
}

// sameZoneOffset reports whether at is where a misdirect of a write of
// count sectors to sector could land: the same offset in another granted
// chunk of its zone.
func (d *SimDevice) sameZoneOffset(sector, count, at uint64) bool {
	layout := d.opts.Layout
	if at >= layout.Sectors() {
		return false
	}
	z, c := layout.Locate(sector)
	za, ca := layout.Locate(at)
	if za != z || ca == c {
		return false
	}
	if _, found := slices.BinarySearch(d.grantedChunks[z], ca); !found {
		return false
	}
	start := layout.ChunkStart(z, c)
	return sector+count <= start+layout.Zone(z).ChunkSectors && at-layout.ChunkStart(za, ca) == sector-start
}

// misdirectLanding picks where a misdirected write lands (draw: draw the
// other chunk, as a random misdirect does; else stay).
func (d *SimDevice) misdirectLanding(sector, count uint64, draw bool) uint64 {
	if !draw || !d.misdirectable(sector, count) {
		return sector
	}
	layout := d.opts.Layout
	z, c := layout.Locate(sector)
	start := layout.ChunkStart(z, c)
	granted := d.grantedChunks[z]
	at, _ := slices.BinarySearch(granted, c)
	other := d.rngMisdirect.IntN(len(granted) - 1)
	if other >= at {
		other++
	}
	return layout.ChunkStart(z, granted[other]) + (sector - start)
}

// misdirectable reports whether a write of count sectors to sector can be
// misdirected: it lies in one chunk, which the atlas lets this replica
// fault, and its zone has another such chunk.
func (d *SimDevice) misdirectable(sector, count uint64) bool {
	layout := d.opts.Layout
	z, c := layout.Locate(sector)
	start := layout.ChunkStart(z, c)
	granted := d.grantedChunks[z]
	_, found := slices.BinarySearch(granted, c)
	return sector+count <= start+layout.Zone(z).ChunkSectors && found && len(granted) >= 2
}

// CrashReport tells what a crash did to the non-durable sectors.
type CrashReport struct {
	Lost, Kept, Torn int // sectors
	Dropped          int // I/Os in flight whose done will never run
}

// Crash models the replica's process (and its machine's volatile write
// cache) dying now. Every I/O in flight is dropped: its done never runs.
// Every sector with a non-durable write is lost, kept or torn (see
// SimDevice). Fault flags of sectors that a kept or torn write lands on are
// cleared (they were rewritten); other flags stay. The device then accepts
// I/O again, for the restarted replica.
func (d *SimDevice) Crash() CrashReport {
	report := CrashReport{Dropped: d.InFlight()}
	// Candidates per sector: its completed versions, oldest first, then the
	// writes in flight to it, in issue order.
	candidates := make(map[uint64][][]byte)
	for _, sector := range d.dirty {
		for _, v := range d.sectors[sector].versions {
			candidates[sector] = append(candidates[sector], v.data)
		}
	}
	var writes []*ioSlot
	for i := range d.slots {
		if k := d.slots[i].kind; k == ioWrite || k == ioWriteBatch {
			writes = append(writes, &d.slots[i])
		}
	}
	slices.SortFunc(writes, func(a, b *ioSlot) int { return compareUint64(a.id, b.id) })
	inFlight := func(first uint64, buf []byte) {
		for k := range uint64(len(buf) / d.sectorSize) {
			sector := first + k
			candidates[sector] = append(candidates[sector], buf[k*uint64(d.sectorSize):(k+1)*uint64(d.sectorSize)])
		}
	}
	for _, w := range writes {
		if w.kind == ioWrite {
			inFlight(w.sector, w.buf)
			continue
		}
		for _, e := range w.extents {
			inFlight(e.Sector, e.Buf)
		}
	}
	sectors := make([]uint64, 0, len(candidates))
	for sector := range candidates {
		sectors = append(sectors, sector)
	}
	slices.Sort(sectors) // the draws below go in sector order, not map order
	rng, size, atom := d.rngCrash, d.sectorSize, d.opts.AtomBytes
	for _, sector := range sectors {
		cands := candidates[sector]
		st := d.sectorOf(sector)
		u := rng.Float64()
		lost := u < d.opts.CrashLostProbability
		torn := !lost && u < d.opts.CrashLostProbability+d.opts.CrashTornProbability
		if torn && d.atoms < 2 {
			lost, torn = rng.IntN(2) == 0, false
		}
		if lost {
			report.Lost++
			continue
		}
		newer := cands[rng.IntN(len(cands))]
		result := d.buffer()
		if torn {
			d.durableInto(sector, st, result)
			mask := tearMask(rng, d.atoms)
			for a := range d.atoms {
				if mask&(1<<a) != 0 {
					copy(result[a*atom:(a+1)*atom], newer[a*atom:(a+1)*atom])
				}
			}
			report.Torn++
		} else {
			copy(result[:size], newer)
			report.Kept++
		}
		if st.durable != nil {
			d.release(st.durable)
		}
		st.durable = result
		st.flags = 0
	}
	for _, sector := range d.dirty {
		st := d.sectors[sector]
		for k := range st.versions {
			d.release(st.versions[k].data)
			st.versions[k] = version{}
		}
		st.versions = st.versions[:0]
		st.dirty = false
	}
	d.dirty = d.dirty[:0]
	d.resetSlots() // every pending completion event is now stale
	d.stats.Crashes++
	d.stats.CrashLost += uint64(report.Lost)
	d.stats.CrashKept += uint64(report.Kept)
	d.stats.CrashTorn += uint64(report.Torn)
	return report
}

// tearMask draws which of atoms atoms (2..64) a torn sector takes from the
// new bytes: a uniform mask, then forced to hold at least one new and one
// old atom.
func tearMask(rng *rand.Rand, atoms int) uint64 {
	mask := rng.Uint64()
	newAtom := rng.IntN(atoms)
	oldAtom := (newAtom + 1 + rng.IntN(atoms-1)) % atoms
	mask |= 1 << newAtom
	mask &^= 1 << oldAtom
	if atoms < 64 {
		mask &= 1<<atoms - 1
	}
	return mask
}

func compareUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// PeekVisible copies into buf (a multiple of the sector size) what a
// fault-free read from sector would return now: completed writes included,
// faults not applied. For tests and checkers; it draws nothing.
func (d *SimDevice) PeekVisible(sector uint64, buf []byte) {
	count := d.checkRange("peek", sector, len(buf), func(error) {})
	for k := range count {
		d.visible(sector+k, d.sectors[sector+k], buf[k*uint64(d.sectorSize):(k+1)*uint64(d.sectorSize)])
	}
}

// PeekDurable copies into buf what sector holds durably: what it would hold
// after a crash that lost every non-durable write. It draws nothing.
func (d *SimDevice) PeekDurable(sector uint64, buf []byte) {
	count := d.checkRange("peek", sector, len(buf), func(error) {})
	for k := range count {
		d.durableInto(sector+k, d.sectors[sector+k], buf[k*uint64(d.sectorSize):(k+1)*uint64(d.sectorSize)])
	}
}

// Missed reports whether a write aimed at any sector of [first,
// first+count) was ever misdirected elsewhere, so that what the caller was
// told it wrote there never landed (the atlas allows this only on chunks it
// grants the replica). For checkers; it draws nothing.
func (d *SimDevice) Missed(first, count uint64) bool { return anyIn(d.missed, first, count) }

// Hit reports whether a misdirected write aimed elsewhere ever landed on
// any sector of [first, first+count), overwriting what was there. For
// checkers; it draws nothing.
func (d *SimDevice) Hit(first, count uint64) bool { return anyIn(d.hit, first, count) }

// anyIn reports whether set holds any sector of [first, first+count).
func anyIn(set map[uint64]struct{}, first, count uint64) bool {
	for k := range count {
		if _, ok := set[first+k]; ok {
			return true
		}
	}
	return false
}

// SectorFaults reports whether sector is unreadable (latent error) and
// whether it is silently corrupt.
func (d *SimDevice) SectorFaults(sector uint64) (latent, corrupt bool) {
	d.checkRange("peek", sector, d.sectorSize, func(error) {})
	st := d.sectors[sector]
	if st == nil {
		return false, false
	}
	return st.flags&faultLatent != 0, st.flags&faultCorrupt != 0
}

// InjectLatent makes sector unreadable until rewritten, regardless of the
// atlas, the probabilities and FaultsOff: for scripted scenario tests, which
// may deliberately go beyond the atlas's bound.
func (d *SimDevice) InjectLatent(sector uint64) {
	d.checkRange("inject", sector, d.sectorSize, func(error) {})
	d.sectorOf(sector).flags |= faultLatent
	d.stats.LatentMarked++
}

// InjectCorruption makes sector silently corrupt until rewritten, regardless
// of the atlas, the probabilities and FaultsOff (for scripted tests).
func (d *SimDevice) InjectCorruption(sector uint64) {
	d.checkRange("inject", sector, d.sectorSize, func(error) {})
	d.sectorOf(sector).flags |= faultCorrupt
	d.stats.CorruptMarked++
}
