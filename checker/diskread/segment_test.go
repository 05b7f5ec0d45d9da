package diskread

import (
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

// TestSegmentLogCrossCheck: what replica/partition's SegmentLog recovers
// from a slot, after flushes and crashes that lose or tear what was in
// flight, the reader walks from the durable image by format 14.3: the
// same group, batches, end, whole units and damage.
func TestSegmentLogCrossCheck(t *testing.T) {
	const sectorBytes, slotSectors, slots = 512, 64, 2
	layout := storage.NewLayout(partition.SegmentZone(slots, slotSectors))
	zone := SegmentZone{FirstSector: 0, Slots: slots, SlotSectors: slotSectors, SectorSize: sectorBytes}
	cfg := partition.SegmentConfig{FirstSector: 0, Slots: slots, SlotSectors: slotSectors, IOsMax: 4, FlushMessages: 3, FlushBytes: 1 << 20}
	compared, damaged := 0, 0
	for seed := range uint64(40) {
		loop := kernel.NewLoop()
		dev := storage.NewSimDevice(loop, kernel.NewStreams(seed), 0, storage.Options{SectorSize: sectorBytes, Layout: layout, IOsMax: 16,
			ReadLatency: storage.Latency{MinNs: 1_000, MeanNs: 2_000}, WriteLatency: storage.Latency{MinNs: 1_000, MeanNs: 5_000},
			SyncLatency: storage.Latency{MinNs: 1_000, MeanNs: 5_000}, AtomBytes: 64, CrashLostProbability: 0.3, CrashTornProbability: 0.4})
		open := func() *partition.SegmentLog {
			var s *partition.SegmentLog
			partition.OpenSegmentLog(dev, cfg, func(x *partition.SegmentLog) { s = x })
			for s == nil && loop.Step() {
			}
			return s
		}
		next := [slots]uint64{}
		for round := range 4 {
			s := open()
			for slot := range slots {
				group := uint64(slot + 1)
				want := ReadSegmentLog(zone, dev.PeekDurable, slot)
				if want.Group != group {
					want = SegmentLog{}
				}
				got := s.Recover(slot, group)
				where := fmt.Sprintf("seed %d round %d slot %d", seed, round, slot)
				if got.Group != want.Group || got.End != want.End || got.Kept != want.Kept || got.Damaged != want.Damaged ||
					len(got.Batches) != len(want.Batches) {
					t.Fatalf("%s: the replica recovered group %d end %d kept %d damaged %v %d batches; the reader %d %d %d %v %d", where,
						got.Group, got.End, got.Kept, got.Damaged, len(got.Batches), want.Group, want.End, want.Kept, want.Damaged, len(want.Batches))
				}
				for i := range got.Batches {
					if string(got.Batches[i]) != string(want.Batches[i]) {
						t.Fatalf("%s: batch %d differs", where, i)
					}
				}
				compared++
				if got.Damaged {
					damaged++
				}
				next[slot] = 0
				for _, b := range got.Batches {
					h, _ := wire.ReadBatchHeader(b)
					next[slot] = h.BaseOffset + uint64(h.MessageCount)
				}
				for k := range 2 + int(seed%5) {
					msgs := []wire.Message{{ID: wire.U128{Lo: next[slot] + 1}, Payload: []byte(fmt.Sprintf("m%d-%d", round, k))}}
					b := wire.EncodeBatch(wire.BatchHeader{}, msgs)
					wire.StampBatch(b, 0, next[slot], 1000+next[slot])
					s.Append(slot, uint64(k+1), b)
					next[slot]++
				}
			}
			// Run a little, then crash with whatever is in flight.
			for range 3 + int(seed%7) {
				loop.Step()
			}
			dev.Crash()
		}
	}
	if compared == 0 || damaged == 0 {
		t.Fatalf("compared %d recoveries, %d damaged: the scenarios are too tame", compared, damaged)
	}
	t.Logf("compared %d recoveries, %d damaged", compared, damaged)
}
