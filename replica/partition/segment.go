package partition

import (
	"encoding/binary"
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
	"github.com/zeebo/xxh3"
)

// ZoneSegments is the device zone of the partitions' segment logs.
const ZoneSegments = "partition-segments"

// SegmentUnitMagic opens every flush unit of a segment log ("vopseg01").
const SegmentUnitMagic uint64 = 0x3130676573706f76

// SegmentUnitHeaderBytes is a flush unit's header: magic, group, the base
// offset of its first batch, the bytes of its batches, their count, an
// XXH3 of the batches' bytes, then an XXH3 of those fields.
const SegmentUnitHeaderBytes = 64

// Iggy's flush thresholds (partition-plane.md "Commit, segment log,
// replies": core/server/config.toml): a partition's committed messages are
// written to its segment once 1024 are buffered, or 1 MiB.
const (
	FlushMessagesIggy = 1024
	FlushBytesIggy    = 1 << 20
)

// SegmentConfig places and shapes a replica's segment logs.
type SegmentConfig struct {
	FirstSector uint64
	Slots       int // one log per partition superblock slot (Store)
	SlotSectors int // each log's capacity
	IOsMax      int // flushes in flight at once
	// FlushMessages and FlushBytes: a slot flushes once its buffered
	// batches reach either (Iggy's 1024 and 1 MiB, or a swarm's draw).
	FlushMessages uint64
	FlushBytes    uint64
}

// SegmentZone returns the zone a segment log of cfg needs: one chunk per
// slot, so that the fault atlas grants a partition's log as one piece.
func SegmentZone(slots, slotSectors int) storage.Zone {
	return storage.Zone{Name: ZoneSegments, ChunkSectors: uint64(slotSectors), Chunks: uint64(slots)}
}

// SegmentLog keeps every partition's committed batches on the replica's
// device (wire.md 8.4: the stamped batches verbatim, each advancing by its
// batch_length), one log per superblock slot in the zone ZoneSegments.
//
// A slot's log is a sequence of flush units, each starting at a sector
// boundary and padded to the next: a 64-byte header (magic, group, base
// offset, bytes, count, XXH3) and then the batches the flush wrote. Iggy
// appends to a file per partition; a slot is reused by later partitions
// and is written in whole sectors, so a unit names its group, and a flush
// never rewrites a sector an earlier flush made durable (a torn rewrite
// would lose what was already promised). A flush is one write of its
// sectors and a sync; one flush per slot is in flight at a time.
//
// Reading rule (Open): from sector 0, units of one group whose base offset
// continues the log (the first at 0), each batch verified in full; the walk
// ends at the first sector that is not such a unit (never written, another
// group's, a stale tail, torn or corrupt) or at a batch that does not
// verify, keeping the batches before it. A log is only ever a prefix of its
// partition's committed batches, and the log is the truth above it: a
// replica that lost its segment tail commits those batches again and
// writes them again.
type SegmentLog struct {
	dev         storage.Device
	cfg         SegmentConfig
	sectorBytes int
	// flushed, when set, hears the highest op whose batch a flush made
	// durable (so the group's journal may purge it).
	flushed func(slot int, op uint64)

	slots    []segmentSlot
	inFlight int
	queue    []int // slots with a flush waiting for an I/O
}

type segmentSlot struct {
	group uint64 // the live group writing here, 0 for none
	epoch uint64 // bumped at every adopt, drop and reset: stale completions do nothing
	// end: the byte where the next unit starts (sector aligned); next: the
	// offset the next buffered batch starts at.
	end  uint64
	next uint64
	// buffered: committed batches not yet flushed, in offset order, with
	// the op each committed in (0 when unknown: a batch recovered from a
	// damaged unit).
	buffered         [][]byte
	bufferedOps      []uint64
	bufferedMessages uint64
	bufferedBytes    uint64
	flushing         bool
	queued           bool
	full             bool
	waiters          []func() // Flush callers, run once nothing is buffered or in flight

	// found: what Open read (its batches, and where the log ends).
	found SegmentRecovery
}

// SegmentRecovery is what Open found in one slot.
type SegmentRecovery struct {
	Group   uint64   // the group whose units the slot begins with (0: none)
	Batches [][]byte // its batches, in offset order
	// End is where the walk stopped, in bytes: the next unit is written
	// there. Kept counts the batches in whole units before End; the rest
	// (Batches[Kept:], from a unit cut by a damaged batch) must be written
	// again.
	End     uint64
	Kept    int
	Damaged bool // the walk ended at a unit or batch that did not verify
}

