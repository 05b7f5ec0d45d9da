package wire

import "strconv"

// RequestHeader is a client Request (5), and the RoutedRequestHeader of the
// replica plane, which adds Group in the last reserved bytes (wire.md 5.20).
// CommandCode is meaningful only for NonReplicated requests.
type RequestHeader struct {
	Prefix          `json:"-"`
	Client          U128      `json:"client"`
	RequestChecksum U128      `json:"request_checksum"`
	Timestamp       uint64    `json:"timestamp"`
	Request         uint64    `json:"request"`
	Operation       Operation `json:"operation"`
	Session         uint64    `json:"session"`
	UserID          uint32    `json:"user_id"`
	CommandCode     uint32    `json:"command_code"`
	Group           uint64    `json:"group"`
}

const (
	offReqClient          = 128
	offReqRequestChecksum = 144
	offReqTimestamp       = 160
	offReqRequest         = 168
	offReqOperation       = 176
	offReqSession         = 184
	offReqUserID          = 192
	offReqCommandCode     = 196
	offReqGroup           = 248
)

// Encode writes x as a Request (5).
func (x *RequestHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandRequest)
	putU128(h[offReqClient:], x.Client)
	putU128(h[offReqRequestChecksum:], x.RequestChecksum)
	put64(h[offReqTimestamp:], x.Timestamp)
	put64(h[offReqRequest:], x.Request)
	h[offReqOperation] = byte(x.Operation)
	put64(h[offReqSession:], x.Session)
	put32(h[offReqUserID:], x.UserID)
	put32(h[offReqCommandCode:], x.CommandCode)
	put64(h[offReqGroup:], x.Group)
}

// Decode reads x from h without validating it.
func (x *RequestHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Client = getU128(h[offReqClient:])
	x.RequestChecksum = getU128(h[offReqRequestChecksum:])
	x.Timestamp = u64(h[offReqTimestamp:])
	x.Request = u64(h[offReqRequest:])
	x.Operation = Operation(h[offReqOperation])
	x.Session = u64(h[offReqSession:])
	x.UserID = u32(h[offReqUserID:])
	x.CommandCode = u32(h[offReqCommandCode:])
	x.Group = u64(h[offReqGroup:])
}

// validateRequest applies the request field rules (wire.md 5.20).
func validateRequest(h *Header) error {
	c := h.Command()
	op := Operation(h[offReqOperation])
	session, request := u64(h[offReqSession:]), u64(h[offReqRequest:])
	switch {
	case getU128(h[offReqClient:]).IsZero():
		return frameErr(c, ErrClientZero)
	case op == OperationReserved:
		return frameErr(c, ErrOperationReserved)
	case op == OperationRegister && session != 0:
		return frameErrf(c, ErrRegisterSessionNonzero, "session %d", session)
	case op == OperationRegister && request != 0:
		return frameErrf(c, ErrRegisterRequestNonzero, "request %d", request)
	case op == OperationRegister || op == OperationNonReplicated:
		return nil
	case session == 0:
		return frameErr(c, ErrSessionZero)
	case request == 0:
		return frameErr(c, ErrRequestZero)
	}
	return nil
}

// ReplyHeader answers a request (wire.md 5.20). Status is nonzero only on a
// pre-commit denial, which carries an empty body.
type ReplyHeader struct {
	Prefix          `json:"-"`
	RequestChecksum U128      `json:"request_checksum"`
	Context         U128      `json:"context"`
	Client          U128      `json:"client"`
	Op              uint64    `json:"op"`
	Commit          uint64    `json:"commit"`
	Timestamp       uint64    `json:"timestamp"`
	Request         uint64    `json:"request"`
	Operation       Operation `json:"operation"`
	Status          uint32    `json:"status"`
}

const (
	offReplyRequestChecksum = 128
	offReplyContext         = 144
	offReplyClient          = 160
	offReplyOp              = 176
	offReplyCommit          = 184
	offReplyTimestamp       = 192
	offReplyRequest         = 200
	offReplyOperation       = 208
	offReplyStatus          = 216
)

// Encode writes x as a Reply (8).
func (x *ReplyHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandReply)
	putU128(h[offReplyRequestChecksum:], x.RequestChecksum)
	putU128(h[offReplyContext:], x.Context)
	putU128(h[offReplyClient:], x.Client)
	put64(h[offReplyOp:], x.Op)
	put64(h[offReplyCommit:], x.Commit)
	put64(h[offReplyTimestamp:], x.Timestamp)
	put64(h[offReplyRequest:], x.Request)
	h[offReplyOperation] = byte(x.Operation)
	put32(h[offReplyStatus:], x.Status)
}

// Decode reads x from h without validating it.
func (x *ReplyHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.RequestChecksum = getU128(h[offReplyRequestChecksum:])
	x.Context = getU128(h[offReplyContext:])
	x.Client = getU128(h[offReplyClient:])
	x.Op = u64(h[offReplyOp:])
	x.Commit = u64(h[offReplyCommit:])
	x.Timestamp = u64(h[offReplyTimestamp:])
	x.Request = u64(h[offReplyRequest:])
	x.Operation = Operation(h[offReplyOperation])
	x.Status = u32(h[offReplyStatus:])
}

