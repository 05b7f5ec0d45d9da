package wire

import (
	"bytes"
	"slices"
	"testing"

	"github.com/zeebo/xxh3"
	"pgregory.net/rapid"
)

// artRawReply builds a cached reply by hand: replyLen bytes, a Reply header
// with the given size, client (low half) and request, then body bytes
// 0x11, 0x12, ... up to replyLen.
func artRawReply(size, replyLen int, client, request uint64) []byte {
	b := make([]byte, replyLen)
	put32(b[48:], uint32(size)) // size
	b[60] = 8                   // command Reply
	put64(b[160:], client)      // client, low half
	put64(b[200:], request)     // request
	for i := HeaderSize; i < replyLen; i++ {
		b[i] = byte(0x11 + i - HeaderSize)
	}
	return b
}

func TestRawReplyMatchesReplyHeader(t *testing.T) {
	// The hand-built reply is what the typed encoder writes, so the tables
	// below hold real Reply frames.
	var h Header
	x := ReplyHeader{Prefix: Prefix{Size: 260}, Client: U128{Lo: 0x0102}, Request: 3}
	x.Encode(&h)
	if raw := artRawReply(260, 260, 0x0102, 3); !bytes.Equal(raw[:HeaderSize], h[:]) {
		t.Fatalf("hand-built reply header differs from ReplyHeader.Encode\n got %x\nwant %x", raw[:HeaderSize], h[:])
	}
}

// artClientTableExample is a hand-built table: two clients, the first with
// two replies (one with a body), the second with one reply whose reply_len
// runs 44 bytes past its size, which ICT2 allows.
func artClientTableExample() []ClientTableEntry {
	return []ClientTableEntry{
		{
			ClientID: U128{Lo: 0x0102}, Epoch: 5, UserID: 7, Watermark: 3,
			WatermarkChecksum: U128{Lo: 0xaabb, Hi: 1},
			Replies:           [][]byte{artRawReply(256, 256, 0x0102, 2), artRawReply(260, 260, 0x0102, 3)},
		},
		{
			ClientID: U128{Hi: 9}, Epoch: 9,
			Replies: [][]byte{artRawReply(256, 300, 0, 0)},
		},
	}
}

func TestClientTableExample(t *testing.T) {
	// The expected bytes, field by field (wire.md 8.3).
	var want []byte
	add := func(s string) { want = append(want, mustHex(t, s)...) }
	add("49435432") // magic "ICT2"
	add("02000000") // count 2
	// Entry 0.
	add("0201000000000000 0000000000000000") // client_id 0x0102
	add("0500000000000000")                  // epoch 5
	add("07000000")                          // user_id 7
	add("0300000000000000")                  // watermark 3
	add("bbaa000000000000 0100000000000000") // watermark_checksum lo 0xaabb, hi 1
	add("02")                                // ring_len 2
	add("00010000")                          // reply_len 256
	want = append(want, artRawReply(256, 256, 0x0102, 2)...)
	add("04010000") // reply_len 260
	want = append(want, artRawReply(260, 260, 0x0102, 3)...)
	// Entry 1.
	add("0000000000000000 0900000000000000") // client_id hi 9
	add("0900000000000000")                  // epoch 9
	add("00000000")                          // user_id 0
	add("0000000000000000")                  // watermark 0: only registered
	add("0000000000000000 0000000000000000") // watermark_checksum 0: unstamped
	add("01")                                // ring_len 1
	add("2c010000")                          // reply_len 300
	want = append(want, artRawReply(256, 300, 0, 0)...)
	want = artAppend64(want, xxh3.Hash(want)) // trailer

	if n := 8 + 2*53 + 4 + 256 + 4 + 260 + 4 + 300 + 8; len(want) != n {
		t.Fatalf("expected table is %d bytes, layout says %d", len(want), n)
	}
	got := EncodeClientTable(artClientTableExample())
	if !bytes.Equal(got, want) {
		t.Fatalf("EncodeClientTable\n got %x\nwant %x", got, want)
	}
	back, err := DecodeClientTable(want)
	if err != nil {
		t.Fatalf("DecodeClientTable: %v", err)
	}
	artEqualClientTables(t, back, artClientTableExample())
	// The decoded replies are copies: the input can be reused.
	clear(want)
	artEqualClientTables(t, back, artClientTableExample())

	empty := mustHex(t, "49435432 00000000")
	empty = artAppend64(empty, xxh3.Hash(empty))
	if got := EncodeClientTable(nil); !bytes.Equal(got, empty) {
		t.Fatalf("empty table %x, want %x", got, empty)
	}
	if back, err := DecodeClientTable(empty); err != nil || back != nil {
		t.Fatalf("DecodeClientTable(empty) = %v, %v", back, err)
	}
}

