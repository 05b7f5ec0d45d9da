package wire

// Offsets of the Prepare / RepairPrepare per-command area (wire.md 5.1).
const (
	offPrepareClient          = 128
	offPrepareParent          = 144
	offPrepareRequestChecksum = 160
	offPrepareOp              = 176
	offPrepareCommit          = 184
	offPrepareTimestamp       = 192
	offPrepareRequest         = 200
	offPrepareOperation       = 208
	offPrepareGroup           = 216
	offPrepareUserID          = 224
	offPrepareReserved        = 228
)

// PrepareHeader is the header of a Prepare (6) or a RepairPrepare (19),
// wire.md 5.1 and 5.9. Its checksum is the prepare identity; replica is the
// primary that built it; view is the view it was (re-)sent in.
type PrepareHeader struct {
	Prefix          `json:"-"`
	Client          U128      `json:"client"`
	Parent          U128      `json:"parent"`
	RequestChecksum U128      `json:"request_checksum"`
	Op              uint64    `json:"op"`
	Commit          uint64    `json:"commit"`
	Timestamp       uint64    `json:"timestamp"`
	Request         uint64    `json:"request"`
	Operation       Operation `json:"operation"`
	Group           uint64    `json:"group"`
	UserID          uint32    `json:"user_id"`
}

// Encode writes x. Command must be Prepare or RepairPrepare.
func (x *PrepareHeader) Encode(h *Header) {
	if !x.Command.IsPrepare() {
		panic("wire: PrepareHeader with command " + x.Command.String())
	}
	x.encodePrefix(h, x.Command)
	putU128(h[offPrepareClient:], x.Client)
	putU128(h[offPrepareParent:], x.Parent)
	putU128(h[offPrepareRequestChecksum:], x.RequestChecksum)
	put64(h[offPrepareOp:], x.Op)
	put64(h[offPrepareCommit:], x.Commit)
	put64(h[offPrepareTimestamp:], x.Timestamp)
	put64(h[offPrepareRequest:], x.Request)
	h[offPrepareOperation] = byte(x.Operation)
	put64(h[offPrepareGroup:], x.Group)
	put32(h[offPrepareUserID:], x.UserID)
}

// Decode reads x from h without validating it.
func (x *PrepareHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Client = getU128(h[offPrepareClient:])
	x.Parent = getU128(h[offPrepareParent:])
	x.RequestChecksum = getU128(h[offPrepareRequestChecksum:])
	x.Op = u64(h[offPrepareOp:])
	x.Commit = u64(h[offPrepareCommit:])
	x.Timestamp = u64(h[offPrepareTimestamp:])
	x.Request = u64(h[offPrepareRequest:])
	x.Operation = Operation(h[offPrepareOperation])
	x.Group = u64(h[offPrepareGroup:])
	x.UserID = u32(h[offPrepareUserID:])
}

// validatePrepare applies wire.md 5.1 / 5.9 (after the bit-pattern check):
// reserved regions zero, then the identity and the body seal where nonzero,
// then, for SendMessages, the batch (wire.md 7).
func validatePrepare(h *Header, body []byte) error {
	c := h.Command()
	if !allZero(h[offReservedFrame:offCommandArea]) {
		return frameErr(c, ErrReservedFrameNonzero)
	}
	if !allZero(h[offPrepareReserved:]) {
		return frameErrf(c, ErrReservedNonzero, "bytes 228..256")
	}
	if sum := h.Checksum(); !sum.IsZero() {
		if want := PrepareIdentity(h); sum != want {
			return frameErrf(c, ErrIdentityMismatch, "checksum %s, identity %s", sum, want)
		}
	}
	if sum := h.ChecksumBody(); !sum.IsZero() {
		if want := BodySeal(body); sum != want {
			return frameErrf(c, ErrBodySealMismatch, "checksum_body %s, body %s", sum, want)
		}
	}
	// A SendMessages body is a batch whose own checksums are its integrity
	// (checksum_body is 0 on the partition plane); Iggy verifies it at
	// network ingress, before the partition sees the prepare.
	if Operation(h[offPrepareOperation]) == OperationSendMessages {
		if err := VerifyBatch(body); err != nil {
			fe := err.(*FormatError)
			return frameErrf(c, fe.Rule, "batch at body byte %d: %s", fe.Offset, fe.Detail)
		}
	}
	return nil
}

