package wire

// BlankEntry returns the canonical blank suffix entry for op: a header that is
// all zero except command = Prepare and op (wire.md 5.5). A sender puts it
// where it holds nothing for that op; operation Reserved marks it.
func BlankEntry(op uint64) Header {
	var h Header
	h[offCommand] = byte(CommandPrepare)
	put64(h[offPrepareOp:], op)
	return h
}

// IsBlank reports whether h is exactly the canonical blank entry for its op.
func IsBlank(h *Header) bool {
	blank := BlankEntry(u64(h[offPrepareOp:]))
	return *h == blank
}

// EncodeSuffix concatenates suffix entries into a DoViewChange or StartView
// body. entries[i] must be the prepare header (or blank) of op head-i.
func EncodeSuffix(entries []Header) []byte {
	if len(entries) > SuffixEntriesMax {
		panic("wire: suffix longer than 128 entries")
	}
	body := make([]byte, 0, len(entries)*HeaderSize)
	for i := range entries {
		body = append(body, entries[i][:]...)
	}
	return body
}

// DecodeSuffix splits a DoViewChange or StartView body whose entry 0 is op
// head into its entries and applies the suffix rules of wire.md 5.5
// (Iggy's dvc_suffix_decode): every entry is a valid prepare header (command
// Prepare, a defined operation, reserved regions zero); entry i carries op
// head-i; a non-blank entry with a nonzero checksum has a verifying identity;
// going down through the non-blank entries, timestamps strictly decrease, and
// where two are adjacent ops and the lower is sealed, the upper's parent is
// the lower's identity. Entry view is not checked: a held op keeps the view
// that delivered it.
//
// The body size rules and the bitsets are the frame's (see Validate).
func DecodeSuffix(body []byte, head uint64) ([]Header, error) {
	if len(body)%HeaderSize != 0 {
		return nil, formatErrf("suffix", ErrSizeNotMultiple, 0, "%d bytes", len(body))
	}
	n := len(body) / HeaderSize
	if n > SuffixEntriesMax {
		return nil, formatErrf("suffix", ErrSuffixTooLong, 0, "%d entries", n)
	}
	entries := make([]Header, n)
	var child *Header // the nearest non-blank entry above the current one
	for i := range entries {
		e := &entries[i]
		copy(e[:], body[i*HeaderSize:])
		at := i * HeaderSize
		if err := checkSuffixEntry(e); err != nil {
			return nil, formatErrf("suffix", ErrSuffixEntryCommand, at, "entry %d: %v", i, err)
		}
		if uint64(i) > head {
			return nil, formatErrf("suffix", ErrSuffixBeyondOp, at, "entry %d below head op %d", i, head)
		}
		if op, want := u64(e[offPrepareOp:]), head-uint64(i); op != want {
			return nil, formatErrf("suffix", ErrSuffixEntryOp, at, "entry %d has op %d, want %d", i, op, want)
		}
		if IsBlank(e) {
			continue
		}
		sum := e.Checksum()
		if !sum.IsZero() && PrepareIdentity(e) != sum {
			return nil, formatErrf("suffix", ErrSuffixEntryIdentity, at, "entry %d (op %d)", i, head-uint64(i))
		}
		if child != nil {
			ts, childTs := u64(e[offPrepareTimestamp:]), u64(child[offPrepareTimestamp:])
			if ts >= childTs {
				return nil, formatErrf("suffix", ErrSuffixTimestampOrder, at,
					"entry %d timestamp %d, entry above %d", i, ts, childTs)
			}
			childOp := u64(child[offPrepareOp:])
			if u64(e[offPrepareOp:])+1 == childOp && !sum.IsZero() && getU128(child[offPrepareParent:]) != sum {
				return nil, formatErrf("suffix", ErrSuffixChain, at,
					"op %d parent %s, op %d identity %s", childOp, getU128(child[offPrepareParent:]), childOp-1, sum)
			}
		}
		child = e
	}
	return entries, nil
}

// checkSuffixEntry is the bit-pattern check and validate() of a PrepareHeader
// read out of a suffix.
func checkSuffixEntry(e *Header) error {
	if c := e.Command(); c != CommandPrepare {
		return frameErrf(c, ErrCommandMismatch, "command %d", uint8(c))
	}
	if op := Operation(e[offPrepareOperation]); !op.Valid() {
		return frameErrf(CommandPrepare, ErrOperationUndefined, "operation %d", uint8(op))
	}
	if !allZero(e[offReservedFrame:offCommandArea]) {
		return frameErr(CommandPrepare, ErrReservedFrameNonzero)
	}
	if !allZero(e[offPrepareReserved:]) {
		return frameErrf(CommandPrepare, ErrReservedNonzero, "bytes 228..256")
	}
	return nil
}
