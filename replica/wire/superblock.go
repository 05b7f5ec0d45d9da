package wire

import (
	"fmt"

	"github.com/zeebo/xxh3"
)

// Superblock record framing (wire.md 9.2). The record is on-disk, not wire,
// but it lives here with the other checksummed formats.
const (
	SuperblockMagic      = 0x53424C4B // "SBLK" read as a u32; on disk (LE) the bytes 4B 4C 42 53
	SuperblockVersion    = 1
	SuperblockPayloadMax = 4096

	superblockHeaderLen = 28 // magic, version, reserved, sequence, parent_checksum, payload_len
	// SuperblockRecordMin is the size of a record with an empty payload.
	SuperblockRecordMin = superblockHeaderLen + trailerLen
	// SuperblockRecordMax is the size of a record with the largest payload:
	// the smallest slot that can hold any record.
	SuperblockRecordMax = SuperblockRecordMin + SuperblockPayloadMax
)

// EncodeSuperblock builds a superblock record: magic, version 1, reserved 0,
// sequence, parent_checksum 0 (unused), payload_len, payload, and the XXH3
// trailer over everything before it. A payload over SuperblockPayloadMax is
// a programming error and panics.
func EncodeSuperblock(sequence uint64, payload []byte) []byte {
	if len(payload) > SuperblockPayloadMax {
		panic(fmt.Sprintf("wire: EncodeSuperblock with a %d-byte payload, max %d", len(payload), SuperblockPayloadMax))
	}
	b := make([]byte, SuperblockRecordMin+len(payload))
	put32(b[0:], SuperblockMagic)
	put16(b[4:], SuperblockVersion)
	put64(b[8:], sequence)
	put32(b[24:], uint32(len(payload)))
	end := superblockHeaderLen + copy(b[superblockHeaderLen:], payload)
	put64(b[end:], xxh3.Hash(b[:end]))
	return b
}

// SuperblockRecordLen reads the framing at the front of b and returns the
// length of the record it describes, SuperblockRecordMin + payload_len. It
// checks the magic, the version and payload_len <= SuperblockPayloadMax,
// and that b holds that many bytes. It is for reading a record out of a
// fixed-size, zero-padded slot: DecodeSuperblock(b[:n]) then verifies the
// record itself, and the caller decides what the slot's padding must hold.
func SuperblockRecordLen(b []byte) (int, error) {
	if len(b) < SuperblockRecordMin {
		return 0, formatErrf("superblock", ErrShort, len(b), "%d bytes, a record is at least %d", len(b), SuperblockRecordMin)
	}
	if m := u32(b[0:]); m != SuperblockMagic {
		return 0, formatErrf("superblock", ErrMagic, 0, "magic %#08x", m)
	}
	if v := u16(b[4:]); v != SuperblockVersion {
		return 0, formatErrf("superblock", ErrVersion, 4, "version %d, want %d", v, SuperblockVersion)
	}
	n := u32(b[24:])
	if n > SuperblockPayloadMax {
		return 0, formatErrf("superblock", ErrPayloadTooLarge, 24, "payload_len %d", n)
	}
	size := SuperblockRecordMin + int(n)
	if len(b) < size {
		return 0, formatErrf("superblock", ErrShort, len(b), "payload_len %d needs %d bytes, have %d", n, size, len(b))
	}
	return size, nil
}

