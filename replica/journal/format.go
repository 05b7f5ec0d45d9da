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
// view 0, log_view 0, commit_max 0, sequence FormatSequence) with the first
// InitialFormattedSlots(cfg) slots recorded as formatted, the header sector
// and the first sector of the prepare chunk of each of those slots get the
// empty marker of their slot, then everything is synced and done runs (with
// the first device error, if any). After Format every sector the journal
// will read holds a valid marker or valid data, so anything else it reads
// later is damage (a never-written sector holds arbitrary bytes, which is
// why Format exists). The rest of the ring is formatted the same way, an
// extent at a time, before the journal first writes to it (DEVIATIONS.md
// 42), and Open reads only the formatted slots. The rest of each prepare
// chunk is read only after a valid header says a frame extends there, so it
// is not written. Writes run at most Config.IOsMax at once, the markers in
// batches (storage.Device.WriteBatch).
func Format(dev storage.Device, cfg Config, done func(error)) {
	cfg.check()
	geo := newGeometry(cfg)
	geo.checkDevice(dev)
	if done == nil {
		panic("journal: Format with nil done")
	}
	f := &formatter{dev: dev, cfg: cfg, geo: geo, done: done, formatted: InitialFormattedSlots(cfg)}
	f.pump()
}

// InitialFormattedSlots is how many ring slots Format formats: one extent.
func InitialFormattedSlots(cfg Config) uint64 { return cfg.formatExtent() }

type formatter struct {
	dev       storage.Device
	cfg       Config
	geo       geometry
	done      func(error)
	formatted uint64 // slots [0, formatted) get markers

	copiesWritten int    // superblock copies issued
	nextSlot      uint64 // next slot whose markers to issue
	inFlight      int
	syncing       bool
	err           error
	finished      bool
}

func (f *formatter) pump() {
	for f.err == nil && f.inFlight < f.cfg.IOsMax {
		switch {
		case f.copiesWritten < SuperblockCopies:
			chunk := make([]byte, int(f.geo.superblockChunkSectors)*f.geo.sectorBytes)
			state := wire.VsrState{Cluster: f.cfg.Cluster, ReplicaID: f.cfg.Replica, ReplicaCount: f.cfg.ReplicaCount}
			f.geo.encodeSuperblockChunk(chunk, FormatSequence, state, f.formatted, LogHead{})
			f.write(f.geo.superblockSector(f.copiesWritten), chunk)
			f.copiesWritten++
		case f.nextSlot < f.formatted:
			n := min(f.formatted-f.nextSlot, batchSlotsMax)
			f.writeBatch(markerExtents(f.cfg, f.geo, f.nextSlot, f.nextSlot+n))
			f.nextSlot += n
		default:
			f.finish()
			return
		}
	}
	f.finish()
}

// markerExtents returns the writes that format slots [from, to): the empty
// marker of each slot in its header sector (one extent for the run) and in
// the first sector of its prepare chunk (one extent each).
func markerExtents(cfg Config, geo geometry, from, to uint64) []storage.Extent {
	n := int(to - from)
	sector := geo.sectorBytes
	buf := make([]byte, 2*n*sector)
	headers, prepares := buf[:n*sector], buf[n*sector:]
	extents := make([]storage.Extent, 0, n+1)
	extents = append(extents, storage.Extent{Sector: geo.headerSector(from), Buf: headers})
	var h wire.Header
	for k := range n {
		slot := from + uint64(k)
		encodeMarker(&h, cfg, markerKindHeader, slot)
		putRecord(headers[k*sector:(k+1)*sector], h[:])
		p := prepares[k*sector : (k+1)*sector]
		encodeMarker(&h, cfg, markerKindPrepare, slot)
		putRecord(p, h[:])
		extents = append(extents, storage.Extent{Sector: geo.prepareSector(slot), Buf: p})
	}
	return extents
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

// writeBatch writes a batch of markers.
func (f *formatter) writeBatch(extents []storage.Extent) {
	f.inFlight++
	f.dev.WriteBatch(extents, func(err error) {
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
	if f.copiesWritten < SuperblockCopies || f.nextSlot < f.formatted {
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
