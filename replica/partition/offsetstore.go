package partition

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/storage"
	"github.com/zeebo/xxh3"
)

// ZoneOffsets is the device zone of the durable consumer offset records.
const ZoneOffsets = "partition-offsets"

// OffsetRecordsPerSlot is how many consumers of one partition keep a
// durable offset record (the workload's consumers are four; a consumer
// beyond them is kept in memory only).
const OffsetRecordsPerSlot = 8

// offsetRecordCopies is how many copies each record keeps: a write goes to
// copy seq%2, so a crash that tears it leaves the other copy intact.
const offsetRecordCopies = 2

// offsetRecordMagic opens a record (bytes "vopfof01" on disk, little-endian).
const offsetRecordMagic uint64 = 0x3130666f66706f76

// offsetRecordBytes is a record's size before its padding: magic, group,
// consumer, flags, offset, sequence, then an XXH3 of those.
const offsetRecordBytes = 8 + 8 + 4 + 4 + 8 + 8 + 8

// flagOffsetDeleted marks a record of a consumer whose offset was deleted.
const flagOffsetDeleted uint32 = 1

// OffsetStore keeps every partition's consumer offsets durable on the
// replica's device (partition-plane.md "Consumer offsets": Iggy keeps one
// file per consumer, u64 plus checksum, and tells torn and corrupt records
// apart). Per partition superblock slot (Store), OffsetRecordsPerSlot
// records, one per consumer, each of offsetRecordCopies copies of one
// sector: the record's group, consumer, offset (or deleted), a sequence and
// an XXH3 over them. The zone is covered by every storage fault (the fault
// atlas grants it like any other), so a record can be lost; a lost record
// costs a consumer its stored offset on that replica only (the committed
// Quorum stores are in the log; a NoAck one is that primary's alone).
//
// Reading rule, per record: the valid copy of the slot's group with the
// highest sequence. A record with one copy damaged and the other intact is
// torn (a write a crash interrupted, or a fault on that copy alone): the
// intact copy stands, the older value if the damaged one was the newer. A
// record with no intact copy that was written (a copy that begins with a
// record's magic but does not verify) is corrupt: its offset is lost on
// this replica. OffsetRecovery counts both.
type OffsetStore struct {
	dev         storage.Device
	first       uint64
	slots       int
	sectorBytes int

	records [][OffsetRecordsPerSlot]offsetRecord // per slot: what each record holds
	seq     [][OffsetRecordsPerSlot]uint64       // per slot and record: the last sequence written or read
	writing [][OffsetRecordsPerSlot]bool
	pending [][OffsetRecordsPerSlot]*offsetWrite // per record: the latest write waiting for the one in flight
	found   []OffsetRecovery                     // per slot: what the open found
	// raw: every copy as the open read it, then as written since (a slot
	// a later group reuses is recovered from it).
	raw [][OffsetRecordsPerSlot][offsetRecordCopies]rawCopy

	inFlight int
	ioMax    int
	queue    []offsetWrite
}

type offsetRecord struct {
	valid    bool
	group    uint64
	consumer uint32
	deleted  bool
	offset   uint64
	seq      uint64
}

type offsetWrite struct {
	slot, index int
	rec         offsetRecord
	dones       []func()
}

// OffsetRecovery is what the open found in one slot's records.
type OffsetRecovery struct {
	Torn    int // records whose newest copy was damaged, the older one kept
	Corrupt int // records with no intact copy, lost
}

// OffsetZone returns the zone an OffsetStore of slots slots needs.
func OffsetZone(slots int) storage.Zone {
	return storage.Zone{Name: ZoneOffsets, ChunkSectors: OffsetRecordsPerSlot * offsetRecordCopies, Chunks: uint64(slots)}
}

