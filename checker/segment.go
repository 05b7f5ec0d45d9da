package checker

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// The segment logs, read from each replica's durable disk image by the
// checker's own reading of the format DEVIATIONS.md 53 writes down (a slot
// per partition; flush units at sector boundaries, each a 64-byte header of
// magic "vopseg01", group, base offset, bytes, count, an XXH3 of the
// batches' bytes and an XXH3 of those 56 bytes, then the stamped batches
// verbatim, wire.md 8.4), batches
// decoded with replica/wire alone:
//
//   - every batch a replica's log holds is the canonical committed batch at
//     its offset, byte for byte ("segment log diverged"): a log is written
//     only with committed batches, in offset order;
//   - after the liveness phase's final flush, every core replica's log of
//     every partition it runs holds all of the partition's committed
//     batches ("segment log incomplete"), unless a sector the fault model
//     damaged cuts it, or the log is full.
//
// A sector the fault model touched (a latent error, silent corruption, or a
// misdirected write that missed it or landed on it) ends the checker's
// walk there: what follows it is not judged. Beyond the memory-loss bound
// a log may hold batches of a history that was cut (checked no further).

// Segment violation names.
const (
	SegmentDiverged   = "segment log diverged"   // a batch in a segment log that is not the canonical committed batch at its offset
	SegmentIncomplete = "segment log incomplete" // after the final flush, a core replica's log lacks committed batches
)

// Segments is what the checker may read of the replicas' segment logs: the
// zone's geometry and each sector's durable bytes. The harness implements
// it over its simulated devices.
type Segments interface {
	// Geometry returns the slots, sectors per slot and bytes per sector.
	Geometry() (slots, slotSectors, sectorBytes int)
	// Sector returns the durable bytes of sector k of slot's log on replica
	// r, and whether a fault touched that sector.
	Sector(r uint8, slot, k int) (data []byte, faulted bool)
}

// SetSegments lets the checker read the replicas' segment logs.
func (c *Checker) SetSegments(s Segments) { c.segments = s }

const (
	segmentMagic       uint64 = 0x3130676573706f76 // "vopseg01"
	segmentUnitHeader         = 64
	segmentSlotUnitMax        = 1 << 16 // a bound on units per slot walk
)

// segmentWalk is what the checker read of one slot: the group whose units
// it begins with, its verified batches, and why the walk ended.
type segmentWalk struct {
	group   uint64
	batches [][]byte
	next    uint64 // the offset after the last batch
	faulted bool   // the walk ended at a sector a fault touched
	full    bool   // the walk reached the slot's end
}

// walkSegment reads slot of replica r: units of one group, contiguous
// offsets from 0, batches that verify in full.
func (c *Checker) walkSegment(r uint8, slot int) segmentWalk {
	_, slotSectors, sectorBytes := c.segments.Geometry()
	var w segmentWalk
	capacity := slotSectors * sectorBytes
	var buf []byte
	// read makes buf hold bytes [0, n) of the slot, false if a faulted
	// sector lies in them.
	read := func(n int) bool {
		for len(buf) < n {
			k := len(buf) / sectorBytes
			data, faulted := c.segments.Sector(r, slot, k)
			if faulted {
				w.faulted = true
				return false
			}
			buf = append(buf, data...)
		}
		return true
	}
	at := 0
	for units := 0; units < segmentSlotUnitMax; units++ {
		if at+segmentUnitHeader > capacity {
			w.full = true
			return w
		}
		if !read(at + segmentUnitHeader) {
			return w
		}
		h := buf[at : at+segmentUnitHeader]
		if binary.LittleEndian.Uint64(h) != segmentMagic || binary.LittleEndian.Uint64(h[56:]) != xxh3.Hash(h[:56]) {
			return w
		}
		group, base := binary.LittleEndian.Uint64(h[8:]), binary.LittleEndian.Uint64(h[16:])
		size, count := binary.LittleEndian.Uint64(h[24:]), binary.LittleEndian.Uint32(h[32:])
		if group == 0 || w.group != 0 && group != w.group || base != w.next || size > uint64(capacity-at-segmentUnitHeader) {
			return w
		}
		end := at + segmentUnitHeader + int(size)
		if !read(end) {
			return w
		}
		if binary.LittleEndian.Uint64(h[40:]) != xxh3.Hash(buf[at+segmentUnitHeader:end]) {
			// A unit whose bytes are not the ones its header summed (a torn
			// flush, or a torn reuse of the slot pairing its old tenant's
			// header with a new tenant's batches): none of it is judged.
			return w
		}
		w.group = group
		pos := at + segmentUnitHeader
		for range count {
			b, err := wire.ReadBatchHeader(buf[pos:end])
			if err != nil || b.BatchLength > uint64(end-pos) || b.BaseOffset != w.next || wire.VerifyBatch(buf[pos:pos+int(b.BatchLength)]) != nil {
				return w
			}
			w.batches = append(w.batches, buf[pos:pos+int(b.BatchLength)])
			w.next += uint64(b.MessageCount)
			pos += int(b.BatchLength)
		}
		if pos != end {
			return w
		}
		at = (end + sectorBytes - 1) / sectorBytes * sectorBytes
	}
	return w
}