// PrepareOkHeader acknowledges a durably journaled prepare (wire.md 5.2).
// View is the acker's view and Commit the acker's own commit_max; the rest
// echoes the prepare.
type PrepareOkHeader struct {
	Prefix          `json:"-"`
	Parent          U128      `json:"parent"`
	PrepareChecksum U128      `json:"prepare_checksum"`
	Op              uint64    `json:"op"`
	Commit          uint64    `json:"commit"`
	Timestamp       uint64    `json:"timestamp"`
	Request         uint64    `json:"request"`
	Operation       Operation `json:"operation"`
	Group           uint64    `json:"group"`
}

const (
	offPrepareOkParent          = 128
	offPrepareOkPrepareChecksum = 144
	offPrepareOkOp              = 160
	offPrepareOkCommit          = 168
	offPrepareOkTimestamp       = 176
	offPrepareOkRequest         = 184
	offPrepareOkOperation       = 192
	offPrepareOkGroup           = 200
)

// Encode writes x as a PrepareOk (7).
func (x *PrepareOkHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandPrepareOk)
	putU128(h[offPrepareOkParent:], x.Parent)
	putU128(h[offPrepareOkPrepareChecksum:], x.PrepareChecksum)
	put64(h[offPrepareOkOp:], x.Op)
	put64(h[offPrepareOkCommit:], x.Commit)
	put64(h[offPrepareOkTimestamp:], x.Timestamp)
	put64(h[offPrepareOkRequest:], x.Request)
	h[offPrepareOkOperation] = byte(x.Operation)
	put64(h[offPrepareOkGroup:], x.Group)
}

// Decode reads x from h without validating it.
func (x *PrepareOkHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.Parent = getU128(h[offPrepareOkParent:])
	x.PrepareChecksum = getU128(h[offPrepareOkPrepareChecksum:])
	x.Op = u64(h[offPrepareOkOp:])
	x.Commit = u64(h[offPrepareOkCommit:])
	x.Timestamp = u64(h[offPrepareOkTimestamp:])
	x.Request = u64(h[offPrepareOkRequest:])
	x.Operation = Operation(h[offPrepareOkOperation])
	x.Group = u64(h[offPrepareOkGroup:])
}

// CommitHeader is the primary's heartbeat (wire.md 5.3 and correction 0.1).
// Commit is the primary's commit_min; TimestampMonotonic is the group's
// liveness token, not a clock.
type CommitHeader struct {
	Prefix             `json:"-"`
	CommitChecksum     U128   `json:"commit_checksum"`
	TimestampMonotonic uint64 `json:"timestamp_monotonic"`
	Commit             uint64 `json:"commit"`
	CheckpointOp       uint64 `json:"checkpoint_op"`
	Group              uint64 `json:"group"`
}

const (
	offCommitChecksum     = 128
	offCommitTimestampMon = 144
	offCommitCommit       = 152
	offCommitCheckpointOp = 160
	offCommitGroup        = 168
)

// Encode writes x as a Commit (9).
func (x *CommitHeader) Encode(h *Header) {
	x.encodePrefix(h, CommandCommit)
	putU128(h[offCommitChecksum:], x.CommitChecksum)
	put64(h[offCommitTimestampMon:], x.TimestampMonotonic)
	put64(h[offCommitCommit:], x.Commit)
	put64(h[offCommitCheckpointOp:], x.CheckpointOp)
	put64(h[offCommitGroup:], x.Group)
}

// Decode reads x from h without validating it.
func (x *CommitHeader) Decode(h *Header) {
	x.Prefix = h.Prefix()
	x.CommitChecksum = getU128(h[offCommitChecksum:])
	x.TimestampMonotonic = u64(h[offCommitTimestampMon:])
	x.Commit = u64(h[offCommitCommit:])
	x.CheckpointOp = u64(h[offCommitCheckpointOp:])
	x.Group = u64(h[offCommitGroup:])
}