// OpenOffsetStore reads every record's copies and runs done with the store.
func OpenOffsetStore(dev storage.Device, first uint64, slots, ioMax int, done func(*OffsetStore)) {
	if slots < 1 || ioMax < 1 || offsetRecordBytes > dev.SectorSize() {
		panic(fmt.Sprintf("partition: offset store of %d slots, %d I/Os, sectors of %d bytes", slots, ioMax, dev.SectorSize()))
	}
	s := &OffsetStore{dev: dev, first: first, slots: slots, sectorBytes: dev.SectorSize(), ioMax: ioMax,
		records: make([][OffsetRecordsPerSlot]offsetRecord, slots), seq: make([][OffsetRecordsPerSlot]uint64, slots),
		writing: make([][OffsetRecordsPerSlot]bool, slots), pending: make([][OffsetRecordsPerSlot]*offsetWrite, slots),
		found: make([]OffsetRecovery, slots)}
	per := OffsetRecordsPerSlot * offsetRecordCopies
	buf := make([]byte, slots*per*s.sectorBytes)
	// One extent per sector: an unreadable sector spoils its copy alone.
	extents := make([]storage.Extent, slots*per)
	for i := range extents {
		extents[i] = storage.Extent{Sector: first + uint64(i), Buf: buf[i*s.sectorBytes : (i+1)*s.sectorBytes]}
	}
	dev.ReadBatch(extents, func() {
		s.raw = make([][OffsetRecordsPerSlot][offsetRecordCopies]rawCopy, slots)
		for i := range extents {
			slot, k := i/per, i%per
			c := &s.raw[slot][k/offsetRecordCopies][k%offsetRecordCopies]
			c.unreadable = extents[i].Err != nil
			if !c.unreadable {
				c.ours = binary.LittleEndian.Uint64(extents[i].Buf) == offsetRecordMagic
				c.rec = decodeOffsetRecord(extents[i].Buf)
			}
		}
		done(s)
	})
}

// rawCopy is one copy as the open read it: unreadable, or its bytes begin
// with a record's magic (ours: something this store wrote, whole or not;
// a sector never written holds garbage), and the record if it is whole.
type rawCopy struct {
	unreadable, ours bool
	rec              offsetRecord
}

func decodeOffsetRecord(b []byte) offsetRecord {
	if binary.LittleEndian.Uint64(b) != offsetRecordMagic || !allZero(b[offsetRecordBytes:]) ||
		binary.LittleEndian.Uint64(b[offsetRecordBytes-8:]) != xxh3.Hash(b[:offsetRecordBytes-8]) {
		return offsetRecord{}
	}
	flags := binary.LittleEndian.Uint32(b[20:])
	if flags&^flagOffsetDeleted != 0 {
		return offsetRecord{}
	}
	return offsetRecord{valid: true, group: binary.LittleEndian.Uint64(b[8:]), consumer: binary.LittleEndian.Uint32(b[16:]),
		deleted: flags&flagOffsetDeleted != 0, offset: binary.LittleEndian.Uint64(b[24:]), seq: binary.LittleEndian.Uint64(b[32:])}
}

func encodeOffsetRecord(dst []byte, r offsetRecord) {
	clear(dst)
	binary.LittleEndian.PutUint64(dst, offsetRecordMagic)
	binary.LittleEndian.PutUint64(dst[8:], r.group)
	binary.LittleEndian.PutUint32(dst[16:], r.consumer)
	flags := uint32(0)
	if r.deleted {
		flags = flagOffsetDeleted
	}
	binary.LittleEndian.PutUint32(dst[20:], flags)
	binary.LittleEndian.PutUint64(dst[24:], r.offset)
	binary.LittleEndian.PutUint64(dst[32:], r.seq)
	binary.LittleEndian.PutUint64(dst[offsetRecordBytes-8:], xxh3.Hash(dst[:offsetRecordBytes-8]))
}

// Recover returns the durable offsets of group's consumers in slot (a
// deleted one is absent), and what the open found damaged. The slot's
// records belong to group from now on: records of another group (a
// previous tenant) are free to reuse.
func (s *OffsetStore) Recover(slot int, group uint64) (map[uint32]uint64, OffsetRecovery) {
	s.checkSlot(slot)
	offsets := map[uint32]uint64{}
	var found OffsetRecovery
	for i := range OffsetRecordsPerSlot {
		if s.writing[slot][i] {
			panic(fmt.Sprintf("partition: recovering offset slot %d with a write in flight", slot))
		}
		best, damaged, garbled := offsetRecord{}, false, false
		for _, c := range s.raw[slot][i] {
			switch {
			case c.rec.valid && c.rec.group == group:
				if !best.valid || c.rec.seq > best.seq {
					best = c.rec
				}
			case c.rec.valid:
				// another group's record: not this group's to judge
			case c.unreadable:
				damaged = true
			case c.ours:
				damaged, garbled = true, true
			}
		}
		s.seq[slot][i] = 0
		for _, c := range s.raw[slot][i] {
			if c.rec.valid {
				s.seq[slot][i] = max(s.seq[slot][i], c.rec.seq)
			}
		}
		switch {
		case best.valid && damaged:
			found.Torn++
		case !best.valid && garbled && !s.otherTenant(slot, i, group):
			// Bytes that are no record: a write of this group (or of a
			// tenant whose intact copy is gone too) that nothing proves.
			found.Corrupt++
		}
		s.records[slot][i] = best
		if best.valid && !best.deleted {
			offsets[best.consumer] = best.offset
		}
	}
	s.found[slot] = found
	return offsets, found
}

