package wire

import "strconv"

// ForwardRegisterOutcome is the outcome byte of a ForwardRegisterResult.
type ForwardRegisterOutcome uint8

// Forward-register outcomes (wire.md 5.16).
const (
	ForwardRegisterOk                         ForwardRegisterOutcome = 0
	ForwardRegisterNotPrimary                 ForwardRegisterOutcome = 1
	ForwardRegisterNotCaughtUp                ForwardRegisterOutcome = 2 // reserved, never produced
	ForwardRegisterPipelineFull               ForwardRegisterOutcome = 3
	ForwardRegisterInProgress                 ForwardRegisterOutcome = 4
	ForwardRegisterCanceled                   ForwardRegisterOutcome = 5
	ForwardRegisterClientIDOwnedByAnotherUser ForwardRegisterOutcome = 6
)

// ForwardLogoutOutcome is the outcome byte of a ForwardLogoutResult.
type ForwardLogoutOutcome uint8

// Forward-logout outcomes (wire.md 5.18).
const (
	ForwardLogoutOk           ForwardLogoutOutcome = 0
	ForwardLogoutNotPrimary   ForwardLogoutOutcome = 1
	ForwardLogoutPipelineFull ForwardLogoutOutcome = 2
	ForwardLogoutInProgress   ForwardLogoutOutcome = 3
	ForwardLogoutCanceled     ForwardLogoutOutcome = 4
)

// ForwardRegisterHeader forwards a login verified by a backup (wire.md 5.15).
type ForwardRegisterHeader struct {
	Prefix `json:"-"`
	Client U128   `json:"client"`
	Nonce  U128   `json:"nonce"`
	UserID uint32 `json:"user_id"`
}

const (
	offFRClient   = 128
	offFRNonce    = 144
	offFRUserID   = 160
	offFRReserved = 164
)

// Encode writes x as a ForwardRegister (26).
func (x *ForwardRegisterHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandForwardRegister)
	putU128(h[offFRClient:], x.Client)
	putU128(h[offFRNonce:], x.Nonce)
	put32(h[offFRUserID:], x.UserID)
}

// Decode reads x from h without validating it.
func (x *ForwardRegisterHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Client = getU128(h[offFRClient:])
	x.Nonce = getU128(h[offFRNonce:])
	x.UserID = u32(h[offFRUserID:])
}

// ForwardRegisterResultHeader is the primary's verdict on a ForwardRegister
// (wire.md 5.16). Epoch and Watermark are zero unless Outcome is Ok.
type ForwardRegisterResultHeader struct {
	Prefix    `json:"-"`
	Nonce     U128                   `json:"nonce"`
	Client    U128                   `json:"client"`
	Epoch     uint64                 `json:"epoch"`
	Watermark uint64                 `json:"watermark"`
	Outcome   ForwardRegisterOutcome `json:"outcome"`
}

const (
	offFRRNonce     = 128
	offFRRClient    = 144
	offFRREpoch     = 160
	offFRRWatermark = 168
	offFRRReserved  = 176
	offOutcome      = 255
)

// Encode writes x as a ForwardRegisterResult (27).
func (x *ForwardRegisterResultHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandForwardRegisterResult)
	putU128(h[offFRRNonce:], x.Nonce)
	putU128(h[offFRRClient:], x.Client)
	put64(h[offFRREpoch:], x.Epoch)
	put64(h[offFRRWatermark:], x.Watermark)
	h[offOutcome] = byte(x.Outcome)
}

// Decode reads x from h without validating it.
func (x *ForwardRegisterResultHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Nonce = getU128(h[offFRRNonce:])
	x.Client = getU128(h[offFRRClient:])
	x.Epoch = u64(h[offFRREpoch:])
	x.Watermark = u64(h[offFRRWatermark:])
	x.Outcome = ForwardRegisterOutcome(h[offOutcome])
}

