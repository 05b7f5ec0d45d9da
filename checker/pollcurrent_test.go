package checker_test

import (
	"math"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// servedPoll invokes request req as a PollMessages with no body, reports
// that replica 0 served it from group (EventPoll), and completes it with
// body.
func (h *partitionHistory) servedPoll(req, group uint64, body []byte) {
	h.servedPollOf(req, group, nil, body)
}

// servedPollOf is servedPoll with the request's body.
func (h *partitionHistory) servedPollOf(req, group uint64, request, reply []byte) {
	h.c.Invoke(workload.Invocation{Client: 0, ClientID: wire.U128{Lo: 1}, Session: 1, Request: req,
		Operation: wire.OperationNonReplicated, Code: 100, Body: request, AtNs: h.tick()})
	h.c.Replica(h.tick(), replica.Event{Kind: replica.EventPoll, Replica: 0, Client: wire.U128{Lo: 1}, Request: req, PartitionGroup: group})
	x := wire.ReplyHeader{Client: wire.U128{Lo: 1}, Op: 1, Request: req, Operation: wire.OperationNonReplicated}
	h.c.Complete(workload.Completion{Client: 0, ClientID: wire.U128{Lo: 1}, Request: req, Kind: workload.Replied,
		Frame: wire.BuildFrame(&x, reply), AtNs: h.tick()})
}

// TestPollCurrentOffset: a poll's current offset is the partition's last
// committed offset, 0 while it is empty; one beyond every offset the log
// minted (1 or 2^64-1 for an empty partition, the mutants of poll.go's
// current) is named.
func TestPollCurrentOffset(t *testing.T) {
	withThree := func(t *testing.T) *partitionHistory {
		h := newPartitionHistory(t)
		h.invoke(1, batchOf(1, 2, 3))
		hd, b := h.prepare(1, batchOf(1, 2, 3), 0, 0)
		h.commitAll(hd, b)
		return h
	}
	t.Run("an empty partition's current offset is 0", func(t *testing.T) {
		h := newPartitionHistory(t)
		h.servedPoll(10, testGroup, pollBody(0))
		h.servedPoll(11, testGroup+1, pollBody(0))
		h.want("")
	})
	for _, current := range []uint64{1, math.MaxUint64} {
		h := newPartitionHistory(t)
		h.servedPoll(10, testGroup, pollBody(current))
		h.want(checker.PollCurrentAhead)
	}
	t.Run("a stale or current offset of a log passes", func(t *testing.T) {
		h := withThree(t)
		h.servedPoll(10, testGroup, pollBody(0))
		h.servedPoll(11, testGroup, pollBody(2))
		h.want("")
	})
	t.Run("an offset the log never minted is named", func(t *testing.T) {
		h := withThree(t)
		h.servedPoll(10, testGroup, pollBody(3))
		h.want(checker.PollCurrentAhead)
	})
	t.Run("a poll no replica reported serving is not judged", func(t *testing.T) {
		h := newPartitionHistory(t)
		h.poll(10, pollBody(7))
		h.want("")
	})
}
