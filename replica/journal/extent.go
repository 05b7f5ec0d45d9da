package journal

import "fmt"

// The formatted extent (DEVIATIONS.md 42).
//
// Format writes the empty markers of the first extent of the ring only
// (Config.FormatExtentSlots slots from slot 0), and the superblock records
// how many slots are formatted. Open reads only those: a slot beyond them
// was never written since the device was new, so it is Empty without a
// read. Before the first write into a slot beyond the extent (an append, a
// repair, a header Reconcile records), the journal formats the next extents
// up to that slot: it writes their markers as one batch, syncs, and records
// the larger extent in a superblock update; the write waits meanwhile (its
// slot's queue keeps every later write behind it). The superblock update
// lands after the markers are durable, and a superblock state whose done
// ran is never lost (superblock.go), so the extent a recovery reads always
// covers every slot the journal ever wrote: a crash before the update
// leaves markers beyond the recorded extent, which are rewritten, harmless,
// by the next extension.

// awaitFormat parks a, the first write queued on a slot beyond the
// formatted extent, until the extent covers that slot, formatting as far
// as needed.
func (j *Journal) awaitFormat(a *appendOp, slot uint64) {
	a.step = stepAwaitFormat
	j.awaiting = append(j.awaiting, a)
	ext := j.cfg.formatExtent()
	j.formatTarget = max(j.formatTarget, min(j.cfg.SlotCount, (slot/ext+1)*ext))
	if !j.formatting {
		j.formatNext()
	}
}

// formatNext formats the slots from the extent to the target: their
// markers in one batch, a sync, then the superblock update.
func (j *Journal) formatNext() {
	from, to := j.formatted, j.formatTarget
	if from >= to || to > j.cfg.SlotCount {
		panic(fmt.Sprintf("journal: formatting slots [%d, %d) of %d", from, to, j.cfg.SlotCount))
	}
	j.formatting, j.formatIO = true, true
	j.ioIssued()
	j.dev.WriteBatch(markerExtents(j.cfg, j.geo, from, to), func(err error) {
		j.ioCompleted(err)
		j.sync(func(err error) {
			j.ioCompleted(err)
			j.formatIO = false
			j.sb.latestFormatted = to
			j.sb.request(func() { j.extentFormatted(to) })
		})
	})
}

// extentFormatted: slots below to are formatted, durably recorded. The
// writes waiting for them start; formatting goes on if some wait beyond.
func (j *Journal) extentFormatted(to uint64) {
	j.formatted = to
	j.formatting = false
	waiting := j.awaiting
	j.awaiting = nil
	for _, a := range waiting {
		if a.e.op%j.cfg.SlotCount >= j.formatted {
			j.awaiting = append(j.awaiting, a)
			continue
		}
		a.step = stepQueued
		j.start(a)
	}
	if j.formatTarget > j.formatted {
		j.formatNext()
	}
}

// Formatted returns how many ring slots, from slot 0, are formatted and
// durably recorded so.
func (j *Journal) Formatted() uint64 { return j.formatted }
