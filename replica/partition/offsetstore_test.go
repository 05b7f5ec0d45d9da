package partition

import (
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

type offsetRig struct {
	loop *kernel.Loop
	dev  *storage.SimDevice
}

func newOffsetRig(t *testing.T, torn float64) *offsetRig {
	t.Helper()
	loop := kernel.NewLoop()
	layout := storage.NewLayout(OffsetZone(2))
	dev := storage.NewSimDevice(loop, kernel.NewStreams(11), 1, storage.Options{SectorSize: 512, Layout: layout, IOsMax: 8,
		CrashTornProbability: torn, CrashLostProbability: 1 - torn})
	return &offsetRig{loop: loop, dev: dev}
}

func (r *offsetRig) open(t *testing.T) *OffsetStore {
	t.Helper()
	var s *OffsetStore
	OpenOffsetStore(r.dev, 0, 2, 2, func(st *OffsetStore) { s = st })
	for s == nil && r.loop.Step() {
	}
	if s == nil {
		t.Fatal("the offset store did not open")
	}
	return s
}

func (r *offsetRig) settle() {
	for r.loop.Step() {
	}
}

// copySector is where copy c of record i of slot lives.
func copySector(slot, i, c int) uint64 {
	return uint64((slot*OffsetRecordsPerSlot+i)*offsetRecordCopies + c)
}

// TestOffsetStoreRecoversTheLastDone: every consumer's last durable offset,
// or its deletion, survives a reopen; a crash during a write recovers the
// last done value or the new one, never an older one; another group in the
// slot recovers nothing of this one's.
func TestOffsetStoreRecoversTheLastDone(t *testing.T) {
	for _, torn := range []float64{0, 1} {
		r := newOffsetRig(t, torn)
		s := r.open(t)
		if got, _ := s.Recover(0, 7); len(got) != 0 {
			t.Fatalf("a blank slot recovered %v", got)
		}
		done := 0
		for k, w := range []struct {
			consumer uint32
			offset   uint64
			deleted  bool
		}{{1, 5, false}, {2, 9, false}, {1, 6, false}, {3, 1, false}, {3, 0, true}} {
			if !s.Write(0, 7, w.consumer, w.offset, w.deleted, func() { done++ }) {
				t.Fatalf("write %d refused", k)
			}
			r.settle()
		}
		if done != 5 {
			t.Fatalf("%d dones ran, want 5", done)
		}
		s.Write(0, 7, 2, 10, false, func() { t.Fatal("a crashed write's done ran") })
		r.dev.Crash()
		s = r.open(t)
		got, found := s.Recover(0, 7)
		if got[1] != 6 || (got[2] != 9 && got[2] != 10) || len(got) != 2 || found.Corrupt != 0 {
			t.Fatalf("torn=%v: recovered %v (%+v), want 1 at 6, 2 at 9 or 10, 3 deleted", torn, got, found)
		}
		if other, _ := s.Recover(0, 8); len(other) != 0 {
			t.Fatalf("group 8 recovered group 7's offsets %v", other)
		}
	}
}

// TestOffsetStoreTellsTornFromCorrupt: a record with one copy damaged keeps
// the intact copy (torn); one with both copies damaged is lost (corrupt);
// Recover counts each.
func TestOffsetStoreTellsTornFromCorrupt(t *testing.T) {
	r := newOffsetRig(t, 0)
	s := r.open(t)
	s.Recover(1, 7)
	for _, offset := range []uint64{3, 4} { // consumer 1: both copies written, 4 the newer (copy 0)
		s.Write(1, 7, 1, offset, false, func() {})
		r.settle()
	}
	s.Write(1, 7, 2, 8, false, func() {}) // consumer 2: copy 1 only
	r.settle()
	r.dev.InjectCorruption(copySector(1, 0, 0)) // consumer 1's newer copy
	r.dev.InjectCorruption(copySector(1, 1, 1)) // consumer 2's only copy
	s = r.open(t)
	got, found := s.Recover(1, 7)
	if got[1] != 3 || len(got) != 1 || found.Torn != 1 || found.Corrupt != 1 {
		t.Fatalf("recovered %v, found %+v: want consumer 1 at its older 3 (torn), consumer 2 lost (corrupt)", got, found)
	}
}

// TestOffsetStoreCoalescesAndBounds: writes to one record while one is in
// flight coalesce into the latest, every done runs; a slot keeps at most
// OffsetRecordsPerSlot consumers.
func TestOffsetStoreCoalescesAndBounds(t *testing.T) {
	r := newOffsetRig(t, 0)
	s := r.open(t)
	s.Recover(0, 7)
	done := 0
	for offset := uint64(1); offset <= 4; offset++ {
		s.Write(0, 7, 1, offset, false, func() { done++ })
	}
	r.settle()
	if done != 4 {
		t.Fatalf("%d dones, want 4", done)
	}
	for c := uint32(2); c <= OffsetRecordsPerSlot; c++ {
		if !s.Write(0, 7, c, 1, false, func() {}) {
			t.Fatalf("consumer %d refused with room left", c)
		}
	}
	if s.Write(0, 7, OffsetRecordsPerSlot+1, 1, false, func() {}) {
		t.Fatal("a consumer beyond the slot's records was accepted")
	}
	r.settle()
	s = r.open(t)
	if got, _ := s.Recover(0, 7); got[1] != 4 || len(got) != OffsetRecordsPerSlot {
		t.Fatalf("recovered %v, want consumer 1 at 4 and %d consumers", got, OffsetRecordsPerSlot)
	}
}
