package replica

import (
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/replica/bus"
	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

type nopPeers struct{}

func (nopPeers) Dial(peer uint8) bus.ConnID           { return 1 }
func (nopPeers) Send(c bus.ConnID, frame []byte) bool { return true }
func (nopPeers) Close(c bus.ConnID)                   {}
func (nopPeers) InFlight(c bus.ConnID) int            { return 0 }

type nopClients struct{}

func (nopClients) Send(c ConnID, frame []byte) bool { return true }
func (nopClients) Close(c ConnID)                   {}

type recordSink struct{ events []Event }

func (s *recordSink) Event(e Event) { s.events = append(s.events, e) }

// openAfterDamage formats a replica, damages both copies of slot 1 (header
// sector and prepare chunk) so that Open finds it Faulty, and opens it.
func openAfterDamage(t *testing.T, fresh bool) *Replica {
	t.Helper()
	cfg := Config{ClusterName: "test", Replica: 1, ReplicaCount: 3, Profile: SimulationProfile()}
	cfg.Profile.JournalSlots, cfg.CheckpointInterval = 64, 32
	loop := kernel.NewLoop()
	layout := Layout(cfg)
	dev := storage.NewSimDevice(loop, kernel.NewStreams(1), 1, storage.Options{SectorSize: cfg.Profile.SectorSize,
		Layout: layout, IOsMax: cfg.DeviceIOsMax()})
	formatted := false
	Format(cfg, dev, func(err error) {
		if err != nil {
			t.Fatal(err)
		}
		formatted = true
	})
	for loop.Step() {
	}
	if !formatted {
		t.Fatal("format did not finish")
	}
	headers := layout.ZoneStart(layout.ZoneIndex(journal.ZoneHeaders))
	prepares := layout.ChunkStart(layout.ZoneIndex(journal.ZonePrepares), 1)
	dev.InjectLatent(headers + 1)
	dev.InjectLatent(prepares)
	var r *Replica
	Open(cfg, Env{Peers: nopPeers{}, Clients: nopClients{}, Device: dev, Sink: &recordSink{},
		Rand: rand.New(rand.NewPCG(1, 2)), RealtimeUs: func() uint64 { return 1 }}, fresh, func(rr *Replica, err error) {
		if err != nil {
			t.Fatal(err)
		}
		r = rr
	})
	for r == nil && loop.Step() {
	}
	if r == nil {
		t.Fatal("open did not finish")
	}
	return r
}

// TestFreshReplicaIgnoresUnreadableSlots scripts seed 235 of the cluster
// runs: a slot unreadable at a fresh replica's first boot made it start
// Normal with head op 1 and no header for it. A fresh replica has prepared
// nothing; a restarted one must not nack the unreadable op.
func TestFreshReplicaIgnoresUnreadableSlots(t *testing.T) {
	r := openAfterDamage(t, true)
	if g := r.Metadata(); g.Status() != vsr.StatusNormal || g.Op() != 0 {
		t.Fatalf("fresh replica: status %v op %d, want normal at op 0", g.Status(), g.Op())
	}
	r = openAfterDamage(t, false)
	if g := r.Metadata(); g.Status() != vsr.StatusRecovering || g.Op() != 1 {
		t.Fatalf("restarted replica: status %v op %d, want recovering with the unreadable op 1 as head", g.Status(), g.Op())
	}
}
