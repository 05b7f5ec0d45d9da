package journal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// On-disk records. Every chunk the journal reads begins with one record and
// its seal, then zeros to the end of the sectors it occupies:
//
//	header sector:  [256-byte prepare header or header marker][seal][zeros]
//	prepare chunk:  [prepare frame (size bytes) or prepare marker][seal][zeros]
//
// The seal is XXH3-64 (seeded, little-endian) of the record. A prepare's own
// checksums (identity, body seal) leave its view field uncovered (wire.md
// 3.3); the seal covers every byte, so a flipped view bit is damage rather
// than a silently different view, and a torn write is caught even where it
// tore only uncovered bytes. The padding must be zero: nothing the journal
// writes leaves anything else there, so anything else is damage.
//
// The empty marker (what Format writes) is a 256-byte header of command
// Reserved (0), which no prepare has, with a fixed magic, the kind of chunk
// it is for (header sector or prepare chunk), the slot (at the prepare's op
// offset), the slot count, cluster and replica, and a frame seal over bytes
// 16..256 in its checksum field. A marker is valid only when it equals,
// byte for byte, the one Format writes for that slot and kind, so one written
// for another slot, kind, ring size or replica is damage too.

// sealSeed keys the sector seal ("voprjnl1"), so that it is not the plain
// XXH3 that other checksums in the system use.
const sealSeed uint64 = 0x766f70726a6e6c31

func sealOf(record []byte) uint64 { return xxh3.HashSeed(record, sealSeed) }

// sealSeedUnacked keys the seal of a header copy that Reconcile recorded
// for an op this replica never acknowledged ("voprjnlu"). The header bytes
// are the canonical header either way; only the seal tells the two apart,
// so a recovery knows the op may be nacked (see HeaderUnacked).
const sealSeedUnacked uint64 = 0x766f70726a6e6c75

func sealUnackedOf(record []byte) uint64 { return xxh3.HashSeed(record, sealSeedUnacked) }

// Offsets inside a 256-byte header (wire.md 2 and 5.1) that this package
// reads or writes directly.
const (
	offCluster         = 32
	offCommand         = 60
	offReplica         = 61
	offReservedFrame   = 62
	offCommandArea     = 128
	offPrepareOp       = 176
	offPrepareReserved = 228

	offMarkerMagic     = 64
	offMarkerKind      = 80
	offMarkerSlot      = offPrepareOp
	offMarkerSlotCount = 184
)

// markerMagic identifies an empty marker (16 bytes).
const markerMagic = "vopr:journal:nil"

// Marker kinds: which chunk a marker is for.
const (
	markerKindHeader  byte = 1
	markerKindPrepare byte = 2
)

// encodeMarker writes the empty marker of kind for slot into h.
func encodeMarker(h *wire.Header, cfg Config, kind byte, slot uint64) {
	*h = wire.Header{}
	binary.LittleEndian.PutUint64(h[offCluster:], cfg.Cluster.Lo)
	binary.LittleEndian.PutUint64(h[offCluster+8:], cfg.Cluster.Hi)
	h.SetSize(wire.HeaderSize)
	h.SetCommand(wire.CommandReserved)
	h[offReplica] = cfg.Replica
	copy(h[offMarkerMagic:], markerMagic)
	h[offMarkerKind] = kind
	binary.LittleEndian.PutUint64(h[offMarkerSlot:], slot)
	binary.LittleEndian.PutUint64(h[offMarkerSlotCount:], cfg.SlotCount)
	h.SetChecksum(wire.FrameSeal(h))
}

// putRecord writes record, its seal and zero padding into dst, which must
// hold at least len(record)+sealBytes bytes.
func putRecord(dst, record []byte) {
	if len(dst) < len(record)+sealBytes {
		panic(fmt.Sprintf("journal: a %d-byte record in %d bytes", len(record), len(dst)))
	}
	n := copy(dst, record)
	binary.LittleEndian.PutUint64(dst[n:], sealOf(record))
	clear(dst[n+sealBytes:])
}

