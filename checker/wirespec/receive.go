package wirespec

import "fmt"

// The receiver's rules: what wire.md tells a replica to do with a frame it
// reads from an established peer connection (sections 1.1 and 4.1, each
// command's validate() of section 5, the batch of section 7, correction
// 6). Check judges what a correct sender puts on the wire and is stricter
// (reserved bytes a receiver never reads, echoes, the sender's own id);
// Receive judges only what a receiver must refuse, which is what a peer's
// bad input meets.

// Receiver rules, named as wire.md states them. Each names one check a
// receiver makes; Refusal.Rule is one of these.
const (
	// Framing (1.1): the connection is closed.
	RuleSizeBelowHeader = "1.1 size >= 256"
	RuleSizeAboveMax    = "1.1 size <= max_message_size"
	RuleCommandRange    = "1.1 command 0..29"
	// The network delivers frames whole (DEVIATIONS 20, 26): a size that
	// is not the frame's length desynchronises the stream.
	RuleSizeDelimits = "1.1 size is the frame's length"
	// Dispatch (4.1 step 3, section 15): dropped before any typed parse.
	RuleNoTraffic   = "4.1 commands 0..4 carry no traffic"
	RuleRequest     = "15 Request has no replica-plane sender"
	RuleClientBound = "4.1 Reply and Eviction are client-bound"
	RuleHandshake   = "4 handshake frames after the handshake"
	// Typed bit patterns (4.1 step 4).
	RuleOperation = "4.1 operation is a defined discriminant"
	RuleOutcome   = "4.1 outcome is a defined discriminant"
	// Integrity (3).
	RuleSeal     = "3.2 frame seal"
	RuleIdentity = "3.3 prepare identity"
	RuleBodySeal = "3.4 checksum_body"
	// validate() (5).
	RuleReservedFrame = "5.1 reserved_frame zero"
	RuleReserved      = "5 reserved bytes zero"
	RuleRelease       = "2 release 0"
	RuleHeaderOnly    = "5 size == 256"
	RuleSuffixSize    = "5.5 size is 256 + 256 n"
	RuleSuffixLength  = "5.5 n <= 128"
	RuleBitsets       = "5.5 no bitset bit at or beyond n"
	RuleLogView       = "5.5 log_view <= view"
	RuleCommitOp      = "5.5 commit <= op"
	RuleFromOp        = "5.8 from_op >= 1"
	RuleFromTo        = "5.8 from_op <= to_op"
	RuleAvailable     = "5.12 available is 0 or 1"
	RuleTransient     = "5.12 unavailable_transient is 0 or 1"
	RuleAvailableBoth = "5.12 not both available and unavailable_transient"
	RuleRefusalBody   = "5.12 available == 0 => size == 256"
	RuleLen           = "5.13 len != 0"
	RuleClient        = "5.15 client != 0"
	RuleNonce         = "5.15 nonce != 0"
	RuleSession       = "5.17 session != 0"
	RuleRequestNumber = "5.17 request != 0"
	RuleOutcomeFields = "5.16 outcome != 0 => result fields 0"
	RuleReplicaRange  = "correction 6 replica < replica_count"
	// The batch of a SendMessages prepare (7).
	RuleBatchShort     = "7.1 batch"
	RuleBatchLength    = "7.1 batch_length"
	RuleBatchReserved  = "7.1 reserved"
	RuleBatchCount     = "7.1 message_count"
	RuleBatchFrames    = "7.2 frames"
	RuleBatchMsgSum    = "7.2 checksum"
	RuleBatchMsgReserv = "7.2 reserved"
	RuleBatchChecksum  = "7.3 batch_checksum"
)

// Refusal is what a receiver must do with a frame it may not accept: the
// rule it breaks, and whether the connection goes with it (a framing rule,
// wire.md 1.1: the stream cannot be trusted further) or only the frame
// (4.1 step 5: the connection stays up).
type Refusal struct {
	Rule   string
	Close  bool
	Detail string
}

func (r *Refusal) Error() string { return r.Rule + ": " + r.Detail }

func refuse(rule, format string, a ...any) *Refusal {
	return &Refusal{Rule: rule, Detail: fmt.Sprintf(format, a...)}
}

