package journal

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
)

// SuperblockCopies is the number of superblock copies: written one after the
// other, each followed by a sync, and read by the rule of chooseSuperblock.
const SuperblockCopies = 4

// Zone names, in layout order. "headers" and "prepares" have SlotCount chunks
// each, chunk k of both belonging to journal slot k, so that a fault atlas can
// link them (storage.AtlasOptions.Linked).
const (
	ZoneSuperblock = "superblock"
	ZoneHeaders    = "headers"
	ZonePrepares   = "prepares"
)

// sealBytes is the size of the sector seal the journal appends to every
// record it stores (a prepare frame, a header copy, an empty marker): XXH3-64
// of the record, covering what the wire checksums leave out (the view field of
// a prepare is outside its identity, wire.md 3.3).
const sealBytes = 8

// slotCountMax bounds SlotCount: a ring far larger than any pipeline is
// a configuration mistake, and the bound keeps the layout arithmetic small.
const slotCountMax = 1 << 20

// headerRunSlotsMax is how many header sectors Open reads in one I/O.
const headerRunSlotsMax = 64

// batchSlotsMax is how many slots' prepare chunks Open reads (and Format
// marks) in one batch of I/Os.
const batchSlotsMax = 64

// FormatExtentSlotsDefault is how many ring slots Format formats, and how
// many more the journal formats each time it first writes beyond them
// (DEVIATIONS.md 42), when Config.FormatExtentSlots is 0: a swarm seed's few
// hundred ops stay in the first extent.
const FormatExtentSlotsDefault = 256

// Config describes one replica's journal and superblock. Every field is
// required; check panics on a value that cannot be meant.
type Config struct {
	// SectorSize is the device's sector size in bytes: a power of two of at
	// least 512 (a header copy and its seal must fit in one sector).
	SectorSize int
	// FirstSector is where the journal's zones start on the device: the
	// first sector of the "superblock" zone. The zones of Zones(cfg) must be
	// laid out there, in that order (0 when they open the device's layout).
	FirstSector uint64
	// SlotCount is the size of the journal ring: op k lives in slot
	// k % SlotCount.
	SlotCount uint64
	// FrameSizeMax is the largest prepare frame (header and body) in bytes,
	// at least wire.HeaderSize and at most wire.MaxFrameSizeDefault.
	FrameSizeMax int
	// AppendsMax bounds the appends and repairs not yet done (in flight or
	// queued behind another write to the same slot); one more panics. The
	// caller keeps its own bound below it.
	AppendsMax int
	// IOsMax bounds the journal's own I/Os in flight on the device; it must
	// be at least AppendsMax+2 (one per append at a time, one for the
	// superblock, one for formatting the next extent of the ring). Open and
	// Format use it as their read and write window.
	// The device's bound must leave room for it.
	IOsMax int
	// FormatExtentSlots is how many slots the ring is formatted by at a
	// time (0: FormatExtentSlotsDefault): Format formats the first extent,
	// and the journal formats the next before it first writes into it.
	FormatExtentSlots uint64
	// StateWritesMax bounds the WriteState calls whose done has not fired
	// yet; one more panics.
	StateWritesMax int
	// Cluster, Replica and ReplicaCount identify the replica; the superblock
	// records them and Open refuses a device that records others.
	Cluster      wire.U128
	Replica      uint8
	ReplicaCount uint8
}

// check panics unless the configuration is usable.
func (cfg Config) check() {
	switch {
	case cfg.SectorSize < 512 || cfg.SectorSize&(cfg.SectorSize-1) != 0:
		panic(fmt.Sprintf("journal: sector size %d, want a power of two >= 512", cfg.SectorSize))
	case cfg.SlotCount == 0 || cfg.SlotCount > slotCountMax:
		panic(fmt.Sprintf("journal: slot count %d, want 1..%d", cfg.SlotCount, slotCountMax))
	case cfg.FrameSizeMax < wire.HeaderSize || cfg.FrameSizeMax > wire.MaxFrameSizeDefault:
		panic(fmt.Sprintf("journal: frame size max %d, want %d..%d", cfg.FrameSizeMax, wire.HeaderSize, wire.MaxFrameSizeDefault))
	case cfg.AppendsMax < 1:
		panic(fmt.Sprintf("journal: appends max %d, want >= 1", cfg.AppendsMax))
	case cfg.IOsMax < cfg.AppendsMax+2:
		panic(fmt.Sprintf("journal: IOs max %d, want >= appends max + 2 = %d", cfg.IOsMax, cfg.AppendsMax+2))
	case cfg.FormatExtentSlots > cfg.SlotCount:
		panic(fmt.Sprintf("journal: format extent of %d slots in a ring of %d", cfg.FormatExtentSlots, cfg.SlotCount))
	case cfg.StateWritesMax < 1:
		panic(fmt.Sprintf("journal: state writes max %d, want >= 1", cfg.StateWritesMax))
	case cfg.ReplicaCount == 0 || cfg.Replica >= cfg.ReplicaCount:
		panic(fmt.Sprintf("journal: replica %d of %d", cfg.Replica, cfg.ReplicaCount))
	}
}

