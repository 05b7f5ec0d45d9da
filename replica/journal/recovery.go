package journal

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Class is the classification of one slot at recovery.
type Class uint8

// Slot classes; see the table in the package documentation.
const (
	// ClassNone is the zero value (never in a Recovery).
	ClassNone Class = iota
	// ClassEmpty: both copies hold the empty marker: nothing was written to
	// the slot since Format.
	ClassEmpty
	// ClassClean: the prepare chunk holds a valid prepare of the slot, held
	// in memory from now on. HeaderWritten says whether its header copy
	// holds it (it may have been acknowledged) or not (the header copy holds
	// the empty marker or an older op: it was never acknowledged).
	ClassClean
	// ClassCorrupt: the header copy holds a valid header of op Op but the
	// prepare chunk does not hold that prepare (damaged, or stale). The op
	// may have been acknowledged: never nack it; repair its body.
	ClassCorrupt
	// ClassTorn: the prepare chunk is damaged and the header copy holds the
	// empty marker or an op (Op, 0 for the marker) older than the op of the
	// head's window for this slot: a prepare write that never finished. Ops
	// newer than the header copy's were never acknowledged.
	ClassTorn
	// ClassConflict: both copies are valid for the same op Op with different
	// identities: a replacement whose header write never landed, or a stale
	// prepare under a newer header (a misdirected write). Neither is
	// trusted: the op is Unknown (not nackable, no header); newer ops of the
	// slot are nackable.
	ClassConflict
	// ClassFaulty: the header copy is damaged and the prepare chunk holds no
	// valid prepare: nothing is known. No op of the slot may be nacked.
	ClassFaulty
)

var classNames = [...]string{"none", "empty", "clean", "corrupt", "torn", "conflict", "faulty"}

// String returns the class's name.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// Copy is what Open found in one stored copy of a slot.
type Copy struct {
	State SectorState
	Op    uint64    // when State is SectorValid
	ID    wire.U128 // the prepare identity, when State is SectorValid
	// Unacked, for a valid header copy: Reconcile recorded it for an op this
	// replica had not acknowledged (see HeaderUnacked).
	Unacked bool
}

// SlotReport is what Open found in one slot and concluded.
type SlotReport struct {
	Class Class
	// Op: for Clean, the op held; for Corrupt and Conflict, the op of the
	// header copy; for Torn, the op of the header copy (0 if it holds the
	// empty marker); 0 for Empty and Faulty.
	Op uint64
	// HeaderWritten, for a Clean slot: the header copy holds this op's
	// header (same identity), as found or as rewritten by Open
	// (HeaderRepaired), so the op may have been acknowledged. When false the
	// header copy holds the empty marker or an older op: the prepare is
	// durable but was never acknowledged. Append the frame again to write
	// its header (that is acknowledging it), or leave it to be overwritten.
	HeaderWritten bool
	// HeaderRepaired, for a Clean slot: the header copy was damaged (a torn
	// header write, or damage), so whether the op was acknowledged is
	// unknown; Open rewrote it with the op's header before returning, which
	// records what may be true (maybe acknowledged) and keeps one more
	// crash in this slot from leaving it Faulty.
	HeaderRepaired bool
	// HeadRestored: the slot is the log head's, which the superblock
	// recorded with its log_view, and its copies showed neither that op
	// nor a newer one: Open wrote the recorded header into its header copy
	// before returning (DEVIATIONS.md 50). The op is then known by header,
	// possibly acknowledged; Class and Header still say what was found.
	HeadRestored bool
	Header       Copy // the header sector, as found
	Prepare      Copy // the prepare chunk, as found
}

