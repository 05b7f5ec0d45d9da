package checker_test

import (
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
)

// pollRequest is a PollMessages body (client-ops.md 5.28): consumer 1,
// stream 1, topic 2, partition 0, then the strategy, its value and count.
func pollRequest(strategy uint8, value uint64, count uint32) []byte {
	b := []byte{1, 1, 4, 1, 0, 0, 0, 1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 1, 0, 0, 0, 0, strategy}
	b = binary.LittleEndian.AppendUint64(b, value)
	b = binary.LittleEndian.AppendUint32(b, count)
	return append(b, 0)
}

// TestPollMisserved: a poll reply holds the whole batches its strategy
// selects from the serving replica's committed prefix (ending at the reply's
// current offset), until count messages are covered: not fewer, not from
// another start (issue 26: the Poll mutants that returned nothing, or read
// from offset 0 whatever the strategy, passed every check that a reply's
// records are committed and consecutive). Three ops of two messages each:
// offsets 0-1, 2-3, 4-5, stamped 1001, 1002, 1003.
func TestPollMisserved(t *testing.T) {
	setup := func(t *testing.T) (*partitionHistory, [3][]byte) {
		h := newPartitionHistory(t)
		h.c.SetFrameSizeMax(1 << 20)
		var stamped [3][]byte
		for i := range uint64(3) {
			batch := batchOf(10*i+1, 10*i+2)
			h.invoke(i+1, batch)
			hd, b := h.prepare(i+1, batch, 2*i, 0)
			h.commitAll(hd, b)
			stamped[i] = b
		}
		return h, stamped
	}
	for _, tc := range []struct {
		name    string
		request []byte
		current uint64
		records []int // indexes of the batches replied
		want    string
	}{
		{"first, count covered", pollRequest(3, 0, 3), 5, []int{0, 1}, ""},
		{"first, one batch short", pollRequest(3, 0, 3), 5, []int{0}, checker.PollMisserved},
		{"first, nothing", pollRequest(3, 0, 3), 5, nil, checker.PollMisserved},
		{"first, stale replica", pollRequest(3, 0, 9), 3, []int{0, 1}, ""},
		{"offset inside a batch", pollRequest(1, 3, 1), 5, []int{1}, ""},
		{"offset, from the start instead", pollRequest(1, 3, 1), 5, []int{0, 1}, checker.PollMisserved},
		{"offset past the end", pollRequest(1, 6, 4), 5, nil, ""},
		{"last", pollRequest(4, 0, 2), 5, []int{2}, ""},
		{"last, nothing", pollRequest(4, 0, 2), 5, nil, checker.PollMisserved},
		{"timestamp", pollRequest(2, 1002, 4), 5, []int{1, 2}, ""},
		{"timestamp, from the start", pollRequest(2, 1002, 4), 5, []int{0, 1}, checker.PollMisserved},
		{"count 0", pollRequest(3, 0, 0), 5, nil, ""},
		{"next is not judged here", pollRequest(5, 0, 3), 5, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, stamped := setup(t)
			var records [][]byte
			for _, i := range tc.records {
				records = append(records, stamped[i])
			}
			h.servedPollOf(10, testGroup, tc.request, pollBody(tc.current, records...))
			h.want(tc.want)
		})
	}
}
