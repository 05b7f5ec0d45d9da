package checker

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// PollMisserved: a poll reply is not what the serving replica's own
// committed log selects for the poll's strategy. pollReply checks that a
// reply's records are committed batches, consecutive in one partition
// (soundness); this checks that they are the ones the poll asked for, all of
// them (completeness): a replica serves a poll from its committed batches,
// which are a prefix of the partition's canonical log ending at the
// reply's current offset, and returns the whole batches that hold an offset
// at or after the strategy's start, in offset order, until count messages
// are covered, stopping early only where the next batch would take the
// reply past the frame (partition-plane.md "Polls", client-ops.md 1.6 and
// 5.28). Starts: Offset its value; First 0; Last count messages before the
// end; Timestamp the first batch stamped at or after the value. Next polls
// are judged by nextPollStart (the consumer's stored offset on the serving
// replica is that replica's own).
const PollMisserved = "poll misserved"

// Poll strategies (client-ops.md 1.6), as the checker reads them.
const (
	pollStrategyOffset    = 1
	pollStrategyTimestamp = 2
	pollStrategyFirst     = 3
	pollStrategyLast      = 4
	pollStrategyNext      = 5
)

// pollReplyBudgetSlackBytes: a poll reply may stop before a batch that
// would bring it within this many bytes of the frame size (the replica
// keeps room under max_message_size for the reply's header; 8 KiB is more
// than it keeps, so the check never blames a stop the frame forced).
const pollReplyBudgetSlackBytes = 8192

// pollComplete checks a poll reply of partition group against the batches
// the poll's strategy selects from the serving replica's committed prefix.
func (c *Checker) pollComplete(done workload.Completion, group uint64) {
	l := c.partitions[group]
	inv := c.invocations[requestKey{done.ClientID, done.Request}]
	if l == nil || inv == nil || c.beyondBound || l.offsetsMinted > 0 || l.reseeded || c.violation != nil {
		return
	}
	body := done.Frame[min(len(done.Frame), wire.HeaderSize):]
	if len(body) < 16 {
		return // pollReply names a short body
	}
	_, at, ok := consumerPrefix(inv.inv.Body)
	req := inv.inv.Body
	if !ok || len(req) < at+14 {
		return
	}
	strategy, value, count := req[at], binary.LittleEndian.Uint64(req[at+1:]), binary.LittleEndian.Uint32(req[at+9:])
	if strategy < pollStrategyOffset || strategy > pollStrategyLast {
		return
	}
	current := binary.LittleEndian.Uint64(body[4:])
	got := recordBases(body[16:])
	if current == 0 && len(got) == 0 {
		return // an empty partition and one holding offset 0 alone both say 0
	}
	end := current + 1
	// The serving replica's committed batches: the canonical ones below end.
	type batch struct {
		base, count uint64
		stamp       uint64
		bytes       int
	}
	var held []batch
	for _, op := range l.canon {
		if op.batch == nil || op.base+op.count > end {
			continue
		}
		h, err := wire.ReadBatchHeader(op.batch)
		if err != nil {
			return
		}
		held = append(held, batch{base: op.base, count: op.count, stamp: h.BaseTimestamp, bytes: len(op.batch)})
	}
	if n := len(held); n == 0 || held[n-1].base+held[n-1].count != end {
		return // the replica's prefix is not one the checker can rebuild (pollCurrent names a current ahead)
	}
	start := uint64(0)
	switch strategy {
	case pollStrategyOffset:
		start = value
	case pollStrategyLast:
		start = end - min(end, uint64(count))
	case pollStrategyTimestamp:
		start = end
		for _, b := range held {
			if b.stamp >= value {
				start = b.base
				break
			}
		}
	}
	budget := int(c.refusals.frameSizeMax) - wire.HeaderSize - pollReplyBudgetSlackBytes
	var want []uint64
	covered, size, capped := uint64(0), 16, false
	for _, b := range held {
		if b.base+b.count <= start {
			continue
		}
		if covered >= uint64(count) {
			break
		}
		if c.refusals.frameSizeMax != 0 && size+b.bytes > budget {
			capped = true
			break
		}
		covered += b.base + b.count - max(b.base, start)
		size += b.bytes
		want = append(want, b.base)
	}
	// The replica keeps less room under the frame than the checker's
	// budget, so where that budget stopped the walk the replica may have
	// gone on; with no frame size told (a checker fed by hand) the replica
	// may have stopped sooner.
	if slices.Equal(got, want) || capped && isPrefix(want, got) || c.refusals.frameSizeMax == 0 && isPrefix(got, want) {
		return
	}
	c.fail(Violation{Name: PollMisserved,
		Detail: fmt.Sprintf("client %s poll %d (strategy %d, value %d, count %d) of partition group %d: the replica answered with current offset %d and batches at %v, but its committed log up to offset %d serves the batches at %v",
			done.ClientID, done.Request, strategy, value, count, group, current, got, current, want)})
}

// recordBases returns the base offsets of a poll reply's records (as far
// as they frame: pollReply names a record that does not).
func recordBases(records []byte) []uint64 {
	var out []uint64
	for len(records) > 0 {
		b, err := wire.ReadBatchHeader(records)
		if err != nil || b.BatchLength > uint64(len(records)) || b.BatchLength < wire.BatchHeaderSize {
			return out
		}
		out = append(out, b.BaseOffset)
		records = records[b.BatchLength:]
	}
	return out
}

// isPrefix reports whether a is a prefix of b.
func isPrefix(a, b []uint64) bool { return len(a) <= len(b) && slices.Equal(a, b[:len(a)]) }
