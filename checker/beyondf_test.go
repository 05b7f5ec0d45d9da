package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
)

// lossOf returns the count of one loss kind beyond the bound.
func lossOf(c *checker.Checker, name string) uint64 {
	for _, l := range c.LossesBeyondBound() {
		if l.Name == name {
			return l.Count
		}
	}
	return 0
}

// TestLossesBeyondTheBound: the same history, a group's acknowledged op 1
// (two messages) replaced after a restart by a new op 1 stamped again at
// offset 0, then a consumer offset stored past the new data, fails the run
// within the memory-loss bound and is counted beyond it, by name: the
// committed and acknowledged messages lost, the offsets minted again, the
// consumer offset ahead, the acknowledged send whose reply came after the
// loss.
func TestLossesBeyondTheBound(t *testing.T) {
	for _, beyond := range []bool{false, true} {
		h := newPartitionHistory(t)
		h.invoke(1, batchOf(1, 2))
		h.invoke(2, batchOf(3))
		h.invoke(3, batchOf(4, 5, 6))
		a, ab := h.prepare(1, batchOf(1, 2), 0, 0)
		b, bb := h.prepare(2, batchOf(3), 2, 0)
		h.commitAll(a, ab)
		h.commitAll(b, bb)
		h.reply(1, 1, 0)
		if beyond {
			h.c.MemoryLostBeyondBound(3, 1)
		}
		for r := range uint8(3) {
			h.c.Crashed(r)
		}
		h.headers = h.headers[:0]
		c, cb := h.prepare(3, batchOf(4, 5, 6), 0, 0) // op 1 again, offsets 0..2 again
		h.commitAll(c, cb)
		if !beyond {
			h.want(checker.CommittedOpReplaced)
			continue
		}
		h.want("")
		h.reply(2, 2, 2) // acknowledged at a commit the loss took
		h.commitOffset(4, 5, nil)
		h.want("")
		for _, w := range []struct {
			name string
			n    uint64
		}{
			{checker.LossCommittedMessages, 3},
			{checker.LossAckedMessages, 3}, // request 1's two, cut; request 2's one, acknowledged after
			{checker.LossOffsetsMintedAgain, 3},
			{checker.LossOffsetAhead, 1},
		} {
			if got := lossOf(h.c, w.name); got != w.n {
				t.Errorf("%s: %d, want %d (all: %v)", w.name, got, w.n, h.c.LossesBeyondBound())
			}
		}
		if got := h.c.PartitionMessages(); got != 6 {
			t.Errorf("%d messages committed, want 6 (3 lost, 3 in the new log)", got)
		}
	}
}

// TestBeyondTheBoundOtherChecksStillFail: beyond the bound a corrupt batch,
// a phantom or a gap in a replica's commits still fail the run.
func TestBeyondTheBoundOtherChecksStillFail(t *testing.T) {
	h := newPartitionHistory(t)
	h.c.MemoryLostBeyondBound(3, 1)
	h.invoke(1, batchOf(1))
	a, ab := h.prepare(1, batchOf(9), 0, 0) // a batch request 1 did not send
	h.commitAll(a, ab)
	h.want(checker.PhantomCommit)
}
