package diskread

import (
	"fmt"
	"slices"
	"testing"

	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

// replicaGeometry is the reader's geometry of a replica's journal.
func replicaGeometry(cfg replica.Config) Geometry { return geometryOf(cfg.JournalConfig()) }

// TestLayoutMatchesTheReplica: the zones of a replica's device, in the
// order and at the sectors format 2 gives for both profiles, and the
// reader's journal addresses are the layout's chunks.
func TestLayoutMatchesTheReplica(t *testing.T) {
	for _, c := range []struct {
		name    string
		profile replica.Profile
		starts  []uint64 // format 2's table
		total   uint64
	}{
		{"simulation", replica.SimulationProfile(), []uint64{0, 4, 4100, 1056772, 1057284, 1061380, 2109956}, 2118148},
		{"production", replica.ProductionProfile(), []uint64{0, 4, 1028, 16779268, 16795652, 16926724, 2164410372}, 2164934660},
	} {
		cfg := replica.Config{ClusterName: "layout", Replica: 1, ReplicaCount: 3, Profile: c.profile}
		layout := replica.Layout(cfg)
		var names []string
		var starts []uint64
		for i := range layout.ZoneCount() {
			names = append(names, layout.Zone(i).Name)
			starts = append(starts, layout.ZoneStart(i))
		}
		if want := []string{"superblock", "headers", "prepares", "partition-superblocks", "partition-offsets", "partition-segments", "checkpoints"}; !slices.Equal(names, want) {
			t.Fatalf("%s: zones %v, want %v", c.name, names, want)
		}
		if !slices.Equal(starts, c.starts) || layout.Sectors() != c.total {
			t.Fatalf("%s: zones start at %v (%d sectors), the document says %v (%d)", c.name, starts, layout.Sectors(), c.starts, c.total)
		}
		g := replicaGeometry(cfg)
		if g.JournalSectors() != layout.ZoneStart(3) {
			t.Fatalf("%s: journal of %d sectors, the partition zones start at %d", c.name, g.JournalSectors(), layout.ZoneStart(3))
		}
		for i := range 4 {
			if g.superblockCopySector(i) != layout.ChunkStart(0, uint64(i)) {
				t.Fatalf("%s: copy %d", c.name, i)
			}
		}
		for _, k := range []uint64{0, 1, g.SlotCount / 2, g.SlotCount - 1} {
			if g.headerSector(k) != layout.ChunkStart(1, k) || g.prepareSector(k) != layout.ChunkStart(2, k) {
				t.Fatalf("%s: slot %d", c.name, k)
			}
		}
	}
}

// TestCrossCheckSimulationProfile: the reader against the journal on a
// replica's whole simulated device in the simulation profile (4096 slots,
// 128 KiB frames, the partition zones after the journal): appends of large
// frames and state writes, crashes that tear, then every answer compared.
func TestCrossCheckSimulationProfile(t *testing.T) {
	rcfg := replica.Config{ClusterName: "profile", Replica: 2, ReplicaCount: 3, Profile: replica.SimulationProfile()}
	cfg := rcfg.JournalConfig()
	st := newCrossStats()
	for seed := range uint64(4) {
		loop := kernel.NewLoop()
		layout := replica.Layout(rcfg)
		dev := storage.NewSimDevice(loop, kernel.NewStreams(seed), int32(cfg.Replica), storage.Options{
			SectorSize: cfg.SectorSize, Layout: layout, IOsMax: rcfg.DeviceIOsMax(),
			WriteLatency: storage.Latency{MinNs: 2_000, MeanNs: 10_000}, SyncLatency: storage.Latency{MinNs: 5_000, MeanNs: 20_000},
			CrashLostProbability: 0.3, CrashTornProbability: 0.5,
		})
		d := &disk{t: t, loop: loop, dev: dev, cfg: cfg, g: geometryOf(cfg), layout: layout}
		d.format()
		j, _ := d.mustOpen()
		frames := map[uint64][]wire.U128{}
		op := uint64(1)
		for round := range 3 {
			for range 12 {
				f := prepareFrame(cfg.Cluster, op, seed, int(op*9973+seed*31)%(cfg.FrameSizeMax-wire.HeaderSize))
				frames[op] = append(frames[op], identityOf(f))
				j.Append(f, func() {})
				for range int(op % 5) {
					loop.Step()
				}
				op++
			}
			s := j.State()
			s.View++
			s.LogView = s.View
			j.WriteState(s, func() {})
			for range 3 + round*7 {
				loop.Step()
			}
			known := func(op uint64) []wire.U128 { return frames[op] }
			where := fmt.Sprintf("seed %d round %d", seed, round)
			compareSlots(t, d, where, dev.PeekDurable, 1, op+2, known, st)
			compareState(t, d, where, dev.PeekDurable)
			dev.Crash()
			d.drain()
			compareSlots(t, d, where+" after the crash", dev.PeekDurable, 1, op+2, known, st)
			res := crossRecoverStats(t, d, where, dev.PeekDurable, st)
			if res.j == nil {
				t.Fatalf("%s: the journal does not open: %v %v", where, res.err, res.panicked)
			}
			j = res.j
			op = res.r.HeadOp + 1
		}
	}
	if st.classes["clean"] == 0 || st.recoveries != 12 {
		t.Fatalf("compared too little: %+v", st)
	}
	t.Logf("simulation profile: %d slot readings, %d durability answers, %d recoveries; classes %v", st.slots, st.holds, st.recoveries, st.classes)
}
