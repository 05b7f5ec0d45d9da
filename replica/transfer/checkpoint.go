package transfer

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
)

// ZoneCheckpoints is the device zone of the checkpoint areas.
const ZoneCheckpoints = "checkpoints"

// Areas is how many checkpoint areas a replica keeps: the durable one and
// the one the next checkpoint is written to.
const Areas = 2

// headerSeal keys the seal of an area's header sector ("voprckp1").
const headerSeal uint64 = 0x766f7072636b7031

// headerLen is the header record: magic-free fields, then the seal.
//
//	0  8  op
//	8  16 identity (the prepare identity of op)
//	24 8  timestamp (of that prepare)
//	32 8  stored length (the snapshot.bin bytes: payload + trailer)
//	40 16 checksum (XXH3-128 of the payload)
//	56 8  seal: XXH3 with seed headerSeal of bytes 0..56
const headerLen = 64

// Errors of reading a checkpoint.
var (
	// ErrNoCheckpoint: neither area holds the checkpoint the superblock
	// records, intact.
	ErrNoCheckpoint = errors.New("transfer: the recorded checkpoint is in no area, intact")
)

// Config places the checkpoint areas on a device.
type Config struct {
	FirstSector uint64 // the zone's first sector
	AreaSectors uint64 // each area's size: the header sector, then snapshot.bin
	SectorSize  int
}

// Zone returns the zone of the checkpoint areas: one chunk per area, so
// that the fault atlas grants a replica at most one of them.
func Zone(areaSectors uint64) storage.Zone {
	return storage.Zone{Name: ZoneCheckpoints, ChunkSectors: areaSectors, Chunks: Areas}
}

// PayloadMax is the largest snapshot payload an area holds.
func (c Config) PayloadMax() int {
	return int(c.AreaSectors-1)*c.SectorSize - wire.SnapshotTrailerLen
}

// Checkpoint is one checkpoint: the state after Op, as a snapshot payload.
type Checkpoint struct {
	Op        uint64
	Identity  wire.U128 // the prepare identity of Op: the parent of Op+1
	Timestamp uint64    // the prepare timestamp of Op
	Payload   []byte    // the MetadataSnapshot payload (wire.md 8.2)
	Checksum  wire.U128 // SnapshotChecksum(Payload)
}

// Store writes and reads the checkpoint areas of one replica.
type Store struct {
	dev     storage.Device
	cfg     Config
	current int  // the area holding the durable checkpoint, -1 if none is known
	busy    bool // a Write is in flight, or its area awaits Adopt or Release
}

// NewStore returns a store whose durable checkpoint is in area current
// (-1: none, or unknown).
func NewStore(dev storage.Device, cfg Config, current int) *Store {
	if cfg.AreaSectors < 2 || cfg.SectorSize < headerLen || dev.SectorSize() != cfg.SectorSize || current < -1 || current >= Areas {
		panic(fmt.Sprintf("transfer: checkpoint store %+v over %d-byte sectors, current area %d", cfg, dev.SectorSize(), current))
	}
	return &Store{dev: dev, cfg: cfg, current: current}
}

// Busy reports whether a checkpoint write is in flight or waits for the
// superblock (Adopt or Release): the next Write must wait, or it would
// overwrite the area the superblock is about to name.
func (s *Store) Busy() bool { return s.busy }

// Write stores cp in the area that does not hold the durable checkpoint,
// syncs it, and runs done with the area. The caller then records cp in the
// superblock and, once that is durable, calls Adopt(area): until then a
// crash leaves the previous checkpoint the durable one. One Write at a time:
// the store stays Busy until Adopt or Release.
func (s *Store) Write(cp Checkpoint, done func(area int)) {
	if s.busy {
		panic("transfer: a checkpoint write while one is in flight")
	}
	if len(cp.Payload) > s.cfg.PayloadMax() {
		panic(fmt.Sprintf("transfer: a snapshot of %d bytes, an area holds %d", len(cp.Payload), s.cfg.PayloadMax()))
	}
	if cp.Op == 0 || cp.Checksum != wire.SnapshotChecksum(cp.Payload) {
		panic(fmt.Sprintf("transfer: checkpoint at op %d with checksum %s of a payload that sums to %s", cp.Op, cp.Checksum, wire.SnapshotChecksum(cp.Payload)))
	}
	area := 0
	if s.current == 0 {
		area = 1
	}
	stored := wire.SealSnapshot(cp.Payload)
	ss := s.cfg.SectorSize
	buf := make([]byte, ss+(len(stored)+ss-1)/ss*ss)
	encodeHeader(buf[:ss], cp, uint64(len(stored)))
	copy(buf[ss:], stored)
	s.busy = true
	s.dev.Write(s.areaStart(area), buf, func(err error) {
		if err != nil {
			panic(fmt.Sprintf("transfer: checkpoint write: %v", err))
		}
		s.dev.Sync(func(err error) {
			if err != nil {
				panic(fmt.Sprintf("transfer: checkpoint sync: %v", err))
			}
			done(area)
		})
	})
}

