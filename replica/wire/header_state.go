package wire

// RequestStateTransferHeader opens a state-transfer session (wire.md 5.11).
type RequestStateTransferHeader struct {
	Prefix `json:"-"`
	Nonce  U128   `json:"nonce"`
	Group  uint64 `json:"group"`
}

const (
	offRSTNonce = 128
	offRSTGroup = 144
)

// Encode writes x as a RequestStateTransfer (22).
func (x *RequestStateTransferHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandRequestStateTransfer)
	putU128(h[offRSTNonce:], x.Nonce)
	put64(h[offRSTGroup:], x.Group)
}

// Decode reads x from h without validating it.
func (x *RequestStateTransferHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Nonce = getU128(h[offRSTNonce:])
	x.Group = u64(h[offRSTGroup:])
}

// StateTransferTargetHeader is an offer (Available = 1, body = ISM1 manifest)
// or a header-only refusal (Available = 0), wire.md 5.12.
type StateTransferTargetHeader struct {
	Prefix               `json:"-"`
	Nonce                U128   `json:"nonce"`
	CommitOp             uint64 `json:"commit_op"`
	Group                uint64 `json:"group"`
	Available            uint8  `json:"available"`
	UnavailableTransient uint8  `json:"unavailable_transient"`
	CommitMax            uint64 `json:"commit_max"`
}

const (
	offSTTNonce     = 128
	offSTTCommitOp  = 144
	offSTTGroup     = 152
	offSTTAvailable = 160
	offSTTTransient = 161
	offSTTCommitMax = 168
)

// Encode writes x as a StateTransferTarget (23).
func (x *StateTransferTargetHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandStateTransferTarget)
	putU128(h[offSTTNonce:], x.Nonce)
	put64(h[offSTTCommitOp:], x.CommitOp)
	put64(h[offSTTGroup:], x.Group)
	h[offSTTAvailable] = x.Available
	h[offSTTTransient] = x.UnavailableTransient
	put64(h[offSTTCommitMax:], x.CommitMax)
}

// Decode reads x from h without validating it.
func (x *StateTransferTargetHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Nonce = getU128(h[offSTTNonce:])
	x.CommitOp = u64(h[offSTTCommitOp:])
	x.Group = u64(h[offSTTGroup:])
	x.Available = h[offSTTAvailable]
	x.UnavailableTransient = h[offSTTTransient]
	x.CommitMax = u64(h[offSTTCommitMax:])
}

// RequestStateChunkHeader asks for Len bytes at Offset of artifact Artifact
// (a manifest index), wire.md 5.13.
type RequestStateChunkHeader struct {
	Prefix   `json:"-"`
	Nonce    U128   `json:"nonce"`
	Offset   uint64 `json:"offset"`
	Group    uint64 `json:"group"`
	Len      uint32 `json:"len"`
	Artifact uint32 `json:"artifact"`
}

const (
	offRSCNonce    = 128
	offRSCOffset   = 144
	offRSCGroup    = 152
	offRSCLen      = 160
	offRSCArtifact = 164
)

// Encode writes x as a RequestStateChunk (24).
func (x *RequestStateChunkHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandRequestStateChunk)
	putU128(h[offRSCNonce:], x.Nonce)
	put64(h[offRSCOffset:], x.Offset)
	put64(h[offRSCGroup:], x.Group)
	put32(h[offRSCLen:], x.Len)
	put32(h[offRSCArtifact:], x.Artifact)
}

// Decode reads x from h without validating it.
func (x *RequestStateChunkHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Nonce = getU128(h[offRSCNonce:])
	x.Offset = u64(h[offRSCOffset:])
	x.Group = u64(h[offRSCGroup:])
	x.Len = u32(h[offRSCLen:])
	x.Artifact = u32(h[offRSCArtifact:])
}

// StateChunkHeader carries artifact bytes at Offset (wire.md 5.14). Chunks
// have no integrity of their own; the whole artifact is checked against the
// manifest.
type StateChunkHeader struct {
	Prefix   `json:"-"`
	Nonce    U128   `json:"nonce"`
	Offset   uint64 `json:"offset"`
	Group    uint64 `json:"group"`
	Artifact uint32 `json:"artifact"`
}

const (
	offSCNonce    = 128
	offSCOffset   = 144
	offSCGroup    = 152
	offSCArtifact = 160
)

// Encode writes x as a StateChunk (25).
func (x *StateChunkHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandStateChunk)
	putU128(h[offSCNonce:], x.Nonce)
	put64(h[offSCOffset:], x.Offset)
	put64(h[offSCGroup:], x.Group)
	put32(h[offSCArtifact:], x.Artifact)
}

// Decode reads x from h without validating it.
func (x *StateChunkHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Nonce = getU128(h[offSCNonce:])
	x.Offset = u64(h[offSCOffset:])
	x.Group = u64(h[offSCGroup:])
	x.Artifact = u32(h[offSCArtifact:])
}
