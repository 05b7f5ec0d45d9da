package diskread

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Geometry is what the reader needs to know of a replica's configuration:
// everything the journal's layout and reading rules depend on (format 2 and
// 3). For a replica, take it from its journal configuration
// (replica.Config.JournalConfig): FirstSector 0, SlotCount the profile's
// JournalSlots, FrameSizeMax its FrameSizeMax.
type Geometry struct {
	// SectorSize is the device's sector size in bytes: a power of two of at
	// least 512.
	SectorSize int
	// FirstSector is the first sector of the journal's superblock zone (0
	// on a replica's device, whose layout opens with the journal).
	FirstSector uint64
	// SlotCount is the journal ring's size: op k lives in slot k % SlotCount.
	SlotCount uint64
	// FrameSizeMax is the largest prepare frame in bytes: it sizes the
	// prepare chunks and bounds a valid header's size field.
	FrameSizeMax int
	// Cluster, Replica and ReplicaCount identify the replica: the markers
	// and the superblock name them.
	Cluster      wire.U128
	Replica      uint8
	ReplicaCount uint8
}

// Peek reads durable bytes: it fills buf (a multiple of the sector size)
// with the sectors from sector on.
type Peek func(sector uint64, buf []byte)

// Bounds of a geometry (format 2: the journal's Config.check).
const (
	slotCountMax  = 1 << 20
	frameSizeMax  = wire.MaxFrameSizeDefault
	sectorSizeMin = 512
)

// sealBytes is a journal record's seal (format 4.1); superblockCopies the
// superblock's copies (format 10).
const (
	sealBytes        = 8
	superblockCopies = 4
)

// check panics unless g is a geometry the journal could have: a reader
// given a wrong one would answer about bytes that are not the journal's.
func (g Geometry) check() {
	switch {
	case g.SectorSize < sectorSizeMin || g.SectorSize&(g.SectorSize-1) != 0:
		panic(fmt.Sprintf("diskread: sector size %d, want a power of two >= %d", g.SectorSize, sectorSizeMin))
	case g.SlotCount == 0 || g.SlotCount > slotCountMax:
		panic(fmt.Sprintf("diskread: slot count %d, want 1..%d", g.SlotCount, slotCountMax))
	case g.FrameSizeMax < wire.HeaderSize || g.FrameSizeMax > frameSizeMax:
		panic(fmt.Sprintf("diskread: frame size max %d, want %d..%d", g.FrameSizeMax, wire.HeaderSize, frameSizeMax))
	case g.ReplicaCount == 0 || g.Replica >= g.ReplicaCount:
		panic(fmt.Sprintf("diskread: replica %d of %d", g.Replica, g.ReplicaCount))
	}
}

// ceilDiv returns a/b rounded up.
func ceilDiv(a, b uint64) uint64 { return (a + b - 1) / b }

// superblockChunkSectors is B of format 2: a copy's 102-byte record and
// 288-byte trailer, in whole sectors.
func (g Geometry) superblockChunkSectors() uint64 {
	return ceilDiv(superblockRecordBytes+trailerBytes, uint64(g.SectorSize))
}

// prepareChunkSectors is C of format 2: a largest frame and its seal.
func (g Geometry) prepareChunkSectors() uint64 {
	return ceilDiv(uint64(g.FrameSizeMax)+sealBytes, uint64(g.SectorSize))
}

// superblockCopySector returns the first sector of superblock copy i.
func (g Geometry) superblockCopySector(i int) uint64 {
	return g.FirstSector + uint64(i)*g.superblockChunkSectors()
}

// headerSector returns the header sector of slot k.
func (g Geometry) headerSector(k uint64) uint64 {
	return g.FirstSector + superblockCopies*g.superblockChunkSectors() + k
}

// prepareSector returns the first sector of slot k's prepare chunk.
func (g Geometry) prepareSector(k uint64) uint64 {
	return g.headerSector(g.SlotCount) + k*g.prepareChunkSectors()
}

// JournalSectors returns how many sectors the journal's three zones take
// from FirstSector: what follows them on a replica's device starts at
// FirstSector + JournalSectors().
func (g Geometry) JournalSectors() uint64 {
	g.check()
	return g.prepareSector(g.SlotCount) - g.FirstSector
}

// padded rounds n bytes up to whole sectors.
func (g Geometry) padded(n int) int { return (n + g.SectorSize - 1) / g.SectorSize * g.SectorSize }
