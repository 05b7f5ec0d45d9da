package diskread

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/transfer"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

// TestCheckpointAreasCrossCheck: what replica/transfer's Store writes, the
// reader reads by format 14.4 (op, identity, timestamp, checksum, payload),
// in the area the store chose; the area a write did not touch keeps the
// checkpoint before it; a flipped byte anywhere in the checkpoint's
// sectors makes the area invalid.
func TestCheckpointAreasCrossCheck(t *testing.T) {
	const sectorBytes, areaSectors = 512, 8
	loop := kernel.NewLoop()
	layout := storage.NewLayout(transfer.Zone(areaSectors))
	dev := storage.NewSimDevice(loop, kernel.NewStreams(7), 0, storage.Options{SectorSize: sectorBytes, Layout: layout, IOsMax: 8,
		ReadLatency: storage.Latency{MinNs: 1_000, MeanNs: 2_000}, WriteLatency: storage.Latency{MinNs: 1_000, MeanNs: 2_000},
		SyncLatency: storage.Latency{MinNs: 1_000, MeanNs: 2_000}})
	cfg := transfer.Config{FirstSector: 0, AreaSectors: areaSectors, SectorSize: sectorBytes}
	zone := CheckpointZone{FirstSector: 0, AreaSectors: areaSectors, SectorSize: sectorBytes}
	store := transfer.NewStore(dev, cfg, -1)
	var written []transfer.Checkpoint
	for op := uint64(4); op <= 16; op += 4 {
		payload := make([]byte, 300+int(op)*50)
		for i := range payload {
			payload[i] = byte(i*7) ^ byte(op)
		}
		cp := transfer.Checkpoint{Op: op, Identity: wire.U128{Lo: op * 11, Hi: 3}, Timestamp: op * 1000, Payload: payload,
			Checksum: wire.SnapshotChecksum(payload)}
		area := -1
		store.Write(cp, func(a int) { area = a })
		for loop.Step() {
		}
		if area < 0 {
			t.Fatalf("op %d: the write did not finish", op)
		}
		store.Adopt(area)
		written = append(written, cp)
		got := ReadCheckpointArea(zone, dev.PeekDurable, area)
		if !got.Valid || got.Op != op || got.Identity != cp.Identity || got.Timestamp != cp.Timestamp || got.Checksum != cp.Checksum ||
			string(got.Payload) != string(payload) {
			t.Fatalf("op %d in area %d: read %+v (%s)", op, area, got, got.Problem)
		}
		if a, _ := FindCheckpoint(zone, dev.PeekDurable, op, cp.Checksum); a != area {
			t.Fatalf("op %d: found in area %d, written to %d", op, a, area)
		}
		if len(written) > 1 {
			prev := written[len(written)-2]
			if a, _ := FindCheckpoint(zone, dev.PeekDurable, prev.Op, prev.Checksum); a != 1-area {
				t.Fatalf("op %d: the checkpoint before it (op %d) is in area %d, want %d", op, prev.Op, a, 1-area)
			}
		}
		// Every sector the checkpoint occupies is covered (the padding
		// after snapshot.bin is not read).
		first, count := zone.Sectors(area, got)
		for k := range count {
			peek := func(sector uint64, buf []byte) {
				dev.PeekDurable(sector, buf)
				for s := range uint64(len(buf) / sectorBytes) {
					if sector+s == first+k {
						buf[s*sectorBytes+uint64(26*(1-min(k, 1)))] ^= 0x10 // a header field, or a stored byte
					}
				}
			}
			if bad := ReadCheckpointArea(zone, peek, area); bad.Valid {
				t.Fatalf("op %d: a flipped byte in sector %d of %d still reads valid", op, k, count)
			}
		}
	}
}
