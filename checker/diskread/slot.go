package diskread

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// CopyState is what one stored copy of a slot (its header sector or its
// prepare chunk) holds (format 5 and 6).
type CopyState uint8

// Copy states.
const (
	// CopyEmpty: the empty marker of the slot and kind.
	CopyEmpty CopyState = iota + 1
	// CopyValid: a good record of an op of the slot.
	CopyValid
	// CopyDamaged: anything else (unreadable, torn, garbage, a failed seal,
	// another slot's record).
	CopyDamaged
)

var copyStateNames = [...]string{CopyEmpty: "empty", CopyValid: "valid", CopyDamaged: "damaged"}

// String returns the state's name.
func (s CopyState) String() string {
	if int(s) < len(copyStateNames) && copyStateNames[s] != "" {
		return copyStateNames[s]
	}
	return fmt.Sprintf("CopyState(%d)", uint8(s))
}

// Copy is what one stored copy of a slot was found to hold.
type Copy struct {
	State CopyState
	// Op and ID are the op and prepare identity of a valid copy.
	Op uint64
	ID wire.U128
	// Unacked, for a valid header copy: it is sealed with the second seal,
	// recorded for an op this replica never acknowledged (DEVIATIONS 29).
	Unacked bool
	// Header is a valid copy's 256-byte prepare header.
	Header wire.Header
	// Frame is a valid prepare chunk's whole frame (nil for a header copy).
	Frame []byte
}

// Class is a slot's classification (format 7).
type Class uint8

// Slot classes.
const (
	// ClassEmpty: both copies hold the empty marker.
	ClassEmpty Class = iota + 1
	// ClassClean: the prepare chunk holds a valid prepare, not older than
	// a valid header copy's op and not conflicting with it.
	ClassClean
	// ClassCorrupt: the header copy is valid and the prepare chunk holds
	// neither its prepare nor a newer one.
	ClassCorrupt
	// ClassTorn: the prepare chunk is damaged under the empty marker, or
	// (after a recovery's relabel) under a header copy older than the
	// window's op for the slot.
	ClassTorn
	// ClassConflict: both copies valid for one op, with two identities.
	ClassConflict
	// ClassFaulty: the header copy is damaged and no valid prepare is
	// there.
	ClassFaulty
)

var classNames = [...]string{ClassEmpty: "empty", ClassClean: "clean", ClassCorrupt: "corrupt", ClassTorn: "torn",
	ClassConflict: "conflict", ClassFaulty: "faulty"}

// String returns the class's name.
func (c Class) String() string {
	if int(c) < len(classNames) && classNames[c] != "" {
		return classNames[c]
	}
	return fmt.Sprintf("Class(%d)", uint8(c))
}

// Slot is what one journal slot holds and its classification.
type Slot struct {
	Class Class
	// Op is the class's op: the prepare's for Clean, the header copy's for
	// Corrupt, Conflict and Torn over a valid header; 0 otherwise.
	Op uint64
	// Written, for a Clean slot: the header copy records the op as possibly
	// acknowledged (same op and identity, the ordinary seal), as found or
	// as a restart rewrites it (Repaired).
	Written bool
	// Repaired, for a Clean slot: the header copy was damaged; a restart
	// rewrites it with the prepare's header.
	Repaired bool
	// Header and Prepare are the two copies as found.
	Header, Prepare Copy
}

// classify applies the table of format 7 (without the window's relabel).
func classify(header, prepare Copy) Slot {
	s := Slot{Header: header, Prepare: prepare}
	switch header.State {
	case CopyEmpty:
		switch prepare.State {
		case CopyEmpty:
			s.Class = ClassEmpty
		case CopyValid:
			s.Class, s.Op = ClassClean, prepare.Op
		default:
			s.Class = ClassTorn
		}
	case CopyValid:
		switch {
		case prepare.State != CopyValid || prepare.Op < header.Op:
			s.Class, s.Op = ClassCorrupt, header.Op
		case prepare.Op > header.Op:
			s.Class, s.Op = ClassClean, prepare.Op
		case prepare.ID != header.ID:
			s.Class, s.Op = ClassConflict, header.Op
		default:
			s.Class, s.Op, s.Written = ClassClean, prepare.Op, !header.Unacked
		}
	default:
		if prepare.State == CopyValid {
			s.Class, s.Op, s.Written, s.Repaired = ClassClean, prepare.Op, true, true
		} else {
			s.Class = ClassFaulty
		}
	}
	return s
}

// ReadSlot reads and classifies the journal slot of op, from its bytes
// alone (format 5 to 7): no window relabel, and a slot beyond the formatted
// extent is read like any other (format 11). It panics on op 0, which no
// slot holds.
func ReadSlot(g Geometry, peek Peek, op uint64) Slot {
	g.check()
	if op == 0 {
		panic("diskread: op 0 (ops are 1-based)")
	}
	return g.readSlot(peek, op%g.SlotCount)
}

// readSlot reads and classifies slot k.
func (g Geometry) readSlot(peek Peek, k uint64) Slot {
	return classify(g.readHeaderSector(peek, k), g.readPrepareChunk(peek, k))
}

// holdsPrepare reports whether s is Clean with op's prepare of identity id.
func (s *Slot) holdsPrepare(op uint64, id wire.U128) bool {
	return s.Class == ClassClean && s.Op == op && s.Prepare.ID == id
}

// HoldsAcknowledged reports whether the disk durably holds op's prepare with
// identity id and its header copy, as an acknowledged prepare must be
// (format 9): both copies valid with (op, id), the header under the
// ordinary seal.
func HoldsAcknowledged(g Geometry, peek Peek, op uint64, id wire.U128) bool {
	if op == 0 {
		return false
	}
	s := ReadSlot(g, peek, op)
	return s.holdsPrepare(op, id) && s.Written && !s.Repaired
}

// HoldsPrepare reports whether the disk durably holds op's prepare with
// identity id, whatever its header copy says (format 9): a restart finds
// the slot Clean with that prepare.
func HoldsPrepare(g Geometry, peek Peek, op uint64, id wire.U128) bool {
	if op == 0 {
		return false
	}
	s := ReadSlot(g, peek, op)
	return s.holdsPrepare(op, id)
}

// DurablePrepare returns the identity of the prepare of op that the disk
// durably holds, if a restart would find the slot Clean with op (format 9).
func DurablePrepare(g Geometry, peek Peek, op uint64) (wire.U128, bool) {
	if op == 0 {
		return wire.U128{}, false
	}
	s := ReadSlot(g, peek, op)
	if s.Class != ClassClean || s.Op != op {
		return wire.U128{}, false
	}
	return s.Prepare.ID, true
}
