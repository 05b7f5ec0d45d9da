package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/checker/diskread"
	"github.com/iggy-vopr/vopr/replica"
)

// A partition group's build reads its segment log back (docs/disk-format.md
// 14.3, DEVIATIONS.md 53): the batches the restarted plane is seeded with,
// polled at once, and where the slot's next flush goes. The replica walks
// each slot once per incarnation, before anything writes it, so the first
// build on a slot after a restart must recover exactly what the checker's
// own walk of the durable image finds there for its group: the same
// batches, byte for byte, the same end, the same whole units, the same
// damage ("segment log misread at recovery"). Trusting less than was
// flushed loses batches the group's peers may have purged (DEVIATIONS.md
// 55); trusting more, or other bytes, serves what no flush wrote. A walk
// over a sector a fault touched is not judged.

// SegmentMisread names a build that recovered another segment log than its
// slot holds.
const SegmentMisread = "segment log misread at recovery"

// slotKey names one replica's partition slot.
type slotKey struct {
	replica uint8
	slot    int
}

// segmentRecovered checks what replica r's build of group recovered from
// its slot's segment log.
func (c *Checker) segmentRecovered(r uint8, group uint64, d replica.DiskReport) {
	k := slotKey{r, d.Slot}
	if c.art.src == nil || c.violation != nil || c.art.segmentsRead[k] {
		return // a slot is read once per incarnation: a later build finds nothing
	}
	c.art.segmentsRead[k] = true
	z := c.art.src.SegmentZone()
	w := diskread.ReadSegmentLog(z, c.art.src.Peek(r), d.Slot)
	if c.art.src.Faulted(r, z.SlotSector(d.Slot), max(w.Sectors, 1)) {
		return
	}
	if w.Group != group {
		w = diskread.SegmentLog{} // another group's log, or none: nothing of this group's
	}
	got := d.Segment
	diff := ""
	switch {
	case len(got.Batches) != len(w.Batches):
		diff = fmt.Sprintf("%d batches, the slot holds %d", len(got.Batches), len(w.Batches))
	case got.End != w.End || got.Kept != w.Kept || got.Damaged != w.Damaged:
		diff = fmt.Sprintf("a log ending at byte %d after %d whole-unit batches (damaged %v), the slot's ends at byte %d after %d (damaged %v)",
			got.End, got.Kept, got.Damaged, w.End, w.Kept, w.Damaged)
	default:
		for i := range got.Batches {
			if string(got.Batches[i]) != string(w.Batches[i]) {
				diff = fmt.Sprintf("batch %d differs from the slot's from byte %d", i, firstDifference(got.Batches[i], w.Batches[i]))
				break
			}
		}
	}
	if diff != "" {
		c.fail(Violation{Name: SegmentMisread, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d built partition group %d on slot %d and recovered from its segment log %s", r, group, d.Slot, diff)})
	}
}

// segmentsCrashed: r's restart reads every slot again.
func (c *Checker) segmentsCrashed(r uint8) {
	for k := range c.art.segmentsRead {
		if k.replica == r {
			delete(c.art.segmentsRead, k)
		}
	}
}