// canonicalBatch returns group's committed batch that starts at offset, if
// the canonical log has one.
func (l *partitionLog) canonicalBatch(offset uint64) ([]byte, bool) {
	// Batches are in op order with ascending base offsets; ops without a
	// batch (consumer offsets) are skipped by the search's fix-up.
	lo, hi := 0, len(l.canon)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if b := l.baseAt(mid); b < offset {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for k := lo; k < len(l.canon); k++ {
		if l.canon[k].batch == nil {
			continue
		}
		if l.canon[k].base == offset {
			return l.canon[k].batch, true
		}
		return nil, false
	}
	return nil, false
}

// baseAt returns the base offset of the first batch at or after canon[k]
// (the log's next offset if none): a non-decreasing function of k.
func (l *partitionLog) baseAt(k int) uint64 {
	for ; k < len(l.canon); k++ {
		if l.canon[k].batch != nil {
			return l.canon[k].base
		}
	}
	return l.offset
}

// CheckSegments reads every replica's segment logs and checks that each
// holds only canonical committed batches. With final (after the liveness
// phase's final flush), it also checks that each replica of core holds,
// for each group in groups, all of the group's committed batches.
func (c *Checker) CheckSegments(final bool, core []uint8, groups []uint64) {
	if c.segments == nil || c.violation != nil {
		return
	}
	walks := make([]map[uint64]segmentWalk, c.replicas)
	for r := range c.replicas {
		walks[r] = map[uint64]segmentWalk{}
		c.checkSegmentsOf(uint8(r), walks[r])
	}
	if !final || c.beyondBound || c.violation != nil {
		return
	}
	for _, r := range core {
		hidden := walks[r][0].next // slots whose first sector a fault hid
		for _, g := range groups {
			l, ok := c.partitions[g]
			if !ok || l.offset == 0 {
				continue
			}
			w, ok := walks[r][g]
			if ok && (w.next >= l.offset || w.faulted || w.full) {
				continue
			}
			if !ok && hidden > 0 {
				hidden--
				continue
			}
			c.fail(Violation{Name: SegmentIncomplete, Replicas: []uint8{r},
				Detail: fmt.Sprintf("after the final flush replica %d's segment log of partition group %d ends at offset %d, its committed batches at %d",
					r, g, w.next, l.offset)})
			return
		}
	}
}

// checkSegmentsAt checks replica r's segment logs as they are durable now
// (at its crash: what its restart will read).
func (c *Checker) checkSegmentsAt(r uint8) {
	if c.segments != nil && c.violation == nil {
		c.checkSegmentsOf(r, nil)
	}
}

// checkSegmentsOf walks every slot of replica r, fails on a batch that is
// not canonical, and records the walks by group in walks (when not nil;
// the longest walk of a group, should two slots begin with it).
func (c *Checker) checkSegmentsOf(r uint8, walks map[uint64]segmentWalk) {
	slots, _, _ := c.segments.Geometry()
	for slot := range slots {
		w := c.walkSegment(r, slot)
		if w.group == 0 {
			if w.faulted && walks != nil {
				// A slot whose first unit a fault hides: it may be any
				// group's (counted under group 0).
				u := walks[0]
				u.next++
				walks[0] = u
			}
			continue
		}
		if walks != nil {
			if prev, ok := walks[w.group]; !ok || w.next > prev.next {
				walks[w.group] = w
			}
		}
		l, ok := c.partitions[w.group]
		if c.beyondBound {
			continue
		}
		var at uint64
		for _, b := range w.batches {
			h, _ := wire.ReadBatchHeader(b)
			at = h.BaseOffset
			want, found := []byte(nil), false
			if ok {
				want, found = l.canonicalBatch(at)
			}
			if found && bytes.Equal(want, b) {
				continue
			}
			detail := "no committed batch starts there"
			if found {
				detail = fmt.Sprintf("the committed batch there differs (%d bytes, %d in the log)", len(want), len(b))
			}
			c.fail(Violation{Name: SegmentDiverged, Replicas: []uint8{r},
				Detail: fmt.Sprintf("replica %d's segment log (slot %d) of partition group %d holds a batch at offset %d: %s",
					r, slot, w.group, at, detail)})
			return
		}
	}
}
