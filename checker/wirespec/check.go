package wirespec

// Prep is a prepare header's fields at wire.md 5.1's offsets.
type Prep struct {
	Identity        U128 // the checksum field (the identity, once verified)
	ChecksumBody    U128
	View            uint32
	Release         uint32
	Replica         uint8
	Size            uint32
	Client          U128
	Parent          U128
	RequestChecksum U128
	Op              uint64
	Commit          uint64
	Timestamp       uint64
	Request         uint64
	Operation       uint8
	Group           uint64
	UserID          uint32
}

// Prepare's offsets (wire.md 5.1).
const (
	offPClient          = 128
	offPParent          = 144
	offPRequestChecksum = 160
	offPOp              = 176
	offPCommit          = 184
	offPTimestamp       = 192
	offPRequest         = 200
	offPOperation       = 208
	offPGroup           = 216
	offPUserID          = 224
)

// ReadPrepare reads a prepare header (h holds at least 256 bytes).
func ReadPrepare(h []byte) Prep {
	return Prep{
		Identity: Get128(h, OffChecksum), ChecksumBody: Get128(h, OffChecksumBody), View: U32(h, OffView),
		Release: U32(h, OffRelease), Replica: U8(h, OffReplica), Size: U32(h, OffSize),
		Client: Get128(h, offPClient), Parent: Get128(h, offPParent), RequestChecksum: Get128(h, offPRequestChecksum),
		Op: U64(h, offPOp), Commit: U64(h, offPCommit), Timestamp: U64(h, offPTimestamp), Request: U64(h, offPRequest),
		Operation: U8(h, offPOperation), Group: U64(h, offPGroup), UserID: U32(h, offPUserID),
	}
}

// IsBlank reports whether a suffix entry is the canonical blank: all zero
// but the command (6) and op (wire.md 5.5).
func IsBlank(e []byte) bool {
	for i := 0; i < HeaderSize; i++ {
		switch {
		case i == OffCommand:
			if e[i] != Prepare {
				return false
			}
		case i >= offPOp && i < offPOp+8:
		default:
			if e[i] != 0 {
				return false
			}
		}
	}
	return true
}

// Fields a checker cross-checks, by command (offsets of wire.md 5).
const (
	OffPrepareOkParent   = 128
	OffPrepareOkChecksum = 144
	OffPrepareOkOp       = 160
	OffPrepareOkCommit   = 168
	OffPrepareOkTime     = 176
	OffPrepareOkRequest  = 184
	OffPrepareOkOpn      = 192
	OffPrepareOkGroup    = 200

	OffCommitTimestamp = 144
	OffCommitCommit    = 152
	OffCommitGroup     = 168

	OffVoteOp      = 128 // DoViewChange and StartView
	OffVoteCommit  = 136
	OffVoteGroup   = 144
	OffDVCLogView  = 152
	OffDVCNack     = 224
	OffDVCPresent  = 240
	OffSVIncarnate = 240

	OffRPNonce  = 128 // RequestPrepares
	OffRPFromOp = 144
	OffRPToOp   = 152
	OffRPGroup  = 160

	OffRRNonce = 128 // RepairDone, RangeEvicted
	OffRROp    = 144
	OffRRGroup = 152

	OffRSTNonce = 128
	OffRSTGroup = 144

	OffSTTNonce     = 128
	OffSTTCommitOp  = 144
	OffSTTGroup     = 152
	OffSTTAvailable = 160
	OffSTTTransient = 161
	OffSTTCommitMax = 168

	OffRSCNonce    = 128
	OffRSCOffset   = 144
	OffRSCGroup    = 152
	OffRSCLen      = 160
	OffRSCArtifact = 164

	OffSCNonce    = 128
	OffSCOffset   = 144
	OffSCGroup    = 152
	OffSCArtifact = 160

	OffFRClient = 128
	OffFRNonce  = 144
	OffFRUserID = 160

	OffFRRNonce     = 128
	OffFRRClient    = 144
	OffFRREpoch     = 160
	OffFRRWatermark = 168
	OffFRROutcome   = 255

	OffFLClient  = 128
	OffFLNonce   = 144
	OffFLSession = 160
	OffFLRequest = 168

	OffFLRNonce   = 128
	OffFLRClient  = 144
	OffFLRCommit  = 160
	OffFLROutcome = 255
)

