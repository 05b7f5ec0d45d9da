package wire

import (
	"fmt"

	"github.com/zeebo/xxh3"
)

// Artifact kinds of a state-manifest entry (wire.md 8.1). Other values decode
// fine: the receiver of an offer decides which kinds it accepts.
const (
	ArtifactMetadataSnapshot uint8 = 0 // metadata plane: msgpack snapshot payload (wire.md 8.2)
	ArtifactClientTable      uint8 = 1 // metadata plane: ICT2 (wire.md 8.3)
	ArtifactSegmentLog       uint8 = 2 // partition plane: one segment .log verbatim (wire.md 8.4)
	ArtifactConsumerOffsets  uint8 = 3 // partition plane: ICO1 (wire.md 8.5)
)

// ManifestEntriesMax is the most entries an ISM1 manifest may hold
// (STATE_MANIFEST_ENTRIES_MAX).
const ManifestEntriesMax = 1 << 16

// ManifestEntryLen is the entry length this version writes. A decoder accepts
// longer entries (a later version's) and skips their tails.
const ManifestEntryLen = 25

const (
	manifestMagic     = "ISM1"
	manifestHeaderLen = 9 // magic, count, entry_len
	trailerLen        = 8 // the XXH3 trailer of ISM1, ICT2 and ICO1
)

// ManifestEntry describes one artifact of a state-transfer offer (wire.md
// 8.1): the receiver pulls Len bytes of it and checks them with VerifyArtifact.
type ManifestEntry struct {
	Kind     uint8  // one of the Artifact* kinds
	Frontier uint64 // what the artifact is current to; its meaning depends on Kind
	Len      uint64 // artifact length in bytes
	Checksum uint64 // XXH3 of the artifact bytes
}

// EncodeManifest builds an ISM1 manifest (a StateTransferTarget body) with
// entry_len 25. More than ManifestEntriesMax entries is a programming error
// and panics.
func EncodeManifest(entries []ManifestEntry) []byte {
	if len(entries) > ManifestEntriesMax {
		panic(fmt.Sprintf("wire: EncodeManifest with %d entries, max %d", len(entries), ManifestEntriesMax))
	}
	return encodeManifest(entries, nil, nil)
}

// encodeManifest writes entries with entry_len 25, 41 with identities, or
// 49 with identities and timestamps (timestamps only with identities: the
// tails are nested, each form a prefix of the next).
func encodeManifest(entries []ManifestEntry, identities []U128, timestamps []uint64) []byte {
	if timestamps != nil && identities == nil {
		panic("wire: encodeManifest with timestamps but no identities")
	}
	entryLen := ManifestEntryLen
	switch {
	case timestamps != nil:
		entryLen = ManifestEntryLenStamped
	case identities != nil:
		entryLen = ManifestEntryLenIdentified
	}
	b := make([]byte, manifestHeaderLen+len(entries)*entryLen+trailerLen)
	copy(b, manifestMagic)
	put32(b[4:], uint32(len(entries)))
	b[8] = byte(entryLen)
	off := manifestHeaderLen
	for i, e := range entries {
		b[off] = e.Kind
		put64(b[off+1:], e.Frontier)
		put64(b[off+9:], e.Len)
		put64(b[off+17:], e.Checksum)
		if identities != nil {
			putU128(b[off+ManifestEntryLen:], identities[i])
		}
		if timestamps != nil {
			put64(b[off+ManifestEntryLenIdentified:], timestamps[i])
		}
		off += entryLen
	}
	put64(b[off:], xxh3.Hash(b[:off]))
	return b
}

// DecodeManifest parses an ISM1 manifest. Rules, in the order they are
// checked (the order the fields are read, then the trailer): the input holds
// at least the 9-byte header and the trailer; the magic is "ISM1"; count is at
// most ManifestEntriesMax; entry_len is at least 25; the input is exactly
// header, count entries and trailer long (shorter: ErrShort; longer:
// ErrTrailingBytes, bytes between the last entry and the trailer); the
// trailer is XXH3 of every byte before it. The tail of an entry longer than
// 25 bytes is skipped. Nothing is allocated from count until the input is
// known to hold that many entries.
func DecodeManifest(b []byte) ([]ManifestEntry, error) {
	if len(b) < manifestHeaderLen+trailerLen {
		return nil, formatErrf("ISM1", ErrShort, len(b), "%d bytes, an empty manifest is %d", len(b), manifestHeaderLen+trailerLen)
	}
	if string(b[:4]) != manifestMagic {
		return nil, formatErrf("ISM1", ErrMagic, 0, "magic %x", b[:4])
	}
	count := u32(b[4:])
	if count > ManifestEntriesMax {
		return nil, formatErrf("ISM1", ErrCountTooLarge, 4, "count %d, max %d", count, ManifestEntriesMax)
	}
	entryLen := int(b[8])
	if entryLen < ManifestEntryLen {
		return nil, formatErrf("ISM1", ErrEntryLenTooSmall, 8, "entry_len %d", entryLen)
	}
	// At most 65536 * 255 bytes: no overflow, even with a 32-bit int.
	end := manifestHeaderLen + int(count)*entryLen
	switch {
	case len(b) < end+trailerLen:
		return nil, formatErrf("ISM1", ErrShort, len(b), "%d entries of %d bytes need %d bytes, have %d",
			count, entryLen, end+trailerLen, len(b))
	case len(b) > end+trailerLen:
		return nil, formatErrf("ISM1", ErrTrailingBytes, end, "%d bytes between the last entry and the trailer",
			len(b)-end-trailerLen)
	}
	if stored, got := u64(b[end:]), xxh3.Hash(b[:end]); stored != got {
		return nil, formatErrf("ISM1", ErrTrailerMismatch, end, "stored %#016x, computed %#016x", stored, got)
	}
	if count == 0 {
		return nil, nil
	}
	entries := make([]ManifestEntry, count)
	off := manifestHeaderLen
	for i := range entries {
		entries[i] = ManifestEntry{
			Kind:     b[off],
			Frontier: u64(b[off+1:]),
			Len:      u64(b[off+9:]),
			Checksum: u64(b[off+17:]),
		}
		off += entryLen
	}
	return entries, nil
}