// DecodeSuperblock verifies a superblock record and returns its sequence and
// payload. b must be exactly one record: a byte after the trailer is
// ErrTrailingBytes, as in Iggy, whose slot files hold exactly one record.
// Padding is a property of a storage slot, not of the record, so it is
// handled where the slot is: a reader of a fixed-size, zero-padded slot cuts
// the record out with SuperblockRecordLen and checks the padding itself
// (bytes after the trailer are covered by no checksum, so it should require
// them zero rather than ignore them).
//
// Rules, in order: at least SuperblockRecordMin bytes; magic; version 1;
// payload_len <= SuperblockPayloadMax; exact length; trailer; then reserved
// and parent_checksum zero. Iggy ignores those two fields; this package
// writes them zero and, since a checksum-clean record with other values was
// not written by it, refuses one. That makes the encoding canonical: a
// record that decodes re-encodes to the same bytes.
//
// The payload aliases b (capped, so an append cannot overwrite the trailer).
func DecodeSuperblock(b []byte) (sequence uint64, payload []byte, err error) {
	size, err := SuperblockRecordLen(b)
	if err != nil {
		return 0, nil, err
	}
	if len(b) > size {
		return 0, nil, formatErrf("superblock", ErrTrailingBytes, size, "%d bytes after the record", len(b)-size)
	}
	end := size - trailerLen
	if stored, got := u64(b[end:]), xxh3.Hash(b[:end]); stored != got {
		return 0, nil, formatErrf("superblock", ErrTrailerMismatch, end, "stored %#016x, computed %#016x", stored, got)
	}
	if r := u16(b[6:]); r != 0 {
		return 0, nil, formatErrf("superblock", ErrReservedNonzero, 6, "reserved %#04x", r)
	}
	if p := u64(b[16:]); p != 0 {
		return 0, nil, formatErrf("superblock", ErrReservedNonzero, 16, "parent_checksum %#016x is unused and must be 0", p)
	}
	return u64(b[8:]), b[superblockHeaderLen:end:end], nil
}

// VsrState sizes: the current payload and the legacy one without
// offset_frontier.
const (
	VsrStateSize       = 66
	VsrStateLegacySize = 58
)

// VsrState is the superblock payload: the consensus state a replica must
// recover from its own disk (wire.md 9.2).
type VsrState struct {
	Cluster            U128
	ReplicaID          uint8
	ReplicaCount       uint8
	View               uint32
	LogView            uint32 // <= View
	CommitMax          uint64
	CheckpointOp       uint64
	CheckpointChecksum U128
	OffsetFrontier     uint64 // partition plane: next offset to mint; 0 on the metadata plane
}

// Encode returns the 66-byte payload. A LogView above View is a programming
// error and panics: no replica can reach that state, and it would not decode.
func (s VsrState) Encode() []byte {
	if s.LogView > s.View {
		panic(fmt.Sprintf("wire: VsrState.Encode with log_view %d > view %d", s.LogView, s.View))
	}
	b := make([]byte, VsrStateSize)
	putU128(b[0:], s.Cluster)
	b[16] = s.ReplicaID
	b[17] = s.ReplicaCount
	put32(b[18:], s.View)
	put32(b[22:], s.LogView)
	put64(b[26:], s.CommitMax)
	put64(b[34:], s.CheckpointOp)
	putU128(b[42:], s.CheckpointChecksum)
	put64(b[58:], s.OffsetFrontier)
	return b
}

// DecodeVsrState parses a superblock payload of 66 bytes, or of 58 bytes
// (the legacy form, before offset_frontier, which then reads as 0), and
// requires log_view <= view.
func DecodeVsrState(b []byte) (VsrState, error) {
	if len(b) != VsrStateSize && len(b) != VsrStateLegacySize {
		return VsrState{}, formatErrf("VsrState", ErrPayloadLen, 0, "%d bytes", len(b))
	}
	s := VsrState{
		Cluster:            getU128(b[0:]),
		ReplicaID:          b[16],
		ReplicaCount:       b[17],
		View:               u32(b[18:]),
		LogView:            u32(b[22:]),
		CommitMax:          u64(b[26:]),
		CheckpointOp:       u64(b[34:]),
		CheckpointChecksum: getU128(b[42:]),
	}
	if len(b) == VsrStateSize {
		s.OffsetFrontier = u64(b[58:])
	}
	if s.LogView > s.View {
		return VsrState{}, formatErrf("VsrState", ErrLogViewAboveViewState, 22, "log_view %d, view %d", s.LogView, s.View)
	}
	return s, nil
}