// Check judges one frame a replica (sender, of a cluster of replicas)
// sends on the replica plane, by wire.md alone: the generic prefix, the
// seal or identity, the body seal, the size rule, every reserved byte, and
// the command's own field rules (with a DoViewChange's and a StartView's
// suffix, and a SendMessages prepare's batch). It returns the first rule
// broken, or nil.
func Check(f []byte, sender uint8, replicas int) *Problem {
	if len(f) < HeaderSize {
		return problem("2 frame", "%d bytes, shorter than a header", len(f))
	}
	c := f[OffCommand]
	if size := U32(f, OffSize); int(size) != len(f) {
		return problem("2 size", "size %d for a frame of %d bytes", size, len(f))
	}
	if headerOnly(c) && len(f) != HeaderSize {
		return problem("4 size rule", "%s of %d bytes (header-only: 256)", CommandName(c), len(f))
	}
	if r := f[OffReplica]; c != Prepare && c != RepairPrepare && r != sender {
		return problem("2 replica", "%s from replica %d says replica %d", CommandName(c), sender, r)
	} else if int(r) >= replicas {
		return problem("2 replica", "%s names replica %d of %d (correction 6)", CommandName(c), r, replicas)
	}
	if c != Prepare && c != RepairPrepare && U32(f, OffRelease) != 0 {
		return problem("2 release", "%s with release %d", CommandName(c), U32(f, OffRelease))
	}
	if p := zero(f, 62, 128, "2 reserved_frame"); p != nil {
		return p
	}
	if sealed(c) {
		if got, want := Get128(f, OffChecksum), Seal(f); got != want {
			return problem("3.2 seal", "%s checksum %s, XXH3(header[16..256]) is %s", CommandName(c), got, want)
		}
	}
	body := f[HeaderSize:]
	cb := Get128(f, OffChecksumBody)
	switch c {
	case Prepare, RepairPrepare:
		return checkPrepare(f)
	case DoViewChange, StartView:
		if len(body) == 0 && !cb.IsZero() {
			return problem("3.4 checksum_body", "%s without a body has checksum_body %s, not 0", CommandName(c), cb)
		}
		if len(body) > 0 && cb != BodySeal(body) {
			return problem("3.4 checksum_body", "%s checksum_body %s, its body seals to %s", CommandName(c), cb, BodySeal(body))
		}
		return checkVote(f)
	default:
		if !cb.IsZero() {
			return problem("3.4 checksum_body", "%s with checksum_body %s, not 0", CommandName(c), cb)
		}
	}
	view := U32(f, OffView)
	switch c {
	case PrepareOk:
		if !validOperation(f[OffPrepareOkOpn]) {
			return problem("5.2 operation", "PrepareOk operation %d is not defined", f[OffPrepareOkOpn])
		}
		if p := zero(f, 193, 200, "5.2 padding"); p != nil {
			return p
		}
		return zero(f, 208, 256, "5.2 reserved")
	case Commit:
		if p := zero(f, 128, 144, "5.3 commit_checksum (unused, 0)"); p != nil {
			return p
		}
		if p := zero(f, 160, 168, "5.3 checkpoint_op (unused, 0)"); p != nil {
			return p
		}
		return zero(f, 176, 256, "5.3 reserved")
	case StartViewChange:
		return zero(f, 136, 256, "5.4 reserved")
	case RequestStartView:
		return zero(f, 136, 240, "5.7 reserved")
	case RequestPrepares:
		from, to := U64(f, OffRPFromOp), U64(f, OffRPToOp)
		switch {
		case view != 0:
			return problem("5.8 view", "RequestPrepares with view %d (not set: 0)", view)
		case from < 1 || from > to:
			return problem("5.8 range", "RequestPrepares from_op %d to_op %d (1 <= from <= to)", from, to)
		}
		return zero(f, 168, 256, "5.8 reserved")
	case RepairDone, RangeEvicted:
		if view != 0 {
			return problem("5.10 view", "%s with view %d (0)", CommandName(c), view)
		}
		return zero(f, 160, 256, "5.10 reserved")
	case RequestStateTransfer:
		if view != 0 {
			return problem("5.11 view", "RequestStateTransfer with view %d (0)", view)
		}
		return zero(f, 152, 256, "5.11 reserved")
	case StateTransferTarget:
		return checkTarget(f)
	case RequestStateChunk:
		switch {
		case view != 0:
			return problem("5.13 view", "RequestStateChunk with view %d (0)", view)
		case U32(f, OffRSCLen) == 0:
			return problem("5.13 len", "RequestStateChunk for 0 bytes")
		}
		return zero(f, 168, 256, "5.13 reserved")
	case StateChunk:
		if view != 0 {
			return problem("5.14 view", "StateChunk with view %d (0)", view)
		}
		return zero(f, 164, 256, "5.14 reserved")
	case ForwardRegister:
		if p := checkForwardIDs(f, OffFRClient, OffFRNonce, sender, true, "5.15"); p != nil {
			return p
		}
		return zero(f, 164, 256, "5.15 reserved")
	case ForwardRegisterResult:
		if p := checkForwardIDs(f, OffFRRClient, OffFRRNonce, sender, false, "5.16"); p != nil {
			return p
		}
		o, epoch, watermark := f[OffFRROutcome], U64(f, OffFRREpoch), U64(f, OffFRRWatermark)
		switch {
		case o > 6:
			return problem("5.16 outcome", "ForwardRegisterResult outcome %d (0..6)", o)
		case o == 2:
			return problem("5.16 outcome", "ForwardRegisterResult NotCaughtUp (reserved, never produced)")
		case o != 0 && (epoch != 0 || watermark != 0):
			return problem("5.16 outcome", "ForwardRegisterResult outcome %d with epoch %d watermark %d (0 unless Ok)", o, epoch, watermark)
		case o == 0 && epoch == 0:
			return problem("5.16 epoch", "ForwardRegisterResult Ok with epoch 0 (the committed Register op)")
		}
		return zero(f, 176, 255, "5.16 reserved")
	case ForwardLogout:
		if p := checkForwardIDs(f, OffFLClient, OffFLNonce, sender, true, "5.17"); p != nil {
			return p
		}
		if U64(f, OffFLSession) == 0 || U64(f, OffFLRequest) == 0 {
			return problem("5.17 session", "ForwardLogout session %d request %d (both nonzero)", U64(f, OffFLSession), U64(f, OffFLRequest))
		}
		return zero(f, 176, 256, "5.17 reserved")
	case ForwardLogoutResult:
		if p := checkForwardIDs(f, OffFLRClient, OffFLRNonce, sender, false, "5.18"); p != nil {
			return p
		}
		o, commit := f[OffFLROutcome], U64(f, OffFLRCommit)
		switch {
		case o > 4:
			return problem("5.18 outcome", "ForwardLogoutResult outcome %d (0..4)", o)
		case o != 0 && commit != 0:
			return problem("5.18 outcome", "ForwardLogoutResult outcome %d with commit %d (0 unless Ok)", o, commit)
		}
		return zero(f, 168, 255, "5.18 reserved")
	case ReplicaHello, ReplicaChallenge, ReplicaFinish:
		return checkHandshake(f)
	}
	return problem("4 command", "%s is not a frame replicas send each other", CommandName(c))
}

