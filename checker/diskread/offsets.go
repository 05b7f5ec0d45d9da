package diskread

import (
	"encoding/binary"

	"github.com/zeebo/xxh3"
)

// The consumer offset records of the partition planes (format 14.2), read
// by this package's own code.

// OffsetZone places the partition-offsets zone on a device.
type OffsetZone struct {
	FirstSector uint64
	Slots       int // partition superblock slots
	SectorSize  int
}

// Offset records per slot, and copies per record (format 14.2).
const (
	OffsetRecordsPerSlot = 8
	offsetCopies         = 2
)

const (
	offsetMagic      uint64 = 0x3130666f66706f76 // "vopfof01" on disk
	offsetHashedLen         = 40                 // magic .. sequence
	offsetRecordLen         = 48                 // then the hash; zeros after it
	offsetFlagDelete uint32 = 1
)

// OffsetCopy is one copy of a record as found.
type OffsetCopy struct {
	// Ours: the sector begins with the record magic (written by the
	// replica, whole or not; a sector never written holds garbage).
	Ours bool
	// Valid: the magic, the hash, zero padding, no flag but deleted.
	Valid    bool
	Group    uint64
	Consumer uint32
	Deleted  bool
	Offset   uint64
	Sequence uint64
}

// OffsetRecord is what one record says of one group (format 14.2's
// reading rule): its valid copy of the group with the highest sequence, if
// any, and whether the record is torn (that copy beside a damaged one) or
// corrupt (no valid copy of the group, a damaged copy of ours, and no valid
// copy of another group).
type OffsetRecord struct {
	Held    bool // a valid copy of the group stands
	Copy    OffsetCopy
	Torn    bool
	Corrupt bool
	// First is the record's first sector; its copies are First and
	// First+1.
	First uint64
}

// RecordSector returns the first sector of record i of slot (its two
// copies are that sector and the next).
func (z OffsetZone) RecordSector(slot, i int) uint64 {
	return z.FirstSector + uint64((slot*OffsetRecordsPerSlot+i)*offsetCopies)
}

// ReadOffsetCopy judges one copy's sector.
func ReadOffsetCopy(b []byte) OffsetCopy {
	le := binary.LittleEndian
	c := OffsetCopy{Ours: len(b) >= 8 && le.Uint64(b) == offsetMagic}
	if !c.Ours || len(b) < offsetRecordLen || le.Uint64(b[offsetHashedLen:]) != xxh3.Hash(b[:offsetHashedLen]) ||
		!zero(b[offsetRecordLen:]) || le.Uint32(b[20:])&^offsetFlagDelete != 0 {
		return c
	}
	c.Valid = true
	c.Group, c.Consumer = le.Uint64(b[8:]), le.Uint32(b[16:])
	c.Deleted = le.Uint32(b[20:])&offsetFlagDelete != 0
	c.Offset, c.Sequence = le.Uint64(b[24:]), le.Uint64(b[32:])
	return c
}

// ReadOffsetRecords reads slot's records for group by format 14.2.
func ReadOffsetRecords(z OffsetZone, peek Peek, slot int, group uint64) [OffsetRecordsPerSlot]OffsetRecord {
	var out [OffsetRecordsPerSlot]OffsetRecord
	b := make([]byte, offsetCopies*z.SectorSize)
	for i := range out {
		rec := &out[i]
		rec.First = z.RecordSector(slot, i)
		peek(rec.First, b)
		damaged, otherGroup := false, false
		for k := range offsetCopies {
			c := ReadOffsetCopy(b[k*z.SectorSize : (k+1)*z.SectorSize])
			switch {
			case c.Valid && c.Group == group:
				if !rec.Held || c.Sequence > rec.Copy.Sequence {
					rec.Held, rec.Copy = true, c
				}
			case c.Valid:
				otherGroup = true
			case c.Ours:
				damaged = true
			}
		}
		rec.Torn = rec.Held && damaged
		rec.Corrupt = !rec.Held && damaged && !otherGroup
	}
	return out
}

// DurableOffsets returns the offsets slot's records hold for group, by
// consumer (a deleted one is absent), as a restart's recovery reads them.
func DurableOffsets(recs [OffsetRecordsPerSlot]OffsetRecord) map[uint32]uint64 {
	out := map[uint32]uint64{}
	for _, r := range recs {
		if r.Held && !r.Copy.Deleted {
			out[r.Copy.Consumer] = r.Copy.Offset
		}
	}
	return out
}