func artEqualClientTables(t artTB, got, want []ClientTableEntry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.ClientID != w.ClientID || g.Epoch != w.Epoch || g.UserID != w.UserID ||
			g.Watermark != w.Watermark || g.WatermarkChecksum != w.WatermarkChecksum ||
			!slices.EqualFunc(g.Replies, w.Replies, bytes.Equal) {
			t.Fatalf("entry %d = %+v, want %+v", i, g, w)
		}
	}
}

// artRawEntry is a client-table entry for building malformed tables: its
// ring_len is written as given, whatever Replies holds.
type artRawEntry struct {
	id      U128
	ringLen byte
	replies [][]byte
}

// artRawClientTable builds an ICT2 table without any checks, count as given,
// and seals it with a correct trailer.
func artRawClientTable(count uint32, entries ...artRawEntry) []byte {
	b := []byte("ICT2")
	b = artAppend32(b, count)
	for _, e := range entries {
		var fixed [clientEntryFixedLen]byte
		putU128(fixed[:], e.id)
		fixed[52] = e.ringLen
		b = append(b, fixed[:]...)
		for _, r := range e.replies {
			b = artAppend32(b, uint32(len(r)))
			b = append(b, r...)
		}
	}
	return artAppend64(b, xxh3.Hash(b))
}

func artAppend32(b []byte, v uint32) []byte {
	var x [4]byte
	put32(x[:], v)
	return append(b, x[:]...)
}