func checkForwardIDs(f []byte, offClient, offNonce int, sender uint8, own bool, section string) *Problem {
	client, nonce := Get128(f, offClient), Get128(f, offNonce)
	switch {
	case client.IsZero():
		return problem(section+" client", "%s for client 0", CommandName(f[OffCommand]))
	case nonce.IsZero():
		return problem(section+" nonce", "%s with nonce 0", CommandName(f[OffCommand]))
	case own && (nonce.Hi != uint64(sender) || nonce.Lo == 0):
		// wire.md 5.15: high 64 bits the sender's id, low 64 a counter, never 0.
		return problem(section+" nonce", "%s from replica %d with nonce %s (high half: the sender, low half nonzero)", CommandName(f[OffCommand]), sender, nonce)
	}
	return nil
}

// CheckPrepareHeader judges a prepare's header alone (a primary's newly
// built prepare, as its event reports it, before any frame leaves): every
// rule of wire.md 5.1 but the body's.
func CheckPrepareHeader(h []byte) *Problem {
	if len(h) < HeaderSize {
		return problem("2 frame", "%d bytes, shorter than a header", len(h))
	}
	if h[OffCommand] != Prepare {
		return problem("5.1 command", "a prepare with command %d", h[OffCommand])
	}
	if p := zero(h, 62, 128, "2 reserved_frame"); p != nil {
		return p
	}
	return checkPrepareFields(h[:HeaderSize], true)
}

