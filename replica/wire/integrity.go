package wire

// Integrity says whether a frame's checksums hold, as a printer reports it.
type Integrity uint8

// Integrity outcomes.
const (
	// IntegrityNone: the frame carries no seal or identity (client frames,
	// handshake frames, commands 0-4), or a prepare that carries zero in both
	// its identity and its body seal (the unsealed sentinel).
	IntegrityNone Integrity = iota
	// IntegrityOK: every seal, identity and body seal the frame carries holds.
	IntegrityOK
	// IntegrityMismatch: at least one does not (for a sealed command, a zero
	// checksum is a mismatch: there is no unsealed escape, wire.md 3.2).
	IntegrityMismatch
)

// String returns "none", "ok" or "mismatch".
func (i Integrity) String() string {
	switch i {
	case IntegrityOK:
		return "ok"
	case IntegrityMismatch:
		return "mismatch"
	}
	return "none"
}

// CheckIntegrity reports the integrity of one delimited frame: for Prepare
// and RepairPrepare the identity and the body seal where nonzero; for sealed
// commands the frame seal, and for DoViewChange and StartView also the body
// seal of a non-empty body. It looks at nothing else (Validate does).
func CheckIntegrity(frame []byte) Integrity {
	if len(frame) < HeaderSize {
		return IntegrityNone
	}
	h := HeaderOf(frame)
	body := frame[HeaderSize:]
	c := h.Command()
	result := IntegrityNone
	check := func(ok bool) {
		switch {
		case !ok:
			result = IntegrityMismatch
		case result == IntegrityNone:
			result = IntegrityOK
		}
	}
	switch {
	case c.IsPrepare():
		if sum := h.Checksum(); !sum.IsZero() {
			check(sum == PrepareIdentity(h))
		}
		if sum := h.ChecksumBody(); !sum.IsZero() {
			check(sum == BodySeal(body))
		}
	case c.Sealed():
		check(h.Checksum() == FrameSeal(h))
		if (c == CommandDoViewChange || c == CommandStartView) && len(body) > 0 {
			check(h.ChecksumBody() == BodySeal(body))
		}
	}
	return result
}
