package partition

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
)

// ZoneSuperblocks is the device zone of the per-partition superblocks.
const ZoneSuperblocks = "partition-superblocks"

// SuperblockCopies is how many copies each partition's superblock keeps.
const SuperblockCopies = 2

// storePayloadSize is a record's payload: the group id, the VsrState, then
// a flags word (bit 0: Held).
const storePayloadSize = 8 + wire.VsrStateSize + 8

// flagHeld marks a group that has held a prepare in its memory journal.
const flagHeld uint64 = 1

// Store keeps the durable consensus state (view, log_view, commit_max and
// the offset frontier) of every partition group of one replica: one slot per
// group, SuperblockCopies copies per slot, one sector each, in the zone
// ZoneSuperblocks (partition-plane.md "Journal": Iggy's per-partition
// superblock).
//
// Each record is a wire superblock record (wire.md 9.2) whose payload is the
// group id and the VsrState. A slot's writes are serialized (the group has
// one WriteState in flight at a time), each goes to copy seq%2 and is
// followed by a sync, and its done runs only after the sync: at a crash the
// copy being written may tear, and the other still holds the last state
// whose done ran. The zone is clean of every storage fault but crash tears
// (as the metadata superblock's is, DEVIATIONS.md 46), so reading the valid
// copy of the slot's group with the highest sequence recovers at least that
// state. A copy of another group (the slot's previous tenant) is not this
// group's: a group never written reads as fresh.
type Store struct {
	dev         storage.Device
	first       uint64 // the zone's first sector
	slots       int
	sectorBytes int
	cluster     wire.U128
	replica     uint8
	replicas    uint8

	copies  [][SuperblockCopies]slotRecord // per slot: what each copy holds (read at open, then written)
	seq     []uint64                       // per slot: the last sequence written (or read) for its group
	writing []bool

	queue    []storeWrite // writes waiting for an I/O slot, in order
	inFlight int
	ioMax    int
}

type slotRecord struct {
	valid bool
	group uint64
	seq   uint64
	state wire.VsrState
	held  bool
}

type storeWrite struct {
	slot  int
	group uint64
	state wire.VsrState
	held  bool
	done  func()
}

// StoreZone returns the zone a Store of slots slots needs.
func StoreZone(slots int) storage.Zone {
	return storage.Zone{Name: ZoneSuperblocks, ChunkSectors: 1, Chunks: uint64(slots * SuperblockCopies)}
}

// StoreConfig places a Store.
type StoreConfig struct {
	FirstSector uint64 // where the zone starts on the device
	Slots       int
	IOsMax      int // writes (each a write then a sync) in flight at once
	Cluster     wire.U128
	Replica     uint8
	Replicas    uint8
}

// OpenStore reads every slot's copies and runs done with the store.
func OpenStore(dev storage.Device, cfg StoreConfig, done func(*Store)) {
	if cfg.Slots < 1 || cfg.IOsMax < 1 || wire.SuperblockRecordMin+storePayloadSize > dev.SectorSize() {
		panic(fmt.Sprintf("partition: store of %d slots, %d I/Os, sectors of %d bytes", cfg.Slots, cfg.IOsMax, dev.SectorSize()))
	}
	s := &Store{dev: dev, first: cfg.FirstSector, slots: cfg.Slots, sectorBytes: dev.SectorSize(), cluster: cfg.Cluster,
		replica: cfg.Replica, replicas: cfg.Replicas, ioMax: cfg.IOsMax,
		copies: make([][SuperblockCopies]slotRecord, cfg.Slots),
		seq:    make([]uint64, cfg.Slots), writing: make([]bool, cfg.Slots)}
	n := cfg.Slots * SuperblockCopies
	buf := make([]byte, n*s.sectorBytes)
	extents := []storage.Extent{{Sector: s.first, Buf: buf}}
	dev.ReadBatch(extents, func() {
		for slot := range s.slots {
			for c := range SuperblockCopies {
				if extents[0].Err != nil {
					break // a clean zone has no latent errors; nothing to read
				}
				at := (slot*SuperblockCopies + c) * s.sectorBytes
				s.copies[slot][c] = s.decode(buf[at : at+s.sectorBytes])
			}
		}
		done(s)
	})
}