// geometry is where everything lives on the device, in sectors.
type geometry struct {
	sectorBytes            int
	superblockFirst        uint64 // first sector of copy 0
	superblockChunkSectors uint64
	headersFirst           uint64 // header sector of slot 0
	preparesFirst          uint64 // first sector of slot 0's prepare chunk
	prepareChunkSectors    uint64
	endSector              uint64 // one past the journal's last sector
}

func divCeil(a, b uint64) uint64 { return (a + b - 1) / b }

// superblockRecordBytes is the size of the record each copy holds: the wire
// superblock framing around a VsrState payload.
const superblockRecordBytes = wire.SuperblockRecordMin + wire.VsrStateSize

// superblockChunkBytes is what one copy holds before its padding: the
// record and the journal's format trailer.
const superblockChunkBytes = superblockRecordBytes + formatTrailerBytes

// Zones returns the journal's zones, in layout order: the superblock (four
// copies of one chunk each), the header ring (one sector per slot) and the
// prepare ring (one chunk per slot, large enough for FrameSizeMax bytes plus
// the seal). It panics on an invalid configuration.
func Zones(cfg Config) []storage.Zone {
	cfg.check()
	sector := uint64(cfg.SectorSize)
	return []storage.Zone{
		{Name: ZoneSuperblock, ChunkSectors: divCeil(superblockChunkBytes, sector), Chunks: SuperblockCopies},
		{Name: ZoneHeaders, ChunkSectors: 1, Chunks: cfg.SlotCount},
		{Name: ZonePrepares, ChunkSectors: divCeil(uint64(cfg.FrameSizeMax)+sealBytes, sector), Chunks: cfg.SlotCount},
	}
}

// Layout returns a device layout of the journal's zones alone (FirstSector
// must then be 0). A harness that puts more on the device builds its own
// layout with Zones first.
func Layout(cfg Config) *storage.Layout { return storage.NewLayout(Zones(cfg)...) }

func newGeometry(cfg Config) geometry {
	zones := Zones(cfg)
	g := geometry{
		sectorBytes:            cfg.SectorSize,
		superblockFirst:        cfg.FirstSector,
		superblockChunkSectors: zones[0].ChunkSectors,
		prepareChunkSectors:    zones[2].ChunkSectors,
	}
	g.headersFirst = g.superblockFirst + zones[0].Sectors()
	g.preparesFirst = g.headersFirst + zones[1].Sectors()
	g.endSector = g.preparesFirst + zones[2].Sectors()
	return g
}

// checkDevice panics unless dev can hold the journal as configured.
func (g geometry) checkDevice(dev storage.Device) {
	if dev == nil {
		panic("journal: nil device")
	}
	if dev.SectorSize() != g.sectorBytes {
		panic(fmt.Sprintf("journal: device sector size %d, config %d", dev.SectorSize(), g.sectorBytes))
	}
	if dev.Sectors() < g.endSector {
		panic(fmt.Sprintf("journal: device of %d sectors, the journal needs [%d, %d)", dev.Sectors(), g.superblockFirst, g.endSector))
	}
}

func (g geometry) superblockSector(copyIndex int) uint64 {
	if copyIndex < 0 || copyIndex >= SuperblockCopies {
		panic(fmt.Sprintf("journal: superblock copy %d", copyIndex))
	}
	return g.superblockFirst + uint64(copyIndex)*g.superblockChunkSectors
}

func (g geometry) headerSector(slot uint64) uint64 { return g.headersFirst + slot }

func (g geometry) prepareSector(slot uint64) uint64 {
	return g.preparesFirst + slot*g.prepareChunkSectors
}

// paddedBytes rounds n up to whole sectors.
func (g geometry) paddedBytes(n int) int {
	s := g.sectorBytes
	return (n + s - 1) / s * s
}

// formatExtent is the number of slots formatted at a time.
func (cfg Config) formatExtent() uint64 {
	if cfg.FormatExtentSlots == 0 {
		return min(FormatExtentSlotsDefault, cfg.SlotCount)
	}
	return cfg.FormatExtentSlots
}
