package checker

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// PollCurrentAhead: a poll reply's current_offset names an offset the
// partition never committed (client-ops.md 5.28: the partition's current
// offset, its last message's, 0 while it holds none). A reply of an empty
// partition that says 1, or 2^64-1 (end-1 of an empty log), tells a
// consumer messages exist that no poll will ever return.
const PollCurrentAhead = "poll current offset ahead of the log"

// pollGroupOf records the partition group a replica served a poll from
// (EventPoll, sent just after the reply left): the reply itself names only
// the partition id, and an empty reply carries no batch to find the group
// by.
func (c *Checker) pollGroupOf(e replica.Event) {
	if c.pollGroups == nil {
		c.pollGroups = map[requestKey]uint64{}
	}
	c.pollGroups[requestKey{e.Client, e.Request}] = e.PartitionGroup
}

// pollCurrent checks a poll reply's current offset against the offsets the
// partition's canonical log ever minted: a replica serves a poll from its
// committed batches, which are a prefix of the canonical log, so its last
// committed offset is below every offset minted by the time the reply
// arrives, and it is 0 while nothing was minted. Beyond the memory-loss
// bound (beyondf.go) a cut log may mint its offsets again: nothing is
// judged there.
func (c *Checker) pollCurrent(done workload.Completion) {
	key := requestKey{done.ClientID, done.Request}
	group, ok := c.pollGroups[key]
	if !ok || c.beyondBound || c.violation != nil {
		return
	}
	delete(c.pollGroups, key)
	l := c.partitions[group]
	body := done.Frame[min(len(done.Frame), wire.HeaderSize):]
	if len(body) < 16 {
		return // pollReply names a short body
	}
	current := binary.LittleEndian.Uint64(body[4:])
	minted := uint64(0)
	if l != nil {
		minted = max(l.offset, l.offsetsMinted)
	}
	if current < minted || current == 0 && minted == 0 {
		c.pollComplete(done, group)
		return
	}
	c.fail(Violation{Name: PollCurrentAhead,
		Detail: fmt.Sprintf("client %s poll %d: partition group %d answered with current offset %d, and the offsets its log ever minted are %s",
			done.ClientID, done.Request, group, current, mintedRange(minted))})
}

// mintedRange names the offsets 0..minted-1 for a detail.
func mintedRange(minted uint64) string {
	if minted == 0 {
		return "none (the current offset of an empty partition is 0)"
	}
	return fmt.Sprintf("0..%d", minted-1)
}
