package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestSegmentMisreadAtRecovery: the first build on a slot after a restart
// recovers what the checker's walk of the slot finds for its group (issue
// 26: segment.go:174, every slot read as unreadable; :223, the first unit
// refused; :264, every whole unit taken as damaged; :310, payload_sum read
// a byte early); a later build on the slot finds nothing; a fault on the
// walk's sectors excuses it; after a crash the slot is read again.
func TestSegmentMisreadAtRecovery(t *testing.T) {
	stamped := func(base uint64, ids ...uint64) []byte {
		b := batchOf(ids...)
		wire.StampBatch(b, 0, base, 1000+base)
		return b
	}
	b0, b1, b2 := stamped(0, 1, 2), stamped(2, 3), stamped(3, 4, 5)
	var second, end int // where the second unit starts, and where the third would
	setup := func(t *testing.T) (*partitionHistory, *fakeImages) {
		h, img := newPartitionHistory(t), newFakeImages(3)
		h.c.SetArtifacts(img)
		second = img.segmentUnit(1, 1, 0, testGroup, 0, b0, b1)
		end = img.segmentUnit(1, 1, second, testGroup, 3, b2)
		return h, img
	}
	setup(t)
	whole := partition.SegmentRecovery{Group: testGroup, Batches: [][]byte{b0, b1, b2}, End: uint64(end), Kept: 3}
	recovered := func(h *partitionHistory, slot int, group uint64, seg partition.SegmentRecovery) {
		h.c.Replica(h.tick(), replica.Event{Kind: replica.EventSegmentRecovered, Replica: 1, PartitionGroup: group,
			Disk: replica.DiskReport{Slot: slot, Segment: seg}})
	}
	for _, tc := range []struct {
		name string
		run  func(h *partitionHistory, img *fakeImages)
		want string
	}{
		{"the whole log", func(h *partitionHistory, _ *fakeImages) { recovered(h, 1, testGroup, whole) }, ""},
		{"another group's build finds nothing", func(h *partitionHistory, _ *fakeImages) {
			recovered(h, 1, testGroup+1, partition.SegmentRecovery{})
		}, ""},
		{"nothing recovered", func(h *partitionHistory, _ *fakeImages) {
			recovered(h, 1, testGroup, partition.SegmentRecovery{})
		}, checker.SegmentMisread},
		{"whole units taken as damaged", func(h *partitionHistory, _ *fakeImages) {
			recovered(h, 1, testGroup, partition.SegmentRecovery{Group: testGroup, Batches: [][]byte{b0, b1}, Damaged: true})
		}, checker.SegmentMisread},
		{"a batch of other bytes", func(h *partitionHistory, _ *fakeImages) {
			seg := whole
			seg.Batches = [][]byte{b0, b1, stamped(3, 4, 6)}
			recovered(h, 1, testGroup, seg)
		}, checker.SegmentMisread},
		{"a later build on the slot finds nothing", func(h *partitionHistory, _ *fakeImages) {
			recovered(h, 1, testGroup, whole)
			recovered(h, 1, testGroup, partition.SegmentRecovery{})
		}, ""},
		{"read again after a crash", func(h *partitionHistory, _ *fakeImages) {
			recovered(h, 1, testGroup, whole)
			h.c.Crashed(1)
			recovered(h, 1, testGroup, partition.SegmentRecovery{})
		}, checker.SegmentMisread},
		{"a faulted sector excuses", func(h *partitionHistory, img *fakeImages) {
			img.faulted[1][imgSegmentsFirst+uint64(imgSegmentSlotBytes+second)/imgSectorBytes] = true // slot 1, the second unit
			recovered(h, 1, testGroup, partition.SegmentRecovery{Group: testGroup, Batches: [][]byte{b0, b1}, End: uint64(second), Kept: 2, Damaged: true})
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, img := setup(t)
			tc.run(h, img)
			h.want(tc.want)
		})
	}
}
