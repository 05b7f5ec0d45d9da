package journal

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Peek reads len(buf) bytes (whole sectors) from sector into buf at once,
// with no I/O and no faults: a harness looking at a device's durable image.
type Peek func(sector uint64, buf []byte)

// InspectSlot classifies op's slot by the rule Open applies at recovery,
// from bytes peek returns at once: given a device's durable image, what a
// restart now would find there. It is the durability oracle's view of a
// journal (a checker asks it whether an acknowledged prepare is really on
// disk); the replica itself never calls it.
func InspectSlot(cfg Config, op uint64, peek Peek) SlotReport {
	cfg.check()
	if op == 0 {
		panic("journal: inspect op 0 (ops are 1-based)")
	}
	geo := newGeometry(cfg)
	slot := op % cfg.SlotCount
	sector := make([]byte, cfg.SectorSize)
	peek(geo.headerSector(slot), sector)
	h := parseHeaderSector(cfg, slot, sector)

	first := make([]byte, cfg.SectorSize)
	peek(geo.prepareSector(slot), first)
	var p prepareCopy
	switch state, size := peekPrepareChunk(cfg, slot, first); state {
	case SectorEmpty, SectorDamaged:
		p = prepareCopy{state: state}
	default:
		buf := make([]byte, geo.paddedBytes(size+sealBytes))
		copy(buf, first)
		if len(buf) > len(first) {
			peek(geo.prepareSector(slot)+1, buf[len(first):])
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
func InspectState(cfg Config, peek Peek) (wire.VsrState, error) {
	cfg.check()
	geo := newGeometry(cfg)
	var copies [SuperblockCopies]CopyReport
	for i := range copies {
		buf := make([]byte, int(geo.superblockChunkSectors)*geo.sectorBytes)
		peek(geo.superblockSector(i), buf)
		copies[i] = decodeSuperblockChunk(cfg, buf, nil)
	}
	chosen, err := chooseSuperblock(cfg, &copies)
	if err != nil {
		return wire.VsrState{}, fmt.Errorf("journal: inspecting the superblock: %w", err)
	}
	return chosen.State, nil
}
