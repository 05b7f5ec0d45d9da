package wire

import (
	"fmt"
	"math"

	"github.com/zeebo/xxh3"
)

// ClientTableSlotsMax is the most entries an ICT2 client table may hold
// (CLIENTS_TABLE_SLOT_MAX).
const ClientTableSlotsMax = 1 << 16

// ReplyRingCapacity is the most cached replies one client-table entry
// carries (REPLY_RING_CAPACITY).
const ReplyRingCapacity = 5

const (
	clientTableMagic     = "ICT2"
	clientTableHeaderLen = 8 // magic, count
	// clientEntryFixedLen covers client_id, epoch, user_id, watermark,
	// watermark_checksum and ring_len.
	clientEntryFixedLen = 16 + 8 + 4 + 8 + 16 + 1
	// clientEntryMinLen is the smallest possible entry: one reply of one
	// header. It bounds how many entries an input can hold.
	clientEntryMinLen = clientEntryFixedLen + 4 + HeaderSize
)

// ClientTableEntry is one client of an ICT2 client table (wire.md 8.3).
type ClientTableEntry struct {
	ClientID          U128   // unique within the table
	Epoch             uint64 // commit op of the client's latest Register
	UserID            uint32
	Watermark         uint64 // highest committed request number; 0 = only registered
	WatermarkChecksum U128   // request_checksum of that request; 0 = unstamped
	// Replies holds 1..5 cached replies, oldest first. Each is the whole
	// reply_len bytes of the table: a Reply frame (command 8) whose size is
	// at least 256 and at most the slice's length. The format allows bytes
	// after the frame's size; they are kept so that the table re-encodes
	// exactly.
	Replies [][]byte
}

// checkCachedReply applies the ICT2 rule for one cached reply: a Reply frame
// with 256 <= size <= len(reply).
func checkCachedReply(reply []byte) (string, bool) {
	if len(reply) < HeaderSize {
		return fmt.Sprintf("reply_len %d is shorter than a header", len(reply)), false
	}
	h := HeaderOf(reply)
	if c := h.Command(); c != CommandReply {
		return fmt.Sprintf("command %d", uint8(c)), false
	}
	if size := h.Size(); size < HeaderSize || uint64(size) > uint64(len(reply)) {
		return fmt.Sprintf("size %d, reply_len %d", size, len(reply)), false
	}
	return "", true
}

// EncodeClientTable builds an ICT2 client table, entries in the given (slot)
// order. More than ClientTableSlotsMax entries, a repeated client id, a ring
// of 0 or more than 5 replies, or a reply that breaks the ICT2 reply rule is
// a programming error and panics: the result must decode.
func EncodeClientTable(entries []ClientTableEntry) []byte {
	if len(entries) > ClientTableSlotsMax {
		panic(fmt.Sprintf("wire: EncodeClientTable with %d entries, max %d", len(entries), ClientTableSlotsMax))
	}
	size := clientTableHeaderLen + trailerLen
	seen := make(map[U128]struct{}, len(entries))
	for i := range entries {
		e := &entries[i]
		if _, dup := seen[e.ClientID]; dup {
			panic(fmt.Sprintf("wire: EncodeClientTable: client %s appears twice", e.ClientID))
		}
		seen[e.ClientID] = struct{}{}
		if len(e.Replies) < 1 || len(e.Replies) > ReplyRingCapacity {
			panic(fmt.Sprintf("wire: EncodeClientTable: client %s has %d replies, want 1..%d", e.ClientID, len(e.Replies), ReplyRingCapacity))
		}
		size += clientEntryFixedLen
		for j, r := range e.Replies {
			if why, ok := checkCachedReply(r); !ok {
				panic(fmt.Sprintf("wire: EncodeClientTable: client %s reply %d: %s", e.ClientID, j, why))
			}
			if uint64(len(r)) > math.MaxUint32 {
				panic(fmt.Sprintf("wire: EncodeClientTable: client %s reply %d longer than a u32", e.ClientID, j))
			}
			size += 4 + len(r)
		}
	}

	b := make([]byte, size)
	copy(b, clientTableMagic)
	put32(b[4:], uint32(len(entries)))
	off := clientTableHeaderLen
	for i := range entries {
		e := &entries[i]
		putU128(b[off:], e.ClientID)
		put64(b[off+16:], e.Epoch)
		put32(b[off+24:], e.UserID)
		put64(b[off+28:], e.Watermark)
		putU128(b[off+36:], e.WatermarkChecksum)
		b[off+52] = uint8(len(e.Replies))
		off += clientEntryFixedLen
		for _, r := range e.Replies {
			put32(b[off:], uint32(len(r)))
			off += 4 + copy(b[off+4:], r)
		}
	}
	put64(b[off:], xxh3.Hash(b[:off]))
	return b
}

