package partition

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
	"github.com/zeebo/xxh3"
)

type segmentRig struct {
	loop *kernel.Loop
	dev  *storage.SimDevice
	cfg  SegmentConfig
}

func newSegmentRig(t *testing.T, slotSectors int, flushMessages uint64) *segmentRig {
	t.Helper()
	loop := kernel.NewLoop()
	layout := storage.NewLayout(SegmentZone(2, slotSectors))
	dev := storage.NewSimDevice(loop, kernel.NewStreams(13), 1, storage.Options{SectorSize: 512, Layout: layout, IOsMax: 8,
		CrashLostProbability: 1})
	return &segmentRig{loop: loop, dev: dev, cfg: SegmentConfig{Slots: 2, SlotSectors: slotSectors, IOsMax: 2,
		FlushMessages: flushMessages, FlushBytes: FlushBytesIggy}}
}

func (r *segmentRig) open(t *testing.T) *SegmentLog {
	t.Helper()
	var s *SegmentLog
	OpenSegmentLog(r.dev, r.cfg, func(l *SegmentLog) { s = l })
	r.settle()
	if s == nil {
		t.Fatal("the segment log did not open")
	}
	return s
}

func (r *segmentRig) settle() {
	for r.loop.Step() {
	}
}

// segmentBatches returns n stamped batches of partition 0, of 1, 2, ...
// messages with payloads of payloadBytes, the first at offset 0.
func segmentBatches(n, payloadBytes int) [][]byte {
	var out [][]byte
	offset := uint64(0)
	for k := range n {
		msgs := make([]wire.Message, k+1)
		for i := range msgs {
			msgs[i] = wire.Message{ID: wire.U128{Lo: offset + uint64(i) + 1}, Payload: bytes.Repeat([]byte{byte('a' + k)}, payloadBytes)}
		}
		out = append(out, Stamp(wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 1}, msgs), 0, offset, uint64(1000+k)))
		offset += uint64(len(msgs))
	}
	return out
}

func sameBatches(t *testing.T, what string, got, want [][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d batches, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("%s: batch %d differs", what, i)
		}
	}
}

// TestSegmentLogRecoversWhatWasFlushed: batches flushed at the threshold,
// and the rest by Flush, are read back after a reopen, in order and byte
// for byte; the other slot and another group find nothing of them.
func TestSegmentLogRecoversWhatWasFlushed(t *testing.T) {
	for _, flushMessages := range []uint64{1, 3, 1024} {
		t.Run(fmt.Sprint(flushMessages), func(t *testing.T) {
			r := newSegmentRig(t, 64, flushMessages)
			s := r.open(t)
			if got := s.Recover(0, 7); len(got.Batches) != 0 || got.End != 0 {
				t.Fatalf("a blank slot recovered %d batches, end %d", len(got.Batches), got.End)
			}
			batches := segmentBatches(5, 40)
			for _, b := range batches {
				s.Append(0, 1, b)
			}
			flushed := false
			s.Flush(0, func() { flushed = true })
			r.settle()
			if !flushed || s.Busy(0) {
				t.Fatal("the flush did not complete")
			}
			s = r.open(t)
			got := s.Recover(0, 7)
			sameBatches(t, "after the reopen", got.Batches, batches)
			if got.Damaged || got.Kept != len(batches) {
				t.Fatalf("kept %d of %d, damaged %v", got.Kept, len(batches), got.Damaged)
			}
			if other := s.Recover(1, 7); len(other.Batches) != 0 {
				t.Fatal("the other slot recovered batches")
			}
			s = r.open(t)
			if other := s.Recover(0, 8); len(other.Batches) != 0 || other.End != 0 {
				t.Fatal("another group recovered the slot's batches")
			}
		})
	}
}

// TestSegmentLogCrashKeepsWhatWasDurable: a crash loses the flush in
// flight and the batches only buffered; what earlier flushes made durable
// is read back, and writing goes on after it.
func TestSegmentLogCrashKeepsWhatWasDurable(t *testing.T) {
	r := newSegmentRig(t, 64, 2)
	s := r.open(t)
	s.Recover(0, 3)
	batches := segmentBatches(5, 40)
	s.Append(0, 1, batches[0])
	s.Append(0, 1, batches[1]) // 3 messages: flushed
	r.settle()
	s.Append(0, 1, batches[2]) // flushed, then the crash
	for r.dev.InFlight() == 0 && r.loop.Step() {
	}
	r.dev.Crash()
	s = r.open(t)
	got := s.Recover(0, 3)
	sameBatches(t, "after the crash", got.Batches, batches[:2])
	for _, b := range batches[2:] {
		s.Append(0, 1, b)
	}
	s.Flush(0, func() {})
	r.settle()
	s = r.open(t)
	sameBatches(t, "written on after the crash", s.Recover(0, 3).Batches, batches)
}