// checkPrepare: wire.md 5.1 (and 5.9, a RepairPrepare).
func checkPrepare(f []byte) *Problem { return checkPrepareFields(f, false) }

func checkPrepareFields(f []byte, headerOnly bool) *Problem {
	p := ReadPrepare(f)
	name := CommandName(f[OffCommand])
	switch {
	case p.Op == 0:
		return problem("5.1 op", "%s of op 0 (ops are 1-based)", name)
	case !validOperation(p.Operation):
		return problem("10.1 operation", "%s op %d with operation %d, not defined", name, p.Op, p.Operation)
	case p.Group == MetadataGroup && !IsMetadataOperation(p.Operation):
		return problem("10.1 operation", "metadata %s op %d with operation %d, not a metadata one", name, p.Op, p.Operation)
	case p.Group != MetadataGroup && !IsPartitionOperation(p.Operation):
		return problem("10.1 operation", "%s op %d of group %d with operation %d, not a partition one", name, p.Op, p.Group, p.Operation)
	case p.Group != MetadataGroup && p.Group>>52 != 0:
		return problem("10.2 group", "%s op %d of group 0x%x: bits 52..63 set", name, p.Op, p.Group)
	}
	if e := zero(f, 209, 216, "5.1 operation_padding"); e != nil {
		return e
	}
	if e := zero(f, 228, 256, "5.1 reserved"); e != nil {
		return e
	}
	if id := Identity(f); p.Identity != id {
		return problem("3.3 identity", "%s op %d checksum %s, its identity is %s", name, p.Op, p.Identity, id)
	}
	if headerOnly {
		return nil
	}
	body := f[HeaderSize:]
	if p.Group == MetadataGroup {
		if p.ChecksumBody != BodySeal(body) {
			return problem("3.4 checksum_body", "metadata %s op %d checksum_body %s, its body seals to %s", name, p.Op, p.ChecksumBody, BodySeal(body))
		}
		return nil
	}
	if !p.ChecksumBody.IsZero() {
		return problem("3.4 checksum_body", "partition %s op %d with checksum_body %s (0)", name, p.Op, p.ChecksumBody)
	}
	if p.Operation == 160 {
		if e := CheckBatch(body, p.Timestamp); e != nil {
			e.Detail = name + " op " + uitoa(p.Op) + ": " + e.Detail
			return e
		}
	}
	return nil
}