// ForwardLogoutHeader asks the primary to end a session (wire.md 5.17).
type ForwardLogoutHeader struct {
	Prefix  `json:"-"`
	Client  U128   `json:"client"`
	Nonce   U128   `json:"nonce"`
	Session uint64 `json:"session"`
	Request uint64 `json:"request"`
}

const (
	offFLClient   = 128
	offFLNonce    = 144
	offFLSession  = 160
	offFLRequest  = 168
	offFLReserved = 176
)

// Encode writes x as a ForwardLogout (28).
func (x *ForwardLogoutHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandForwardLogout)
	putU128(h[offFLClient:], x.Client)
	putU128(h[offFLNonce:], x.Nonce)
	put64(h[offFLSession:], x.Session)
	put64(h[offFLRequest:], x.Request)
}

// Decode reads x from h without validating it.
func (x *ForwardLogoutHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Client = getU128(h[offFLClient:])
	x.Nonce = getU128(h[offFLNonce:])
	x.Session = u64(h[offFLSession:])
	x.Request = u64(h[offFLRequest:])
}

// ForwardLogoutResultHeader is the primary's verdict on a ForwardLogout
// (wire.md 5.18). Commit is zero unless Outcome is Ok.
type ForwardLogoutResultHeader struct {
	Prefix  `json:"-"`
	Nonce   U128                 `json:"nonce"`
	Client  U128                 `json:"client"`
	Commit  uint64               `json:"commit"`
	Outcome ForwardLogoutOutcome `json:"outcome"`
}

const (
	offFLRNonce    = 128
	offFLRClient   = 144
	offFLRCommit   = 160
	offFLRReserved = 168
)

// Encode writes x as a ForwardLogoutResult (29).
func (x *ForwardLogoutResultHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandForwardLogoutResult)
	putU128(h[offFLRNonce:], x.Nonce)
	putU128(h[offFLRClient:], x.Client)
	put64(h[offFLRCommit:], x.Commit)
	h[offOutcome] = byte(x.Outcome)
}

// Decode reads x from h without validating it.
func (x *ForwardLogoutResultHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Nonce = getU128(h[offFLRNonce:])
	x.Client = getU128(h[offFLRClient:])
	x.Commit = u64(h[offFLRCommit:])
	x.Outcome = ForwardLogoutOutcome(h[offOutcome])
}

// validateForward applies the rules shared by the four forwarding headers:
// size 256, client and nonce nonzero, the tail reserved region zero (62..128
// is not validated, wire.md 14.3).
func validateForward(h *Header, offClient, offNonce, reservedFrom, reservedTo int) error {
	c := h.Command()
	if h.Size() != HeaderSize {
		return frameErrf(c, ErrSizeNotHeader, "size %d", h.Size())
	}
	if getU128(h[offClient:]).IsZero() {
		return frameErr(c, ErrClientZero)
	}
	if getU128(h[offNonce:]).IsZero() {
		return frameErr(c, ErrNonceZero)
	}
	if !allZero(h[reservedFrom:reservedTo]) {
		return frameErrf(c, ErrReservedNonzero, "bytes %d..%d", reservedFrom, reservedTo)
	}
	return nil
}

var forwardRegisterOutcomeNames = [...]string{"Ok", "NotPrimary", "NotCaughtUp", "PipelineFull", "InProgress",
	"Canceled", "ClientIdOwnedByAnotherUser"}

// String returns the outcome's name.
func (o ForwardRegisterOutcome) String() string {
	if int(o) < len(forwardRegisterOutcomeNames) {
		return forwardRegisterOutcomeNames[o]
	}
	return "ForwardRegisterOutcome(" + strconv.Itoa(int(o)) + ")"
}

var forwardLogoutOutcomeNames = [...]string{"Ok", "NotPrimary", "PipelineFull", "InProgress", "Canceled"}

// String returns the outcome's name.
func (o ForwardLogoutOutcome) String() string {
	if int(o) < len(forwardLogoutOutcomeNames) {
		return forwardLogoutOutcomeNames[o]
	}
	return "ForwardLogoutOutcome(" + strconv.Itoa(int(o)) + ")"
}
