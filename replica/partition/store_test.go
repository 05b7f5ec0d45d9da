package partition

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

type storeRig struct {
	loop *kernel.Loop
	dev  *storage.SimDevice
	cfg  StoreConfig
}

func newStoreRig(t *testing.T, torn float64) *storeRig {
	t.Helper()
	cfg := StoreConfig{Slots: 4, IOsMax: 2, Cluster: wire.ClusterID("store"), Replica: 1, Replicas: 3}
	loop := kernel.NewLoop()
	layout := storage.NewLayout(StoreZone(cfg.Slots))
	dev := storage.NewSimDevice(loop, kernel.NewStreams(9), 1, storage.Options{SectorSize: 512, Layout: layout, IOsMax: 8,
		CrashTornProbability: torn, CrashLostProbability: 1 - torn})
	return &storeRig{loop: loop, dev: dev, cfg: cfg}
}

func (r *storeRig) open(t *testing.T) *Store {
	t.Helper()
	var s *Store
	OpenStore(r.dev, r.cfg, func(st *Store) { s = st })
	for s == nil && r.loop.Step() {
	}
	if s == nil {
		t.Fatal("the store did not open")
	}
	return s
}

func (r *storeRig) write(s *Store, slot int, group uint64, view uint32) *bool {
	done := new(bool)
	s.Write(slot, group, wire.VsrState{View: view, LogView: view, CommitMax: uint64(view)}, view%2 == 0, func() { *done = true })
	return done
}

func (r *storeRig) settle() {
	for r.loop.Step() {
	}
}

// TestStoreRecoversTheLastDoneState: whatever a crash does to the write in
// flight (lost or torn), a reopened store recovers the last state whose done
// ran, or a later one, never an older one; a slot of another group, or one
// never written, recovers nothing.
func TestStoreRecoversTheLastDoneState(t *testing.T) {
	for _, torn := range []float64{0, 1} {
		r := newStoreRig(t, torn)
		s := r.open(t)
		if _, _, ok := s.Recover(0, 7); ok {
			t.Fatal("a blank slot recovered a state")
		}
		for v := uint32(1); v <= 3; v++ {
			done := r.write(s, 0, 7, v)
			r.settle()
			if !*done {
				t.Fatalf("write of view %d never completed", v)
			}
		}
		inFlight := r.write(s, 0, 7, 4)
		r.dev.Crash()
		if *inFlight {
			t.Fatal("the crashed write's done ran")
		}
		s = r.open(t)
		state, held, ok := s.Recover(0, 7)
		if !ok || state.View < 3 || held != (state.View%2 == 0) {
			t.Fatalf("torn=%v: recovered view %d (ok %v), want at least 3, the last done", torn, state.View, ok)
		}
		if _, _, ok := s.Recover(0, 8); ok {
			t.Fatal("another group recovered group 7's state")
		}
		if _, _, ok := s.Recover(1, 7); ok {
			t.Fatal("a slot never written recovered a state")
		}
	}
}

// TestStoreSlotsAreIndependent: writes to several slots are bounded by
// IOsMax and each slot keeps its own group and sequence.
func TestStoreSlotsAreIndependent(t *testing.T) {
	r := newStoreRig(t, 0)
	s := r.open(t)
	var dones []*bool
	for slot := range 4 {
		s.Recover(slot, uint64(10+slot))
		dones = append(dones, r.write(s, slot, uint64(10+slot), uint32(slot+1)))
	}
	if s.Pending() != 4 || r.dev.InFlight() > 2 {
		t.Fatalf("%d pending, %d device I/Os in flight: want 4 pending, at most 2 in flight", s.Pending(), r.dev.InFlight())
	}
	r.settle()
	for slot, d := range dones {
		if !*d {
			t.Fatalf("slot %d's write never completed", slot)
		}
	}
	s = r.open(t)
	for slot := range 4 {
		st, _, ok := s.Recover(slot, uint64(10+slot))
		if !ok || st.View != uint32(slot+1) {
			t.Fatalf("slot %d recovered view %d (ok %v), want %d", slot, st.View, ok, slot+1)
		}
		if !s.Holds(slot, uint64(10+slot)) || s.Tenants(slot) == [SuperblockCopies]uint64{} {
			t.Fatalf("slot %d does not report its tenant", slot)
		}
	}
}