// Recovery is what Open found: the durable superblock state and the
// classification of every slot.
type Recovery struct {
	// State is the durable VsrState. Its LogView is the only source of the
	// replica's log_view (consensus.md correction 2): never derive one from
	// a journaled header.
	State wire.VsrState
	// Head is the log head the superblock recorded with State
	// (DEVIATIONS.md 50); HeadOp is at least its op.
	Head LogHead
	// Sequence is the superblock sequence of State.
	Sequence uint64
	// Formatted is how many ring slots, from slot 0, the chosen superblock
	// copy records as formatted: Open read those; the rest are Empty, never
	// written since Format (DEVIATIONS.md 42).
	Formatted uint64
	// Copies is what each superblock copy held.
	Copies [SuperblockCopies]CopyReport
	// Slots is the report of every formatted slot (Formatted of them),
	// indexed by slot; Slot(i) answers for any slot.
	Slots []SlotReport
	// HeadOp is the highest op with any valid evidence in its own slot: a
	// valid prepare or a valid header copy, whether or not it was
	// acknowledged; 0 when every slot is empty or damaged. An op above it
	// is beyond anything this disk shows. It fixes the window
	// (HeadOp-SlotCount, HeadOp] that tells Torn from Corrupt.
	HeadOp uint64
	// HeaderOpMax is the highest op whose header copy is valid (as found,
	// or as rewritten by Open): the highest op that may have been
	// acknowledged as far as the header copies show (a damaged header copy
	// of a Faulty slot may hide a higher one).
	HeaderOpMax uint64

	slotCount uint64
}

// Knowledge says what the recovered disk shows about op, by the same rule as
// Journal.Knowledge at the moment Open returned.
func (r *Recovery) Knowledge(op uint64) Knowledge {
	if op == 0 {
		panic("journal: op 0 (ops are 1-based)")
	}
	slot := r.Slot(op % r.slotCount)
	s := &slot
	held := s.Class == ClassClean && s.Op == op
	vouched := s.Class != ClassConflict
	header, headerOp, unacked := s.Header.State, s.Header.Op, s.Header.Unacked
	if s.HeaderRepaired {
		header, headerOp, unacked = SectorValid, s.Op, false
	}
	if s.HeadRestored {
		header, headerOp, unacked, vouched = SectorValid, r.Head.Op, false, true
	}
	return knowledgeOf(op, held, header, headerOp, vouched, unacked, s.Prepare.State == SectorDamaged)
}

// AckHead is the highest op the journal may have acknowledged: HeadOp,
// extended through the slots directly above it that say nothing of their
// op (Unknown: unreadable, or a damaged prepare under a stale header copy),
// at most a ring's turn above HeadOp (each op of that stretch has a slot
// of its own). A replica acknowledges op N only while it holds every op below N
// down to its commit, so such a slot above an empty one cannot hide an
// acknowledged op; one right above the head can. A vote's head below an op
// is a nack of it (VOPR seed 3637399597563653381: op 23's slot read as a
// torn write right above head 22, and the vote of head 22 truncated
// committed op 23).
func (r *Recovery) AckHead(slots uint64) uint64 {
	head := r.HeadOp
	for head+1 < r.HeadOp+slots && r.Knowledge(head+1) == Unknown {
		head++
	}
	return head
}

// Count returns how many slots are of class c.
func (r *Recovery) Count(c Class) int {
	n := 0
	for i := range r.Slots {
		if r.Slots[i].Class == c {
			n++
		}
	}
	if c == ClassEmpty {
		n += int(r.slotCount) - len(r.Slots)
	}
	return n
}

// Slot returns slot i's report: Slots[i] for a formatted slot, Empty (with
// both copies the empty marker, unread) beyond.
func (r *Recovery) Slot(i uint64) SlotReport {
	if i >= r.slotCount {
		panic(fmt.Sprintf("journal: slot %d of %d", i, r.slotCount))
	}
	if i < uint64(len(r.Slots)) {
		return r.Slots[i]
	}
	return emptySlotReport()
}

// emptySlotReport is the report of a slot whose copies both hold the empty
// marker.
func emptySlotReport() SlotReport {
	return classify(&headerCopy{state: SectorEmpty}, &prepareCopy{state: SectorEmpty})
}