// DecodeClientTable parses an ICT2 client table. Rules, in the order the
// fields are read, then the trailer: the input holds at least the magic,
// count and trailer; the magic is "ICT2"; count is at most
// ClientTableSlotsMax; each entry fits (ErrShort otherwise), its client id
// has not appeared before, its ring_len is 1..5, and each reply fits and is a
// Reply frame with 256 <= size <= reply_len; no bytes lie between the last
// entry and the trailer; the trailer is XXH3 of every byte before it.
//
// The replies are copied out of b: a decoded table lives on as replica state
// long after the artifact buffer is gone.
func DecodeClientTable(b []byte) ([]ClientTableEntry, error) {
	if len(b) < clientTableHeaderLen+trailerLen {
		return nil, formatErrf("ICT2", ErrShort, len(b), "%d bytes, an empty table is %d", len(b), clientTableHeaderLen+trailerLen)
	}
	if string(b[:4]) != clientTableMagic {
		return nil, formatErrf("ICT2", ErrMagic, 0, "magic %x", b[:4])
	}
	count := u32(b[4:])
	if count > ClientTableSlotsMax {
		return nil, formatErrf("ICT2", ErrCountTooLarge, 4, "count %d, max %d", count, ClientTableSlotsMax)
	}
	end := len(b) - trailerLen // the entries must end exactly here
	// Size the result by what the input can hold, never by count alone.
	capacity := min(int(count), (end-clientTableHeaderLen)/clientEntryMinLen)
	entries := make([]ClientTableEntry, 0, capacity)
	seen := make(map[U128]struct{}, capacity)
	off := clientTableHeaderLen
	for i := uint32(0); i < count; i++ {
		if end-off < clientEntryFixedLen {
			return nil, formatErrf("ICT2", ErrShort, off, "entry %d of %d: %d bytes left, its fixed fields need %d",
				i, count, end-off, clientEntryFixedLen)
		}
		e := ClientTableEntry{
			ClientID:          getU128(b[off:]),
			Epoch:             u64(b[off+16:]),
			UserID:            u32(b[off+24:]),
			Watermark:         u64(b[off+28:]),
			WatermarkChecksum: getU128(b[off+36:]),
		}
		if _, dup := seen[e.ClientID]; dup {
			return nil, formatErrf("ICT2", ErrDuplicateClient, off, "entry %d: client %s", i, e.ClientID)
		}
		seen[e.ClientID] = struct{}{}
		ringLen := int(b[off+52])
		if ringLen < 1 || ringLen > ReplyRingCapacity {
			return nil, formatErrf("ICT2", ErrRingLen, off+52, "entry %d: ring_len %d", i, ringLen)
		}
		off += clientEntryFixedLen
		e.Replies = make([][]byte, ringLen)
		for j := range e.Replies {
			if end-off < 4 {
				return nil, formatErrf("ICT2", ErrShort, off, "entry %d reply %d: reply_len cut off", i, j)
			}
			replyLen := u32(b[off:])
			if uint64(replyLen) > uint64(end-off-4) {
				return nil, formatErrf("ICT2", ErrShort, off, "entry %d reply %d: reply_len %d, %d bytes left",
					i, j, replyLen, end-off-4)
			}
			reply := b[off+4 : off+4+int(replyLen)]
			if why, ok := checkCachedReply(reply); !ok {
				return nil, formatErrf("ICT2", ErrReplyFrame, off+4, "entry %d reply %d: %s", i, j, why)
			}
			e.Replies[j] = append([]byte(nil), reply...)
			off += 4 + len(reply)
		}
		entries = append(entries, e)
	}
	if off != end {
		return nil, formatErrf("ICT2", ErrTrailingBytes, off, "%d bytes between the last entry and the trailer", end-off)
	}
	if stored, got := u64(b[end:]), xxh3.Hash(b[:end]); stored != got {
		return nil, formatErrf("ICT2", ErrTrailerMismatch, end, "stored %#016x, computed %#016x", stored, got)
	}
	if len(entries) == 0 {
		return nil, nil
	}
	return entries, nil
}
