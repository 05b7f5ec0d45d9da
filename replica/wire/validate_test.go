package wire

import (
	"errors"
	"testing"
)

// resealed finishes frame again after a test changed a field, so each case
// breaks one field rule without breaking a seal first.
func resealed(frame []byte) []byte {
	Finish(frame)
	return frame
}

// TestValidateRules breaks each frame rule of wire.md 4.1 and 5 once and
// expects Validate to name exactly that rule.
func TestValidateRules(t *testing.T) {
	cluster := ClusterID("iggy-cluster")
	pre := Prefix{Cluster: cluster}
	one := U128From64(1)
	prepare := func(mut func(h *Header)) []byte {
		p := b6Prepare()
		f := BuildFrame(&p, nil)
		mut(HeaderOf(f))
		return resealed(f)
	}
	header := func(x Typed, body []byte, mut func(h *Header)) func() []byte {
		return func() []byte {
			f := BuildFrame(x, body)
			mut(HeaderOf(f))
			return resealed(f)
		}
	}
	noop := func(*Header) {}
	set := func(off int, v byte) func(h *Header) { return func(h *Header) { h[off] = v } }
	set64 := func(off int, v uint64) func(h *Header) { return func(h *Header) { put64(h[off:], v) } }
	set32 := func(off int, v uint32) func(h *Header) { return func(h *Header) { put32(h[off:], v) } }
	dvc := func(n int, mut func(*Header)) func() []byte {
		x := DoViewChangeHeader{Prefix: Prefix{Cluster: cluster, View: 5}, Op: 200, Commit: 100, Group: MetadataGroup, LogView: 4}
		return header(&x, make([]byte, n*HeaderSize), mut)
	}
	sv := func(n int, mut func(*Header)) func() []byte {
		x := StartViewHeader{Prefix: Prefix{Cluster: cluster, View: 5}, Op: 200, Commit: 100, Group: MetadataGroup}
		return header(&x, make([]byte, n*HeaderSize), mut)
	}
	request := func(op Operation, session, request uint64) func() []byte {
		return header(&RequestHeader{Prefix: pre, Client: one, Operation: op, Session: session, Request: request}, nil, noop)
	}
	eviction := func(reason EvictionReason, max, min uint32, mut func(*Header)) func() []byte {
		return header(&EvictionHeader{Prefix: pre, Client: one, Reason: reason, ServerProtocolVersion: max,
			ServerProtocolVersionMin: min}, nil, mut)
	}
	stt := func(available, transient uint8, body []byte) func() []byte {
		return header(&StateTransferTargetHeader{Prefix: pre, Available: available, UnavailableTransient: transient}, body, noop)
	}
	fr := func(mut func(*Header)) func() []byte {
		return header(&ForwardRegisterHeader{Prefix: pre, Client: one, Nonce: one}, nil, mut)
	}
	frr := func(o ForwardRegisterOutcome, epoch uint64, mut func(*Header)) func() []byte {
		return header(&ForwardRegisterResultHeader{Prefix: pre, Client: one, Nonce: one, Outcome: o, Epoch: epoch}, nil, mut)
	}
	fl := func(session, request uint64) func() []byte {
		return header(&ForwardLogoutHeader{Prefix: pre, Client: one, Nonce: one, Session: session, Request: request}, nil, noop)
	}
	flr := func(o ForwardLogoutOutcome, commit uint64, mut func(*Header)) func() []byte {
		return header(&ForwardLogoutResultHeader{Prefix: pre, Client: one, Nonce: one, Outcome: o, Commit: commit}, nil, mut)
	}

	tests := []struct {
		name  string
		frame func() []byte
		rule  Rule
	}{
		{"pong", header(&CommitHeader{}, nil, set(offCommand, byte(CommandPong))), ErrNotReplicaPlane},
		{"reserved command 0", header(&CommitHeader{}, nil, set(offCommand, 0)), ErrNotReplicaPlane},
		{"prepare operation 99", func() []byte { return prepare(set(offPrepareOperation, 99)) }, ErrOperationUndefined},
		{"prepare_ok operation 4", header(&PrepareOkHeader{}, nil, set(offPrepareOkOperation, 4)), ErrOperationUndefined},
		{"request operation 200", header(&RequestHeader{Client: one}, nil, set(offReqOperation, 200)), ErrOperationUndefined},
		{"reply operation 163", header(&ReplyHeader{}, nil, set(offReplyOperation, 163)), ErrOperationUndefined},
		{"eviction reason 16", eviction(EvictionNoSession, 0, 0, set(offEvictReason, 16)), ErrReasonUndefined},
		{"register result outcome 7", frr(ForwardRegisterOk, 0, set(offOutcome, 7)), ErrOutcomeUndefined},
		{"logout result outcome 5", flr(ForwardLogoutOk, 0, set(offOutcome, 5)), ErrOutcomeUndefined},
		{"seal zero", func() []byte {
			c := CommitHeader{Prefix: pre}
			f := BuildFrame(&c, nil)
			HeaderOf(f).SetChecksum(U128{})
			return f
		}, ErrSealMismatch},
		{"seal high half", func() []byte {
			c := CommitHeader{Prefix: pre}
			f := BuildFrame(&c, nil)
			f[8] = 1
			return f
		}, ErrSealMismatch},
		{"prepare identity", func() []byte {
			f := prepare(noop)
			f[0] ^= 1
			return f
		}, ErrIdentityMismatch},
		{"prepare body seal", func() []byte {
			p := b6Prepare()
			f := BuildFrame(&p, []byte("body"))
			f[HeaderSize] ^= 1
			return f
		}, ErrBodySealMismatch},
		{"prepare reserved_frame", func() []byte { return prepare(set(100, 1)) }, ErrReservedFrameNonzero},
		{"send messages payload bit", func() []byte {
			p := PrepareHeader{Prefix: Prefix{Command: CommandPrepare}, Op: 1, Operation: OperationSendMessages, Group: 5}
			batch := EncodeBatch(BatchHeader{}, []Message{{ID: one, Payload: []byte("payload")}})
			f := BuildFrame(&p, batch)
			f[len(f)-1] ^= 0x10 // the identity covers only the header: Finish keeps it valid
			return resealed(f)
		}, ErrMessageChecksum},
		{"send messages not a batch", func() []byte {
			p := PrepareHeader{Prefix: Prefix{Command: CommandPrepare}, Op: 1, Operation: OperationSendMessages, Group: 5}
			return BuildFrame(&p, []byte("not a batch"))
		}, ErrShort},
		{"prepare reserved tail", func() []byte { return prepare(set(255, 1)) }, ErrReservedNonzero},
		{"repair prepare reserved tail", func() []byte {
			f := prepare(set(230, 1))
			ToRepairPrepare(f)
			return f
		}, ErrReservedNonzero},
		{"dvc body seal", func() []byte {
			f := dvc(1, noop)()
			f[HeaderSize+5] ^= 1
			return f
		}, ErrBodySealMismatch},
		{"sv body seal zero with body", func() []byte {
			f := sv(1, noop)()
			HeaderOf(f).SetChecksumBody(U128{})
			HeaderOf(f).SealFrame()
			return f
		}, ErrBodySealMismatch},
		{"commit size 512", header(&CommitHeader{Prefix: pre}, make([]byte, 256), noop), ErrSizeNotHeader},
		{"request_state_transfer body", header(&RequestStateTransferHeader{Prefix: pre}, []byte{1}, noop), ErrSizeNotHeader},
		{"svc release", header(&StartViewChangeHeader{Prefix: pre}, nil, set32(offRelease, 1)), ErrReleaseNonzero},
		{"rsv release", header(&RequestStartViewHeader{Prefix: pre}, nil, set32(offRelease, 1)), ErrReleaseNonzero},
		{"dvc release", dvc(0, set32(offRelease, 2)), ErrReleaseNonzero},
		{"sv release", sv(0, set32(offRelease, 2)), ErrReleaseNonzero},
		{"dvc log_view above view", dvc(0, set32(offDVCLogView, 6)), ErrLogViewAboveView},
		{"dvc commit above op", dvc(0, set64(offDVCCommit, 201)), ErrCommitAboveOp},
		{"sv commit above op", sv(0, set64(offSVCommit, 201)), ErrCommitAboveOp},
		{"dvc size not multiple", func() []byte {
			x := DoViewChangeHeader{Prefix: pre, Op: 1}
			return resealed(BuildFrame(&x, make([]byte, 100)))
		}, ErrSizeNotMultiple},
		{"sv suffix 129", sv(129, noop), ErrSuffixTooLong},
		{"dvc suffix 129", dvc(129, noop), ErrSuffixTooLong},
		{"dvc nack beyond", dvc(3, func(h *Header) { putU128(h[offDVCNack:], U128{}.WithBit(3)) }), ErrBitsetBeyondSuffix},
		{"dvc present beyond", dvc(0, func(h *Header) { putU128(h[offDVCPresent:], U128{}.WithBit(127)) }), ErrBitsetBeyondSuffix},
		{"request prepares from 0", header(&RequestPreparesHeader{Prefix: pre, ToOp: 5}, nil, noop), ErrFromOpZero},
		{"request prepares from > to", header(&RequestPreparesHeader{Prefix: pre, FromOp: 6, ToOp: 5}, nil, noop), ErrFromOpAboveToOp},
		{"state chunk len 0", header(&RequestStateChunkHeader{Prefix: pre}, nil, noop), ErrLenZero},
		{"state chunk request body", header(&RequestStateChunkHeader{Prefix: pre, Len: 1}, []byte{0}, noop), ErrSizeNotHeader},
		{"stt available 2", stt(2, 0, nil), ErrAvailableInvalid},
		{"stt transient 2", stt(0, 2, nil), ErrTransientInvalid},
		{"stt both", stt(1, 1, nil), ErrAvailableAndTransient},
		{"stt refusal with body", stt(0, 1, []byte{1}), ErrRefusalHasBody},
		{"forward register size", header(&ForwardRegisterHeader{Prefix: pre, Client: one, Nonce: one}, []byte{0}, noop), ErrSizeNotHeader},
		{"forward register client 0", header(&ForwardRegisterHeader{Prefix: pre, Nonce: one}, nil, noop), ErrClientZero},
		{"forward register nonce 0", header(&ForwardRegisterHeader{Prefix: pre, Client: one}, nil, noop), ErrNonceZero},
		{"forward register reserved", fr(set(200, 1)), ErrReservedNonzero},
		{"forward register reserved_frame is not checked", fr(set(100, 1)), 0},
		{"register result epoch on failure", frr(ForwardRegisterPipelineFull, 3, noop), ErrOutcomeFieldsNonzero},
		{"register result watermark on failure", frr(ForwardRegisterCanceled, 0, set64(offFRRWatermark, 1)), ErrOutcomeFieldsNonzero},
		{"register result reserved", frr(ForwardRegisterOk, 3, set(254, 1)), ErrReservedNonzero},
		{"logout session 0", fl(0, 1), ErrSessionZero},
		{"logout request 0", fl(1, 0), ErrRequestZero},
		{"logout result commit on failure", flr(ForwardLogoutInProgress, 9, noop), ErrOutcomeFieldsNonzero},
		{"logout result reserved", flr(ForwardLogoutOk, 9, set(170, 1)), ErrReservedNonzero},
		{"request client 0", header(&RequestHeader{Prefix: pre, Operation: OperationRegister}, nil, noop), ErrClientZero},
		{"request operation reserved", request(OperationReserved, 1, 1), ErrOperationReserved},
		{"register with session", request(OperationRegister, 1, 0), ErrRegisterSessionNonzero},
		{"register with request", request(OperationRegister, 0, 1), ErrRegisterRequestNonzero},
		{"create stream session 0", request(OperationCreateStream, 0, 1), ErrSessionZero},
		{"create stream request 0", request(OperationCreateStream, 1, 0), ErrRequestZero},
		{"non-replicated without session", request(OperationNonReplicated, 0, 0), 0},
		{"eviction size", header(&EvictionHeader{Prefix: pre, Client: one, Reason: EvictionNoSession}, []byte{1}, noop), ErrSizeNotHeader},
		{"eviction client 0", header(&EvictionHeader{Prefix: pre, Reason: EvictionNoSession}, nil, noop), ErrClientZero},
		{"eviction reserved_frame", eviction(EvictionNoSession, 0, 0, set(70, 1)), ErrReservedFrameNonzero},
		{"eviction reserved", eviction(EvictionNoSession, 0, 0, set(200, 1)), ErrReservedNonzero},
		{"eviction reason 0", eviction(EvictionReserved, 0, 0, noop), ErrReasonReserved},
		{"eviction window min 0", eviction(EvictionIncompatibleProtocol, 5, 0, noop), ErrProtocolWindow},
		{"eviction window max < min", eviction(EvictionIncompatibleProtocol, 4, 5, noop), ErrProtocolWindow},
		{"eviction window on other reason", eviction(EvictionNoSession, 1, 1, noop), ErrProtocolWindow},
		{"eviction window ok", eviction(EvictionIncompatibleProtocol, 11264, 11264, noop), 0},
		{"repair done with body is not checked", header(&RepairRangeHeader{Prefix: Prefix{Command: CommandRepairDone}}, []byte{1}, noop), 0},
		{"prepare release is not checked", func() []byte { return prepare(set32(offRelease, 7)) }, 0},
	}
	for _, tt := range tests {
		err := Validate(tt.frame())
		switch {
		case tt.rule == 0 && err != nil:
			t.Errorf("%s: rejected: %v", tt.name, err)
		case tt.rule != 0 && !errors.Is(err, tt.rule):
			t.Errorf("%s: got %v, want rule %q", tt.name, err, tt.rule)
		case tt.rule != 0:
			var fe *FrameError
			if !errors.As(err, &fe) {
				t.Errorf("%s: %T is not a *FrameError", tt.name, err)
			}
		}
	}
}