// EvictionReason is the reason byte of an Eviction (client-ops.md 6.6).
type EvictionReason uint8

// Eviction reasons. 0 is a sentinel rejected on the wire; values above 15 are
// undefined.
const (
	EvictionReserved                EvictionReason = 0
	EvictionNoSession               EvictionReason = 1
	EvictionClientReleaseTooLow     EvictionReason = 2
	EvictionClientReleaseTooHigh    EvictionReason = 3
	EvictionInvalidRequestOperation EvictionReason = 4
	EvictionInvalidRequestBody      EvictionReason = 5
	EvictionInvalidRequestBodySize  EvictionReason = 6
	EvictionSessionTooLow           EvictionReason = 7
	EvictionSessionReleaseMismatch  EvictionReason = 8
	EvictionInvalidCredentials      EvictionReason = 9
	EvictionInvalidToken            EvictionReason = 10
	EvictionUserInactive            EvictionReason = 11
	EvictionSessionError            EvictionReason = 12
	EvictionStaleClient             EvictionReason = 13
	EvictionIncompatibleProtocol    EvictionReason = 14
	EvictionMalformedLogin          EvictionReason = 15

	evictionReasonMax = EvictionMalformedLogin
)

var evictionReasonNames = [evictionReasonMax + 1]string{
	"Reserved", "NoSession", "ClientReleaseTooLow", "ClientReleaseTooHigh",
	"InvalidRequestOperation", "InvalidRequestBody", "InvalidRequestBodySize",
	"SessionTooLow", "SessionReleaseMismatch", "InvalidCredentials", "InvalidToken",
	"UserInactive", "SessionError", "StaleClient", "IncompatibleProtocol", "MalformedLogin",
}

// Valid reports whether r is a defined discriminant (0..15).
func (r EvictionReason) Valid() bool { return r <= evictionReasonMax }

// String returns the reason's name.
func (r EvictionReason) String() string {
	if !r.Valid() {
		return "EvictionReason(" + strconv.Itoa(int(r)) + ")"
	}
	return evictionReasonNames[r]
}

// EvictionHeader ends a client's session (wire.md 5.20). The protocol window
// is set only for reason IncompatibleProtocol.
type EvictionHeader struct {
	Prefix                   `json:"-"`
	Client                   U128           `json:"client"`
	ServerProtocolVersion    uint32         `json:"server_protocol_version"`
	ServerProtocolVersionMin uint32         `json:"server_protocol_version_min"`
	Reason                   EvictionReason `json:"reason"`
}

const (
	offEvictClient     = 128
	offEvictVersion    = 144
	offEvictVersionMin = 148
	offEvictReserved   = 152
	offEvictReason     = 255
)

// Encode writes x as an Eviction (13).
func (x *EvictionHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandEviction)
	putU128(h[offEvictClient:], x.Client)
	put32(h[offEvictVersion:], x.ServerProtocolVersion)
	put32(h[offEvictVersionMin:], x.ServerProtocolVersionMin)
	h[offEvictReason] = byte(x.Reason)
}

// Decode reads x from h without validating it.
func (x *EvictionHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Client = getU128(h[offEvictClient:])
	x.ServerProtocolVersion = u32(h[offEvictVersion:])
	x.ServerProtocolVersionMin = u32(h[offEvictVersionMin:])
	x.Reason = EvictionReason(h[offEvictReason])
}

// validateEviction applies the Eviction rules of wire.md 5.20.
func validateEviction(h *Header) error {
	c := h.Command()
	switch {
	case h.Size() != HeaderSize:
		return frameErrf(c, ErrSizeNotHeader, "size %d", h.Size())
	case getU128(h[offEvictClient:]).IsZero():
		return frameErr(c, ErrClientZero)
	case !allZero(h[offReservedFrame:offCommandArea]):
		return frameErr(c, ErrReservedFrameNonzero)
	case !allZero(h[offEvictReserved:offEvictReason]):
		return frameErrf(c, ErrReservedNonzero, "bytes 152..255")
	}
	reason := EvictionReason(h[offEvictReason])
	vmax, vmin := u32(h[offEvictVersion:]), u32(h[offEvictVersionMin:])
	switch {
	case reason == EvictionReserved:
		return frameErr(c, ErrReasonReserved)
	case reason == EvictionIncompatibleProtocol && (vmin == 0 || vmax < vmin):
		return frameErrf(c, ErrProtocolWindow, "min %d, max %d", vmin, vmax)
	case reason != EvictionIncompatibleProtocol && (vmin != 0 || vmax != 0):
		return frameErrf(c, ErrProtocolWindow, "reason %s, min %d, max %d", reason, vmin, vmax)
	}
	return nil
}