// segmentWindowSectors is how many sectors one read of the walk asks for.
const segmentWindowSectors = 16

// OpenSegmentLog reads every slot's log and runs done with the store.
func OpenSegmentLog(dev storage.Device, cfg SegmentConfig, done func(*SegmentLog)) {
	if cfg.Slots < 1 || cfg.SlotSectors < 1 || cfg.IOsMax < 1 || cfg.FlushMessages < 1 || cfg.FlushBytes < 1 ||
		dev.SectorSize() < SegmentUnitHeaderBytes {
		panic(fmt.Sprintf("partition: segment log %+v on sectors of %d bytes", cfg, dev.SectorSize()))
	}
	s := &SegmentLog{dev: dev, cfg: cfg, sectorBytes: dev.SectorSize(), slots: make([]segmentSlot, cfg.Slots)}
	walks := make([]*segmentWalk, cfg.Slots)
	for i := range walks {
		walks[i] = &segmentWalk{sectorBytes: uint64(s.sectorBytes), capacity: uint64(cfg.SlotSectors) * uint64(s.sectorBytes)}
	}
	s.read(walks, done)
}

// read issues the next window of every walk that needs more bytes, then
// walks again; done runs when every walk has ended.
func (s *SegmentLog) read(walks []*segmentWalk, done func(*SegmentLog)) {
	var extents []storage.Extent
	var owners []int
	for i, w := range walks {
		if w.ended {
			continue
		}
		from := uint64(len(w.buf)) / w.sectorBytes
		// The first read takes one sector: most slots hold no log (a
		// sector never written reads as garbage, and every slot is read
		// at every open); later ones a window, at least the unit waited
		// for.
		window := uint64(segmentWindowSectors)
		if from == 0 {
			window = 1
		} else if w.need > uint64(len(w.buf)) {
			window = max(window, (w.need-uint64(len(w.buf))+w.sectorBytes-1)/w.sectorBytes)
		}
		count := min(window, uint64(s.cfg.SlotSectors)-from)
		for k := range count {
			extents = append(extents, storage.Extent{Sector: s.cfg.FirstSector + uint64(i)*uint64(s.cfg.SlotSectors) + from + k,
				Buf: make([]byte, s.sectorBytes)})
			owners = append(owners, i)
		}
	}
	if len(extents) == 0 {
		for i, w := range walks {
			s.slots[i].found = w.result()
		}
		done(s)
		return
	}
	s.dev.ReadBatch(extents, func() {
		for k, e := range extents {
			w := walks[owners[k]]
			if e.Err != nil && !w.unreadable {
				w.unreadable, w.unreadableAt = true, uint64(len(w.buf))
			}
			w.buf = append(w.buf, e.Buf...)
		}
		for _, w := range walks {
			if !w.ended {
				w.walk()
			}
		}
		s.read(walks, done)
	})
}

// segmentWalk reads one slot's log: the bytes read so far and how far
// they verify.
type segmentWalk struct {
	sectorBytes, capacity uint64
	buf                   []byte
	unreadable            bool
	unreadableAt          uint64 // the first unreadable byte: nothing there or after it is read

	ended   bool
	need    uint64 // the bytes the walk waits for: the end of the unit it began
	group   uint64
	at      uint64 // the next unit's first byte
	next    uint64 // the offset the next batch must start at
	batches [][]byte
	kept    int
	damaged bool
}

