package diskread

import (
	"fmt"
)

// Knowledge is what a recovered journal can say of one op (format 8).
type Knowledge uint8

// Knowledge values.
const (
	// Unknown: neither held nor provably never acknowledged: reported blank,
	// never nacked.
	Unknown Knowledge = iota
	// Held: the journal holds the op's prepare.
	Held
	// HeaderOnly: the journal knows the op's header, not its body; it may
	// have been acknowledged.
	HeaderOnly
	// Nackable: provably never acknowledged here.
	Nackable
	// HeaderUnacked: the header is known and the op provably never
	// acknowledged (the second seal, DEVIATIONS 29).
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

// RecoveredSlot is a slot as a restart finds it (format 12): its
// classification after the window's relabel, and whether the restart
// writes the superblock's log head into it.
type RecoveredSlot struct {
	Slot
	// HeadRestored: the slot is the log head's and shows neither its op nor
	// a newer one; the restart writes the recorded header into its header
	// copy (DEVIATIONS 50).
	HeadRestored bool
}

// Recovery is what a restart would find on the disk: the chosen
// superblock and the slots it reads.
type Recovery struct {
	Superblock Superblock
	// Slots holds the formatted slots, indexed by slot; a slot at or beyond
	// Superblock.Formatted is Empty, unread (format 11).
	Slots []RecoveredSlot
	// HeadOp is the highest op of any valid copy of a formatted slot, raised
	// to the superblock's log head; it fixes the window (HeadOp-N, HeadOp].
	HeadOp uint64
	// HeaderOpMax is the highest op of a valid header copy, as found or as
	// the restart rewrites it (a repaired Clean slot, the restored head).
	HeaderOpMax uint64

	slotCount uint64
}

// Recover reads the disk as a restart would (format 12, writing nothing):
// the superblock, then every formatted slot, classified, relabelled by the
// window, with the log head restored where its slot no longer shows it. It
// returns an error where the journal's Open refuses to open (ErrNoQuorum,
// ErrMismatch) or panics (ErrSplitSequence, ErrHeadUnformatted).
func Recover(g Geometry, peek Peek) (*Recovery, error) {
	sb, err := ReadSuperblock(g, peek)
	if err != nil {
		return nil, err
	}
	r := &Recovery{Superblock: sb, Slots: make([]RecoveredSlot, sb.Formatted), slotCount: g.SlotCount}
	for k := range sb.Formatted {
		s := g.readSlot(peek, k)
		r.Slots[k] = RecoveredSlot{Slot: s}
		if s.Header.State == CopyValid {
			r.HeadOp = max(r.HeadOp, s.Header.Op)
			r.HeaderOpMax = max(r.HeaderOpMax, s.Header.Op)
		}
		if s.Prepare.State == CopyValid {
			r.HeadOp = max(r.HeadOp, s.Prepare.Op)
		}
		if s.Repaired {
			r.HeaderOpMax = max(r.HeaderOpMax, s.Op)
		}
	}
	if err := r.restoreHead(g); err != nil {
		return nil, err
	}
	for k := range r.Slots {
		r.relabel(uint64(k))
	}
	return r, nil
}

// restoreHead applies format 12, step 5.
func (r *Recovery) restoreHead(g Geometry) error {
	head := r.Superblock.Head
	if head.Op == 0 {
		return nil
	}
	r.HeadOp = max(r.HeadOp, head.Op)
	if !head.Known() || head.Op <= r.Superblock.State.CheckpointOp {
		return nil
	}
	k := head.Op % g.SlotCount // above the checkpoint: the slot never held a newer op
	if k >= uint64(len(r.Slots)) {
		return fmt.Errorf("%w: op %d, %d slots formatted", ErrHeadUnformatted, head.Op, len(r.Slots))
	}
	s := &r.Slots[k]
	if s.Header.State == CopyValid && s.Header.Op >= head.Op || s.Prepare.State == CopyValid && s.Prepare.Op >= head.Op || s.Repaired {
		return nil
	}
	s.HeadRestored = true
	r.HeaderOpMax = max(r.HeaderOpMax, head.Op)
	return nil
}

// relabel renames slot k Torn when it is Corrupt over a damaged prepare
// and its header copy's op is below the window's op for the slot (format
// 7, "Torn versus corrupt").
func (r *Recovery) relabel(k uint64) {
	s := &r.Slots[k]
	if s.Class != ClassCorrupt || s.Prepare.State != CopyDamaged || r.HeadOp < k {
		return
	}
	if windowOp := r.HeadOp - (r.HeadOp-k)%r.slotCount; s.Op < windowOp {
		s.Class = ClassTorn
	}
}

// Slot returns slot k as the restart finds it: a formatted slot's, or an
// Empty one beyond the formatted extent.
func (r *Recovery) Slot(k uint64) RecoveredSlot {
	if k >= r.slotCount {
		panic(fmt.Sprintf("diskread: slot %d of %d", k, r.slotCount))
	}
	if k < uint64(len(r.Slots)) {
		return r.Slots[k]
	}
	return RecoveredSlot{Slot: classify(Copy{State: CopyEmpty}, Copy{State: CopyEmpty})}
}

// Knowledge says what the restarted journal knows of op (format 8).
func (r *Recovery) Knowledge(op uint64) Knowledge {
	if op == 0 {
		panic("diskread: op 0 (ops are 1-based)")
	}
	s := r.Slot(op % r.slotCount)
	if s.Class == ClassClean && s.Op == op {
		return Held
	}
	header, headerOp, unacked := s.Header.State, s.Header.Op, s.Header.Unacked
	vouched := s.Class != ClassConflict
	switch {
	case s.Repaired:
		header, headerOp, unacked = CopyValid, s.Op, false
	case s.HeadRestored:
		header, headerOp, unacked, vouched = CopyValid, r.Superblock.Head.Op, false, true
	}
	prepareDamaged := s.Prepare.State == CopyDamaged
	switch {
	case header == CopyEmpty && prepareDamaged:
		return Unknown
	case header == CopyEmpty:
		return Nackable
	case header != CopyValid:
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