// classify applies the recovery table to one slot (before the window is
// known: a damaged prepare under a valid header is reported Corrupt here,
// and relabelled Torn by label once HeadOp is known).
//
// The table (header sector down, prepare chunk across):
//
//	              | empty marker   | valid prepare p            | damaged
//	--------------+----------------+----------------------------+-------------------
//	empty marker  | Empty          | Clean(p), not written      | Torn(0)
//	valid header h| Corrupt(h) [1] | p == h, same id: Clean(h)  | h in window: Corrupt(h)
//	              |                | p > h: Clean(p), not wr.   | else: Torn(h) [2]
//	              |                | p < h: Corrupt(h) [1]      |
//	              |                | p == h, other id: Conflict |
//	damaged       | Faulty         | Clean(p), repaired [3]     | Faulty
//
// [1] Impossible without damage (a prepare is durable before its header is
// written): a stale prepare left by a misdirected write, for instance.
// [2] A prepare write of a newer op tore (or the older op's prepare was
// damaged later): the window's op for this slot was never acknowledged.
// [3] The header copy tore or was damaged; the prepare is whole, and may
// have been acknowledged. Open rewrites the header copy with p's header
// before it returns: then p is Held, newer ops Nackable (a newer op's header
// is written only after its prepare, which would then be in the chunk),
// older ones Unknown. A torn header write is the one fault-free way to get
// here; without the rewrite, a second crash tearing the next prepare write
// in this slot would leave it Faulty.
func classify(h *headerCopy, p *prepareCopy) SlotReport {
	r := SlotReport{
		Header:  Copy{State: h.state, Op: h.op, ID: h.id, Unacked: h.unacked},
		Prepare: Copy{State: p.state, Op: p.op, ID: p.id},
	}
	switch h.state {
	case SectorEmpty:
		switch p.state {
		case SectorEmpty:
			r.Class = ClassEmpty
		case SectorValid:
			r.Class, r.Op = ClassClean, p.op
		default:
			r.Class = ClassTorn
		}
	case SectorValid:
		switch {
		case p.state == SectorValid && p.op == h.op && p.id == h.id:
			// Under an unacknowledged header copy the prepare is an append
			// whose own header write never landed: never acknowledged.
			r.Class, r.Op, r.HeaderWritten = ClassClean, p.op, !h.unacked
		case p.state == SectorValid && p.op == h.op:
			r.Class, r.Op = ClassConflict, h.op
		case p.state == SectorValid && p.op > h.op:
			r.Class, r.Op = ClassClean, p.op
		default: // damaged, the empty marker, or an older prepare
			r.Class, r.Op = ClassCorrupt, h.op
		}
	case SectorDamaged:
		if p.state == SectorValid {
			r.Class, r.Op, r.HeaderWritten, r.HeaderRepaired = ClassClean, p.op, true, true
		} else {
			r.Class = ClassFaulty
		}
	default:
		panic(fmt.Sprintf("journal: classify a header copy in state %s", h.state))
	}
	return r
}

// label relabels, once HeadOp is known, a Corrupt slot whose prepare chunk
// is damaged and whose header copy is older than the window's op for the
// slot: that is a torn write of a newer op (Torn), not damage to the header
// copy's op. The knowledge is the same either way (the header's op stays
// HeaderOnly, newer ops Nackable); only the description changes.
func label(r *SlotReport, slotIndex, slotCount, headOp uint64) {
	if r.Class != ClassCorrupt || r.Prepare.State != SectorDamaged {
		return
	}
	// The window's op for this slot: the highest op <= headOp in it.
	if headOp < slotIndex {
		return // no op of the window maps here; nothing newer is known
	}
	windowOp := headOp - (headOp-slotIndex)%slotCount
	if r.Op < windowOp {
		r.Class = ClassTorn
	}
}
