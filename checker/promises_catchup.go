package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// A StartView is owed only while the core can carry the replica to it.
// Adopting a view's log means holding the committed ops below its head: a
// replica behind repairs them from its peers' journals or takes a state
// transfer of a peer's checkpoint (consensus.md, "Repair", "State
// transfer"), and one whose ring cannot hold the log yet stays Recovering
// until it has applied and checkpointed enough of them. A committed op
// that no core replica holds, neither as a durable prepare of its
// canonical identity nor under a durable checkpoint it applied, can reach
// the replica from nowhere in the quiet cluster: the stall is the one
// TigerBeetle's VOPR excuses ("a prepare is missing on all replicas",
// vopr-notes.md section 6), which the run's end explains as "committed op
// N is missing on every core replica". VOPR seed 154 with -logout 0.1 (and
// -format-extent 0 -flush-bytes 0 since c2e4b07): replica 1, checkpointed
// at op 44, was given view 26's StartView with head op 75 and a ring of 20
// slots; the primary's journal held ops 56..75 only and its checkpoint was
// unreadable at its last restart, the one replica holding a checkpoint
// above op 48 was frozen outside the core, so op 49 existed nowhere in it.
//
// The excuse does not cover an op some core replica must still hold (it
// acknowledged the op's canonical prepare, its disk may not fault that
// slot and no write to it was misdirected): losing that is a bug, and the
// promise stays due, as the run's end would not excuse it either.

// missingInCore returns the first committed op of the metadata group
// above what replica r applied, at or below upTo, that no core replica
// holds (see above), and false when every such op is held somewhere in the
// core. Without the disks, or in a partition group (whose journals live in
// memory, not on the disks the checker reads), it reports none.
func (c *Checker) missingInCore(g *promiseGroup, r uint8, upTo uint64) (uint64, bool) {
	if g.id != wirespec.MetadataGroup || c.disks == nil || c.quiet == nil {
		return 0, false
	}
	for op := c.committedAt(g, r) + 1; op <= min(upTo, c.Committed()); op++ {
		h, _ := c.Header(op)
		id := h.Checksum()
		held := false
		for p := 0; p < c.replicas && !held; p++ {
			if !c.quiet.core[p] {
				continue
			}
			held = c.disks.HoldsPrepare(uint8(p), op, id) || c.mustHoldInCore(uint8(p), op, id)
			if cp, err := c.disks.DurableCheckpoint(uint8(p)); err != nil || cp >= op && c.current(g, uint8(p)) && c.committedAt(g, uint8(p)) >= op {
				// Unreadable now (a write in flight): not known missing.
				held = true
			}
		}
		if !held {
			return op, true
		}
	}
	return 0, false
}

// mustHoldInCore reports whether core replica p acknowledged op's prepare
// id and its disk may lose it only through a bug: the atlas grants no fault
// on the op's slot, no write to it was misdirected, and no durable
// checkpoint covers the op (which would let its ring reuse the slot).
func (c *Checker) mustHoldInCore(p uint8, op uint64, id wire.U128) bool {
	acked, ok := c.Acknowledged(p, op)
	if !ok || acked != id || c.disks.Faultable(p, op) || c.disks.Misdirected(p, op) {
		return false
	}
	cp, err := c.disks.DurableCheckpoint(p)
	return err != nil || cp < op
}

// missingNote is the evidence of a StartView the core cannot carry r to.
func missingNote(g *promiseGroup, r uint8, d svDue, op uint64) string {
	return fmt.Sprintf("in %s, replica %d owes adopting the StartView of view %d (head op %d) from replica %d only once it holds committed op %d, which no core replica holds (no durable prepare of it, no durable checkpoint covering it): the core cannot carry it there",
		groupName(g.id), r, d.view, d.op, d.from, op)
}
