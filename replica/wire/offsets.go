package wire

import (
	"fmt"

	"github.com/zeebo/xxh3"
)

// ConsumerOffsetsSectionMax is the most entries each section (consumers,
// groups) of an ICO1 artifact may hold.
const ConsumerOffsetsSectionMax = 1 << 20

// ConsumerOffsetsVersion is the only ICO1 version; a decoder requires it
// exactly.
const ConsumerOffsetsVersion = 1

const (
	consumerOffsetsMagic     = "ICO1"
	consumerOffsetsHeaderLen = 4 + 1 + 8 + 8 + 4 + 4 // magic, version, purge_generation, next_offset, two counts
	offsetEntryLen           = 4 + 8                 // id u32, offset u64
)

// OffsetEntry is the stored offset of one consumer or consumer group.
type OffsetEntry struct {
	ID     uint32
	Offset uint64
}

// ConsumerOffsets is the consumer-offsets artifact of a partition (ICO1,
// wire.md 8.5). Both sections are sorted by strictly ascending ID.
type ConsumerOffsets struct {
	PurgeGeneration uint64
	NextOffset      uint64 // offset the next append will mint; 0 = never appended
	Consumers       []OffsetEntry
	Groups          []OffsetEntry
}

// EncodeConsumerOffsets builds an ICO1 artifact. A section longer than
// ConsumerOffsetsSectionMax or not in strictly ascending ID order is a
// programming error and panics: the result must decode.
func EncodeConsumerOffsets(c ConsumerOffsets) []byte {
	for _, s := range []struct {
		name    string
		entries []OffsetEntry
	}{{"consumers", c.Consumers}, {"groups", c.Groups}} {
		if len(s.entries) > ConsumerOffsetsSectionMax {
			panic(fmt.Sprintf("wire: EncodeConsumerOffsets: %d %s, max %d", len(s.entries), s.name, ConsumerOffsetsSectionMax))
		}
		for i := 1; i < len(s.entries); i++ {
			if s.entries[i].ID <= s.entries[i-1].ID {
				panic(fmt.Sprintf("wire: EncodeConsumerOffsets: %s ids not strictly ascending at %d (%d after %d)",
					s.name, i, s.entries[i].ID, s.entries[i-1].ID))
			}
		}
	}
	b := make([]byte, consumerOffsetsHeaderLen+(len(c.Consumers)+len(c.Groups))*offsetEntryLen+trailerLen)
	copy(b, consumerOffsetsMagic)
	b[4] = ConsumerOffsetsVersion
	put64(b[5:], c.PurgeGeneration)
	put64(b[13:], c.NextOffset)
	put32(b[21:], uint32(len(c.Consumers)))
	put32(b[25:], uint32(len(c.Groups)))
	off := consumerOffsetsHeaderLen
	for _, section := range [][]OffsetEntry{c.Consumers, c.Groups} {
		for _, e := range section {
			put32(b[off:], e.ID)
			put64(b[off+4:], e.Offset)
			off += offsetEntryLen
		}
	}
	put64(b[off:], xxh3.Hash(b[:off]))
	return b
}

// DecodeConsumerOffsets parses an ICO1 artifact. Rules, in the order the
// fields are read, then the trailer: the input holds at least the header and
// trailer; the magic is "ICO1"; the version is exactly 1; each count is at
// most ConsumerOffsetsSectionMax; the input is exactly header, entries and
// trailer long (shorter: ErrShort; longer: ErrTrailingBytes); the ids of each
// section strictly ascend; the trailer is XXH3 of every byte before it.
func DecodeConsumerOffsets(b []byte) (ConsumerOffsets, error) {
	if len(b) < consumerOffsetsHeaderLen+trailerLen {
		return ConsumerOffsets{}, formatErrf("ICO1", ErrShort, len(b), "%d bytes, an empty artifact is %d",
			len(b), consumerOffsetsHeaderLen+trailerLen)
	}
	if string(b[:4]) != consumerOffsetsMagic {
		return ConsumerOffsets{}, formatErrf("ICO1", ErrMagic, 0, "magic %x", b[:4])
	}
	if v := b[4]; v != ConsumerOffsetsVersion {
		return ConsumerOffsets{}, formatErrf("ICO1", ErrVersion, 4, "version %d, want %d", v, ConsumerOffsetsVersion)
	}
	consumers, groups := u32(b[21:]), u32(b[25:])
	if consumers > ConsumerOffsetsSectionMax {
		return ConsumerOffsets{}, formatErrf("ICO1", ErrCountTooLarge, 21, "consumer_count %d, max %d", consumers, ConsumerOffsetsSectionMax)
	}
	if groups > ConsumerOffsetsSectionMax {
		return ConsumerOffsets{}, formatErrf("ICO1", ErrCountTooLarge, 25, "group_count %d, max %d", groups, ConsumerOffsetsSectionMax)
	}
	// At most 2^21 entries of 12 bytes: no overflow, even with a 32-bit int.
	end := consumerOffsetsHeaderLen + int(consumers+groups)*offsetEntryLen
	switch {
	case len(b) < end+trailerLen:
		return ConsumerOffsets{}, formatErrf("ICO1", ErrShort, len(b), "%d consumers and %d groups need %d bytes, have %d",
			consumers, groups, end+trailerLen, len(b))
	case len(b) > end+trailerLen:
		return ConsumerOffsets{}, formatErrf("ICO1", ErrTrailingBytes, end, "%d bytes between the last entry and the trailer",
			len(b)-end-trailerLen)
	}
	c := ConsumerOffsets{PurgeGeneration: u64(b[5:]), NextOffset: u64(b[13:])}
	off := consumerOffsetsHeaderLen
	var err error
	if c.Consumers, err = decodeOffsetSection(b, &off, consumers, "consumer"); err != nil {
		return ConsumerOffsets{}, err
	}
	if c.Groups, err = decodeOffsetSection(b, &off, groups, "group"); err != nil {
		return ConsumerOffsets{}, err
	}
	if stored, got := u64(b[end:]), xxh3.Hash(b[:end]); stored != got {
		return ConsumerOffsets{}, formatErrf("ICO1", ErrTrailerMismatch, end, "stored %#016x, computed %#016x", stored, got)
	}
	return c, nil
}

// decodeOffsetSection reads n entries at *off, which the caller has checked
// lie inside b, and advances *off past them. An empty section is nil.
func decodeOffsetSection(b []byte, off *int, n uint32, what string) ([]OffsetEntry, error) {
	if n == 0 {
		return nil, nil
	}
	entries := make([]OffsetEntry, n)
	for i := range entries {
		at := *off + i*offsetEntryLen
		entries[i] = OffsetEntry{ID: u32(b[at:]), Offset: u64(b[at+4:])}
		if i > 0 && entries[i].ID <= entries[i-1].ID {
			return nil, formatErrf("ICO1", ErrIDOrder, at, "%s %d: id %d after %d", what, i, entries[i].ID, entries[i-1].ID)
		}
	}
	*off += int(n) * offsetEntryLen
	return entries, nil
}