// Receive judges frame f as a replica of a cluster of replicas reads it
// from an established peer connection whose frames may be sizeMax bytes at
// most: nil if the receiver must pass it on (to the routing of 4.1 step 7,
// where view, status and nonce checks decide), else the first rule it
// breaks in wire.md 4.1's order: framing, dispatch, bit patterns, seal,
// validate(), and the sender id (correction 6).
func Receive(f []byte, replicas int, sizeMax uint32) *Refusal {
	if r := framing(f, sizeMax); r != nil {
		return r
	}
	c := f[OffCommand]
	switch {
	case c < Request:
		return refuse(RuleNoTraffic, "command %d", c)
	case c == Request:
		return refuse(RuleRequest, "a Request")
	case c == Reply || c == Eviction:
		return refuse(RuleClientBound, "a %s", CommandName(c))
	case c >= ReplicaHello && c <= ReplicaFinish:
		return refuse(RuleHandshake, "a %s", CommandName(c))
	}
	name := CommandName(c)
	switch c {
	case Prepare, RepairPrepare:
		if op := f[offPOperation]; !validOperation(op) {
			return refuse(RuleOperation, "%s with operation %d", name, op)
		}
	case PrepareOk:
		if op := f[OffPrepareOkOpn]; !validOperation(op) {
			return refuse(RuleOperation, "PrepareOk with operation %d", op)
		}
	case ForwardRegisterResult:
		if o := f[OffFRROutcome]; o > 6 {
			return refuse(RuleOutcome, "ForwardRegisterResult outcome %d (0..6)", o)
		}
	case ForwardLogoutResult:
		if o := f[OffFLROutcome]; o > 4 {
			return refuse(RuleOutcome, "ForwardLogoutResult outcome %d (0..4)", o)
		}
	}
	if sealed(c) {
		if got, want := Get128(f, OffChecksum), Seal(f); got != want {
			return refuse(RuleSeal, "%s checksum %s, seal %s", name, got, want)
		}
	}
	if r := receiveFields(f, c); r != nil {
		return r
	}
	if r := f[OffReplica]; int(r) >= replicas {
		return refuse(RuleReplicaRange, "%s names replica %d of %d", name, r, replicas)
	}
	return nil
}

// framing: the rules of wire.md 1.1, which every frame read meets first,
// in the handshake too.
func framing(f []byte, sizeMax uint32) *Refusal {
	if len(f) < HeaderSize {
		return &Refusal{Rule: RuleSizeBelowHeader, Close: true, Detail: fmt.Sprintf("%d bytes, shorter than a header", len(f))}
	}
	c, size := f[OffCommand], U32(f, OffSize)
	switch {
	case size < HeaderSize:
		return &Refusal{Rule: RuleSizeBelowHeader, Close: true, Detail: fmt.Sprintf("size %d", size)}
	case size > sizeMax:
		return &Refusal{Rule: RuleSizeAboveMax, Close: true, Detail: fmt.Sprintf("size %d above %d", size, sizeMax)}
	case int(size) != len(f):
		return &Refusal{Rule: RuleSizeDelimits, Close: true, Detail: fmt.Sprintf("size %d, %d bytes", size, len(f))}
	case c > ForwardLogoutResult:
		return &Refusal{Rule: RuleCommandRange, Close: true, Detail: fmt.Sprintf("command %d", c)}
	}
	return nil
}

// receiveFields is each command's validate() (wire.md 5).
func receiveFields(f []byte, c uint8) *Refusal {
	name := CommandName(c)
	size, body := len(f), f[HeaderSize:]
	headerOnly := func() *Refusal {
		if size != HeaderSize {
			return refuse(RuleHeaderOnly, "%s of %d bytes", name, size)
		}
		return nil
	}
	release := func() *Refusal {
		if r := U32(f, OffRelease); r != 0 {
			return refuse(RuleRelease, "%s with release %d", name, r)
		}
		return nil
	}
	switch c {
	case Prepare, RepairPrepare:
		return receivePrepare(f)
	case Commit, RequestStateTransfer:
		return headerOnly()
	case StartViewChange, RequestStartView:
		return release()
	case DoViewChange, StartView:
		if r := release(); r != nil {
			return r
		}
		if c == DoViewChange {
			if lv, v := U32(f, OffDVCLogView), U32(f, OffView); lv > v {
				return refuse(RuleLogView, "log_view %d, view %d", lv, v)
			}
		}
		if commit, op := U64(f, OffVoteCommit), U64(f, OffVoteOp); commit > op {
			return refuse(RuleCommitOp, "%s commit %d, op %d", name, commit, op)
		}
		if len(body)%HeaderSize != 0 {
			return refuse(RuleSuffixSize, "%s of %d bytes", name, size)
		}
		n := len(body) / HeaderSize
		if n > SuffixEntriesMax {
			return refuse(RuleSuffixLength, "%s of %d entries", name, n)
		}
		if c == DoViewChange && n < SuffixEntriesMax {
			nack, present := Get128(f, OffDVCNack), Get128(f, OffDVCPresent)
			if bitsFrom(nack, n) || bitsFrom(present, n) {
				return refuse(RuleBitsets, "%d entries, nack %s, present %s", n, nack, present)
			}
		}
		// 3.4: keyed on the body's presence, not on the field.
		if len(body) > 0 && Get128(f, OffChecksumBody) != BodySeal(body) {
			return refuse(RuleBodySeal, "%s checksum_body %s, its body seals to %s", name, Get128(f, OffChecksumBody), BodySeal(body))
		}
	case RequestPrepares:
		from, to := U64(f, OffRPFromOp), U64(f, OffRPToOp)
		if from == 0 {
			return refuse(RuleFromOp, "from_op 0")
		}
		if from > to {
			return refuse(RuleFromTo, "from_op %d, to_op %d", from, to)
		}
	case StateTransferTarget:
		avail, transient := f[OffSTTAvailable], f[OffSTTTransient]
		switch {
		case avail > 1:
			return refuse(RuleAvailable, "available %d", avail)
		case transient > 1:
			return refuse(RuleTransient, "unavailable_transient %d", transient)
		case avail == 1 && transient == 1:
			return refuse(RuleAvailableBoth, "both 1")
		case avail == 0 && size != HeaderSize:
			return refuse(RuleRefusalBody, "a refusal of %d bytes", size)
		}
	case RequestStateChunk:
		if U32(f, OffRSCLen) == 0 {
			return refuse(RuleLen, "a chunk request for 0 bytes")
		}
		return headerOnly()
	case ForwardRegister:
		return receiveForward(f, OffFRClient, OffFRNonce, 164, HeaderSize)
	case ForwardRegisterResult:
		if r := receiveForward(f, OffFRRClient, OffFRRNonce, 176, OffFRROutcome); r != nil {
			return r
		}
		if o, epoch, wm := f[OffFRROutcome], U64(f, OffFRREpoch), U64(f, OffFRRWatermark); o != 0 && (epoch != 0 || wm != 0) {
			return refuse(RuleOutcomeFields, "outcome %d, epoch %d, watermark %d", o, epoch, wm)
		}
	case ForwardLogout:
		if r := receiveForward(f, OffFLClient, OffFLNonce, 176, HeaderSize); r != nil {
			return r
		}
		if U64(f, OffFLSession) == 0 {
			return refuse(RuleSession, "a ForwardLogout of session 0")
		}
		if U64(f, OffFLRequest) == 0 {
			return refuse(RuleRequestNumber, "a ForwardLogout of request 0")
		}
	case ForwardLogoutResult:
		if r := receiveForward(f, OffFLRClient, OffFLRNonce, 168, OffFLROutcome); r != nil {
			return r
		}
		if o, commit := f[OffFLROutcome], U64(f, OffFLRCommit); o != 0 && commit != 0 {
			return refuse(RuleOutcomeFields, "outcome %d, commit %d", o, commit)
		}
	}
	return nil
}

