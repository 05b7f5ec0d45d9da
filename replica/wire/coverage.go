package wire

// Range is a half-open byte range [From, To) of a frame.
type Range struct {
	From, To int
}

// ProtectedRanges appends to dst the byte ranges of frame in which any single
// flipped bit is caught by the receiver's integrity checks, and returns dst.
// The simulated network corrupts frames only there (DESIGN.md, "Faults"):
// a flip elsewhere would be a fault no real check could see, which is not a
// bug to find.
//
//   - Sealed commands: the whole header except the command byte, plus a
//     DoViewChange or StartView body (covered by checksum_body).
//   - Prepare and RepairPrepare with a nonzero identity: the header except
//     view (outside the identity by design) and the command byte; plus the
//     body when checksum_body is nonzero (metadata plane) or when the body is
//     a SendMessages batch (covered by its own checksums, see VerifyBatch).
//   - Everything else (client frames, handshake frames, unsealed prepares):
//     nothing.
//
// The command byte is left out everywhere: a flip there can turn a sealed
// frame into an unsealed command that is judged by other rules (Commit 9
// into Reply 8), so it is not reliably caught. A flip in size is caught as a
// framing error, which closes the connection.
func ProtectedRanges(frame []byte, dst []Range) []Range {
	if CheckFraming(frame, 0) != nil {
		return dst
	}
	h := HeaderOf(frame)
	c := h.Command()
	bodyEnd := len(frame)
	header := func(skipView bool) {
		if skipView {
			dst = append(dst, Range{0, offView}, Range{offView + 4, offCommand})
		} else {
			dst = append(dst, Range{0, offCommand})
		}
		dst = append(dst, Range{offCommand + 1, HeaderSize})
	}
	switch {
	case c.Sealed():
		header(false)
		if (c == CommandDoViewChange || c == CommandStartView) && bodyEnd > HeaderSize {
			dst = append(dst, Range{HeaderSize, bodyEnd})
		}
	case c.IsPrepare() && !h.Checksum().IsZero():
		header(true)
		if bodyEnd > HeaderSize {
			sendMessages := Operation(h[offPrepareOperation]) == OperationSendMessages
			if !h.ChecksumBody().IsZero() || sendMessages && VerifyBatch(frame[HeaderSize:]) == nil {
				dst = append(dst, Range{HeaderSize, bodyEnd})
			}
		}
	}
	return dst
}