func TestClientTableRejections(t *testing.T) {
	ok := artRawReply(256, 256, 1, 1)
	one := func(id uint64, replies ...[]byte) artRawEntry {
		return artRawEntry{id: U128{Lo: id}, ringLen: byte(len(replies)), replies: replies}
	}
	example := func() []byte { return EncodeClientTable(artClientTableExample()) }
	const entry1 = 8 + 53 + 4 + 256 + 4 + 260 // offset of the example's second entry
	cases := []struct {
		name   string
		b      []byte
		rule   Rule
		offset int
	}{
		{"empty", nil, ErrShort, 0},
		{"15 bytes", artRawClientTable(0)[:15], ErrShort, 15},
		{"magic", append([]byte("ICT1"), artRawClientTable(0)[4:]...), ErrMagic, 0},
		{"magic of the manifest", append([]byte("ISM1"), artRawClientTable(0)[4:]...), ErrMagic, 0},
		{"count above the max", artRawClientTable(ClientTableSlotsMax + 1), ErrCountTooLarge, 4},
		{"count at the max, no entries", artRawClientTable(ClientTableSlotsMax), ErrShort, 8},
		{"count above the entries", artRawClientTable(2, one(1, ok)), ErrShort, 8 + 53 + 4 + 256},
		{"count below the entries", artRawClientTable(1, one(1, ok), one(2, ok)), ErrTrailingBytes, 8 + 53 + 4 + 256},
		{"byte between the last entry and the trailer", func() []byte {
			b := artRawClientTable(1, one(1, ok))
			b = slices.Insert(b[:len(b)-8], len(b)-8, 0)
			return artAppend64(b, xxh3.Hash(b))
		}(), ErrTrailingBytes, 8 + 53 + 4 + 256},
		{"duplicate client", artRawClientTable(2, one(1, ok), one(1, ok)), ErrDuplicateClient, 8 + 53 + 4 + 256},
		{"duplicate zero client", artRawClientTable(3, one(0, ok), one(5, ok), one(0, ok)), ErrDuplicateClient, 8 + 2*(53+4+256)},
		{"ring_len 0", artRawClientTable(1, artRawEntry{id: U128{Lo: 1}}), ErrRingLen, 8 + 52},
		{"ring_len 6", artRawClientTable(1, one(1, ok, ok, ok, ok, ok, ok)), ErrRingLen, 8 + 52},
		{"ring_len 5 is fine, 6th reply is trailing", artRawClientTable(1,
			artRawEntry{id: U128{Lo: 1}, ringLen: 5, replies: [][]byte{ok, ok, ok, ok, ok, ok}}), ErrTrailingBytes, 8 + 53 + 5*260},
		{"ring_len above the replies", artRawClientTable(1, artRawEntry{id: U128{Lo: 1}, ringLen: 2, replies: [][]byte{ok}}), ErrShort, 8 + 53 + 260},
		{"reply_len cut", func() []byte {
			b := artRawClientTable(1, artRawEntry{id: U128{Lo: 1}, ringLen: 2, replies: [][]byte{ok}})
			b = append(b[:len(b)-8], 1, 0) // two of reply_len's four bytes
			return artAppend64(b, xxh3.Hash(b))
		}(), ErrShort, 8 + 53 + 260},
		{"reply_len past the end", func() []byte {
			b := artRawClientTable(1, one(1, ok))
			put32(b[8+53:], 257)
			return artAppend64(b[:len(b)-8], xxh3.Hash(b[:len(b)-8]))
		}(), ErrShort, 8 + 53},
		{"reply shorter than a header", artRawClientTable(1, one(1, ok[:255])), ErrReplyFrame, 8 + 53 + 4},
		{"reply_len 0", artRawClientTable(1, one(1, []byte{})), ErrReplyFrame, 8 + 53 + 4},
		{"reply command Request", func() []byte {
			r := slices.Clone(ok)
			r[60] = byte(CommandRequest)
			return artRawClientTable(1, one(1, r))
		}(), ErrReplyFrame, 8 + 53 + 4},
		{"reply size 255", artRawClientTable(1, one(1, artRawReply(255, 256, 1, 1))), ErrReplyFrame, 8 + 53 + 4},
		{"reply size 0", artRawClientTable(1, one(1, artRawReply(0, 256, 1, 1))), ErrReplyFrame, 8 + 53 + 4},
		{"reply size past reply_len", artRawClientTable(1, one(1, artRawReply(257, 256, 1, 1))), ErrReplyFrame, 8 + 53 + 4},
		{"second reply bad", artRawClientTable(1, one(1, ok, artRawReply(300, 299, 1, 1))), ErrReplyFrame, 8 + 53 + 260 + 4},
		{"trailer", func() []byte { b := example(); b[len(b)-8] ^= 1; return b }(), ErrTrailerMismatch, len(example()) - 8},
		{"epoch", func() []byte { b := example(); b[8+16] ^= 1; return b }(), ErrTrailerMismatch, len(example()) - 8},
		{"reply body", func() []byte { b := example(); b[entry1-1] ^= 1; return b }(), ErrTrailerMismatch, len(example()) - 8},
		{"second client id made equal to the first", func() []byte {
			b := example()
			copy(b[entry1:entry1+16], b[8:24])
			return b
		}(), ErrDuplicateClient, entry1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entries, err := DecodeClientTable(c.b)
			fe := artExpectRule(t, err, "ICT2", c.rule)
			if fe.Offset != c.offset {
				t.Errorf("offset %d, want %d (%v)", fe.Offset, c.offset, fe)
			}
			if entries != nil {
				t.Errorf("entries returned with an error")
			}
		})
	}
}