// checkVote: wire.md 5.5 (DoViewChange) and 5.6 (StartView).
func checkVote(f []byte) *Problem {
	c := f[OffCommand]
	name := CommandName(c)
	op, commit, view := U64(f, OffVoteOp), U64(f, OffVoteCommit), U32(f, OffView)
	body := f[HeaderSize:]
	if len(body)%HeaderSize != 0 || len(body)/HeaderSize > SuffixEntriesMax {
		return problem("5.5 size", "%s of %d bytes (256 + 256 n, n <= 128)", name, len(f))
	}
	n := len(body) / HeaderSize
	if commit > op {
		return problem("5.5 commit", "%s commit %d above its op %d", name, commit, op)
	}
	var nack, present U128
	if c == DoViewChange {
		if lv := U32(f, OffDVCLogView); lv > view {
			return problem("5.5 log_view", "DoViewChange log_view %d above its view %d", lv, view)
		}
		if e := zero(f, 156, 224, "5.5 reserved"); e != nil {
			return e
		}
		nack, present = Get128(f, OffDVCNack), Get128(f, OffDVCPresent)
		if n < 128 {
			for _, bits := range []U128{nack, present} {
				if bitsFrom(bits, n) {
					return problem("5.5 bitsets", "DoViewChange with %d entries sets a bit at %d or above (nack %s present %s)", n, n, nack, present)
				}
			}
		}
	} else if e := zero(f, 152, 240, "5.6 reserved"); e != nil {
		return e
	}
	group := U64(f, OffVoteGroup)
	var upper *Prep // the entry above, non-blank
	for i := 0; i < n; i++ {
		e := body[i*HeaderSize : (i+1)*HeaderSize]
		want := op - uint64(i)
		if e[OffCommand] != Prepare {
			return problem("5.5 suffix", "%s entry %d has command %d (6)", name, i, e[OffCommand])
		}
		if got := U64(e, offPOp); got != want {
			return problem("5.5 suffix", "%s entry %d is op %d, not op %d (descending from op %d)", name, i, got, want, op)
		}
		blank := IsBlank(e)
		// A nack of an entry known by its header is ours (DEVIATIONS 29):
		// the rule kept is wire.md's "above commit".
		if bit(nack, i) && want <= commit {
			return problem("5.5 nack_bitset", "DoViewChange nacks entry %d (op %d), at or below its commit %d", i, want, commit)
		}
		if bit(present, i) && blank {
			return problem("5.5 present_bitset", "DoViewChange marks entry %d (op %d) present, and it is blank", i, want)
		}
		if blank {
			continue // the timestamps of the entries on either side still decrease
		}
		p := ReadPrepare(e)
		switch {
		case p.Group != group:
			return problem("5.5 suffix", "%s of group %d holds entry %d (op %d) of group %d", name, group, i, want, p.Group)
		case !validOperation(p.Operation):
			return problem("5.5 suffix", "%s entry %d (op %d) with operation %d, not defined", name, i, want, p.Operation)
		}
		if x := zero(e, 228, 256, "5.1 reserved (a suffix entry)"); x != nil {
			return x
		}
		if x := zero(e, 62, 128, "2 reserved_frame (a suffix entry)"); x != nil {
			return x
		}
		if !p.Identity.IsZero() && p.Identity != Identity(e) {
			return problem("5.5 suffix", "%s entry %d (op %d) checksum %s, its identity is %s", name, i, want, p.Identity, Identity(e))
		}
		if upper != nil {
			if upper.Timestamp <= p.Timestamp {
				return problem("5.5 suffix", "%s entries of ops %d and %d: timestamps %d and %d do not decrease going down", name, upper.Op, want, upper.Timestamp, p.Timestamp)
			}
			if upper.Op == want+1 && !p.Identity.IsZero() && upper.Parent != p.Identity {
				return problem("5.5 suffix", "%s op %d's parent %s is not op %d's identity %s", name, upper.Op, upper.Parent, want, p.Identity)
			}
		}
		pp := p
		upper = &pp
	}
	return nil
}

