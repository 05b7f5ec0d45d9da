package checker

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Losses beyond the memory-loss bound (issue 11 item 7). A partition
// group's journal lives in memory; within f = n - q_vc replicas without it
// at once, nothing committed may be lost, and every check holds. Beyond
// it, Iggy's design permits losses (partition-plane.md, "When more than f
// replicas of a group lose memory"; Iggy's open question #4266): committed
// but unflushed batches exist nowhere, acknowledged offsets are minted
// again for new messages, and stored consumer offsets can end up ahead of
// the data. Once the simulator reports that more than f replicas were
// without partition memory at once (MemoryLostBeyondBound), those losses,
// and only those, are counted by name instead of failing the run:
//
//   - a partition group that commits another op where its canonical log
//     had one: the canonical log is cut there (every message of the ops
//     cut is a committed message lost, and an acknowledged message lost
//     when its send had been acknowledged) and goes on with the new op;
//   - a batch stamped below the offsets the log had minted before the cut:
//     those offsets are minted again;
//   - an acknowledged send no commit holds any more (lost write);
//   - a stored consumer offset past the partition's committed messages;
//   - a poll that returned data the cut dropped, or offsets minted again.
//
// Every other check still fails the run, on both planes.
const (
	LossAckedMessages      = "acknowledged messages lost"
	LossCommittedMessages  = "committed messages lost"
	LossOffsetsMintedAgain = "offsets minted again"
	LossOffsetAhead        = "consumer offsets ahead of the data"
	LossPolls              = "polls of lost data"
)

// Loss is one kind of loss beyond the bound, with how many there were.
type Loss struct {
	Name  string
	Count uint64
}

// MemoryLostBeyondBound tells the checker that, at the time of its last
// event, more than f replicas were without partition memory at once: from
// then on the losses Iggy's design permits are counted, not failed.
func (c *Checker) MemoryLostBeyondBound(without, f int) {
	if c.beyondBound {
		return
	}
	c.beyondBound = true
	c.note("%d replicas are without partition memory at once, more than f = %d: the losses Iggy permits are counted from now on", without, f)
}

// BeyondBound reports whether more than f replicas were ever without
// partition memory at once.
func (c *Checker) BeyondBound() bool { return c.beyondBound }

// LossesBeyondBound returns the losses counted beyond the bound, by name.
func (c *Checker) LossesBeyondBound() []Loss {
	out := make([]Loss, 0, len(c.losses))
	for name, n := range c.losses {
		out = append(out, Loss{Name: name, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// lossBeyondBound counts n losses of a kind, with what happened.
func (c *Checker) lossBeyondBound(name string, n uint64, format string, args ...any) {
	if !c.beyondBound {
		panic("checker: a loss beyond the bound counted within it")
	}
	if c.losses == nil {
		c.losses = map[string]uint64{}
	}
	c.losses[name] += n
	c.note("beyond the bound, %s (%d): %s", name, n, fmt.Sprintf(format, args...))
}

// cutPartitionLog cuts group l's canonical log below op: what a loss beyond
// the bound took. The ops cut are counted (their messages committed, and
// acknowledged when a reply had named them), their commits forgotten (a
// later reply naming one is a lost write), and the offsets they minted
// remembered, so that a batch stamped below them counts as minted again.
func (c *Checker) cutPartitionLog(l *partitionLog, op uint64) {
	for k := op; k <= uint64(len(l.canon)); k++ {
		e := &l.canon[k-1]
		if e.batch == nil {
			continue
		}
		ref := batchRef{group: l.group, op: k}
		c.messagesCut += e.count
		c.lossBeyondBound(LossCommittedMessages, e.count, "group %d op %d (offsets %d..%d) is gone", l.group, k, e.base, e.base+e.count-1)
		if c.ackedBatches[ref] {
			delete(c.ackedBatches, ref)
			c.lossBeyondBound(LossAckedMessages, e.count, "group %d op %d was acknowledged at offset %d", l.group, k, e.base)
		}
		if first, ok := firstMessageID(e.batch); ok {
			c.batches[first] = removeRef(c.batches[first], ref)
		}
		var p wire.PrepareHeader
		p.Decode(&e.header)
		key := requestKey{p.Client, p.Request}
		c.sends[key] = removeSend(c.sends[key], l.group, k)
	}
	l.offsetsMinted = max(l.offsetsMinted, l.offset)
	l.canon = l.canon[:op-1]
	l.reseeded = true
}

func removeRef(refs []batchRef, ref batchRef) []batchRef {
	out := refs[:0]
	for _, r := range refs {
		if r != ref {
			out = append(out, r)
		}
	}
	return out
}

func removeSend(commits []sendCommit, group, op uint64) []sendCommit {
	out := commits[:0]
	for _, s := range commits {
		if s.group != group || s.op != op {
			out = append(out, s)
		}
	}
	return out
}

// mintedAgain counts the offsets of a batch at [base, base+count) that the
// log had minted before a cut.
func (c *Checker) mintedAgain(l *partitionLog, op, base, count uint64) {
	if base >= l.offsetsMinted {
		return
	}
	again := min(base+count, l.offsetsMinted) - base
	c.lossBeyondBound(LossOffsetsMintedAgain, again, "group %d op %d stamps offsets %d..%d, minted before the loss", l.group, op, base, base+again-1)
}

// sentMessages is the number of messages a SendMessages invocation sent (0
// when its body does not frame a batch).
func sentMessages(inv *invocation) uint32 {
	if inv == nil || len(inv.inv.Body) < 4 {
		return 0
	}
	n := int(binary.LittleEndian.Uint32(inv.inv.Body))
	if n > len(inv.inv.Body)-4 {
		return 0
	}
	b, err := wire.ReadBatchHeader(inv.inv.Body[4+n:])
	if err != nil {
		return 0
	}
	return b.MessageCount
}

// PartitionLogEnds tells the checker, beyond the bound, that partition
// group's converged log ends at op head: the canonical ops above it are
// lost (cutPartitionLog counts them). Within the bound it does nothing:
// the liveness phase requires every committed op applied there.
func (c *Checker) PartitionLogEnds(group, head uint64) {
	l, ok := c.partitions[group]
	if !c.beyondBound || !ok || head >= uint64(len(l.canon)) {
		return
	}
	c.cutPartitionLog(l, head+1)
}