// walk verifies as many units as the bytes read allow; it ends the walk,
// or leaves it waiting for more bytes.
func (w *segmentWalk) walk() {
	for !w.ended {
		limit := uint64(len(w.buf))
		if w.unreadable {
			limit = min(limit, w.unreadableAt)
		}
		if w.at+SegmentUnitHeaderBytes > w.capacity {
			w.ended = true
			return
		}
		if w.at+SegmentUnitHeaderBytes > limit {
			w.ended = w.unreadable || limit >= w.capacity
			return
		}
		u, ok := DecodeSegmentUnit(w.buf[w.at:])
		if !ok || (w.group != 0 && u.Group != w.group) || u.Group == 0 || u.BaseOffset != w.next {
			// A unit's magic that does not verify is a flush a crash tore
			// or a fault damaged; anything else ends the log cleanly (a
			// sector never written, another group's, a stale tail).
			w.damaged = !ok && binary.LittleEndian.Uint64(w.buf[w.at:]) == SegmentUnitMagic
			w.ended = true
			return
		}
		unitEnd := w.at + SegmentUnitHeaderBytes + u.Bytes
		if unitEnd > w.capacity {
			w.ended = true
			return
		}
		if unitEnd > limit {
			if w.unreadable {
				w.ended, w.damaged = true, true
			}
			w.need = unitEnd
			return // wait for the rest of the unit
		}
		if xxh3.Hash(w.buf[w.at+SegmentUnitHeaderBytes:unitEnd]) != u.PayloadSum {
			// The unit's header does not belong with these bytes (a torn
			// flush, a torn reuse of the slot, a damaged sector): none of
			// its batches can be trusted to be this group's.
			w.ended, w.damaged = true, true
			return
		}
		w.group = u.Group
		pos, next, whole := w.at+SegmentUnitHeaderBytes, w.next, true
		var batches [][]byte
		for n := uint32(0); n < u.Count; n++ {
			h, err := wire.ReadBatchHeader(w.buf[pos:unitEnd])
			if err != nil || h.BatchLength > unitEnd-pos || h.BaseOffset != next ||
				wire.VerifyBatch(w.buf[pos:pos+h.BatchLength]) != nil {
				whole = false
				break
			}
			batches = append(batches, w.buf[pos:pos+h.BatchLength])
			pos += h.BatchLength
			next += uint64(h.MessageCount)
		}
		if whole && pos != unitEnd {
			whole = false
		}
		w.batches = append(w.batches, batches...)
		w.next = next
		if !whole {
			w.ended, w.damaged = true, true
			return
		}
		w.kept = len(w.batches)
		w.at = alignUp(unitEnd, w.sectorBytes)
	}
}

func (w *segmentWalk) result() SegmentRecovery {
	batches := make([][]byte, len(w.batches))
	for i, b := range w.batches {
		batches[i] = append([]byte(nil), b...)
	}
	return SegmentRecovery{Group: w.group, Batches: batches, End: w.at, Kept: w.kept, Damaged: w.damaged}
}

func alignUp(n, to uint64) uint64 { return (n + to - 1) / to * to }

// SegmentUnit is a flush unit's header.
type SegmentUnit struct {
	Group      uint64
	BaseOffset uint64
	Bytes      uint64
	Count      uint32
	// PayloadSum is the XXH3 of the unit's batches: a crash that tears a
	// slot's reuse by a new tenant can pair the old tenant's header with
	// the new tenant's batches, each of which verifies on its own (VOPR
	// long seed 1: group 1019's header over another group's first batch,
	// read back as group 1019's batch at offset 0).
	PayloadSum uint64
}

// DecodeSegmentUnit reads a unit header from the start of b.
func DecodeSegmentUnit(b []byte) (SegmentUnit, bool) {
	if len(b) < SegmentUnitHeaderBytes || binary.LittleEndian.Uint64(b) != SegmentUnitMagic ||
		binary.LittleEndian.Uint64(b[56:]) != xxh3.Hash(b[:56]) {
		return SegmentUnit{}, false
	}
	return SegmentUnit{Group: binary.LittleEndian.Uint64(b[8:]), BaseOffset: binary.LittleEndian.Uint64(b[16:]),
		Bytes: binary.LittleEndian.Uint64(b[24:]), Count: binary.LittleEndian.Uint32(b[32:]),
		PayloadSum: binary.LittleEndian.Uint64(b[40:])}, true
}

func encodeSegmentUnit(dst []byte, u SegmentUnit) {
	clear(dst[:SegmentUnitHeaderBytes])
	binary.LittleEndian.PutUint64(dst, SegmentUnitMagic)
	binary.LittleEndian.PutUint64(dst[8:], u.Group)
	binary.LittleEndian.PutUint64(dst[16:], u.BaseOffset)
	binary.LittleEndian.PutUint64(dst[24:], u.Bytes)
	binary.LittleEndian.PutUint32(dst[32:], u.Count)
	binary.LittleEndian.PutUint64(dst[40:], u.PayloadSum)
	binary.LittleEndian.PutUint64(dst[56:], xxh3.Hash(dst[:56]))
}

