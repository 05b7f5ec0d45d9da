package wire

// CheckFraming applies the framing rules of wire.md 1.1 to a frame that is
// already delimited: size >= 256, size <= maxSize, size == len(frame), and
// command <= 29. A maxSize of 0 skips the upper bound. Errors are
// *FramingError: the stream the frame came from cannot be trusted further.
func CheckFraming(frame []byte, maxSize uint32) error {
	if len(frame) < HeaderSize {
		return &FramingError{Rule: ErrTruncated, Have: len(frame)}
	}
	h := HeaderOf(frame)
	size := h.Size()
	switch {
	case size < HeaderSize:
		return &FramingError{Rule: ErrSizeBelowHeader, Size: size, Command: h.Command()}
	case maxSize != 0 && size > maxSize:
		return &FramingError{Rule: ErrSizeAboveMax, Size: size, Max: maxSize, Command: h.Command()}
	case uint64(len(frame)) < uint64(size):
		return &FramingError{Rule: ErrTruncated, Size: size, Have: len(frame), Command: h.Command()}
	case uint64(len(frame)) > uint64(size):
		return &FramingError{Rule: ErrSizeMismatch, Size: size, Have: len(frame), Command: h.Command()}
	case !h.Command().Valid():
		return &FramingError{Rule: ErrCommandUnknown, Size: size, Command: h.Command()}
	}
	return nil
}

// Validate applies the typed decode of wire.md 4.1 steps 3-6 to one frame
// (header and body, exactly size bytes): the typed bit-pattern checks, the
// frame seal, and the command's validate() rules, in that order, so the error
// names the first rule the frame breaks. A framing violation is returned as a
// *FramingError; everything else as a *FrameError, after which a receiver
// drops the frame and keeps the connection.
//
// What Validate does not decide, because the receiver's state does: whether
// the command is acceptable on this connection (client-bound Reply and
// Eviction, handshake frames after the handshake), whether replica is below
// the replica count, and the view-change suffix rules (see DecodeSuffix).
// Handshake frames pass: their integrity is the MAC the handshake checks.
//
// Validate does not allocate unless it returns an error.
func Validate(frame []byte) error {
	if err := CheckFraming(frame, 0); err != nil {
		return err
	}
	h := HeaderOf(frame)
	body := frame[HeaderSize:]
	c := h.Command()
	if !c.IsReplicaPlane() {
		return frameErr(c, ErrNotReplicaPlane)
	}
	if err := checkBitPatterns(h); err != nil {
		return err
	}
	if c.Sealed() {
		if sum, want := h.Checksum(), FrameSeal(h); sum != want {
			return frameErrf(c, ErrSealMismatch, "checksum %s, seal %s", sum, want)
		}
	}
	return validateFields(h, body)
}

// checkBitPatterns is wire.md 4.1 step 4: enum-typed fields must hold a
// defined discriminant.
func checkBitPatterns(h *Header) error {
	c := h.Command()
	var op Operation
	switch c {
	case CommandRequest:
		op = Operation(h[offReqOperation])
	case CommandPrepare, CommandRepairPrepare:
		op = Operation(h[offPrepareOperation])
	case CommandPrepareOk:
		op = Operation(h[offPrepareOkOperation])
	case CommandReply:
		op = Operation(h[offReplyOperation])
	case CommandEviction:
		if r := EvictionReason(h[offEvictReason]); !r.Valid() {
			return frameErrf(c, ErrReasonUndefined, "reason %d", uint8(r))
		}
	case CommandForwardRegisterResult:
		if o := h[offOutcome]; o > byte(ForwardRegisterClientIDOwnedByAnotherUser) {
			return frameErrf(c, ErrOutcomeUndefined, "outcome %d", o)
		}
	case CommandForwardLogoutResult:
		if o := h[offOutcome]; o > byte(ForwardLogoutCanceled) {
			return frameErrf(c, ErrOutcomeUndefined, "outcome %d", o)
		}
	}
	if !op.Valid() {
		return frameErrf(c, ErrOperationUndefined, "operation %d", uint8(op))
	}
	return nil
}

