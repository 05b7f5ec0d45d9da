package journal

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
)

// FormatSequence is the superblock sequence Format writes.
const FormatSequence = 1

// Format prepares dev for this replica's journal, as the cluster's creation
// does once: every superblock copy gets the initial state (this replica,
// view 0, log_view 0, commit_max 0, sequence FormatSequence), every header
// sector and the first sector of every prepare chunk get the empty marker of
// their slot, then everything is synced and done runs (with the first device
// error, if any). After Format every sector the journal will read holds a
// valid marker or valid data, so anything else it reads later is damage (a
// never-written sector holds arbitrary bytes, which is why Format exists).
// The rest of each prepare chunk is read only after a valid header says a
// frame extends there, so it is not written. Writes run at most
// Config.IOsMax at once; the header ring goes in runs of sectors.
func Format(dev storage.Device, cfg Config, done func(error)) {
	cfg.check()
	geo := newGeometry(cfg)
	geo.checkDevice(dev)
	if done == nil {
		panic("journal: Format with nil done")
	}
	f := &formatter{dev: dev, cfg: cfg, geo: geo, done: done}
	f.pump()
}

type formatter struct {
	dev  storage.Device
	cfg  Config
	geo  geometry
	done func(error)

	copiesWritten  int    // superblock copies issued
	nextHeaderSlot uint64 // next header run to issue
	nextChunkSlot  uint64 // next prepare chunk to issue
	inFlight       int
	syncing        bool
	err            error
	finished       bool
}

func (f *formatter) pump() {
	for f.err == nil && f.inFlight < f.cfg.IOsMax {
		switch {
		case f.copiesWritten < SuperblockCopies:
			chunk := make([]byte, int(f.geo.superblockChunkSectors)*f.geo.sectorBytes)
			state := wire.VsrState{Cluster: f.cfg.Cluster, ReplicaID: f.cfg.Replica, ReplicaCount: f.cfg.ReplicaCount}
			f.geo.encodeSuperblockChunk(chunk, FormatSequence, state)
			f.write(f.geo.superblockSector(f.copiesWritten), chunk)
			f.copiesWritten++
		case f.nextHeaderSlot < f.cfg.SlotCount:
			n := min(f.cfg.SlotCount-f.nextHeaderSlot, headerRunSlotsMax)
			buf := make([]byte, int(n)*f.geo.sectorBytes)
			for k := range n {
				f.putMarker(buf[int(k)*f.geo.sectorBytes:int(k+1)*f.geo.sectorBytes], markerKindHeader, f.nextHeaderSlot+k)
			}
			f.write(f.geo.headerSector(f.nextHeaderSlot), buf)
			f.nextHeaderSlot += n
		case f.nextChunkSlot < f.cfg.SlotCount:
			buf := make([]byte, f.geo.sectorBytes)
			f.putMarker(buf, markerKindPrepare, f.nextChunkSlot)
			f.write(f.geo.prepareSector(f.nextChunkSlot), buf)
			f.nextChunkSlot++
		default:
			f.finish()
			return
		}
	}
	f.finish()
}

func (f *formatter) putMarker(sector []byte, kind byte, slot uint64) {
	var h wire.Header
	encodeMarker(&h, f.cfg, kind, slot)
	putRecord(sector, h[:])
}

func (f *formatter) write(sector uint64, data []byte) {
	f.inFlight++
	f.dev.Write(sector, data, func(err error) {
		f.inFlight--
		if err != nil && f.err == nil {
			f.err = err
		}
		f.pump()
	})
}

// finish syncs once every write has completed, then runs done.
func (f *formatter) finish() {
	if f.finished || f.syncing || f.inFlight > 0 {
		return
	}
	if f.err != nil {
		f.finished = true
		f.done(fmt.Errorf("journal: format: %w", f.err))
		return
	}
	if f.copiesWritten < SuperblockCopies || f.nextHeaderSlot < f.cfg.SlotCount || f.nextChunkSlot < f.cfg.SlotCount {
		return
	}
	f.syncing = true
	f.dev.Sync(func(err error) {
		f.finished = true
		if err != nil {
			f.done(fmt.Errorf("journal: format: %w", err))
			return
		}
		f.done(nil)
	})
}
