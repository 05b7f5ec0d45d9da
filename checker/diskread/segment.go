package diskread

import (
	"encoding/binary"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// The segment logs of the partition planes (format 14.3), read by this
// package's own walk of the flush units; the batches inside them are
// wire.md 7's, read with replica/wire's batch reader (the wire format).

// SegmentZone places the partition-segments zone on a device.
type SegmentZone struct {
	FirstSector uint64
	Slots       int
	SlotSectors int // each slot's log
	SectorSize  int
}

const (
	segmentMagic      uint64 = 0x3130676573706f76 // "vopseg01" on disk
	segmentUnitHeader        = 64
)

// SegmentLog is what the walk of one slot found (format 14.3's reading
// rule).
type SegmentLog struct {
	// Group is the group whose units the slot begins with (0: none).
	Group uint64
	// Batches are its verified batches in offset order: those of the
	// whole units, then those before a bad batch of the unit that ended
	// the walk.
	Batches [][]byte
	// End is the byte where the walk stopped: the start of the unit that
	// ended it, or where the next unit goes. Kept counts the batches of
	// the whole units before End.
	End  uint64
	Kept int
	// Damaged: the walk ended at a unit that begins with the magic but
	// does not verify, or whose batches do not.
	Damaged bool
	// Sectors is how many sectors from the slot's start the walk read:
	// what a reader of the slot depends on.
	Sectors uint64
}

// SlotSector returns the first sector of slot's log.
func (z SegmentZone) SlotSector(slot int) uint64 {
	return z.FirstSector + uint64(slot)*uint64(z.SlotSectors)
}

// ReadSegmentLog walks slot's log by format 14.3.
func ReadSegmentLog(z SegmentZone, peek Peek, slot int) SegmentLog {
	ss := uint64(z.SectorSize)
	capacity := uint64(z.SlotSectors) * ss
	first := z.SlotSector(slot)
	var buf []byte
	var w SegmentLog
	// read makes buf hold the slot's bytes [0, n).
	read := func(n uint64) {
		for uint64(len(buf)) < n {
			s := make([]byte, ss)
			peek(first+uint64(len(buf))/ss, s)
			buf = append(buf, s...)
		}
		w.Sectors = max(w.Sectors, uint64(len(buf))/ss)
	}
	le := binary.LittleEndian
	var next uint64
	for {
		if w.End+segmentUnitHeader > capacity {
			return w // the slot is full
		}
		read(w.End + segmentUnitHeader)
		h := buf[w.End : w.End+segmentUnitHeader]
		magic := le.Uint64(h) == segmentMagic
		if !magic || le.Uint64(h[56:]) != xxh3.Hash(h[:56]) {
			w.Damaged = magic
			return w
		}
		group, base, size, count := le.Uint64(h[8:]), le.Uint64(h[16:]), le.Uint64(h[24:]), le.Uint32(h[32:])
		if group == 0 || w.Group != 0 && group != w.Group || base != next {
			return w // another group's, a stale tail: the log ends cleanly
		}
		unitEnd := w.End + segmentUnitHeader + size
		if size > capacity || unitEnd > capacity {
			return w
		}
		read(unitEnd)
		if xxh3.Hash(buf[w.End+segmentUnitHeader:unitEnd]) != le.Uint64(h[40:]) {
			w.Damaged = true
			return w
		}
		w.Group = group
		pos, whole := w.End+segmentUnitHeader, true
		for range count {
			b, err := wire.ReadBatchHeader(buf[pos:unitEnd])
			if err != nil || b.BatchLength > unitEnd-pos || b.BaseOffset != next ||
				wire.VerifyBatch(buf[pos:pos+b.BatchLength]) != nil {
				whole = false
				break
			}
			w.Batches = append(w.Batches, append([]byte(nil), buf[pos:pos+b.BatchLength]...))
			pos += b.BatchLength
			next += uint64(b.MessageCount)
		}
		if !whole || pos != unitEnd {
			w.Damaged = true
			return w
		}
		w.Kept = len(w.Batches)
		w.End = (unitEnd + ss - 1) / ss * ss
	}
}
