package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/checker/diskread"
	"github.com/iggy-vopr/vopr/replica"
)

// A restart recovers its journal from the disk alone (docs/disk-format.md
// 12): the superblock's state, every formatted slot classified (format 7),
// the head op, and what it knows of each op (format 8: held, header only,
// nackable, header unacked, unknown). Nothing writes the journal between
// the recovery's end and the replica's report of it, so the checker's own
// reader (diskread.Recover), run on the durable image at that moment,
// must conclude the same ("journal recovery misread the disk"). The
// recovery's own repairs (format 12, step 7) are on the disk by then; they
// write a header copy the slot already counts as valid, so the reading
// after them knows every op of the window as the reading before them did.
//
// The one legitimate difference: a read fault. Where a fault the fault
// model allows touched a slot's sectors (a latent read error, corruption,
// a misdirected write), the replica may have read damage where the image
// holds a valid copy. Such a slot is not judged, and the head op may then
// be lower than the image's, never lower than the highest op an untouched
// slot or the superblock's log head shows, and never higher than the
// image's: a read fault hides a copy, it never shows one (a sealed record
// that fails its checksum is damaged). A touched superblock is not judged.
//
// The head a restarted replica's log starts from (its vote's head, format
// 12.1) is the head op, extended through the ops right above it that the
// recovered journal knows nothing of (Unknown), at most to the op before
// the head op's slot comes round again: a replica acknowledges an op only
// while it holds every op below it down to its commit, so a slot that says nothing
// right above the head may hide an acknowledged op, and a head below it
// would nack it; a slot that proves its op was never acknowledged ends the
// stretch. A single replica has nobody to nack to and starts from the head
// op. A fresh one, booting right after its format completed in the same
// incarnation (the cluster starting, or an operator formatting again a
// disk whose format a crash cut), has prepared nothing and starts from 0:
// what its first boot reads as damage is not an op. A replica that never
// crashed is fresh; one whose crash cut its format is fresh again once its
// next format completes (VOPR seeds 970678049 and 2668062079 -logout 0.1,
// whose crash-cut formats made the old test, no crash yet, read their
// fresh boots as restarts), and one that crashed after its format
// completed is not, even if it never prepared an op. This head is not the
// journal's own log head after Open (format 12.1, DEVIATIONS 74: the
// recorded log head raised only by ops stamped in the log_view), which
// the next state write records and the report does not carry.

// JournalMisread names a restart whose journal recovery concluded other
// than its disk holds.
const JournalMisread = "journal recovery misread the disk"

// journalRecovered checks what replica r's restart recovered from its
// journal against the checker's own recovery of the same disk.
func (c *Checker) journalRecovered(r uint8, jr replica.JournalReport) {
	if c.art.src == nil || c.violation != nil {
		return
	}
	g, peek := c.art.src.Geometry(r), c.art.src.Peek(r)
	if first, n := g.SuperblockSectors(); c.art.src.Faulted(r, first, n) {
		return
	}
	misread := func(format string, args ...any) {
		c.fail(Violation{Name: JournalMisread, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d restarted, and "+format, append([]any{r}, args...)...)})
	}
	rec, err := diskread.Recover(g, peek)
	if err != nil {
		misread("its journal opened a disk whose recovery refuses it: %v", err)
		return
	}
	n := g.SlotCount
	faulted := make([]bool, len(rec.Slots))
	defer c.journalRecordsReadable(r, g, faulted)
	floor := rec.Superblock.Head.Op // what no read fault can hide
	for k := range uint64(len(rec.Slots)) {
		header, prepare, count := g.SlotSectors(k)
		faulted[k] = c.art.src.Faulted(r, header, 1) || c.art.src.Faulted(r, prepare, count)
		s := rec.Slots[k]
		if faulted[k] {
			continue
		}
		if s.Header.State == diskread.CopyValid {
			floor = max(floor, s.Header.Op)
		}
		if s.Prepare.State == diskread.CopyValid {
			floor = max(floor, s.Prepare.Op)
		}
	}
	if jr.HeadOp > rec.HeadOp || jr.HeadOp < floor {
		misread("its journal recovered head op %d; the disk shows head op %d (%d in the slots no fault touched, with the superblock's log head)",
			jr.HeadOp, rec.HeadOp, floor)
		return
	}
	first := max(jr.HeadOp, n) - n + 1
	if jr.FirstOp != first || uint64(len(jr.Knowledge)) != jr.HeadOp+n-first {
		misread("it reported its knowledge of %d ops from op %d, not of the ring's window around head op %d (ops %d to %d)",
			len(jr.Knowledge), jr.FirstOp, jr.HeadOp, first, jr.HeadOp+n-1)
		return
	}
	for i, got := range jr.Knowledge {
		op := first + uint64(i)
		k := op % n
		if k < uint64(len(faulted)) && faulted[k] {
			continue
		}
		if want := rec.Knowledge(op).String(); got != want {
			s := rec.Slot(k)
			misread("its journal knows op %d (slot %d) as %s; the disk's slot is %s of op %d (header copy %s of op %d, prepare chunk %s of op %d) and says %s",
				op, k, got, s.Class, s.Op, s.Header.State, s.Header.Op, s.Prepare.State, s.Prepare.Op, want)
			return
		}
	}
	if c.bootsFresh(r) {
		// Damage at a fresh replica's first boot is not an op.
		if jr.Head != 0 {
			misread("its log starts from head %d at the first boot after its format completed, where a fresh replica has prepared nothing (head 0)", jr.Head)
		}
		return
	}
	want := jr.HeadOp
	if c.replicas > 1 {
		for want+1 < jr.HeadOp+n && jr.Knowledge[want+1-first] == diskread.Unknown.String() {
			want++
		}
	}
	if jr.Head != want {
		misread("its log starts from head %d; head op %d and the ops above it it knows nothing of give head %d",
			jr.Head, jr.HeadOp, want)
	}
}

// formatDone notes that replica r's format completed: its next boot in
// the same incarnation is a fresh one.
func (c *Checker) formatDone(r uint8) {
	if c.formattedIn == nil {
		c.formattedIn = make([]uint64, len(c.incarnations))
	}
	c.formattedIn[r] = c.incarnations[r] + 1
}

// bootsFresh reports whether replica r's boot now follows a format that
// completed in its current incarnation (no crash since).
func (c *Checker) bootsFresh(r uint8) bool {
	return c.formattedIn != nil && c.formattedIn[r] == c.incarnations[r]+1
}

// JournalUnreadableRecord names a journal slot whose header sector holds a
// sealed record its format does not read: neither the slot's empty marker
// nor a header of one of its ops (docs/disk-format.md 4 and 5). A tear or
// damage breaks a seal; only a write of that record leaves one, so the
// journal wrote a header copy no restart can read, where it meant the
// marker or a header (a slot a fault touched is not judged).
const JournalUnreadableRecord = "journal wrote a record its format cannot read"

// journalRecordsReadable checks every formatted slot of r's journal that no
// fault touched (faulted, indexed by slot) at r's restart.
func (c *Checker) journalRecordsReadable(r uint8, g diskread.Geometry, faulted []bool) {
	if c.violation != nil {
		return
	}
	peek := c.art.src.Peek(r)
	for k := range uint64(len(faulted)) {
		if !faulted[k] && diskread.HeaderSealedUnreadable(g, peek, k) {
			c.fail(Violation{Name: JournalUnreadableRecord, Replicas: []uint8{r},
				Detail: fmt.Sprintf("replica %d restarted, and slot %d's header sector holds a sealed record that is neither the slot's empty marker nor a header of one of its ops", r, k)})
			return
		}
	}
}