// Recover returns what Open found in slot for group (nothing if the slot
// begins with another group's units), and makes the slot group's: its next
// flush writes at the end of what verified, and the batches of a unit cut
// by damage are buffered to be written again.
func (s *SegmentLog) Recover(slot int, group uint64) SegmentRecovery {
	s.checkSlot(slot)
	sl := &s.slots[slot]
	if sl.flushing || sl.queued {
		panic(fmt.Sprintf("partition: recovering segment slot %d with a flush in flight", slot))
	}
	found := sl.found
	sl.found = SegmentRecovery{}
	if group == 0 || found.Group != group {
		found = SegmentRecovery{}
	}
	sl.epoch++
	*sl = segmentSlot{group: group, epoch: sl.epoch, end: found.End}
	for _, b := range found.Batches[:found.Kept] {
		h, _ := wire.ReadBatchHeader(b)
		sl.next = h.BaseOffset + uint64(h.MessageCount)
	}
	for _, b := range found.Batches[found.Kept:] {
		s.buffer(sl, b, 0)
	}
	return found
}

// SetFlushed sets what hears, per slot, the highest op a flush made
// durable.
func (s *SegmentLog) SetFlushed(f func(slot int, op uint64)) { s.flushed = f }

// Append buffers a committed batch of slot's group (the next in offset
// order), committed by op, and flushes once the thresholds are reached.
func (s *SegmentLog) Append(slot int, op uint64, batch []byte) {
	s.checkSlot(slot)
	sl := &s.slots[slot]
	if sl.group == 0 {
		panic(fmt.Sprintf("partition: segment append to slot %d with no group", slot))
	}
	h, err := wire.ReadBatchHeader(batch)
	want := sl.next
	if n := len(sl.buffered); n > 0 {
		last, _ := wire.ReadBatchHeader(sl.buffered[n-1])
		want = last.BaseOffset + uint64(last.MessageCount)
	}
	if err != nil || h.BaseOffset != want {
		panic(fmt.Sprintf("partition: segment slot %d of group %d appends a batch at offset %d, its log ends at %d (%v)",
			slot, sl.group, h.BaseOffset, want, err))
	}
	s.buffer(sl, batch, op)
	if sl.bufferedMessages >= s.cfg.FlushMessages || sl.bufferedBytes >= s.cfg.FlushBytes {
		s.want(slot)
	}
}

func (s *SegmentLog) buffer(sl *segmentSlot, batch []byte, op uint64) {
	h, _ := wire.ReadBatchHeader(batch)
	sl.buffered = append(sl.buffered, batch)
	sl.bufferedOps = append(sl.bufferedOps, op)
	sl.bufferedMessages += uint64(h.MessageCount)
	sl.bufferedBytes += uint64(len(batch))
}

// Reset forgets slot's log from offset 0 on and buffers batches (the log
// as this replica now commits it, ops unknown) to be written from the start: the log
// held batches that its group's committed log no longer has (possible
// only beyond the memory-loss bound, where a cluster that lost every
// journal commits new batches at old offsets).
func (s *SegmentLog) Reset(slot int, batches [][]byte) {
	s.checkSlot(slot)
	sl := &s.slots[slot]
	group, waiters := sl.group, sl.waiters
	flushing, queued := sl.flushing, sl.queued
	*sl = segmentSlot{group: group, epoch: sl.epoch + 1, waiters: waiters, flushing: flushing, queued: queued}
	for _, b := range batches {
		s.buffer(sl, b, 0)
	}
}

// Drop forgets slot's group (its partition was deleted): what it buffered
// is never written, and a flush in flight completes to no effect.
func (s *SegmentLog) Drop(slot int) {
	s.checkSlot(slot)
	sl := &s.slots[slot]
	waiters := sl.waiters
	*sl = segmentSlot{epoch: sl.epoch + 1, flushing: sl.flushing, queued: sl.queued}
	for _, f := range waiters {
		f()
	}
}

// Flush writes everything slot buffered, whatever the thresholds (a clean
// shutdown's flush), then runs done.
func (s *SegmentLog) Flush(slot int, done func()) {
	s.checkSlot(slot)
	sl := &s.slots[slot]
	if sl.group == 0 || (len(sl.buffered) == 0 || sl.full) && !sl.flushing {
		s.dev.Sync(func(error) { done() }) // completes later, never inside the call
		return
	}
	sl.waiters = append(sl.waiters, done)
	s.want(slot)
}

// Busy reports whether slot has a flush waiting or in flight.
func (s *SegmentLog) Busy(slot int) bool {
	s.checkSlot(slot)
	return s.slots[slot].flushing || s.slots[slot].queued
}