func TestClientTableAssertions(t *testing.T) {
	ok := artRawReply(256, 256, 1, 1)
	cases := []struct {
		name    string
		entries []ClientTableEntry
	}{
		{"too many", make([]ClientTableEntry, ClientTableSlotsMax+1)},
		{"duplicate", []ClientTableEntry{{ClientID: U128{Lo: 1}, Replies: [][]byte{ok}}, {ClientID: U128{Lo: 1}, Replies: [][]byte{ok}}}},
		{"no replies", []ClientTableEntry{{ClientID: U128{Lo: 1}}}},
		{"six replies", []ClientTableEntry{{ClientID: U128{Lo: 1}, Replies: [][]byte{ok, ok, ok, ok, ok, ok}}}},
		{"short reply", []ClientTableEntry{{ClientID: U128{Lo: 1}, Replies: [][]byte{ok[:200]}}}},
		{"size past the reply", []ClientTableEntry{{ClientID: U128{Lo: 1}, Replies: [][]byte{artRawReply(300, 256, 1, 1)}}}},
	}
	for _, c := range cases {
		artMustPanic(t, c.name, func() { EncodeClientTable(c.entries) })
	}
}

// artGenReply draws a valid cached reply: size 256..300, reply_len at or a
// little above it, random bytes elsewhere.
func artGenReply() *rapid.Generator[[]byte] {
	return rapid.Custom(func(t *rapid.T) []byte {
		size := rapid.IntRange(HeaderSize, HeaderSize+44).Draw(t, "size")
		extra := rapid.IntRange(0, 8).Draw(t, "extra")
		r := rapid.SliceOfN(rapid.Byte(), size+extra, size+extra).Draw(t, "bytes")
		put32(r[48:], uint32(size))
		r[60] = byte(CommandReply)
		return r
	})
}

func artGenClientEntry() *rapid.Generator[ClientTableEntry] {
	return rapid.Custom(func(t *rapid.T) ClientTableEntry {
		return ClientTableEntry{
			// A narrow id range makes duplicate-id handling in the
			// generator (and in mutated inputs) likely.
			ClientID:          U128{Lo: rapid.Uint64Range(0, 20).Draw(t, "id_lo"), Hi: rapid.Uint64Range(0, 1).Draw(t, "id_hi")},
			Epoch:             rapid.Uint64().Draw(t, "epoch"),
			UserID:            rapid.Uint32().Draw(t, "user_id"),
			Watermark:         rapid.Uint64().Draw(t, "watermark"),
			WatermarkChecksum: U128{Lo: rapid.Uint64().Draw(t, "wc_lo"), Hi: rapid.Uint64().Draw(t, "wc_hi")},
			Replies:           rapid.SliceOfN(artGenReply(), 1, ReplyRingCapacity).Draw(t, "replies"),
		}
	})
}

func artGenClientTable(maxEntries int) *rapid.Generator[[]ClientTableEntry] {
	return rapid.SliceOfNDistinct(artGenClientEntry(), 0, maxEntries, func(e ClientTableEntry) U128 { return e.ClientID })
}

func TestClientTableRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		entries := artGenClientTable(6).Draw(t, "entries")
		b := EncodeClientTable(entries)
		got, err := DecodeClientTable(b)
		if err != nil {
			t.Fatalf("DecodeClientTable(EncodeClientTable(...)): %v", err)
		}
		artEqualClientTables(t, got, entries)
	})
}

// artCheckClientTableInput is the oracle of the property test and the fuzz
// target: ICT2 has one encoding per table, so whatever decodes must
// re-encode to exactly its input.
func artCheckClientTableInput(t artTB, b []byte) {
	t.Helper()
	artCheckCanonical(t, b, "ICT2", DecodeClientTable, EncodeClientTable)
}

func TestDecodeClientTableNeverPanicsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b []byte
		if rapid.Bool().Draw(t, "from_valid") {
			b = EncodeClientTable(artGenClientTable(3).Draw(t, "entries"))
			for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(b)-1), 0, 3).Draw(t, "bytes") {
				b[i] = rapid.Byte().Draw(t, "value")
			}
			if rapid.Bool().Draw(t, "reseal") {
				put64(b[len(b)-8:], xxh3.Hash(b[:len(b)-8]))
			}
			b = b[:rapid.IntRange(0, len(b)).Draw(t, "cut")]
		} else {
			b = rapid.SliceOfN(rapid.Byte(), 0, 400).Draw(t, "noise")
		}
		artCheckClientTableInput(t, b)
	})
}
