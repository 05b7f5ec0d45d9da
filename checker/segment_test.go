package checker_test

import (
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// fakeSegments is three replicas' segment zones of two slots, written by
// hand in the format DEVIATIONS.md 53 gives.
type fakeSegments struct {
	slots   [3][2][]byte
	faulted map[[3]int]bool // replica, slot, sector
}

const fakeSlotSectors, fakeSectorBytes = 16, 512

func (f *fakeSegments) Geometry() (int, int, int) { return 2, fakeSlotSectors, fakeSectorBytes }

func (f *fakeSegments) Sector(r uint8, slot, k int) ([]byte, bool) {
	out := make([]byte, fakeSectorBytes)
	for i := range out {
		out[i] = 0xa5 // never written: garbage, not zeros
	}
	if b := f.slots[r][slot]; k*fakeSectorBytes < len(b) {
		copy(out, b[k*fakeSectorBytes:])
	}
	return out, f.faulted[[3]int{int(r), slot, k}]
}

// unit appends a flush unit of group's batches (the first at base) to
// replica r's slot, padded to the next sector.
func (f *fakeSegments) unit(r uint8, slot int, group, base uint64, batches ...[]byte) {
	h := make([]byte, 64)
	binary.LittleEndian.PutUint64(h, 0x3130676573706f76)
	binary.LittleEndian.PutUint64(h[8:], group)
	binary.LittleEndian.PutUint64(h[16:], base)
	size := 0
	for _, b := range batches {
		size += len(b)
	}
	binary.LittleEndian.PutUint64(h[24:], uint64(size))
	binary.LittleEndian.PutUint32(h[32:], uint32(len(batches)))
	var payload []byte
	for _, b := range batches {
		payload = append(payload, b...)
	}
	binary.LittleEndian.PutUint64(h[40:], xxh3.Hash(payload))
	binary.LittleEndian.PutUint64(h[56:], xxh3.Hash(h[:56]))
	u := append(h, payload...)
	for len(u)%fakeSectorBytes != 0 {
		u = append(u, 0)
	}
	f.slots[r][slot] = append(f.slots[r][slot], u...)
}

// segmentHistory commits three batches of testGroup everywhere and returns
// them as committed (stamped).
func segmentHistory(t *testing.T) (*partitionHistory, *fakeSegments, [][]byte) {
	h := newPartitionHistory(t)
	f := &fakeSegments{faulted: map[[3]int]bool{}}
	h.c.SetSegments(f)
	var committed [][]byte
	base := uint64(0)
	for k, ids := range [][]uint64{{1, 2}, {3}, {4, 5, 6}} {
		h.invoke(uint64(k+1), batchOf(ids...))
		hd, body := h.prepare(uint64(k+1), batchOf(ids...), base, 0)
		h.commitAll(hd, body)
		committed = append(committed, body)
		base += uint64(len(ids))
	}
	return h, f, committed
}

// TestSegmentLogsHoldCommittedBatches: logs that hold a prefix of the
// committed batches pass, and complete ones pass the final check; a log
// with a batch that is not the committed one at its offset fails
// ("segment log diverged").
func TestSegmentLogsHoldCommittedBatches(t *testing.T) {
	h, f, b := segmentHistory(t)
	f.unit(0, 0, testGroup, 0, b[0], b[1])
	f.unit(0, 0, testGroup, 3, b[2])
	f.unit(1, 1, testGroup, 0, b[0])
	h.c.CheckSegments(false, nil, nil)
	h.want("")
	h.c.CheckSegments(true, []uint8{0}, []uint64{testGroup})
	h.want("")

	h, f, b = segmentHistory(t)
	f.unit(0, 0, testGroup, 0, b[0])
	// A valid batch at offset 2 that is not the one committed there: the
	// third batch stamped where the second was.
	other := append([]byte(nil), b[2]...)
	wire.StampBatch(other, 0, 2, 1002)
	f.unit(0, 0, testGroup, 2, other)
	h.c.CheckSegments(false, nil, nil)
	h.want(checker.SegmentDiverged)
}

// TestSegmentTornReuseIsNotJudged: a crash that tore the first sector of a
// slot's reuse can leave the old tenant's unit header over the new
// tenant's first batch, which verifies on its own (VOPR long seed 1); the
// unit's payload sum does not match its bytes, so the walk ends there and
// judges none of it. The same unit with its own batch is judged.
func TestSegmentTornReuseIsNotJudged(t *testing.T) {
	h, f, b := segmentHistory(t)
	f.unit(0, 0, testGroup, 0, b[0])
	// Another group's first batch, at offset 0 too, under testGroup's header.
	other := append([]byte(nil), b[1]...)
	wire.StampBatch(other, 0, 0, 2002)
	copy(f.slots[0][0][64:], other)
	for i := 64 + len(other); i < 64+len(b[0]) && i < len(f.slots[0][0]); i++ {
		f.slots[0][0][i] = 0
	}
	h.c.CheckSegments(false, nil, nil)
	h.want("")

	h, f, b = segmentHistory(t)
	f.unit(0, 0, testGroup, 0, other)
	h.c.CheckSegments(false, nil, nil)
	h.want(checker.SegmentDiverged)
}

// TestSegmentLogIncompleteAfterTheFinalFlush: after the final flush a core
// replica whose log stops short of the committed batches fails ("segment
// log incomplete"); a log a fault cut short, or a replica outside the
// core, does not.
func TestSegmentLogIncompleteAfterTheFinalFlush(t *testing.T) {
	h, f, b := segmentHistory(t)
	f.unit(0, 0, testGroup, 0, b[0], b[1])
	f.unit(1, 0, testGroup, 0, b[0], b[1], b[2])
	h.c.CheckSegments(true, []uint8{1}, []uint64{testGroup})
	h.want("")
	h.c.CheckSegments(true, []uint8{0, 1}, []uint64{testGroup})
	h.want(checker.SegmentIncomplete)

	h, f, b = segmentHistory(t)
	f.unit(0, 0, testGroup, 0, b[0], b[1])
	f.unit(0, 0, testGroup, 3, b[2])
	f.faulted[[3]int{0, 0, 1}] = true // the second unit's sector
	h.c.CheckSegments(true, []uint8{0}, []uint64{testGroup})
	h.want("")

	h, f, _ = segmentHistory(t)
	f.faulted[[3]int{0, 1, 0}] = true // a slot whose first sector is hidden
	h.c.CheckSegments(true, []uint8{0}, []uint64{testGroup})
	h.want("")

	h, _, _ = segmentHistory(t)
	h.c.CheckSegments(true, []uint8{2}, []uint64{testGroup})
	h.want(checker.SegmentIncomplete)
}
