package clients

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// Errors of Decode beyond the ICT2 format rules (which come back as the wire
// package's *FormatError).
var (
	// ErrTooManyClients: the table holds more clients than the capacity the
	// caller configured. Iggy grows its table to fit; vopr keeps every
	// replica's capacity equal to its configuration and refuses.
	ErrTooManyClients = errors.New("clients: more entries than the table capacity")
	// ErrEntry: an entry breaks a rule the table relies on: client id 0, or a
	// cached reply that belongs to another client.
	ErrEntry = errors.New("clients: invalid entry")
)

// Encode returns the table as ICT2 (wire.md 8.3): entries in slot order,
// compacted, each ring oldest first, with the XXH3 trailer.
func (t *Table) Encode() []byte {
	entries := make([]wire.ClientTableEntry, 0, len(t.index))
	for _, e := range t.slots {
		if e == nil {
			continue
		}
		ce := wire.ClientTableEntry{
			ClientID: e.client, Epoch: e.epoch, UserID: e.user, Watermark: e.watermark,
			WatermarkChecksum: e.watermarkChecksum, Replies: make([][]byte, len(e.ring)),
		}
		for i := range e.ring {
			ce.Replies[i] = e.ring[i].frame
		}
		entries = append(entries, ce)
	}
	return wire.EncodeClientTable(entries)
}

// Decode rebuilds a table of capacity slots from ICT2 bytes. The entries
// take slots 0..n-1 in their encoded order; each entry's newest reply gives
// its eviction key. Beyond the ICT2 rules, Decode refuses more entries than
// capacity (ErrTooManyClients), a client id 0 and a cached reply whose client
// is not the entry's (ErrEntry). The input is not retained.
func Decode(b []byte, capacity int) (*Table, error) {
	entries, err := wire.DecodeClientTable(b)
	if err != nil {
		return nil, err
	}
	if len(entries) > capacity {
		return nil, fmt.Errorf("%w: %d entries, capacity %d", ErrTooManyClients, len(entries), capacity)
	}
	t := New(capacity)
	for slot, ce := range entries {
		if ce.ClientID.IsZero() {
			return nil, fmt.Errorf("%w: entry %d has client id 0", ErrEntry, slot)
		}
		e := &entry{
			client: ce.ClientID, epoch: ce.Epoch, user: ce.UserID, watermark: ce.Watermark,
			watermarkChecksum: ce.WatermarkChecksum, ring: make([]cached, 0, RingCapacity),
		}
		for i, r := range ce.Replies {
			var h wire.ReplyHeader
			h.Decode(wire.HeaderOf(r))
			if h.Client != ce.ClientID {
				return nil, fmt.Errorf("%w: entry %d (client %s) reply %d is for client %s",
					ErrEntry, slot, ce.ClientID, i, h.Client)
			}
			e.ring = append(e.ring, cached{frame: r, request: h.Request, commit: h.Commit, checksum: h.RequestChecksum})
		}
		e.latestCommit = e.ring[len(e.ring)-1].commit
		t.slots[slot] = e
		t.index[ce.ClientID] = slot
	}
	return t, nil
}

// Digest returns a 64-bit digest of the table's contents, independent of the
// slot positions: XXH3 over the entries in ascending client-id order (high
// half, then low half), each with its epoch, user, watermark, watermark
// checksum, newest commit and its cached reply frames, oldest first.
func (t *Table) Digest() uint64 {
	es := make([]*entry, 0, len(t.index))
	for _, e := range t.slots {
		if e != nil {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b *entry) int {
		if a.client.Hi != b.client.Hi {
			return cmpU64(a.client.Hi, b.client.Hi)
		}
		return cmpU64(a.client.Lo, b.client.Lo)
	})
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, uint32(len(es)))
	for _, e := range es {
		b = binary.LittleEndian.AppendUint64(b, e.client.Lo)
		b = binary.LittleEndian.AppendUint64(b, e.client.Hi)
		b = binary.LittleEndian.AppendUint64(b, e.epoch)
		b = binary.LittleEndian.AppendUint32(b, e.user)
		b = binary.LittleEndian.AppendUint64(b, e.watermark)
		b = binary.LittleEndian.AppendUint64(b, e.watermarkChecksum.Lo)
		b = binary.LittleEndian.AppendUint64(b, e.watermarkChecksum.Hi)
		b = binary.LittleEndian.AppendUint64(b, e.latestCommit)
		b = append(b, byte(len(e.ring)))
		for _, r := range e.ring {
			b = binary.LittleEndian.AppendUint32(b, uint32(len(r.frame)))
			b = append(b, r.frame...)
		}
	}
	return xxh3.Hash(b)
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