// TestSegmentLogDamageIsWrittenAgain: a unit whose sector rots ends the
// log there; the batches before it in whole units are kept, and the next
// flush writes the rest over the damage.
func TestSegmentLogDamageIsWrittenAgain(t *testing.T) {
	r := newSegmentRig(t, 64, 1)
	s := r.open(t)
	s.Recover(0, 3)
	batches := segmentBatches(4, 300) // a unit spans sectors
	for _, b := range batches {
		s.Append(0, 1, b)
	}
	r.settle()
	s = r.open(t)
	if got := s.Recover(0, 3); len(got.Batches) != 4 {
		t.Fatalf("before the damage: %d batches", len(got.Batches))
	}
	// The second unit starts at sector 1 (the first, 64 + 556 bytes, takes
	// two sectors): its header rots.
	first := alignUp(SegmentUnitHeaderBytes+uint64(len(batches[0])), 512) / 512
	r.dev.InjectCorruption(first)
	s = r.open(t)
	got := s.Recover(0, 3)
	sameBatches(t, "after the damage", got.Batches, batches[:1])
	if !got.Damaged || got.End != first*512 {
		t.Fatalf("damaged %v, end %d: want damaged, the end at the rotten unit (%d)", got.Damaged, got.End, first*512)
	}
	for _, b := range batches[1:] {
		s.Append(0, 1, b)
	}
	r.settle()
	s = r.open(t)
	sameBatches(t, "written again", s.Recover(0, 3).Batches, batches)
}

// TestSegmentLogStaleUnitsAreNotRead: a slot reused by another group, or
// written again from a damaged unit, holds older units past the new end;
// the walk stops at them (another group's, or an offset that does not
// continue the log).
func TestSegmentLogStaleUnitsAreNotRead(t *testing.T) {
	r := newSegmentRig(t, 64, 1)
	s := r.open(t)
	s.Recover(0, 3)
	old := segmentBatches(4, 20)
	for _, b := range old {
		s.Append(0, 1, b)
	}
	r.settle()
	s = r.open(t)
	s.Recover(0, 4) // the next tenant: one batch, over the first unit
	fresh := segmentBatches(1, 20)
	s.Append(0, 1, fresh[0])
	r.settle()
	s = r.open(t)
	got := s.Recover(0, 4)
	sameBatches(t, "the new tenant", got.Batches, fresh)
}

// TestSegmentLogFull: a log that runs out of room writes what fits and
// keeps the rest in memory (Full); its Flush still completes.
func TestSegmentLogFull(t *testing.T) {
	r := newSegmentRig(t, 4, 1)
	s := r.open(t)
	s.Recover(0, 3)
	batches := segmentBatches(4, 300) // two sectors each
	for _, b := range batches {
		s.Append(0, 1, b)
	}
	flushed := false
	s.Flush(0, func() { flushed = true })
	r.settle()
	if !flushed || !s.Full(0) {
		t.Fatalf("flushed %v, full %v: want both", flushed, s.Full(0))
	}
	s = r.open(t)
	sameBatches(t, "a full log", s.Recover(0, 3).Batches, batches[:2])
}

// TestSegmentLogAppendOutOfOrderPanics: a batch that does not continue the
// log is a bug of the caller.
func TestSegmentLogAppendOutOfOrderPanics(t *testing.T) {
	r := newSegmentRig(t, 64, 1024)
	s := r.open(t)
	s.Recover(0, 3)
	batches := segmentBatches(2, 10)
	defer func() {
		if recover() == nil {
			t.Fatal("an append at the wrong offset did not panic")
		}
	}()
	s.Append(0, 1, batches[1])
}

// TestSegmentLogTornReuseKeepsNothingOfTheUnit: a crash that tears the
// first sector of a slot's reuse can pair the old tenant's unit header with
// the new tenant's first batch, which verifies on its own (VOPR long seed
// 1). The unit's payload sum rejects the pairing: the walk ends there and
// keeps none of its batches as the old tenant's (the slot reads as holding
// nothing of it, and its log is written again from sector 0).
func TestSegmentLogTornReuseKeepsNothingOfTheUnit(t *testing.T) {
	r := newSegmentRig(t, 64, 1)
	s := r.open(t)
	s.Recover(0, 3)
	old := segmentBatches(1, 20)
	s.Append(0, 1, old[0])
	r.settle()
	// The new tenant's first batch, also at offset 0, under group 3's header
	// (the atoms of the old header survived the tear, the rest is new).
	fresh := segmentBatches(2, 19)[0] // shorter: the header's unit bytes cover it and more
	sector := make([]byte, 512)
	encodeSegmentUnit(sector, SegmentUnit{Group: 3, BaseOffset: 0, Bytes: uint64(len(old[0])), Count: 1,
		PayloadSum: xxh3.Hash(old[0])})
	copy(sector[SegmentUnitHeaderBytes:], fresh)
	written := false
	r.dev.Write(0, sector, func(error) { r.dev.Sync(func(error) { written = true }) })
	r.settle()
	if !written {
		t.Fatal("the torn sector was not written")
	}
	if _, err := wire.ReadBatchHeader(fresh); err != nil || wire.VerifyBatch(fresh) != nil {
		t.Fatal("the new tenant's batch must verify on its own for the test to mean anything")
	}
	s = r.open(t)
	got := s.Recover(0, 3)
	if len(got.Batches) != 0 || got.End != 0 {
		t.Fatalf("recovered %d batches (end %d) from a unit whose bytes are another's", len(got.Batches), got.End)
	}
}
