package diskread

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// The checkpoint areas of the metadata plane (format 14.4), read by this
// package's own code: the header sector's fields and seal, then
// snapshot.bin (wire.md 8.2: the payload and its 20-byte trailer).

// CheckpointZone places the two checkpoint areas on a device.
type CheckpointZone struct {
	FirstSector uint64 // the zone's first sector: area 0's header
	AreaSectors uint64 // each area's sectors: the header, then snapshot.bin
	SectorSize  int
}

// CheckpointAreas is how many areas the zone holds.
const CheckpointAreas = 2

const (
	checkpointSeal       uint64 = 0x766f7072636b7031 // "voprckp1"
	checkpointHeaderLen         = 64
	snapshotTrailerMagic uint32 = 0x49534E50 // "PNSI" on disk
	snapshotTrailerLen          = 4 + 16
)

// CheckpointArea is one area as found.
type CheckpointArea struct {
	// Valid: the header verifies, and its stored_len bytes of snapshot.bin
	// carry a trailer that verifies and a payload summing to Checksum.
	Valid     bool
	Op        uint64
	Identity  wire.U128 // the prepare identity of Op
	Timestamp uint64    // that prepare's timestamp
	StoredLen uint64
	Checksum  wire.U128 // XXH3-128 of the payload
	Payload   []byte    // of a valid area
	// Problem says why an area is not valid.
	Problem string
}

// Sectors returns the first sector of area a and how many of its sectors
// the area's checkpoint occupies (the header and the stored_len bytes
// after it; just the header when that does not verify).
func (z CheckpointZone) Sectors(a int, area CheckpointArea) (first, count uint64) {
	first = z.FirstSector + uint64(a)*z.AreaSectors
	count = 1
	if area.StoredLen > 0 && area.StoredLen <= z.storedMax() {
		count += ceilDiv(area.StoredLen, uint64(z.SectorSize))
	}
	return first, count
}

// storedMax is the most snapshot.bin bytes an area holds.
func (z CheckpointZone) storedMax() uint64 { return (z.AreaSectors - 1) * uint64(z.SectorSize) }

// ReadCheckpointArea reads area a (0 or 1) by format 14.4.
func ReadCheckpointArea(z CheckpointZone, peek Peek, a int) CheckpointArea {
	if a < 0 || a >= CheckpointAreas || z.AreaSectors < 2 || z.SectorSize < checkpointHeaderLen {
		panic(fmt.Sprintf("diskread: checkpoint area %d of %+v", a, z))
	}
	first := z.FirstSector + uint64(a)*z.AreaSectors
	h := make([]byte, z.SectorSize)
	peek(first, h)
	le := binary.LittleEndian
	if le.Uint64(h[56:]) != xxh3.HashSeed(h[:56], checkpointSeal) {
		return CheckpointArea{Problem: "header seal"}
	}
	if !zero(h[checkpointHeaderLen:]) {
		return CheckpointArea{Problem: "header padding not zero"}
	}
	area := CheckpointArea{
		Op:        le.Uint64(h[0:]),
		Identity:  wire.U128{Lo: le.Uint64(h[8:]), Hi: le.Uint64(h[16:])},
		Timestamp: le.Uint64(h[24:]),
		StoredLen: le.Uint64(h[32:]),
		Checksum:  wire.U128{Lo: le.Uint64(h[40:]), Hi: le.Uint64(h[48:])},
	}
	if area.StoredLen < snapshotTrailerLen || area.StoredLen > z.storedMax() {
		area.Problem = fmt.Sprintf("stored_len %d, an area holds %d", area.StoredLen, z.storedMax())
		return area
	}
	stored := make([]byte, ceilDiv(area.StoredLen, uint64(z.SectorSize))*uint64(z.SectorSize))
	peek(first+1, stored)
	stored = stored[:area.StoredLen]
	n := len(stored) - snapshotTrailerLen
	payload, trailer := stored[:n], stored[n:]
	sum := xxh3.Hash128(payload)
	sum128 := wire.U128{Lo: sum.Lo, Hi: sum.Hi}
	switch {
	case le.Uint32(trailer) != snapshotTrailerMagic:
		area.Problem = "snapshot.bin trailer magic"
	case (wire.U128{Lo: le.Uint64(trailer[4:]), Hi: le.Uint64(trailer[12:])}) != sum128:
		area.Problem = "snapshot.bin trailer checksum"
	case sum128 != area.Checksum:
		area.Problem = fmt.Sprintf("the payload sums to %s, the header says %s", sum128, area.Checksum)
	default:
		area.Valid, area.Payload = true, payload
	}
	return area
}

// FindCheckpoint applies format 14.4's reading rule: the first area whose
// header verifies with op and checksum and whose snapshot.bin verifies
// and sums to checksum. It returns -1 when neither does.
func FindCheckpoint(z CheckpointZone, peek Peek, op uint64, checksum wire.U128) (int, CheckpointArea) {
	for a := range CheckpointAreas {
		area := ReadCheckpointArea(z, peek, a)
		if area.Valid && area.Op == op && area.Checksum == checksum {
			return a, area
		}
	}
	return -1, CheckpointArea{}
}
