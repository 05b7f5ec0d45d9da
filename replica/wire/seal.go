package wire

import "github.com/zeebo/xxh3"

// FrameSeal returns the frame seal of h: XXH3-64 of header bytes 16..256,
// zero-extended to a u128 (wire.md 3.2). The body is covered only through
// checksum_body, which lies inside those bytes.
func FrameSeal(h *Header) U128 { return U128From64(xxh3.Hash(h[offChecksumBody:])) }

// PrepareIdentity returns the identity of the prepare whose header is h:
// XXH3-64 of the whole header with checksum (0..16) and view (52..56) zeroed,
// zero-extended (wire.md 3.3). The command byte is read as Prepare (6), so a
// RepairPrepare has the identity of the journaled prepare it carries, exactly
// as the receiver's rewrite of byte 60 before verifying gives.
func PrepareIdentity(h *Header) U128 {
	c := *h
	clear(c[offChecksum : offChecksum+16])
	clear(c[offView : offView+4])
	c[offCommand] = byte(CommandPrepare)
	return U128From64(xxh3.Hash(c[:]))
}

// BodySeal returns XXH3-64 of body, zero-extended. An empty body gives
// XXH3("") = 0x2d06800538d394c2, not zero.
func BodySeal(body []byte) U128 { return U128From64(xxh3.Hash(body)) }

// BodySealFor returns the checksum_body a sender puts on a frame of command c
// in group with this body (wire.md 3.4):
//   - metadata-plane Prepare: XXH3(body), even when the body is empty;
//   - partition-plane Prepare: 0 (the batch carries its own checksums);
//   - DoViewChange and StartView: 0 for an empty body, else XXH3(body);
//   - every other command: 0.
//
// A RepairPrepare keeps whatever its journaled prepare carries; asking for
// it here is a programming error.
func BodySealFor(c Command, group uint64, body []byte) U128 {
	switch c {
	case CommandPrepare:
		if group == MetadataGroup {
			return BodySeal(body)
		}
		return U128{}
	case CommandDoViewChange, CommandStartView:
		if len(body) == 0 {
			return U128{}
		}
		return BodySeal(body)
	case CommandRepairPrepare:
		panic("wire: a RepairPrepare's checksum_body is its prepare's, never recomputed")
	}
	return U128{}
}

// SealFrame stores the frame seal. Call it last: it covers every other field.
func (h *Header) SealFrame() {
	if !h.Command().Sealed() {
		panic("wire: SealFrame on unsealed command " + h.Command().String())
	}
	h.SetChecksum(FrameSeal(h))
}

// SealPrepare stores the prepare identity. Call it last, after checksum_body.
func (h *Header) SealPrepare() {
	if !h.Command().IsPrepare() {
		panic("wire: SealPrepare on " + h.Command().String())
	}
	h.SetChecksum(PrepareIdentity(h))
}

// ToRepairPrepare rewrites a journaled Prepare frame's command byte to
// RepairPrepare (19), the only change a repair makes (wire.md 5.9).
func ToRepairPrepare(frame []byte) {
	h := HeaderOf(frame)
	if h.Command() != CommandPrepare {
		panic("wire: ToRepairPrepare on " + h.Command().String())
	}
	h.SetCommand(CommandRepairPrepare)
}

// ToPrepare rewrites a RepairPrepare frame back into the Prepare it carries.
func ToPrepare(frame []byte) {
	h := HeaderOf(frame)
	if h.Command() != CommandRepairPrepare {
		panic("wire: ToPrepare on " + h.Command().String())
	}
	h.SetCommand(CommandPrepare)
}

// BuildFrame encodes x into a new frame with body appended and finishes it
// (see Finish). The checksum, checksum_body and size fields of x are
// ignored. A RepairPrepare is not built here: convert a journaled Prepare
// with ToRepairPrepare.
func BuildFrame(x Typed, body []byte) []byte {
	frame := make([]byte, HeaderSize+len(body))
	x.Encode(HeaderOf(frame))
	copy(frame[HeaderSize:], body)
	if HeaderOf(frame).Command() == CommandRepairPrepare {
		panic("wire: BuildFrame cannot build a RepairPrepare; convert a journaled Prepare")
	}
	Finish(frame)
	return frame
}

// Finish completes a frame as a sender must (wire.md 3.5), after every other
// field is written: size = len(frame), checksum_body by the regime of
// BodySealFor (a RepairPrepare keeps its prepare's), and the checksum last:
// the frame seal, the identity for Prepare and RepairPrepare, zero for
// unsealed commands.
func Finish(frame []byte) {
	h := HeaderOf(frame)
	h.SetSize(uint32(len(frame)))
	c := h.Command()
	if c != CommandRepairPrepare {
		h.SetChecksumBody(BodySealFor(c, prepareGroup(h), frame[HeaderSize:]))
	}
	switch {
	case c.IsPrepare():
		h.SealPrepare()
	case c.Sealed():
		h.SealFrame()
	default:
		h.SetChecksum(U128{})
	}
}

// prepareGroup returns the group field of a prepare header (0 for others).
func prepareGroup(h *Header) uint64 {
	if h.Command().IsPrepare() {
		return u64(h[offPrepareGroup:])
	}
	return 0
}
