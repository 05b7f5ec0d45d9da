package checker

import (
	"fmt"
	"slices"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Refusals: what a replica does with each frame it reads from a peer, held
// to the checker's own reading of the receiver's rules (wirespec.Receive,
// from wire.md 1.1, 4.1 and 5). A frame those rules refuse must be refused
// by the rule that refuses it, with the connection closed for a framing
// rule and kept otherwise, and must cost nothing else: no event, no frame
// sent, no disk I/O. A frame they pass must be passed on, to the group it
// names (issue 26: the bad-frames nemesis puts sealed frames that break one
// rule each on the replicas' connections, and every honest frame is held
// to the same rules).

// Violation names of the refusal checks.
const (
	// InvalidFrameAccepted: a replica passed on a frame wire.md's receiver
	// rules refuse.
	InvalidFrameAccepted = "invalid frame accepted"
	// RefusedByAnotherRule: a replica refused an injected frame, but not
	// by the one rule it breaks (its check for that rule did not fire).
	RefusedByAnotherRule = "invalid frame refused by another rule"
	// RefusalConnection: a refused frame closed a connection wire.md
	// keeps (4.1 step 5), or kept one it closes (1.1).
	RefusalConnection = "refused frame's connection mishandled"
	// RefusedFrameActed: a refused frame changed the receiver's state, or
	// made it send or write.
	RefusedFrameActed = "refused frame acted on"
	// ValidFrameRefused: a replica refused a frame wire.md's receiver
	// rules pass.
	ValidFrameRefused = "valid frame refused"
	// FrameMisrouted: a replica dropped a frame of a group it runs as a
	// frame of an unknown group.
	FrameMisrouted = "frame misrouted"
	// InvalidFrameIgnoredActed: a frame the bad-frames nemesis made valid
	// on the wire but void by the protocol (a stale view, an op beyond
	// what the receiver holds, a group it does not run) changed the
	// receiver's state.
	InvalidFrameIgnoredActed = "void frame acted on"
	// VoidFrameAnsweredWrong: a frame void by the protocol got an answer
	// other than the one wire.md gives it (a chunk request of an offer
	// never made: a transient refusal, 5.12).
	VoidFrameAnsweredWrong = "void frame answered against wire.md"
	// FrameCrashed: a replica panicked reading a frame the receiver's
	// rules refuse: the rule's check let it through to code that cannot
	// take it.
	FrameCrashed = "invalid frame crashed the replica"
)

// UnknownGroupProbe is the replica's probe for a frame of a group it does
// not run (DEVIATIONS 46).
const UnknownGroupProbe = "partition plane: frame for an unknown group dropped"

// Receipt is what a replica did with one frame it read from a peer, as
// the harness saw it around the call that handed the frame over.
type Receipt struct {
	// Counted: the replica's bus counted the frame as read on an
	// established connection (false: the connection was in its handshake
	// or already gone, and none of the rest applies).
	Counted bool
	// Delivered: the bus passed the frame on to the replica.
	Delivered bool
	// WireRule is the rule of the wire codec the bus refused it by (0:
	// none), BusRule the bus's own rule it dropped it by ("": none), as
	// the bus counts them (replica/bus: WireRejected, BusDropped).
	WireRule wire.Rule
	BusRule  string
	// Closed: the receiver closed the connection during the call.
	Closed bool
	// Events names the replica events other than probes it emitted during
	// the call; Probes the probes.
	Events []string
	Probes []string
	// Sends counts frames it sent during the call (known for injected
	// frames only); IOs the disk I/Os it started; Answers are the frames
	// it sent back to the frame's sender (for injected frames only).
	Sends, IOs int
	Answers    [][]byte
	// AnswersDropped counts the frames for the sender its bus dropped
	// instead (a full queue, wire.md 1: dropped silently).
	AnswersDropped int
	// GroupRun: the frame names the metadata group, or a partition group
	// the receiver runs (false for frames that name none).
	GroupRun bool
}

// refusalState is what the receiver-rule checks follow: the replicas'
// max_message_size, and each connection's handshake by its id (looked up
// only).
type refusalState struct {
	frameSizeMax uint32
	handshakes   map[uint64]*handshakeConn
}

// SetFrameSizeMax tells the checker the replicas' max_message_size.
func (c *Checker) SetFrameSizeMax(n uint32) { c.refusals.frameSizeMax = n }

// receiverRefuses reports whether wire.md's receiver rules refuse frame
// from a peer. Before SetFrameSizeMax (a checker fed by hand) no size is
// above the maximum.
func (c *Checker) receiverRefuses(frame []byte) bool {
	sizeMax := c.refusals.frameSizeMax
	if sizeMax == 0 {
		sizeMax = ^uint32(0)
	}
	return wirespec.Receive(frame, c.replicas, sizeMax) != nil
}

// wireRules: the wire codec's rule for each receiver rule of wirespec, or
// bus names the bus's own rule that refuses it.
var wireRules = map[string]struct {
	wire []wire.Rule
	bus  string
}{
	wirespec.RuleSizeBelowHeader: {wire: []wire.Rule{wire.ErrSizeBelowHeader}},
	wirespec.RuleSizeAboveMax:    {wire: []wire.Rule{wire.ErrSizeAboveMax}},
	wirespec.RuleCommandRange:    {wire: []wire.Rule{wire.ErrCommandUnknown}},
	wirespec.RuleSizeDelimits:    {wire: []wire.Rule{wire.ErrTruncated, wire.ErrSizeMismatch}},
	wirespec.RuleNoTraffic:       {bus: "not_replica_plane"},
	wirespec.RuleRequest:         {bus: "request"},
	wirespec.RuleClientBound:     {bus: "client_bound"},
	wirespec.RuleHandshake:       {bus: "handshake"},
	wirespec.RuleOperation:       {wire: []wire.Rule{wire.ErrOperationUndefined}},
	wirespec.RuleOutcome:         {wire: []wire.Rule{wire.ErrOutcomeUndefined}},
	wirespec.RuleSeal:            {wire: []wire.Rule{wire.ErrSealMismatch}},
	wirespec.RuleIdentity:        {wire: []wire.Rule{wire.ErrIdentityMismatch}},
	wirespec.RuleBodySeal:        {wire: []wire.Rule{wire.ErrBodySealMismatch}},
	wirespec.RuleReservedFrame:   {wire: []wire.Rule{wire.ErrReservedFrameNonzero}},
	wirespec.RuleReserved:        {wire: []wire.Rule{wire.ErrReservedNonzero}},
	wirespec.RuleRelease:         {wire: []wire.Rule{wire.ErrReleaseNonzero}},
	wirespec.RuleHeaderOnly:      {wire: []wire.Rule{wire.ErrSizeNotHeader}},
	wirespec.RuleSuffixSize:      {wire: []wire.Rule{wire.ErrSizeNotMultiple}},
	wirespec.RuleSuffixLength:    {wire: []wire.Rule{wire.ErrSuffixTooLong}},
	wirespec.RuleBitsets:         {wire: []wire.Rule{wire.ErrBitsetBeyondSuffix}},
	wirespec.RuleLogView:         {wire: []wire.Rule{wire.ErrLogViewAboveView}},
	wirespec.RuleCommitOp:        {wire: []wire.Rule{wire.ErrCommitAboveOp}},
	wirespec.RuleFromOp:          {wire: []wire.Rule{wire.ErrFromOpZero}},
	wirespec.RuleFromTo:          {wire: []wire.Rule{wire.ErrFromOpAboveToOp}},
	wirespec.RuleAvailable:       {wire: []wire.Rule{wire.ErrAvailableInvalid}},
	wirespec.RuleTransient:       {wire: []wire.Rule{wire.ErrTransientInvalid}},
	wirespec.RuleAvailableBoth:   {wire: []wire.Rule{wire.ErrAvailableAndTransient}},
	wirespec.RuleRefusalBody:     {wire: []wire.Rule{wire.ErrRefusalHasBody}},
	wirespec.RuleLen:             {wire: []wire.Rule{wire.ErrLenZero}},
	wirespec.RuleClient:          {wire: []wire.Rule{wire.ErrClientZero}},
	wirespec.RuleNonce:           {wire: []wire.Rule{wire.ErrNonceZero}},
	wirespec.RuleSession:         {wire: []wire.Rule{wire.ErrSessionZero}},
	wirespec.RuleRequestNumber:   {wire: []wire.Rule{wire.ErrRequestZero}},
	wirespec.RuleOutcomeFields:   {wire: []wire.Rule{wire.ErrOutcomeFieldsNonzero}},
	wirespec.RuleReplicaRange:    {bus: "replica_range"},
	wirespec.RuleBatchShort:      {wire: []wire.Rule{wire.ErrShort}},
	wirespec.RuleBatchLength:     {wire: []wire.Rule{wire.ErrBatchLength}},
	wirespec.RuleBatchReserved:   {wire: []wire.Rule{wire.ErrReservedNonzero}},
	wirespec.RuleBatchCount:      {wire: []wire.Rule{wire.ErrMessageCountZero}},
	wirespec.RuleBatchFrames:     {wire: []wire.Rule{wire.ErrMessageFrameOverrun, wire.ErrMessagesTrailing}},
	wirespec.RuleBatchMsgSum:     {wire: []wire.Rule{wire.ErrMessageChecksum}},
	wirespec.RuleBatchMsgReserv:  {wire: []wire.Rule{wire.ErrMessageReservedNonzero}},
	wirespec.RuleBatchChecksum:   {wire: []wire.Rule{wire.ErrBatchChecksum}},
}

// refusedBy names the replica's rule in a receipt.
func (r *Receipt) refusedBy() string {
	switch {
	case r.WireRule != 0:
		return fmt.Sprintf("%q", r.WireRule.Error())
	case r.BusRule != "":
		return "its bus rule " + r.BusRule
	}
	return "no rule it counted"
}

// PeerFrame judges what replica to did with a frame from replica from on
// their established connection (r). injected: the bad-frames nemesis put
// it there, built to break the one receiver rule wirespec finds (or to be
// void by the protocol, when wirespec finds none); otherwise from sent it,
// and the network may have flipped its bits.
func (c *Checker) PeerFrame(nowNs int64, from, to uint8, frame []byte, injected bool, r Receipt) {
	c.nowNs = nowNs
	if c.violation != nil || !r.Counted || len(frame) < wirespec.HeaderSize {
		return
	}
	c.forwardResultHandled(to, from, frame, r.Delivered)
	cmd := wirespec.CommandName(frame[wirespec.OffCommand])
	what := fmt.Sprintf("a %s from replica %d", cmd, from)
	if injected {
		what = fmt.Sprintf("a %s injected as from replica %d", cmd, from)
	}
	fail := func(name, format string, a ...any) {
		c.fail(Violation{Name: name, Replicas: []uint8{to, from}, Detail: fmt.Sprintf("replica %d, %s, ", to, what) + fmt.Sprintf(format, a...)})
	}
	ref := wirespec.Receive(frame, c.replicas, c.refusals.frameSizeMax)
	if ref == nil {
		switch {
		case !r.Delivered && !(r.BusRule == "handshake"):
			fail(ValidFrameRefused, "refused it by %s, and wire.md's receiver rules pass it", r.refusedBy())
		case r.GroupRun && slices.Contains(r.Probes, UnknownGroupProbe):
			g, _ := wirespec.GroupOf(frame)
			fail(FrameMisrouted, "of group %s, which it runs, dropped it as a frame of an unknown group", refusalGroupName(g))
		case injected && (len(r.Events) > 0 || r.IOs > 0):
			fail(InvalidFrameIgnoredActed, "void by the protocol, made it emit %v and start %d disk I/Os", r.Events, r.IOs)
		case injected && r.Delivered:
			c.voidAnswers(from, to, frame, r, fail)
		}
		return
	}
	if r.Delivered {
		fail(InvalidFrameAccepted, "passed it on, and it breaks wire.md %s (%s)", ref.Rule, ref.Detail)
		return
	}
	if ref.Close != r.Closed {
		if ref.Close {
			fail(RefusalConnection, "refused it and kept the connection, and it breaks the framing rule %s (wire.md 1.1: the connection is closed)", ref.Rule)
		} else {
			fail(RefusalConnection, "refused it and closed the connection, and it breaks only %s (wire.md 4.1 step 5: the frame is dropped, the connection stays)", ref.Rule)
		}
		return
	}
	if injected {
		want, ok := wireRules[ref.Rule]
		if !ok {
			panic("checker: no replica rule for wirespec rule " + ref.Rule)
		}
		if !slices.Contains(want.wire, r.WireRule) && (want.bus == "" || want.bus != r.BusRule) {
			fail(RefusedByAnotherRule, "refused it by %s, and it breaks only wire.md %s (%s)", r.refusedBy(), ref.Rule, ref.Detail)
			return
		}
	}
	if len(r.Events) > 0 || r.Sends > 0 || r.IOs > 0 {
		fail(RefusedFrameActed, "refused it by %s and still emitted %v, sent %d frames, started %d disk I/Os", r.refusedBy(), r.Events, r.Sends, r.IOs)
	}
}

// voidAnswers holds the answers to a frame void by the protocol to wire.md:
// a RequestStateChunk of the metadata plane whose nonce the requester never
// asked the receiver an offer for names no session the receiver has, and
// is refused as one whose session expired (5.12: available 0,
// unavailable_transient 1, the request's nonce).
func (c *Checker) voidAnswers(from, to uint8, f []byte, r Receipt, fail func(string, string, ...any)) {
	if f[wirespec.OffCommand] != wirespec.RequestStateChunk || wirespec.U64(f, wirespec.OffRSCGroup) != wirespec.MetadataGroup {
		return
	}
	nonce := wirespec.Get128(f, wirespec.OffRSCNonce)
	if _, offered := c.conformState().answered(to, int(from), wirespec.StateTransferTarget, nonce, wirespec.MetadataGroup, 0); offered {
		return
	}
	for _, a := range r.Answers {
		if len(a) < wirespec.HeaderSize || a[wirespec.OffCommand] != wirespec.StateTransferTarget || wirespec.Get128(a, wirespec.OffSTTNonce) != nonce {
			continue
		}
		if a[wirespec.OffSTTAvailable] != 0 || a[wirespec.OffSTTTransient] != 1 {
			fail(VoidFrameAnsweredWrong, "a chunk request of nonce %s, which replica %d never asked it an offer for, answered with available %d, unavailable_transient %d (wire.md 5.12: an unknown nonce is refused transiently, 0 and 1)",
				nonce, from, a[wirespec.OffSTTAvailable], a[wirespec.OffSTTTransient])
		}
		return
	}
	if r.AnswersDropped > 0 {
		return // its answer met a full queue
	}
	fail(VoidFrameAnsweredWrong, "a chunk request of nonce %s, which replica %d never asked it an offer for, got no StateTransferTarget (wire.md 5.12: an unknown nonce is refused transiently)", nonce, from)
}

// PeerFramePanicked tells the checker that replica to panicked (p) while
// it read a frame from replica from; step is where the frame met its
// handshake, nil on an established connection. A frame the receiver's
// rules refuse is named as the panic's cause.
func (c *Checker) PeerFramePanicked(nowNs int64, from, to uint8, frame []byte, step *wirespec.HandshakeStep, p any) {
	c.nowNs = nowNs
	if c.violation != nil || len(frame) < wirespec.HeaderSize {
		return
	}
	var ref *wirespec.Refusal
	if step != nil {
		ref = wirespec.ReceiveHandshake(frame, *step)
	} else {
		ref = wirespec.Receive(frame, c.replicas, c.refusals.frameSizeMax)
	}
	if ref == nil {
		return
	}
	c.fail(Violation{Name: FrameCrashed, Replicas: []uint8{to, from}, Detail: fmt.Sprintf("replica %d panicked (%v) reading a %s from replica %d that breaks wire.md %s (%s)",
		to, p, wirespec.CommandName(frame[wirespec.OffCommand]), from, ref.Rule, ref.Detail)})
}

// Injecting tells the checker that the bad-frames nemesis is about to
// hand replica to a frame as from replica from: a request in it is one
// from asked, as conform notes the requests replicas send, so that an
// answer echoing it is held to what it asked (and the frame itself, if
// accepted, is named by PeerFrame rather than by its answer).
func (c *Checker) Injecting(from, to uint8, f []byte) {
	if len(f) < wirespec.HeaderSize {
		return
	}
	s := c.conformState()
	t := int(to)
	switch f[wirespec.OffCommand] {
	case wirespec.RequestPrepares:
		s.ask(from, t, wirespec.RepairDone, f, wirespec.OffRPNonce, 0, asked{group: wirespec.U64(f, wirespec.OffRPGroup), fromOp: wirespec.U64(f, wirespec.OffRPFromOp)})
	case wirespec.RequestStateTransfer:
		s.ask(from, t, wirespec.StateTransferTarget, f, wirespec.OffRSTNonce, 0, asked{group: wirespec.U64(f, wirespec.OffRSTGroup)})
	case wirespec.RequestStateChunk:
		s.ask(from, t, wirespec.StateChunk, f, wirespec.OffRSCNonce, chunkVariant(wirespec.U64(f, wirespec.OffRSCOffset), wirespec.U32(f, wirespec.OffRSCArtifact)),
			asked{group: wirespec.U64(f, wirespec.OffRSCGroup), artifact: wirespec.U32(f, wirespec.OffRSCArtifact), length: wirespec.U32(f, wirespec.OffRSCLen)})
	case wirespec.ForwardRegister:
		s.ask(from, t, wirespec.ForwardRegisterResult, f, wirespec.OffFRNonce, clientKey(f, wirespec.OffFRClient), asked{client: wirespec.Get128(f, wirespec.OffFRClient)})
	case wirespec.ForwardLogout:
		s.ask(from, t, wirespec.ForwardLogoutResult, f, wirespec.OffFLNonce, clientKey(f, wirespec.OffFLClient), asked{client: wirespec.Get128(f, wirespec.OffFLClient)})
	}
}

func refusalGroupName(g uint64) string {
	if g == wirespec.MetadataGroup {
		return "metadata"
	}
	return fmt.Sprint(g)
}
