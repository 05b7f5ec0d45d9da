package wire

import (
	"github.com/zeebo/xxh3"
)

// SnapshotTrailerLen is the length of the trailer that closes a stored
// metadata snapshot (snapshot.bin, wire.md 8.2): a u32 magic, then the
// XXH3-128 of the payload, both little-endian.
const SnapshotTrailerLen = 4 + 16

// snapshotTrailerMagic is 0x49534E50, stored LE as the bytes "PNSI".
const snapshotTrailerMagic uint32 = 0x49534E50

// SealSnapshot returns the stored form of a metadata snapshot payload: the
// payload, then its trailer. The state-transfer artifact is the payload
// alone (wire.md 8.2): a server strips the trailer before it offers the
// snapshot, and a receiver seals what it installs again.
func SealSnapshot(payload []byte) []byte {
	b := make([]byte, len(payload)+SnapshotTrailerLen)
	n := copy(b, payload)
	put32(b[n:], snapshotTrailerMagic)
	h := xxh3.Hash128(payload)
	putU128(b[n+4:], U128{Lo: h.Lo, Hi: h.Hi})
	return b
}

// OpenSnapshot checks a stored metadata snapshot and returns its payload (a
// slice of stored). Rules, in order: stored holds at least the trailer
// (ErrShort); the trailer's magic is 0x49534E50 (ErrMagic); the trailer's
// checksum is the XXH3-128 of every byte before the trailer
// (ErrTrailerMismatch). The payload itself (MessagePack) is not read here.
func OpenSnapshot(stored []byte) ([]byte, error) {
	if len(stored) < SnapshotTrailerLen {
		return nil, formatErrf("snapshot", ErrShort, len(stored), "%d bytes, the trailer alone is %d", len(stored), SnapshotTrailerLen)
	}
	n := len(stored) - SnapshotTrailerLen
	if m := u32(stored[n:]); m != snapshotTrailerMagic {
		return nil, formatErrf("snapshot", ErrMagic, n, "trailer magic %#08x, want %#08x", m, snapshotTrailerMagic)
	}
	h := xxh3.Hash128(stored[:n])
	want, got := U128{Lo: h.Lo, Hi: h.Hi}, getU128(stored[n+4:])
	if got != want {
		return nil, formatErrf("snapshot", ErrTrailerMismatch, n+4, "stored %s, computed %s", got, want)
	}
	return stored[:n], nil
}

// SnapshotChecksum is the XXH3-128 of a snapshot payload: the checksum its
// trailer stores, and what a superblock's checkpoint_checksum records.
func SnapshotChecksum(payload []byte) U128 {
	h := xxh3.Hash128(payload)
	return U128{Lo: h.Lo, Hi: h.Hi}
}
