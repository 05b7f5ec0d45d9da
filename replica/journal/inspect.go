package journal

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Peek reads len(buf) bytes (whole sectors) from sector into buf at once,
// with no I/O and no faults: a harness looking at a device's durable image.
type Peek func(sector uint64, buf []byte)

// Inspector reads a journal's durable image, as InspectSlot and
// InspectState do, with buffers of its own reused from call to call (a
// checker asks at every frame that promises durability).
type Inspector struct {
	cfg    Config
	geo    geometry
	sector []byte
	first  []byte
	chunk  []byte
}

// NewInspector returns an inspector for the journal of cfg.
func NewInspector(cfg Config) *Inspector {
	cfg.check()
	geo := newGeometry(cfg)
	return &Inspector{cfg: cfg, geo: geo, sector: make([]byte, cfg.SectorSize), first: make([]byte, cfg.SectorSize),
		chunk: make([]byte, int(geo.superblockChunkSectors)*geo.sectorBytes)}
}

// InspectSlot classifies op's slot by the rule Open applies at recovery,
// from bytes peek returns at once: given a device's durable image, what a
// restart now would find there. It is the durability oracle's view of a
// journal (a checker asks it whether an acknowledged prepare is really on
// disk); the replica itself never calls it. A slot beyond the formatted
// extent is classified from the bytes it holds too (Open would not read
// it, and report it Empty): for a slot never written since the device was
// new both say that nothing there was acknowledged.
func InspectSlot(cfg Config, op uint64, peek Peek) SlotReport {
	return NewInspector(cfg).Slot(op, peek)
}

// Slot is InspectSlot with the inspector's buffers.
func (in *Inspector) Slot(op uint64, peek Peek) SlotReport {
	if op == 0 {
		panic("journal: inspect op 0 (ops are 1-based)")
	}
	cfg, geo := in.cfg, in.geo
	slot := op % cfg.SlotCount
	peek(geo.headerSector(slot), in.sector)
	h := parseHeaderSector(cfg, slot, in.sector)

	peek(geo.prepareSector(slot), in.first)
	var p prepareCopy
	switch state, size := peekPrepareChunk(cfg, slot, in.first); state {
	case SectorEmpty, SectorDamaged:
		p = prepareCopy{state: state}
	default:
		buf := make([]byte, geo.paddedBytes(size+sealBytes))
		copy(buf, in.first)
		if len(buf) > len(in.first) {
			peek(geo.prepareSector(slot)+1, buf[len(in.first):])
		}
		p = parsePrepareChunk(cfg, slot, buf, size)
	}
	return classify(&h, &p)
}

// HoldsAcknowledged reports whether the slot, as InspectSlot found it, holds
// op's prepare with identity id and its header copy as an acknowledged one:
// what the journal's done for an Append or a Repair of that prepare
// promises (prepare synced, then header synced).
func (r SlotReport) HoldsAcknowledged(op uint64, id wire.U128) bool {
	return r.Class == ClassClean && r.Op == op && r.Prepare.ID == id && r.HeaderWritten && !r.HeaderRepaired
}

// InspectState returns the superblock state a restart would open with, by
// Open's reading rule, from bytes peek returns at once (see InspectSlot).
func InspectState(cfg Config, peek Peek) (wire.VsrState, error) { return NewInspector(cfg).State(peek) }

// State is InspectState with the inspector's buffers.
func (in *Inspector) State(peek Peek) (wire.VsrState, error) {
	var copies [SuperblockCopies]CopyReport
	for i := range copies {
		peek(in.geo.superblockSector(i), in.chunk)
		copies[i] = decodeSuperblockChunk(in.cfg, in.chunk, nil)
	}
	chosen, err := chooseSuperblock(in.cfg, &copies)
	if err != nil {
		return wire.VsrState{}, fmt.Errorf("journal: inspecting the superblock: %w", err)
	}
	return chosen.State, nil
}
