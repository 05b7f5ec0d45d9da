package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
)

// TestSegmentFlushOverdue: batches a replica committed past the grace that
// reach the bytes threshold must be in its slot's durable log by its next
// commit in the group ("segment flush overdue": issue 26's
// partition/segment.go:374:48:logical, which flushed only once both
// thresholds were reached); flushed, or within the grace, or in a slot a
// fault touched, they pass.
func TestSegmentFlushOverdue(t *testing.T) {
	run := func(flushed, faulted bool, waitNs int64) *checker.Violation {
		h := newPartitionHistory(t)
		f := &fakeSegments{faulted: map[[3]int]bool{}}
		h.c.SetSegments(f)
		h.c.SetSegmentFlush(1024, 100) // bytes first: each batch is over 100 bytes
		h.c.Replica(h.tick(), replica.Event{Kind: replica.EventSegmentRecovered, Replica: 0, PartitionGroup: testGroup,
			Disk: replica.DiskReport{Slot: 0}})
		var committed [][]byte
		base := uint64(0)
		for k, ids := range [][]uint64{{1, 2}, {3}, {4, 5, 6}} {
			if k == 2 {
				h.nowNs += waitNs
			}
			h.invoke(uint64(k+1), batchOf(ids...))
			hd, body := h.prepare(uint64(k+1), batchOf(ids...), base, 0)
			if k == 2 && flushed {
				f.unit(0, 0, testGroup, 0, committed...)
			}
			if k == 2 && faulted {
				f.faulted[[3]int{0, 0, 0}] = true
			}
			h.commit(0, hd, body)
			committed = append(committed, body)
			base += uint64(len(ids))
		}
		return h.c.Violation()
	}
	if v := run(false, false, 40e9); v == nil || v.Name != checker.SegmentFlushOverdue {
		t.Fatalf("two batches over the bytes threshold unwritten 40 s on: %v, want %q", v, checker.SegmentFlushOverdue)
	}
	if v := run(true, false, 40e9); v != nil {
		t.Fatalf("flushed: %v", v)
	}
	if v := run(false, false, 1e9); v != nil {
		t.Fatalf("within the grace: %v", v)
	}
	if v := run(false, true, 40e9); v != nil {
		t.Fatalf("a faulted slot: %v", v)
	}
}