// Adopt records that the superblock now names the checkpoint in area: the
// next Write goes to the other one.
func (s *Store) Adopt(area int) {
	if area < 0 || area >= Areas || !s.busy {
		panic(fmt.Sprintf("transfer: adopt area %d (busy %v)", area, s.busy))
	}
	s.current, s.busy = area, false
}

// Release gives up the area a Write filled: the superblock will not name
// it, so the next Write may use it again.
func (s *Store) Release() {
	if !s.busy {
		panic("transfer: release with no write")
	}
	s.busy = false
}

func (s *Store) areaStart(area int) uint64 { return s.cfg.FirstSector + uint64(area)*s.cfg.AreaSectors }

func encodeHeader(b []byte, cp Checkpoint, storedLen uint64) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], cp.Op)
	le.PutUint64(b[8:], cp.Identity.Lo)
	le.PutUint64(b[16:], cp.Identity.Hi)
	le.PutUint64(b[24:], cp.Timestamp)
	le.PutUint64(b[32:], storedLen)
	le.PutUint64(b[40:], cp.Checksum.Lo)
	le.PutUint64(b[48:], cp.Checksum.Hi)
	le.PutUint64(b[56:], xxh3.HashSeed(b[:56], headerSeal))
}

// header is an area's header sector as read.
type header struct {
	op, timestamp, storedLen uint64
	identity, checksum       wire.U128
}

func decodeHeader(b []byte) (header, bool) {
	le := binary.LittleEndian
	if le.Uint64(b[56:]) != xxh3.HashSeed(b[:56], headerSeal) {
		return header{}, false
	}
	for _, x := range b[headerLen:] {
		if x != 0 {
			return header{}, false
		}
	}
	return header{
		op: le.Uint64(b[0:]), identity: wire.U128{Lo: le.Uint64(b[8:]), Hi: le.Uint64(b[16:])},
		timestamp: le.Uint64(b[24:]), storedLen: le.Uint64(b[32:]),
		checksum: wire.U128{Lo: le.Uint64(b[40:]), Hi: le.Uint64(b[48:])},
	}, true
}

// Open reads the checkpoint the superblock records (op and checksum) from
// whichever area holds it intact, and runs done with it and its area. It
// runs done with ErrNoCheckpoint when no area does (a fault hit it): the
// caller must then rebuild the state some other way.
func Open(dev storage.Device, cfg Config, op uint64, checksum wire.U128, done func(Checkpoint, int, error)) {
	ss := cfg.SectorSize
	heads := make([]storage.Extent, Areas)
	for a := range heads {
		heads[a] = storage.Extent{Sector: cfg.FirstSector + uint64(a)*cfg.AreaSectors, Buf: make([]byte, ss)}
	}
	dev.ReadBatch(heads, func() {
		var try func(a int)
		try = func(a int) {
			if a == Areas {
				done(Checkpoint{}, -1, fmt.Errorf("%w: op %d, checksum %s", ErrNoCheckpoint, op, checksum))
				return
			}
			h, ok := decodeHeader(heads[a].Buf)
			if heads[a].Err != nil || !ok || h.op != op || h.checksum != checksum ||
				h.storedLen < wire.SnapshotTrailerLen || h.storedLen > uint64(cfg.PayloadMax()+wire.SnapshotTrailerLen) {
				try(a + 1)
				return
			}
			buf := make([]byte, (h.storedLen+uint64(ss)-1)/uint64(ss)*uint64(ss))
			dev.Read(heads[a].Sector+1, buf, func(err error) {
				if err != nil {
					try(a + 1)
					return
				}
				payload, err := wire.OpenSnapshot(buf[:h.storedLen])
				if err != nil || wire.SnapshotChecksum(payload) != checksum {
					try(a + 1)
					return
				}
				done(Checkpoint{Op: h.op, Identity: h.identity, Timestamp: h.timestamp,
					Payload: append([]byte(nil), payload...), Checksum: checksum}, a, nil)
			})
		}
		try(0)
	})
}

// checksum64 is a manifest entry's checksum: XXH3-64 of the artifact.
func checksum64(b []byte) uint64 { return xxh3.Hash(b) }