// TestFramingRules covers CheckFraming, the Reader and SplitFrame on each
// framing rule.
func TestFramingRules(t *testing.T) {
	c := CommitHeader{}
	good := BuildFrame(&c, nil)
	with := func(mut func(f []byte) []byte) []byte { return mut(append([]byte(nil), good...)) }
	tests := []struct {
		name  string
		frame []byte
		rule  Rule
	}{
		{"short header", good[:255], ErrTruncated},
		{"size 255", with(func(f []byte) []byte { put32(f[offSize:], 255); return f }), ErrSizeBelowHeader},
		{"size above max", with(func(f []byte) []byte { put32(f[offSize:], 1<<20); return append(f, make([]byte, 1<<20-256)...) }), ErrSizeAboveMax},
		{"size beyond frame", with(func(f []byte) []byte { put32(f[offSize:], 300); return f }), ErrTruncated},
		{"size short of frame", with(func(f []byte) []byte { return append(f, 0) }), ErrSizeMismatch},
		{"command 30", with(func(f []byte) []byte { f[offCommand] = 30; return f }), ErrCommandUnknown},
	}
	for _, tt := range tests {
		err := CheckFraming(tt.frame, 4096)
		var fe *FramingError
		if !errors.Is(err, tt.rule) || !errors.As(err, &fe) {
			t.Errorf("%s: CheckFraming = %v, want %q", tt.name, err, tt.rule)
		}
	}
}
