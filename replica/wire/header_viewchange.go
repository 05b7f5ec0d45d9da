package wire

// SuffixEntriesMax is the most prepare headers a DoViewChange or StartView
// body carries (DVC_HEADERS_MAX), one bit each in the u128 bitsets.
const SuffixEntriesMax = 128

// StartViewChangeHeader proposes view View for group Group (wire.md 5.4).
type StartViewChangeHeader struct {
	Prefix `json:"-"`
	Group  uint64 `json:"group"`
}

const offSVCGroup = 128

// Encode writes x as a StartViewChange (10).
func (x *StartViewChangeHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandStartViewChange)
	put64(h[offSVCGroup:], x.Group)
}

// Decode reads x from h without validating it.
func (x *StartViewChangeHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Group = u64(h[offSVCGroup:])
}

// DoViewChangeHeader is a view-change vote (wire.md 5.5). Its body is the
// sender's log suffix (see EncodeSuffix): entry i is op Op-i; NackBitset bit
// i says the sender proves it never prepared entry i, PresentBitset bit i
// that it can serve entry i's body.
type DoViewChangeHeader struct {
	Prefix        `json:"-"`
	Op            uint64 `json:"op"`
	Commit        uint64 `json:"commit"`
	Group         uint64 `json:"group"`
	LogView       uint32 `json:"log_view"`
	NackBitset    U128   `json:"nack_bitset"`
	PresentBitset U128   `json:"present_bitset"`
}

const (
	offDVCOp      = 128
	offDVCCommit  = 136
	offDVCGroup   = 144
	offDVCLogView = 152
	offDVCNack    = 224
	offDVCPresent = 240
)

// Encode writes x as a DoViewChange (11).
func (x *DoViewChangeHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandDoViewChange)
	put64(h[offDVCOp:], x.Op)
	put64(h[offDVCCommit:], x.Commit)
	put64(h[offDVCGroup:], x.Group)
	put32(h[offDVCLogView:], x.LogView)
	putU128(h[offDVCNack:], x.NackBitset)
	putU128(h[offDVCPresent:], x.PresentBitset)
}

// Decode reads x from h without validating it.
func (x *DoViewChangeHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Op = u64(h[offDVCOp:])
	x.Commit = u64(h[offDVCCommit:])
	x.Group = u64(h[offDVCGroup:])
	x.LogView = u32(h[offDVCLogView:])
	x.NackBitset = getU128(h[offDVCNack:])
	x.PresentBitset = getU128(h[offDVCPresent:])
}

// StartViewHeader installs a view (wire.md 5.6 and correction 0.2). Its body
// is the view's suffix, highest op first; empty is legal. Incarnation echoes
// the RequestStartView it answers, 0 when unsolicited.
type StartViewHeader struct {
	Prefix      `json:"-"`
	Op          uint64 `json:"op"`
	Commit      uint64 `json:"commit"`
	Group       uint64 `json:"group"`
	Incarnation U128   `json:"incarnation"`
}

const (
	offSVOp          = 128
	offSVCommit      = 136
	offSVGroup       = 144
	offSVIncarnation = 240
)

// Encode writes x as a StartView (12).
func (x *StartViewHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandStartView)
	put64(h[offSVOp:], x.Op)
	put64(h[offSVCommit:], x.Commit)
	put64(h[offSVGroup:], x.Group)
	putU128(h[offSVIncarnation:], x.Incarnation)
}

// Decode reads x from h without validating it.
func (x *StartViewHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Op = u64(h[offSVOp:])
	x.Commit = u64(h[offSVCommit:])
	x.Group = u64(h[offSVGroup:])
	x.Incarnation = getU128(h[offSVIncarnation:])
}

// RequestStartViewHeader is a recovering replica's probe (wire.md 5.7).
// Incarnation is the requester's per-boot nonce (bit 0 set on the metadata
// plane, 0 on partition planes).
type RequestStartViewHeader struct {
	Prefix      `json:"-"`
	Group       uint64 `json:"group"`
	Incarnation U128   `json:"incarnation"`
}

const (
	offRSVGroup       = 128
	offRSVIncarnation = 240
)

// Encode writes x as a RequestStartView (17).
func (x *RequestStartViewHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandRequestStartView)
	put64(h[offRSVGroup:], x.Group)
	putU128(h[offRSVIncarnation:], x.Incarnation)
}

// Decode reads x from h without validating it.
func (x *RequestStartViewHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Group = u64(h[offRSVGroup:])
	x.Incarnation = getU128(h[offRSVIncarnation:])
}

// suffixLen checks the size rules shared by DoViewChange and StartView and
// returns the number of suffix entries.
func suffixLen(h *Header) (int, error) {
	size := h.Size()
	if (size-HeaderSize)%HeaderSize != 0 {
		return 0, frameErrf(h.Command(), ErrSizeNotMultiple, "size %d", size)
	}
	n := int((size - HeaderSize) / HeaderSize)
	if n > SuffixEntriesMax {
		return 0, frameErrf(h.Command(), ErrSuffixTooLong, "%d entries", n)
	}
	return n, nil
}

// checkSuffixBodySeal applies wire.md 3.4 to DVC and SV: keyed on body
// presence, an empty body is accepted whatever checksum_body says.
func checkSuffixBodySeal(h *Header, body []byte) error {
	if len(body) == 0 {
		return nil
	}
	if sum, want := h.ChecksumBody(), BodySeal(body); sum != want {
		return frameErrf(h.Command(), ErrBodySealMismatch, "checksum_body %s, body %s", sum, want)
	}
	return nil
}