// Full reports whether slot's log ran out of room (what it could not
// write stays in memory; probe "segment log full").
func (s *SegmentLog) Full(slot int) bool { s.checkSlot(slot); return s.slots[slot].full }

func (s *SegmentLog) want(slot int) {
	sl := &s.slots[slot]
	if sl.flushing || sl.queued || sl.full || len(sl.buffered) == 0 {
		return
	}
	sl.queued = true
	s.queue = append(s.queue, slot)
	s.pump()
}

func (s *SegmentLog) pump() {
	for s.inFlight < s.cfg.IOsMax && len(s.queue) > 0 {
		slot := s.queue[0]
		s.queue = s.queue[1:]
		sl := &s.slots[slot]
		sl.queued = false
		if sl.group == 0 || len(sl.buffered) == 0 || sl.full {
			s.settle(slot)
			continue
		}
		s.flush(slot)
	}
}

// flush writes the longest prefix of slot's buffered batches that fits in
// one unit of the room left.
func (s *SegmentLog) flush(slot int) {
	sl := &s.slots[slot]
	capacity := uint64(s.cfg.SlotSectors) * uint64(s.sectorBytes)
	bytes, count, messages := uint64(0), 0, uint64(0)
	for _, b := range sl.buffered {
		need := alignUp(sl.end+SegmentUnitHeaderBytes+bytes+uint64(len(b)), uint64(s.sectorBytes))
		if need > capacity {
			break
		}
		h, _ := wire.ReadBatchHeader(b)
		bytes += uint64(len(b))
		messages += uint64(h.MessageCount)
		count++
	}
	if count == 0 {
		sl.full = true
		s.settle(slot)
		return
	}
	unitBytes := alignUp(SegmentUnitHeaderBytes+bytes, uint64(s.sectorBytes))
	buf := make([]byte, unitBytes)
	at := SegmentUnitHeaderBytes
	for _, b := range sl.buffered[:count] {
		at += copy(buf[at:], b)
	}
	encodeSegmentUnit(buf, SegmentUnit{Group: sl.group, BaseOffset: sl.next, Bytes: bytes, Count: uint32(count),
		PayloadSum: xxh3.Hash(buf[SegmentUnitHeaderBytes : SegmentUnitHeaderBytes+bytes])})
	sector := s.cfg.FirstSector + uint64(slot)*uint64(s.cfg.SlotSectors) + sl.end/uint64(s.sectorBytes)
	epoch := sl.epoch
	last, _ := wire.ReadBatchHeader(sl.buffered[count-1])
	op := uint64(0)
	for _, o := range sl.bufferedOps[:count] {
		op = max(op, o)
	}
	sl.flushing = true
	s.inFlight++
	write := s.dev.Write
	if bug.SegmentLostFlush && sl.end > 0 {
		// canary_segment_lost_flush: the unit is never written
		write = func(_ uint64, _ []byte, done func(error)) { s.dev.Sync(done) }
	}
	write(sector, buf, func(error) {
		s.dev.Sync(func(error) {
			s.inFlight--
			sl := &s.slots[slot]
			sl.flushing = false
			if sl.epoch == epoch {
				sl.end += unitBytes
				sl.next = last.BaseOffset + uint64(last.MessageCount)
				sl.buffered = sl.buffered[count:]
				sl.bufferedOps = sl.bufferedOps[count:]
				sl.bufferedMessages -= messages
				sl.bufferedBytes -= bytes
				if op > 0 && s.flushed != nil {
					s.flushed(slot, op)
				}
			}
			if len(sl.waiters) > 0 {
				s.want(slot)
			} else if sl.bufferedMessages >= s.cfg.FlushMessages || sl.bufferedBytes >= s.cfg.FlushBytes {
				s.want(slot)
			}
			s.settle(slot)
			s.pump()
		})
	})
}

// settle runs slot's Flush waiters once nothing of it is buffered
// (or can be written) and nothing is in flight.
func (s *SegmentLog) settle(slot int) {
	sl := &s.slots[slot]
	if sl.flushing || sl.queued || len(sl.waiters) == 0 || len(sl.buffered) > 0 && !sl.full && sl.group != 0 {
		return
	}
	waiters := sl.waiters
	sl.waiters = nil
	for _, f := range waiters {
		f()
	}
}

func (s *SegmentLog) checkSlot(slot int) {
	if slot < 0 || slot >= s.cfg.Slots {
		panic(fmt.Sprintf("partition: segment slot %d of %d", slot, s.cfg.Slots))
	}
}