func bit(u U128, i int) bool {
	if i < 64 {
		return u.Lo>>uint(i)&1 == 1
	}
	return u.Hi>>uint(i-64)&1 == 1
}

func bitsFrom(u U128, n int) bool {
	for i := n; i < 128; i++ {
		if bit(u, i) {
			return true
		}
	}
	return false
}

// checkTarget: wire.md 5.12.
func checkTarget(f []byte) *Problem {
	avail, transient := f[OffSTTAvailable], f[OffSTTTransient]
	switch {
	case avail > 1 || transient > 1:
		return problem("5.12 available", "StateTransferTarget available %d unavailable_transient %d (each 0 or 1)", avail, transient)
	case avail == 1 && transient == 1:
		return problem("5.12 available", "StateTransferTarget both available and unavailable")
	case avail == 0 && len(f) != HeaderSize:
		return problem("5.12 size", "a refusing StateTransferTarget with a body of %d bytes", len(f)-HeaderSize)
	case avail == 0 && U64(f, OffSTTCommitOp) != 0:
		return problem("5.12 commit_op", "a refusing StateTransferTarget with commit_op %d (0 on refusal)", U64(f, OffSTTCommitOp))
	case avail == 1 && len(f) == HeaderSize:
		return problem("5.12 size", "an offering StateTransferTarget without its manifest")
	}
	if e := zero(f, 162, 168, "5.12 reserved_alignment"); e != nil {
		return e
	}
	return zero(f, 176, 256, "5.12 reserved")
}

// checkHandshake: wire.md 5.19.
func checkHandshake(f []byte) *Problem {
	c := f[OffCommand]
	switch {
	case !Get128(f, OffChecksum).IsZero():
		return problem("5.19 checksum", "%s with a checksum (0)", CommandName(c))
	case U32(f, OffView) != 0:
		return problem("5.19 view", "%s with view %d (0)", CommandName(c), U32(f, OffView))
	}
	switch c {
	case ReplicaHello:
		return zero(f, 160, 256, "5.19 Hello")
	case ReplicaChallenge:
		if f[192] > 3 {
			return problem("5.19 status", "ReplicaChallenge status %d (0..3)", f[192])
		}
		return zero(f, 193, 256, "5.19 Challenge")
	}
	if e := zero(f, 128, 160, "5.19 Finish"); e != nil {
		return e
	}
	return zero(f, 192, 256, "5.19 Finish")
}

func uitoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}

// Client-plane offsets (wire.md 5.20).
const (
	OffReqClient    = 128
	OffReqChecksum  = 144
	OffReqRequest   = 168
	OffReqOperation = 176
	OffReqSession   = 184
	OffReqCode      = 196
	OffReqGroup     = 248

	OffReplyRequestChecksum = 128
	OffReplyContext         = 144
	OffReplyClient          = 160
	OffReplyOp              = 176
	OffReplyCommit          = 184
	OffReplyRequest         = 200
	OffReplyOperation       = 208
	OffReplyStatus          = 216

	OffEvictClient     = 128
	OffEvictVersion    = 144
	OffEvictVersionMin = 148
	OffEvictReason     = 255
)

// EvictionEmitted reports whether Iggy emits an eviction reason
// (client-ops.md 6.6: 1, 4, 5, 7 and 9..15; never 2, 3, 6, 8).
func EvictionEmitted(reason uint8) bool {
	switch reason {
	case 1, 4, 5, 7, 9, 10, 11, 12, 13, 14, 15:
		return true
	}
	return false
}

