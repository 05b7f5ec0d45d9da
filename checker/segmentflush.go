package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// A partition's segment log flushes once its buffered committed batches
// reach either threshold, so many messages or so many bytes (Iggy's
// messages_required_to_save and size_of_messages_required_to_save,
// DEVIATIONS.md 53): what a replica committed stays in memory only until
// then. So the batches a replica committed in a group at least a grace ago
// and still not in its slot's durable log never add up to a threshold: the
// flush the threshold asked for has had the grace to land ("segment flush
// overdue"). Held at each of the replica's later commits in the group (a
// group that commits is one the replica still runs), from the commits of
// its current incarnation (a restart buffers again what it commits
// again). Not judged: a log a fault touched or that filled its slot, a
// slot another group's units begin, an installed group (its log was
// rewritten from the install), and anything beyond the memory-loss bound.

// SegmentFlushOverdue names a segment log that kept a threshold's worth of
// committed batches in memory past the grace.
const SegmentFlushOverdue = "segment flush overdue"

// segmentFlushGraceNs is the grace a requested flush has to become
// durable: its unit's writes and the sync, behind a flush already in
// flight, through the slowest device latencies and a process pause the
// swarm draws (a pause's mean is at most 310 ticks; the grace is ten
// times that).
const segmentFlushGraceNs = 3100 * 10_000_000

// segmentFlush is what the flush promise keeps.
type segmentFlush struct {
	messages, bytes uint64 // the thresholds; 0: the promise is off
	// pending: per replica and group, the batches committed in this
	// incarnation not yet seen durable, in commit order.
	pending map[flushKey][]flushBatch
	// slots: per replica and group, the slot its segment log was built on.
	slots map[flushKey]int
}

type flushKey struct {
	replica uint8
	group   uint64
}

type flushBatch struct {
	base, count, bytes uint64
	atNs               int64
}

// SetSegmentFlush tells the checker the segment logs' flush thresholds, in
// messages and in bytes.
func (c *Checker) SetSegmentFlush(messages, bytes uint64) {
	c.flush = segmentFlush{messages: messages, bytes: bytes, pending: map[flushKey][]flushBatch{}, slots: map[flushKey]int{}}
}

// segmentBuilt records the slot r's build of group recovered its log from.
func (c *Checker) segmentBuilt(r uint8, group uint64, slot int) {
	if c.flush.slots == nil {
		return
	}
	k := flushKey{r, group}
	c.flush.slots[k] = slot
	delete(c.flush.pending, k)
}

// segmentInstalled: r's log of group was rewritten from an install.
func (c *Checker) segmentInstalled(r uint8, group uint64) {
	if c.flush.slots != nil {
		delete(c.flush.slots, flushKey{r, group})
		delete(c.flush.pending, flushKey{r, group})
	}
}

// segmentFlushCrashed: r's restart commits again from its durable log.
func (c *Checker) segmentFlushCrashed(r uint8) {
	for k := range c.flush.slots {
		if k.replica == r {
			delete(c.flush.slots, k)
			delete(c.flush.pending, k)
		}
	}
}

// segmentCommitted records r's commit of a batch of a group and holds the
// promise at it.
func (c *Checker) segmentCommitted(r uint8, g vsr.Event) {
	if c.flush.slots == nil || c.segments == nil || c.violation != nil {
		return
	}
	k := flushKey{r, g.Group}
	slot, ok := c.flush.slots[k]
	if !ok {
		return
	}
	var p wire.PrepareHeader
	p.Decode(&g.Header)
	if p.Operation != wire.OperationSendMessages {
		return
	}
	b, err := wire.ReadBatchHeader(g.Body)
	if err != nil {
		return
	}
	pend := append(c.flush.pending[k], flushBatch{base: b.BaseOffset, count: uint64(b.MessageCount), bytes: uint64(len(g.Body)), atNs: c.nowNs})
	c.flush.pending[k] = pend
	if c.beyondBound || !c.flushOverdue(pend) {
		return
	}
	w := c.walkSegment(r, slot)
	_, slotSectors, sectorBytes := c.segments.Geometry()
	if w.faulted || w.full || w.group != 0 && w.group != g.Group || c.mayFill(w, pend, uint64(slotSectors)*uint64(sectorBytes), uint64(sectorBytes)) {
		delete(c.flush.slots, k) // not judged in this incarnation
		delete(c.flush.pending, k)
		return
	}
	i := 0
	for i < len(pend) && pend[i].base < w.next {
		i++
	}
	pend = pend[i:]
	c.flush.pending[k] = pend
	if !c.flushOverdue(pend) {
		return
	}
	var msgs, bytes uint64
	oldest := pend[0]
	for _, q := range pend {
		if q.atNs <= c.nowNs-segmentFlushGraceNs {
			msgs, bytes = msgs+q.count, bytes+q.bytes
		}
	}
	c.fail(Violation{Name: SegmentFlushOverdue, Replicas: []uint8{r},
		Detail: fmt.Sprintf("replica %d's segment log of partition group %d (slot %d) durably ends at offset %d; the %d messages (%d bytes) it committed from offset %d on, the first at %.6f s, more than %.1f s ago, reach the flush threshold (%d messages or %d bytes) and are not written",
			r, g.Group, slot, w.next, msgs, bytes, oldest.base, float64(oldest.atNs)/1e9, float64(segmentFlushGraceNs)/1e9, c.flush.messages, c.flush.bytes)})
}

// flushOverdue reports whether the batches of pend committed at least the
// grace ago reach a threshold.
func (c *Checker) flushOverdue(pend []flushBatch) bool {
	var msgs, bytes uint64
	for _, q := range pend {
		if q.atNs > c.nowNs-segmentFlushGraceNs {
			break
		}
		msgs, bytes = msgs+q.count, bytes+q.bytes
	}
	return msgs >= c.flush.messages || bytes >= c.flush.bytes
}

// mayFill reports whether the slot may have no room for the pending
// batches: the walk's batches and the pending ones, each in a unit of its
// own with its header and a sector's padding (more than the log uses),
// exceed the slot. A full log keeps the rest in memory.
func (c *Checker) mayFill(w segmentWalk, pend []flushBatch, capacity, sectorBytes uint64) bool {
	need := uint64(0)
	for _, b := range w.batches {
		need += uint64(len(b)) + segmentUnitHeader + sectorBytes
	}
	for _, q := range pend {
		need += q.bytes + segmentUnitHeader + sectorBytes
	}
	return need > capacity
}