// VerifyArtifact checks a pulled artifact against its manifest entry: its
// length is e.Len and its XXH3 is e.Checksum (wire.md 8.1). The artifact is
// verified whole, after its last chunk arrives.
func VerifyArtifact(e ManifestEntry, artifact []byte) error {
	if uint64(len(artifact)) != e.Len {
		return formatErrf("artifact", ErrArtifactLen, 0, "kind %d: %d bytes, entry says %d", e.Kind, len(artifact), e.Len)
	}
	if got := xxh3.Hash(artifact); got != e.Checksum {
		return formatErrf("artifact", ErrArtifactChecksum, 0, "kind %d: computed %#016x, entry says %#016x", e.Kind, got, e.Checksum)
	}
	return nil
}

// ManifestEntryLenIdentified is the entry length of a manifest whose entries
// carry, after Iggy's 25 bytes, the 16-byte prepare identity of the op
// their frontier names (DEVIATIONS.md 62): the receiver of a metadata
// snapshot at op C must know the identity of op C to check that op C+1
// chains to it. Iggy's decoder skips the tail, as DecodeManifest does.
const ManifestEntryLenIdentified = ManifestEntryLen + 16

// EncodeManifestIdentified builds an ISM1 manifest with entry_len 41: each
// entry, then identities[i] (zero for an artifact whose frontier is not an
// op). len(identities) must equal len(entries).
func EncodeManifestIdentified(entries []ManifestEntry, identities []U128) []byte {
	if len(identities) != len(entries) || len(entries) > ManifestEntriesMax {
		panic(fmt.Sprintf("wire: EncodeManifestIdentified with %d entries and %d identities", len(entries), len(identities)))
	}
	return encodeManifest(entries, append(make([]U128, 0, len(identities)), identities...), nil)
}

// ManifestIdentities returns the identity tail of each entry of a manifest
// DecodeManifest accepted: zero for every entry when entry_len is below 41.
// The identity sits at byte 25 of every entry of 41 bytes or more, so a
// stamped manifest (entry_len 49) reads the same way.
func ManifestIdentities(b []byte) []U128 {
	count := int(u32(b[4:]))
	entryLen := int(b[8])
	ids := make([]U128, count)
	if entryLen < ManifestEntryLenIdentified {
		return ids
	}
	for i := range ids {
		ids[i] = getU128(b[manifestHeaderLen+i*entryLen+ManifestEntryLen:])
	}
	return ids
}

// ManifestEntryLenStamped is the entry length of a manifest whose entries
// carry, after the identity tail of ManifestEntryLenIdentified, the 8-byte
// prepare timestamp of the op their frontier names: the receiver of a
// partition offer at op C must know op C's timestamp so that, as a later
// primary, it never stamps a prepare below it (timestamps never regress).
// Iggy's decoder skips the tail, as DecodeManifest does.
const ManifestEntryLenStamped = ManifestEntryLenIdentified + 8

// EncodeManifestStamped builds an ISM1 manifest with entry_len 49: each
// entry, then identities[i], then timestamps[i] (both zero for an artifact
// whose frontier is not an op). The three lengths must match and be at most
// ManifestEntriesMax; anything else is a programming error and panics.
func EncodeManifestStamped(entries []ManifestEntry, identities []U128, timestamps []uint64) []byte {
	if len(identities) != len(entries) || len(timestamps) != len(entries) || len(entries) > ManifestEntriesMax {
		panic(fmt.Sprintf("wire: EncodeManifestStamped with %d entries, %d identities and %d timestamps",
			len(entries), len(identities), len(timestamps)))
	}
	// Non-nil even when empty: nil would select a shorter entry_len.
	return encodeManifest(entries, append(make([]U128, 0, len(identities)), identities...),
		append(make([]uint64, 0, len(timestamps)), timestamps...))
}

// ManifestTimestamps returns the timestamp tail of each entry of a manifest
// DecodeManifest accepted: zero for every entry when entry_len is below 49.
func ManifestTimestamps(b []byte) []uint64 {
	count := int(u32(b[4:]))
	entryLen := int(b[8])
	ts := make([]uint64, count)
	if entryLen < ManifestEntryLenStamped {
		return ts
	}
	for i := range ts {
		ts[i] = u64(b[manifestHeaderLen+i*entryLen+ManifestEntryLenIdentified:])
	}
	return ts
}