// otherTenant reports whether record i of slot holds another group's
// record in one of its copies: a damaged copy beside it is that group's
// loss, not this one's.
func (s *OffsetStore) otherTenant(slot, i int, group uint64) bool {
	for _, c := range s.raw[slot][i] {
		if c.rec.valid && c.rec.group != group {
			return true
		}
	}
	return false
}

// Write makes consumer's offset (or its deletion) durable in group's slot,
// then runs done. A write to a record with one in flight waits for it, and
// waiting writes coalesce into the latest; every done runs once a write at
// least as new is durable. It reports false, and runs nothing, when the
// slot's records all hold other consumers of the group.
func (s *OffsetStore) Write(slot int, group uint64, consumer uint32, offset uint64, deleted bool, done func()) bool {
	s.checkSlot(slot)
	if done == nil {
		panic("partition: offset write with nil done")
	}
	i := s.recordFor(slot, group, consumer)
	if i < 0 {
		return false
	}
	rec := offsetRecord{valid: true, group: group, consumer: consumer, offset: offset, deleted: deleted}
	s.records[slot][i] = rec
	if s.writing[slot][i] {
		p := s.pending[slot][i]
		if p == nil {
			p = &offsetWrite{slot: slot, index: i}
			s.pending[slot][i] = p
		}
		p.rec, p.dones = rec, append(p.dones, done)
		return true
	}
	s.start(offsetWrite{slot: slot, index: i, rec: rec, dones: []func(){done}})
	return true
}

// recordFor returns the record index of group's consumer in slot: its own,
// else one holding nothing of the group, else -1.
func (s *OffsetStore) recordFor(slot int, group uint64, consumer uint32) int {
	free := -1
	for i, r := range s.records[slot] {
		if r.valid && r.group == group && r.consumer == consumer {
			return i
		}
		if free < 0 && (!r.valid || r.group != group) && !s.writing[slot][i] {
			free = i
		}
	}
	return free
}

func (s *OffsetStore) start(w offsetWrite) {
	s.writing[w.slot][w.index] = true
	s.queue = append(s.queue, w)
	s.pump()
}

func (s *OffsetStore) pump() {
	for s.inFlight < s.ioMax && len(s.queue) > 0 {
		w := s.queue[0]
		s.queue[0] = offsetWrite{}
		s.queue = s.queue[1:]
		s.inFlight++
		s.seq[w.slot][w.index]++
		w.rec.seq = s.seq[w.slot][w.index]
		c := int(w.rec.seq % offsetRecordCopies)
		sector := make([]byte, s.sectorBytes)
		encodeOffsetRecord(sector, w.rec)
		at := s.first + uint64((w.slot*OffsetRecordsPerSlot+w.index)*offsetRecordCopies+c)
		s.dev.Write(at, sector, func(error) {
			s.dev.Sync(func(error) {
				s.inFlight--
				s.raw[w.slot][w.index][c] = rawCopy{ours: true, rec: w.rec}
				s.writing[w.slot][w.index] = false
				if p := s.pending[w.slot][w.index]; p != nil {
					s.pending[w.slot][w.index] = nil
					s.start(*p)
				}
				for _, done := range w.dones {
					done()
				}
				s.pump()
			})
		})
	}
}

// Found returns what the last Recover of slot found damaged.
func (s *OffsetStore) Found(slot int) OffsetRecovery { return s.found[slot] }

// Busy reports whether a record write of slot is queued or in flight: a
// group built on the slot now would recover records that are still being
// written.
func (s *OffsetStore) Busy(slot int) bool {
	s.checkSlot(slot)
	for _, w := range s.writing[slot] {
		if w {
			return true
		}
	}
	for _, w := range s.queue {
		if w.slot == slot {
			return true
		}
	}
	return false
}

// Pending reports how many record writes are queued or in flight.
func (s *OffsetStore) Pending() int { return s.inFlight + len(s.queue) }

func (s *OffsetStore) checkSlot(slot int) {
	if slot < 0 || slot >= s.slots {
		panic(fmt.Sprintf("partition: offset slot %d of %d", slot, s.slots))
	}
}
