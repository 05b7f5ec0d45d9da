package diskread

import (
	"bytes"
	"encoding/binary"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// The seeds of format 1: every journal record's seal, and the second seal
// of a header copy recorded for an op never acknowledged (DEVIATIONS 29).
const (
	seedSeal        uint64 = 0x766f70726a6e6c31 // "voprjnl1"
	seedSealUnacked uint64 = 0x766f70726a6e6c75 // "voprjnlu"
)

// Header fields this package reads directly (format 1, wire.md 2 and 5.1).
const (
	atChecksumBody  = 16
	atCluster       = 32
	atSize          = 48
	atCommand       = 60
	atReplica       = 61
	atReservedFrame = 62
	atCommandArea   = 128
	atOp            = 176
	atReserved      = 228

	// The empty marker's own fields (format 4.2).
	atMarkerMagic     = 64
	atMarkerKind      = 80
	atMarkerSlot      = atOp
	atMarkerSlotCount = 184
)

// markerMagic is the empty marker's 16 bytes at atMarkerMagic.
const markerMagic = "vopr:journal:nil"

// markerKind says which copy a marker is for.
type markerKind byte

const (
	markerHeader  markerKind = 1
	markerPrepare markerKind = 2
)

// commandReserved and commandPrepare are the values of the command byte a
// copy may begin with: the marker's, and a prepare's.
const (
	commandReserved = byte(wire.CommandReserved)
	commandPrepare  = byte(wire.CommandPrepare)
)

// sealedWith reports whether b holds an n-byte record, its seal under seed
// and zeros to its end (format 4.1).
func sealedWith(b []byte, n int, seed uint64) bool {
	if n+sealBytes > len(b) {
		return false
	}
	if binary.LittleEndian.Uint64(b[n:]) != xxh3.HashSeed(b[:n], seed) {
		return false
	}
	return zero(b[n+sealBytes:])
}

// zero reports whether every byte of b is zero.
func zero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// marker returns the empty marker of slot k for kind (format 4.2).
func (g Geometry) marker(kind markerKind, k uint64) wire.Header {
	var h wire.Header
	binary.LittleEndian.PutUint64(h[atCluster:], g.Cluster.Lo)
	binary.LittleEndian.PutUint64(h[atCluster+8:], g.Cluster.Hi)
	binary.LittleEndian.PutUint32(h[atSize:], wire.HeaderSize)
	h[atCommand] = commandReserved
	h[atReplica] = g.Replica
	copy(h[atMarkerMagic:], markerMagic)
	h[atMarkerKind] = byte(kind)
	binary.LittleEndian.PutUint64(h[atMarkerSlot:], k)
	binary.LittleEndian.PutUint64(h[atMarkerSlotCount:], g.SlotCount)
	// The frame seal goes in last: it covers bytes 16..256.
	h.SetChecksum(wire.FrameSeal(&h))
	return h
}

// holdsMarker reports whether sector (a copy's first sector) holds exactly
// the empty marker of kind for slot k, under the ordinary seal.
func (g Geometry) holdsMarker(sector []byte, kind markerKind, k uint64) bool {
	want := g.marker(kind, k)
	return bytes.Equal(sector[:wire.HeaderSize], want[:]) && sealedWith(sector, wire.HeaderSize, seedSeal)
}

// goodHeader reports whether h is a good header for slot k (format 5,
// rules 1 to 8).
func (g Geometry) goodHeader(h *wire.Header, k uint64) bool {
	if h[atCommand] != commandPrepare {
		return false
	}
	if size := h.Size(); size < wire.HeaderSize || uint64(size) > uint64(g.FrameSizeMax) {
		return false
	}
	if !zero(h[atReservedFrame:atCommandArea]) || !zero(h[atReserved:]) {
		return false
	}
	id := h.Checksum()
	if id.IsZero() || id != wire.PrepareIdentity(h) {
		return false
	}
	if zero(h[atChecksumBody : atChecksumBody+16]) {
		return false
	}
	if h.Cluster() != g.Cluster {
		return false
	}
	op := opField(h)
	return op >= 1 && op%g.SlotCount == k
}

// opField returns the op field of a header.
func opField(h *wire.Header) uint64 { return binary.LittleEndian.Uint64(h[atOp:]) }

// readHeaderSector reads and judges slot k's header sector (format 5).
func (g Geometry) readHeaderSector(peek Peek, k uint64) Copy {
	b := make([]byte, g.SectorSize)
	peek(g.headerSector(k), b)
	return g.judgeHeaderSector(b, k)
}

// judgeHeaderSector judges the bytes of slot k's header sector.
func (g Geometry) judgeHeaderSector(b []byte, k uint64) Copy {
	h := wire.HeaderOf(b)
	switch h[atCommand] {
	case commandReserved:
		if g.holdsMarker(b, markerHeader, k) {
			return Copy{State: CopyEmpty}
		}
	case commandPrepare:
		if !g.goodHeader(h, k) {
			break
		}
		// The ordinary seal first: a record under both seeds would need a
		// hash collision, and the ordinary one is what an append writes.
		if sealedWith(b, wire.HeaderSize, seedSeal) {
			return Copy{State: CopyValid, Op: opField(h), ID: h.Checksum(), Header: *h}
		}
		if sealedWith(b, wire.HeaderSize, seedSealUnacked) {
			return Copy{State: CopyValid, Op: opField(h), ID: h.Checksum(), Header: *h, Unacked: true}
		}
	}
	return Copy{State: CopyDamaged}
}

// readPrepareChunk reads and judges slot k's prepare chunk (format 6): the
// first sector, and the rest of the frame only when that sector says a
// frame of a plausible size is there.
func (g Geometry) readPrepareChunk(peek Peek, k uint64) Copy {
	first := make([]byte, g.SectorSize)
	peek(g.prepareSector(k), first)
	h := wire.HeaderOf(first)
	switch h[atCommand] {
	case commandReserved:
		if g.holdsMarker(first, markerPrepare, k) {
			return Copy{State: CopyEmpty}
		}
		return Copy{State: CopyDamaged}
	case commandPrepare:
	default:
		return Copy{State: CopyDamaged}
	}
	size := int(h.Size())
	if size < wire.HeaderSize || size > g.FrameSizeMax {
		return Copy{State: CopyDamaged}
	}
	b := first
	if n := g.padded(size + sealBytes); n > len(first) {
		b = make([]byte, n)
		copy(b, first)
		peek(g.prepareSector(k)+1, b[len(first):])
	}
	h = wire.HeaderOf(b)
	if !sealedWith(b, size, seedSeal) || !g.goodHeader(h, k) || wire.Validate(b[:size]) != nil {
		return Copy{State: CopyDamaged}
	}
	return Copy{State: CopyValid, Op: opField(h), ID: h.Checksum(), Header: *h, Frame: b[:size:size]}
}

// HeaderSealedUnreadable reports whether slot k's header sector holds a
// 256-byte record whose seal verifies (under either seed) that is neither
// the slot's empty marker nor a good header of an op of the slot (format 4
// and 5). A tear or damage breaks the seal, so only a write of such a
// record leaves one: the journal never writes one to its own slot (a
// misdirected write of another slot's record can land one).
func HeaderSealedUnreadable(g Geometry, peek Peek, k uint64) bool {
	b := make([]byte, g.SectorSize)
	peek(g.headerSector(k), b)
	if !sealedWith(b, wire.HeaderSize, seedSeal) && !sealedWith(b, wire.HeaderSize, seedSealUnacked) {
		return false
	}
	return g.judgeHeaderSector(b, k).State == CopyDamaged
}