// CheckToClient judges a frame a replica sends a client: a Reply or an
// Eviction (wire.md 5.20, client-ops.md 6.6).
func CheckToClient(f []byte) *Problem {
	if len(f) < HeaderSize {
		return problem("2 frame", "%d bytes, shorter than a header", len(f))
	}
	c := f[OffCommand]
	if size := U32(f, OffSize); int(size) != len(f) {
		return problem("2 size", "size %d for a frame of %d bytes", size, len(f))
	}
	if p := zero(f, 62, 128, "2 reserved_frame"); p != nil {
		return p
	}
	switch c {
	case Reply:
		switch {
		case Get128(f, OffReplyClient).IsZero():
			return problem("5.20 Reply client", "a Reply for client 0")
		case !validOperation(f[OffReplyOperation]):
			return problem("5.20 Reply operation", "a Reply with operation %d, not defined", f[OffReplyOperation])
		case !Get128(f, OffReplyContext).IsZero():
			return problem("5.20 Reply context", "a Reply with context %s (0)", Get128(f, OffReplyContext))
		}
		if p := zero(f, 209, 216, "5.20 Reply padding"); p != nil {
			return p
		}
		return zero(f, 220, 256, "5.20 Reply reserved")
	case Eviction:
		reason, version, vmin := f[OffEvictReason], U32(f, OffEvictVersion), U32(f, OffEvictVersionMin)
		switch {
		case len(f) != HeaderSize:
			return problem("5.20 Eviction size", "an Eviction of %d bytes (256)", len(f))
		case Get128(f, OffEvictClient).IsZero():
			return problem("5.20 Eviction client", "an Eviction of client 0")
		case !EvictionEmitted(reason):
			return problem("client-ops 6.6 reason", "an Eviction with reason %d, which Iggy never emits", reason)
		case reason != 14 && (version != 0 || vmin != 0):
			return problem("5.20 Eviction window", "an Eviction for reason %d with a protocol window %d..%d (reason 14 only)", reason, vmin, version)
		case reason == 14 && (vmin < 1 || vmin > version):
			return problem("5.20 Eviction window", "an IncompatibleProtocol Eviction with window %d..%d (1 <= min <= max)", vmin, version)
		}
		return zero(f, 152, 255, "5.20 Eviction reserved")
	}
	return problem("4 command", "%s is not a frame a replica sends a client", CommandName(c))
}

// CheckFromClient judges a client's Request (wire.md 5.20): its ids, the
// session rule of its operation, the request checksum its SDK stamps, and
// its reserved bytes.
func CheckFromClient(f []byte) *Problem {
	if len(f) < HeaderSize {
		return problem("2 frame", "%d bytes, shorter than a header", len(f))
	}
	if c := f[OffCommand]; c != Request {
		return problem("4 command", "a client sent a %s", CommandName(c))
	}
	if size := U32(f, OffSize); int(size) != len(f) {
		return problem("2 size", "size %d for a frame of %d bytes", size, len(f))
	}
	op, session, request := f[OffReqOperation], U64(f, OffReqSession), U64(f, OffReqRequest)
	switch {
	case Get128(f, OffReqClient).IsZero():
		return problem("5.20 Request client", "a Request of client 0")
	case op == 0 || !validOperation(op):
		return problem("5.20 Request operation", "a Request with operation %d", op)
	case op == 1 && (session != 0 || request != 0):
		return problem("5.20 Request session", "a Register with session %d request %d (both 0)", session, request)
	case op != 1 && op != 2 && (session == 0 || request == 0):
		return problem("5.20 Request session", "operation %d with session %d request %d (both nonzero)", op, session, request)
	}
	if sum := Get128(f, OffReqChecksum); !sum.IsZero() && op != 2 && !IsPartitionOperation(op) && sum != BodySeal(f[HeaderSize:]) {
		return problem("5.20 Request request_checksum", "request_checksum %s, its body seals to %s", sum, BodySeal(f[HeaderSize:]))
	}
	if p := zero(f, 177, 184, "5.20 Request padding"); p != nil {
		return p
	}
	from := OffReqCode
	if op == 2 {
		from = OffReqCode + 4 // the command code of a NonReplicated request
	}
	return zero(f, from, 256, "5.20 Request reserved")
}