// validateFields is wire.md 4.1 step 6: each command's validate() of
// section 5, after the bit patterns and the seal.
func validateFields(h *Header, body []byte) error {
	c := h.Command()
	switch c {
	case CommandRequest:
		return validateRequest(h)
	case CommandPrepare, CommandRepairPrepare:
		return validatePrepare(h, body)
	case CommandPrepareOk, CommandReply, CommandRepairDone, CommandRangeEvicted, CommandStateChunk,
		CommandReplicaHello, CommandReplicaChallenge, CommandReplicaFinish:
		return nil
	case CommandCommit, CommandRequestStateTransfer:
		if h.Size() != HeaderSize {
			return frameErrf(c, ErrSizeNotHeader, "size %d", h.Size())
		}
		return nil
	case CommandStartViewChange, CommandRequestStartView:
		return checkRelease(h)
	case CommandDoViewChange:
		return validateDoViewChange(h, body)
	case CommandStartView:
		return validateStartView(h, body)
	case CommandEviction:
		return validateEviction(h)
	case CommandRequestPrepares:
		from, to := u64(h[offRPFromOp:]), u64(h[offRPToOp:])
		if from == 0 {
			return frameErr(c, ErrFromOpZero)
		}
		if from > to {
			return frameErrf(c, ErrFromOpAboveToOp, "from_op %d, to_op %d", from, to)
		}
		return nil
	case CommandStateTransferTarget:
		return validateStateTransferTarget(h)
	case CommandRequestStateChunk:
		if u32(h[offRSCLen:]) == 0 {
			return frameErr(c, ErrLenZero)
		}
		if h.Size() != HeaderSize {
			return frameErrf(c, ErrSizeNotHeader, "size %d", h.Size())
		}
		return nil
	case CommandForwardRegister:
		return validateForward(h, offFRClient, offFRNonce, offFRReserved, HeaderSize)
	case CommandForwardRegisterResult:
		if err := validateForward(h, offFRRClient, offFRRNonce, offFRRReserved, offOutcome); err != nil {
			return err
		}
		epoch, watermark := u64(h[offFRREpoch:]), u64(h[offFRRWatermark:])
		if h[offOutcome] != byte(ForwardRegisterOk) && (epoch != 0 || watermark != 0) {
			return frameErrf(c, ErrOutcomeFieldsNonzero, "outcome %d, epoch %d, watermark %d", h[offOutcome], epoch, watermark)
		}
		return nil
	case CommandForwardLogout:
		if err := validateForward(h, offFLClient, offFLNonce, offFLReserved, HeaderSize); err != nil {
			return err
		}
		if u64(h[offFLSession:]) == 0 {
			return frameErr(c, ErrSessionZero)
		}
		if u64(h[offFLRequest:]) == 0 {
			return frameErr(c, ErrRequestZero)
		}
		return nil
	case CommandForwardLogoutResult:
		if err := validateForward(h, offFLRClient, offFLRNonce, offFLRReserved, offOutcome); err != nil {
			return err
		}
		if commit := u64(h[offFLRCommit:]); h[offOutcome] != byte(ForwardLogoutOk) && commit != 0 {
			return frameErrf(c, ErrOutcomeFieldsNonzero, "outcome %d, commit %d", h[offOutcome], commit)
		}
		return nil
	}
	panic("wire: validateFields reached with command " + c.String())
}

func checkRelease(h *Header) error {
	if r := h.Release(); r != 0 {
		return frameErrf(h.Command(), ErrReleaseNonzero, "release %d", r)
	}
	return nil
}

func validateDoViewChange(h *Header, body []byte) error {
	c := h.Command()
	if err := checkRelease(h); err != nil {
		return err
	}
	if logView, view := u32(h[offDVCLogView:]), h.View(); logView > view {
		return frameErrf(c, ErrLogViewAboveView, "log_view %d, view %d", logView, view)
	}
	if commit, op := u64(h[offDVCCommit:]), u64(h[offDVCOp:]); commit > op {
		return frameErrf(c, ErrCommitAboveOp, "commit %d, op %d", commit, op)
	}
	n, err := suffixLen(h)
	if err != nil {
		return err
	}
	nack, present := getU128(h[offDVCNack:]), getU128(h[offDVCPresent:])
	if nack.BitsFrom(n) || present.BitsFrom(n) {
		return frameErrf(c, ErrBitsetBeyondSuffix, "%d entries, nack %s, present %s", n, nack, present)
	}
	return checkSuffixBodySeal(h, body)
}

func validateStartView(h *Header, body []byte) error {
	c := h.Command()
	if err := checkRelease(h); err != nil {
		return err
	}
	if commit, op := u64(h[offSVCommit:]), u64(h[offSVOp:]); commit > op {
		return frameErrf(c, ErrCommitAboveOp, "commit %d, op %d", commit, op)
	}
	if _, err := suffixLen(h); err != nil {
		return err
	}
	return checkSuffixBodySeal(h, body)
}

func validateStateTransferTarget(h *Header) error {
	c := h.Command()
	available, transient := h[offSTTAvailable], h[offSTTTransient]
	switch {
	case available > 1:
		return frameErrf(c, ErrAvailableInvalid, "available %d", available)
	case transient > 1:
		return frameErrf(c, ErrTransientInvalid, "unavailable_transient %d", transient)
	case available == 1 && transient == 1:
		return frameErr(c, ErrAvailableAndTransient)
	case available == 0 && h.Size() != HeaderSize:
		return frameErrf(c, ErrRefusalHasBody, "size %d", h.Size())
	}
	return nil
}