// putRecordUnacked is putRecord with the unacknowledged-header seal.
func putRecordUnacked(dst, record []byte) {
	putRecord(dst, record)
	binary.LittleEndian.PutUint64(dst[len(record):], sealUnackedOf(record))
}

// sealed reports whether b holds an n-byte record followed by its seal and
// zeros to the end.
func sealed(b []byte, n int) bool {
	return sealedWith(b, n, sealOf)
}

func sealedWith(b []byte, n int, seal func([]byte) uint64) bool {
	if n+sealBytes > len(b) {
		return false
	}
	if binary.LittleEndian.Uint64(b[n:]) != seal(b[:n]) {
		return false
	}
	return allZero(b[n+sealBytes:])
}

// allZero reports whether every byte of b is zero, a word at a time (the
// padding of every sector the journal reads is checked).
func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// isMarker reports whether b (a whole chunk prefix: at least one sector)
// holds exactly the empty marker of kind for slot.
func isMarker(b []byte, cfg Config, kind byte, slot uint64) bool {
	var want wire.Header
	encodeMarker(&want, cfg, kind, slot)
	return bytes.Equal(b[:wire.HeaderSize], want[:]) && sealed(b, wire.HeaderSize)
}

// SectorState is what one stored copy (a header sector or a prepare chunk)
// was found to hold.
type SectorState uint8

// Sector states.
const (
	// SectorUnread is the zero value: not read (never in a Recovery).
	SectorUnread SectorState = iota
	// SectorEmpty: the valid empty marker Format wrote for this slot.
	SectorEmpty
	// SectorValid: a valid prepare header (header sector) or a valid
	// prepare frame (prepare chunk) of an op that maps to this slot.
	SectorValid
	// SectorDamaged: anything else: unreadable (a latent sector error),
	// failed seal or checksum, torn, garbage, or a valid record that
	// belongs to another slot (a misdirected write).
	SectorDamaged
)

var sectorStateNames = [...]string{"unread", "empty", "valid", "damaged"}

// String returns the state's name.
func (s SectorState) String() string {
	if int(s) < len(sectorStateNames) {
		return sectorStateNames[s]
	}
	return fmt.Sprintf("SectorState(%d)", uint8(s))
}

// headerProblem checks a 256-byte prepare header as the journal stores it:
// the rules of wire.md 5.1 that the header alone can show, a nonzero
// identity that verifies, a nonzero body seal (so that the body can be
// verified), this cluster, a size within FrameSizeMax, and an op >= 1 that
// maps to slot. It returns "" for a good header, else what is wrong.
func headerProblem(cfg Config, h *wire.Header, slot uint64) string {
	if h.Command() != wire.CommandPrepare {
		return fmt.Sprintf("command %s", h.Command())
	}
	if size := h.Size(); size < wire.HeaderSize || uint64(size) > uint64(cfg.FrameSizeMax) {
		return fmt.Sprintf("size %d outside %d..%d", size, wire.HeaderSize, cfg.FrameSizeMax)
	}
	for _, c := range h[offReservedFrame:offCommandArea] {
		if c != 0 {
			return "reserved_frame not zero"
		}
	}
	for _, c := range h[offPrepareReserved:] {
		if c != 0 {
			return "reserved not zero"
		}
	}
	id := h.Checksum()
	if id.IsZero() {
		return "unsealed prepare (identity 0)"
	}
	if want := wire.PrepareIdentity(h); id != want {
		return fmt.Sprintf("identity %s, computed %s", id, want)
	}
	if h.ChecksumBody().IsZero() {
		return "no body seal (checksum_body 0)"
	}
	if c := h.Cluster(); c != cfg.Cluster {
		return fmt.Sprintf("cluster %s, want %s", c, cfg.Cluster)
	}
	op := opOf(h)
	if op == 0 {
		return "op 0"
	}
	if slot != op%cfg.SlotCount {
		return fmt.Sprintf("op %d belongs to slot %d, not %d", op, op%cfg.SlotCount, slot)
	}
	return ""
}

