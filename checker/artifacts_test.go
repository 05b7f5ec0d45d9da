package checker_test

import (
	"encoding/binary"

	"github.com/iggy-vopr/vopr/checker/diskread"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// fakeImages is the durable images of a fake cluster's replicas
// (checker.Artifacts), written by hand in docs/disk-format.md's formats:
// sectors never written read as garbage (0xa5), and a test marks the
// sectors a fault touched.
type fakeImages struct {
	sectors []map[uint64][]byte // per replica
	faulted []map[uint64]bool
}

// The fake device's layout: the superblock's four copies from sector 0,
// the checkpoint areas, the offset records and the segment logs.
const (
	imgSectorBytes      = 512
	imgCheckpointFirst  = 100
	imgAreaSectors      = 8
	imgOffsetsFirst     = 200
	imgOffsetSlots      = 2
	imgSegmentsFirst    = 300
	imgSegmentSlots     = 2
	imgSegmentSlotBytes = 16 * imgSectorBytes
)

var imgCluster = wire.U128{Lo: 0xc1, Hi: 0x57}

func newFakeImages(n int) *fakeImages {
	f := &fakeImages{}
	for range n {
		f.sectors = append(f.sectors, map[uint64][]byte{})
		f.faulted = append(f.faulted, map[uint64]bool{})
	}
	return f
}

func (f *fakeImages) Peek(r uint8) diskread.Peek {
	return func(sector uint64, buf []byte) {
		for k := 0; k < len(buf); k += imgSectorBytes {
			s, ok := f.sectors[r][sector+uint64(k/imgSectorBytes)]
			if !ok {
				for i := range imgSectorBytes {
					buf[k+i] = 0xa5
				}
				continue
			}
			copy(buf[k:k+imgSectorBytes], s)
		}
	}
}

func (f *fakeImages) Geometry(r uint8) diskread.Geometry {
	return diskread.Geometry{SectorSize: imgSectorBytes, SlotCount: 8, FrameSizeMax: 4096, Cluster: imgCluster,
		Replica: r, ReplicaCount: uint8(len(f.sectors))}
}

func (f *fakeImages) CheckpointZone() diskread.CheckpointZone {
	return diskread.CheckpointZone{FirstSector: imgCheckpointFirst, AreaSectors: imgAreaSectors, SectorSize: imgSectorBytes}
}

func (f *fakeImages) Faulted(r uint8, first, count uint64) bool {
	for k := range count {
		if f.faulted[r][first+k] {
			return true
		}
	}
	return false
}

// write puts b (whole sectors, zero-padded) at sector on replica r.
func (f *fakeImages) write(r uint8, sector uint64, b []byte) {
	for k := 0; k < len(b); k += imgSectorBytes {
		s := make([]byte, imgSectorBytes)
		copy(s, b[k:])
		f.sectors[r][sector+uint64(k/imgSectorBytes)] = s
	}
}

// superblock writes replica r's four superblock copies (format 10.1) with
// sequence seq, recording the checkpoint at op with checksum.
func (f *fakeImages) superblock(r uint8, seq, op uint64, checksum wire.U128) {
	state := wire.VsrState{Cluster: imgCluster, ReplicaID: r, ReplicaCount: uint8(len(f.sectors)), View: 1, LogView: 1,
		CheckpointOp: op, CheckpointChecksum: checksum}
	b := make([]byte, imgSectorBytes)
	n := copy(b, wire.EncodeSuperblock(seq, state.Encode()))
	binary.LittleEndian.PutUint64(b[n:], 0x32746d666a706f76)
	binary.LittleEndian.PutUint64(b[n+8:], 8) // formatted
	binary.LittleEndian.PutUint64(b[n+280:], xxh3.HashSeed(b[n:n+280], 0x766f70726a6e6c31))
	for i := range uint64(4) {
		f.write(r, i, b)
	}
}

// checkpoint writes the checkpoint at op (identity, timestamp, payload)
// into area a of replica r (format 14.4).
func (f *fakeImages) checkpoint(r uint8, a int, op uint64, identity wire.U128, timestamp uint64, payload []byte) {
	stored := wire.SealSnapshot(payload)
	sum := wire.SnapshotChecksum(payload)
	h := make([]byte, imgSectorBytes)
	le := binary.LittleEndian
	le.PutUint64(h[0:], op)
	le.PutUint64(h[8:], identity.Lo)
	le.PutUint64(h[16:], identity.Hi)
	le.PutUint64(h[24:], timestamp)
	le.PutUint64(h[32:], uint64(len(stored)))
	le.PutUint64(h[40:], sum.Lo)
	le.PutUint64(h[48:], sum.Hi)
	le.PutUint64(h[56:], xxh3.HashSeed(h[:56], 0x766f7072636b7031))
	f.write(r, imgCheckpointFirst+uint64(a)*imgAreaSectors, append(h, stored...))
}

func (f *fakeImages) OffsetZone() diskread.OffsetZone {
	return diskread.OffsetZone{FirstSector: imgOffsetsFirst, Slots: imgOffsetSlots, SectorSize: imgSectorBytes}
}

// offsetRecord writes copy c of record i of slot on replica r: consumer's
// offset (or its deletion) for group, with sequence seq (format 14.2).
func (f *fakeImages) offsetRecord(r uint8, slot, i, c int, group uint64, consumer uint32, offset uint64, deleted bool, seq uint64) {
	b := make([]byte, imgSectorBytes)
	le := binary.LittleEndian
	le.PutUint64(b, 0x3130666f66706f76)
	le.PutUint64(b[8:], group)
	le.PutUint32(b[16:], consumer)
	if deleted {
		le.PutUint32(b[20:], 1)
	}
	le.PutUint64(b[24:], offset)
	le.PutUint64(b[32:], seq)
	le.PutUint64(b[40:], xxh3.Hash(b[:40]))
	f.write(r, imgOffsetsFirst+uint64((slot*8+i)*2+c), b)
}

func (f *fakeImages) SegmentZone() diskread.SegmentZone {
	return diskread.SegmentZone{FirstSector: imgSegmentsFirst, Slots: imgSegmentSlots, SlotSectors: imgSegmentSlotBytes / imgSectorBytes,
		SectorSize: imgSectorBytes}
}

// segmentUnit appends a flush unit of group's batches (the first at base)
// at byte at of replica r's slot, padded to the next sector, and returns
// where the next unit goes (format 14.3).
func (f *fakeImages) segmentUnit(r uint8, slot int, at int, group, base uint64, batches ...[]byte) int {
	h := make([]byte, 64)
	le := binary.LittleEndian
	le.PutUint64(h, 0x3130676573706f76)
	le.PutUint64(h[8:], group)
	le.PutUint64(h[16:], base)
	var payload []byte
	for _, b := range batches {
		payload = append(payload, b...)
	}
	le.PutUint64(h[24:], uint64(len(payload)))
	le.PutUint32(h[32:], uint32(len(batches)))
	le.PutUint64(h[40:], xxh3.Hash(payload))
	le.PutUint64(h[56:], xxh3.Hash(h[:56]))
	u := append(h, payload...)
	f.write(r, imgSegmentsFirst+uint64(slot*imgSegmentSlotBytes+at)/imgSectorBytes, u)
	return (at + len(u) + imgSectorBytes - 1) / imgSectorBytes * imgSectorBytes
}