func (s *Store) decode(sector []byte) slotRecord {
	n, err := wire.SuperblockRecordLen(sector)
	if err != nil {
		return slotRecord{}
	}
	seq, payload, err := wire.DecodeSuperblock(sector[:n])
	if err != nil || len(payload) != storePayloadSize || !allZero(sector[n:]) {
		return slotRecord{}
	}
	state, err := wire.DecodeVsrState(payload[8 : 8+wire.VsrStateSize])
	flags := binary.LittleEndian.Uint64(payload[8+wire.VsrStateSize:])
	if err != nil || state.Cluster != s.cluster || state.ReplicaID != s.replica || state.ReplicaCount != s.replicas || flags&^flagHeld != 0 {
		return slotRecord{}
	}
	return slotRecord{valid: true, group: binary.LittleEndian.Uint64(payload), seq: seq, state: state, held: flags&flagHeld != 0}
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// Recover returns group's durable state in slot: the valid copy of that
// group with the highest sequence, whether the group had held a prepare
// then (Write's held), or false when the slot holds none (a group never
// written here, or a slot another group used). The slot then belongs to
// group: its next write follows the recovered sequence.
func (s *Store) Recover(slot int, group uint64) (state wire.VsrState, held, ok bool) {
	s.checkSlot(slot)
	if s.writing[slot] {
		panic(fmt.Sprintf("partition: recovering slot %d with a write in flight", slot))
	}
	best := slotRecord{}
	for _, c := range s.copies[slot] {
		if c.valid && c.group == group && (!best.valid || c.seq > best.seq) {
			best = c
		}
	}
	s.seq[slot] = 0
	if best.valid {
		s.seq[slot] = best.seq
	}
	// A copy of a previous tenant keeps its sequence numbers; a new tenant
	// starts above them so its records are never confused by sequence.
	for _, c := range s.copies[slot] {
		if c.valid && c.group != group {
			s.seq[slot] = max(s.seq[slot], c.seq)
		}
	}
	return best.state, best.held, best.valid
}

// Write makes state group's durable state in slot, with held (the group has
// held a prepare: after a crash it may have acknowledged what it lost),
// then runs done. Writes to one slot must not overlap: the next waits for
// the previous done.
func (s *Store) Write(slot int, group uint64, state wire.VsrState, held bool, done func()) {
	s.checkSlot(slot)
	if s.writing[slot] {
		panic(fmt.Sprintf("partition: a second write to slot %d while one is in flight", slot))
	}
	state.Cluster, state.ReplicaID, state.ReplicaCount = s.cluster, s.replica, s.replicas
	s.writing[slot] = true
	s.queue = append(s.queue, storeWrite{slot: slot, group: group, state: state, held: held, done: done})
	s.pump()
}

func (s *Store) pump() {
	for s.inFlight < s.ioMax && len(s.queue) > 0 {
		w := s.queue[0]
		s.queue[0] = storeWrite{}
		s.queue = s.queue[1:]
		s.inFlight++
		s.seq[w.slot]++
		seq := s.seq[w.slot]
		payload := binary.LittleEndian.AppendUint64(make([]byte, 0, storePayloadSize), w.group)
		payload = append(payload, w.state.Encode()...)
		flags := uint64(0)
		if w.held {
			flags = flagHeld
		}
		payload = binary.LittleEndian.AppendUint64(payload, flags)
		sector := make([]byte, s.sectorBytes)
		copy(sector, wire.EncodeSuperblock(seq, payload))
		c := int(seq % SuperblockCopies)
		s.dev.Write(s.first+uint64(w.slot*SuperblockCopies+c), sector, func(error) {
			s.dev.Sync(func(error) {
				s.copies[w.slot][c] = slotRecord{valid: true, group: w.group, seq: seq, state: w.state, held: w.held}
				s.writing[w.slot] = false
				s.inFlight--
				w.done()
				s.pump()
			})
		})
	}
}

// Slots returns the number of slots.
func (s *Store) Slots() int { return s.slots }

// Holds reports whether a valid copy in slot belongs to group.
func (s *Store) Holds(slot int, group uint64) bool {
	for _, c := range s.copies[slot] {
		if c.valid && c.group == group {
			return true
		}
	}
	return false
}

// Tenants returns the groups whose records the slot's copies hold (0 for a
// copy with none).
func (s *Store) Tenants(slot int) [SuperblockCopies]uint64 {
	var g [SuperblockCopies]uint64
	for i, c := range s.copies[slot] {
		if c.valid {
			g[i] = c.group
		}
	}
	return g
}

// Busy reports whether a write to slot is queued or in flight.
func (s *Store) Busy(slot int) bool { return s.writing[slot] }

// Pending reports how many writes are queued or in flight.
func (s *Store) Pending() int { return s.inFlight + len(s.queue) }

func (s *Store) checkSlot(slot int) {
	if slot < 0 || slot >= s.slots {
		panic(fmt.Sprintf("partition: slot %d of %d", slot, s.slots))
	}
}