// receiveForward: the rules the four session-forwarding headers share
// (5.15-5.18): size 256, client and nonce nonzero, the tail reserved zero
// (not 62..128, wire.md 14.3).
func receiveForward(f []byte, offClient, offNonce, reservedFrom, reservedTo int) *Refusal {
	name := CommandName(f[OffCommand])
	switch {
	case len(f) != HeaderSize:
		return refuse(RuleHeaderOnly, "%s of %d bytes", name, len(f))
	case Get128(f, offClient).IsZero():
		return refuse(RuleClient, "%s for client 0", name)
	case Get128(f, offNonce).IsZero():
		return refuse(RuleNonce, "%s with nonce 0", name)
	}
	if p := zero(f, reservedFrom, reservedTo, RuleReserved); p != nil {
		return refuse(RuleReserved, "%s: %s", name, p.Detail)
	}
	return nil
}

// receivePrepare: 5.1's validate() (and 5.9's): reserved areas, the
// identity and the body seal where nonzero, and a SendMessages body's
// batch, which Iggy verifies at ingress (DEVIATIONS 22).
func receivePrepare(f []byte) *Refusal {
	name := CommandName(f[OffCommand])
	if p := zero(f, 62, 128, RuleReservedFrame); p != nil {
		return refuse(RuleReservedFrame, "%s: %s", name, p.Detail)
	}
	if p := zero(f, 228, HeaderSize, RuleReserved); p != nil {
		return refuse(RuleReserved, "%s: %s", name, p.Detail)
	}
	if id := Get128(f, OffChecksum); !id.IsZero() && id != Identity(f) {
		return refuse(RuleIdentity, "%s checksum %s, identity %s", name, id, Identity(f))
	}
	body := f[HeaderSize:]
	if sum := Get128(f, OffChecksumBody); !sum.IsZero() && sum != BodySeal(body) {
		return refuse(RuleBodySeal, "%s checksum_body %s, its body seals to %s", name, sum, BodySeal(body))
	}
	if f[offPOperation] == 160 {
		if p := checkBatch(body, 0, false); p != nil {
			return refuse(p.Rule, "%s op %d: %s", name, U64(f, offPOp), p.Detail)
		}
	}
	return nil
}

// GroupOf reads the consensus group a frame names (wire.md 5's offsets),
// and false for a command that carries none (session forwarding,
// handshakes and client frames, which belong to the metadata plane,
// 10.2). f holds at least a header.
func GroupOf(f []byte) (uint64, bool) {
	var off int
	switch f[OffCommand] {
	case Prepare, RepairPrepare:
		off = offPGroup
	case PrepareOk:
		off = OffPrepareOkGroup
	case Commit:
		off = OffCommitGroup
	case StartViewChange, RequestStartView:
		off = 128
	case DoViewChange, StartView:
		off = OffVoteGroup
	case RequestPrepares:
		off = OffRPGroup
	case RepairDone, RangeEvicted:
		off = OffRRGroup
	case RequestStateTransfer:
		off = OffRSTGroup
	case StateTransferTarget:
		off = OffSTTGroup
	case RequestStateChunk:
		off = OffRSCGroup
	case StateChunk:
		off = OffSCGroup
	default:
		return 0, false
	}
	return U64(f, off), true
}