// prepareProblem checks a whole prepare frame: headerProblem, then
// wire.Validate (which verifies the body seal and, for a batch, the batch).
func prepareProblem(cfg Config, frame []byte, slot uint64) string {
	if len(frame) < wire.HeaderSize {
		return fmt.Sprintf("%d bytes, less than a header", len(frame))
	}
	h := wire.HeaderOf(frame)
	if p := headerProblem(cfg, h, slot); p != "" {
		return p
	}
	if err := wire.Validate(frame); err != nil {
		return err.Error()
	}
	return ""
}

// opOf returns the op field of a prepare header.
func opOf(h *wire.Header) uint64 { return binary.LittleEndian.Uint64(h[offPrepareOp:]) }

// headerCopy is what a header sector holds.
type headerCopy struct {
	state  SectorState
	op     uint64
	id     wire.U128
	header *wire.Header // only when state is SectorValid
	// unacked: a valid header Reconcile recorded for an op this replica had
	// not acknowledged (sealed with sealSeedUnacked).
	unacked bool
}

// cloneHeader returns a copy of h of its own.
func cloneHeader(h *wire.Header) *wire.Header {
	c := *h
	return &c
}

// parseHeaderSector classifies one header sector's bytes.
func parseHeaderSector(cfg Config, slot uint64, b []byte) headerCopy {
	h := wire.HeaderOf(b)
	switch h.Command() {
	case wire.CommandReserved:
		if isMarker(b, cfg, markerKindHeader, slot) {
			return headerCopy{state: SectorEmpty}
		}
	case wire.CommandPrepare:
		if headerProblem(cfg, h, slot) != "" {
			break
		}
		if sealed(b, wire.HeaderSize) {
			return headerCopy{state: SectorValid, op: opOf(h), id: h.Checksum(), header: cloneHeader(h)}
		}
		if sealedWith(b, wire.HeaderSize, sealUnackedOf) {
			return headerCopy{state: SectorValid, op: opOf(h), id: h.Checksum(), header: cloneHeader(h), unacked: true}
		}
	}
	return headerCopy{state: SectorDamaged}
}

// prepareCopy is what a prepare chunk holds.
type prepareCopy struct {
	state SectorState
	op    uint64
	id    wire.U128
	buf   []byte // SectorValid: the padded chunk prefix read; frame = buf[:size]
	size  int
}

func (p *prepareCopy) frame() []byte { return p.buf[:p.size:p.size] }

// peekPrepareChunk looks at the first sector of a prepare chunk: the empty
// marker (done), a plausible prepare of size bytes (read the rest, then
// parsePrepareChunk), or damage (done).
func peekPrepareChunk(cfg Config, slot uint64, first []byte) (state SectorState, size int) {
	h := wire.HeaderOf(first)
	switch h.Command() {
	case wire.CommandReserved:
		if isMarker(first, cfg, markerKindPrepare, slot) {
			return SectorEmpty, 0
		}
	case wire.CommandPrepare:
		if s := h.Size(); s >= wire.HeaderSize && uint64(s) <= uint64(cfg.FrameSizeMax) {
			return SectorValid, int(s)
		}
	}
	return SectorDamaged, 0
}

// parsePrepareChunk checks a prepare chunk prefix buf (whole sectors, at
// least size+sealBytes bytes) holding a frame of size bytes.
func parsePrepareChunk(cfg Config, slot uint64, buf []byte, size int) prepareCopy {
	if bug.TornTrusted && headerProblem(cfg, wire.HeaderOf(buf), slot) == "" {
		h := wire.HeaderOf(buf) // canary_torn_trusted: the header's identity checked, not the chunk's seal nor the body
		return prepareCopy{state: SectorValid, op: opOf(h), id: h.Checksum(), buf: buf, size: size}
	}
	if !sealed(buf, size) || prepareProblem(cfg, buf[:size], slot) != "" {
		return prepareCopy{state: SectorDamaged}
	}
	h := wire.HeaderOf(buf)
	return prepareCopy{state: SectorValid, op: opOf(h), id: h.Checksum(), buf: buf, size: size}
}
