package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/checker/wirespec"
)

// OffTheWire names a frame that breaks wire.md: a replica sent bytes that a
// peer built from Iggy's layout would read otherwise, or refuse.
const OffTheWire = "frame off the wire format"

// EchoWrong names an answer whose echo of the request it answers (a
// nonce, an op, an offset) is not what was asked: a peer built from Iggy's
// layout drops it, or matches it to the wrong request.
const EchoWrong = "answer echoes no request"

// The conformance state: what the frames sent so far promise, read at
// wire.md's offsets (wirespec), for the frames that answer them.
type conformance struct {
	// prepares: every prepare sent (Prepare, RepairPrepare, a non-blank
	// suffix entry), by identity. Looked up only.
	prepares map[wirespec.U128]preparedFields
	// asked: the requests sent and not yet matched, keyed by who asked,
	// whom, and the nonce (with what each asked). Looked up only.
	asked map[askKey]asked
	// chunks: the chunk requests by nonce alone (askKey without its
	// offset), for a refusing StateTransferTarget. Looked up only.
	chunks map[askKey]asked
	// heartbeats: per (primary, group, view), the last Commit's
	// timestamp_monotonic. Looked up only.
	heartbeats map[heartbeatKey]uint64
}

type heartbeatKey struct {
	from        uint8
	incarnation uint64 // the counter starts at 0 at boot (correction 0.1)
	group       uint64
	view        uint32
}

type preparedFields struct {
	op, timestamp, request, group uint64
	parent                        wirespec.U128
	operation                     uint8
}

// askKey names a request by its requester, its addressee (-1: a request
// broadcast or of a connection the harness could not place), the command
// it expects back and its nonce.
type askKey struct {
	from    uint8
	to      int
	answer  uint8
	nonce   wirespec.U128
	group   uint64 // nonces are the requester's per group
	variant uint64 // RequestStateChunk: its offset and artifact, so that each chunk is its own request
}

// chunkVariant tells the chunk requests of one transfer apart.
func chunkVariant(offset uint64, artifact uint32) uint64 { return offset ^ uint64(artifact)<<56 }

type asked struct {
	group    uint64
	client   wirespec.U128
	artifact uint32
	length   uint32
	fromOp   uint64
}

func (c *Checker) conformState() *conformance {
	if c.conf.prepares == nil {
		c.conf = conformance{prepares: map[wirespec.U128]preparedFields{}, asked: map[askKey]asked{}, chunks: map[askKey]asked{},
			heartbeats: map[heartbeatKey]uint64{}}
	}
	return &c.conf
}

// conform judges every frame a replica sends by the checker's own reading
// of wire.md (package wirespec) before the network can touch it, and what
// it echoes against what was asked: to is its addressee (-1 if unknown).
func (c *Checker) conform(from uint8, to int, frame []byte) {
	cmd := "?"
	if len(frame) > wirespec.OffCommand {
		cmd = wirespec.CommandName(frame[wirespec.OffCommand])
	}
	if p := wirespec.Check(frame, from, c.replicas); p != nil {
		c.fail(Violation{Name: OffTheWire, Replicas: []uint8{from},
			Detail: fmt.Sprintf("replica %d sent a %s that breaks wire.md %s: %s", from, cmd, p.Rule, p.Detail)})
		return
	}
	s := c.conformState()
	f := frame
	echo := func(format string, a ...any) {
		c.fail(Violation{Name: EchoWrong, Replicas: []uint8{from},
			Detail: fmt.Sprintf("replica %d sent a %s ", from, cmd) + fmt.Sprintf(format, a...)})
	}
	switch f[wirespec.OffCommand] {
	case wirespec.Prepare, wirespec.RepairPrepare:
		s.notePrepare(f[:wirespec.HeaderSize])
	case wirespec.DoViewChange, wirespec.StartView:
		for body := f[wirespec.HeaderSize:]; len(body) >= wirespec.HeaderSize; body = body[wirespec.HeaderSize:] {
			if e := body[:wirespec.HeaderSize]; !wirespec.IsBlank(e) && !wirespec.Get128(e, 0).IsZero() {
				s.notePrepare(e)
			}
		}
	case wirespec.PrepareOk:
		id := wirespec.Get128(f, wirespec.OffPrepareOkChecksum)
		p, ok := s.prepares[id]
		if !ok {
			echo("of a prepare %s that no replica sent", id)
			return
		}
		got := preparedFields{op: wirespec.U64(f, wirespec.OffPrepareOkOp), timestamp: wirespec.U64(f, wirespec.OffPrepareOkTime),
			request: wirespec.U64(f, wirespec.OffPrepareOkRequest), group: wirespec.U64(f, wirespec.OffPrepareOkGroup),
			parent: wirespec.Get128(f, wirespec.OffPrepareOkParent), operation: f[wirespec.OffPrepareOkOpn]}
		if got != p {
			echo("of prepare %s (op %d, parent %s, timestamp %d, request %d, operation %d, group %d) that echoes op %d, parent %s, timestamp %d, request %d, operation %d, group %d",
				id, p.op, p.parent, p.timestamp, p.request, p.operation, p.group, got.op, got.parent, got.timestamp, got.request, got.operation, got.group)
		}
	case wirespec.Commit:
		// wire.md 5.3 and correction 0.1: one counter per group that a
		// primary only moves up (it counts broadcasts, sent or not, so
		// the frames sent may skip values).
		k := heartbeatKey{from: from, incarnation: c.incarnations[from], group: wirespec.U64(f, wirespec.OffCommitGroup), view: wirespec.U32(f, wirespec.OffView)}
		ts := wirespec.U64(f, wirespec.OffCommitTimestamp)
		if last, ok := s.heartbeats[k]; ok && ts < last {
			c.fail(Violation{Name: OffTheWire, Replicas: []uint8{from},
				Detail: fmt.Sprintf("replica %d sent a Commit of group %d view %d with timestamp_monotonic %d after %d (wire.md 5.3: it only moves up)", from, k.group, k.view, ts, last)})
			return
		}
		s.heartbeats[k] = ts
	case wirespec.RequestPrepares:
		s.ask(from, to, wirespec.RepairDone, f, wirespec.OffRPNonce, 0, asked{group: wirespec.U64(f, wirespec.OffRPGroup), fromOp: wirespec.U64(f, wirespec.OffRPFromOp)})
	case wirespec.RepairDone, wirespec.RangeEvicted:
		nonce, group := wirespec.Get128(f, wirespec.OffRRNonce), wirespec.U64(f, wirespec.OffRRGroup)
		if _, ok := s.answered(from, to, wirespec.RepairDone, nonce, group, 0); !ok {
			echo("of group %d to replica %d with nonce %s, which it never sent in a RequestPrepares of that group to replica %d", group, to, nonce, from)
		}
	case wirespec.RequestStateTransfer:
		s.ask(from, to, wirespec.StateTransferTarget, f, wirespec.OffRSTNonce, 0, asked{group: wirespec.U64(f, wirespec.OffRSTGroup)})
	case wirespec.StateTransferTarget:
		nonce, group := wirespec.Get128(f, wirespec.OffSTTNonce), wirespec.U64(f, wirespec.OffSTTGroup)
		// A refusal may answer a chunk request of an expired offer with
		// that offer's nonce (wire.md 5.12), so any request of the
		// transfer's nonce will do.
		_, ok := s.answered(from, to, wirespec.StateTransferTarget, nonce, group, 0)
		if !ok && f[wirespec.OffSTTAvailable] == 0 {
			_, ok = s.anyChunkAsked(from, to, nonce, group)
		}
		if !ok {
			echo("of group %d to replica %d with nonce %s, which it never sent replica %d for that group", group, to, nonce, from)
		}
	case wirespec.RequestStateChunk:
		s.ask(from, to, wirespec.StateChunk, f, wirespec.OffRSCNonce, chunkVariant(wirespec.U64(f, wirespec.OffRSCOffset), wirespec.U32(f, wirespec.OffRSCArtifact)),
			asked{group: wirespec.U64(f, wirespec.OffRSCGroup), artifact: wirespec.U32(f, wirespec.OffRSCArtifact), length: wirespec.U32(f, wirespec.OffRSCLen)})
	case wirespec.StateChunk:
		nonce, offset, group := wirespec.Get128(f, wirespec.OffSCNonce), wirespec.U64(f, wirespec.OffSCOffset), wirespec.U64(f, wirespec.OffSCGroup)
		artifact := wirespec.U32(f, wirespec.OffSCArtifact)
		a, ok := s.answered(from, to, wirespec.StateChunk, nonce, group, chunkVariant(offset, artifact))
		switch n := len(f) - wirespec.HeaderSize; {
		case !ok:
			echo("of group %d to replica %d with nonce %s, artifact %d offset %d, which it never asked replica %d for", group, to, nonce, artifact, offset, from)
		case to >= 0 && (n == 0 || n > int(a.length)):
			echo("of %d bytes for a RequestStateChunk of %d (wire.md 5.14: 1..len)", n, a.length)
		}
	case wirespec.ForwardRegister:
		s.ask(from, to, wirespec.ForwardRegisterResult, f, wirespec.OffFRNonce, clientKey(f, wirespec.OffFRClient), asked{client: wirespec.Get128(f, wirespec.OffFRClient)})
	case wirespec.ForwardRegisterResult:
		c.conformForwardResult(s, from, to, f, wirespec.ForwardRegisterResult, wirespec.OffFRRNonce, wirespec.OffFRRClient, echo)
	case wirespec.ForwardLogout:
		s.ask(from, to, wirespec.ForwardLogoutResult, f, wirespec.OffFLNonce, clientKey(f, wirespec.OffFLClient), asked{client: wirespec.Get128(f, wirespec.OffFLClient)})
	case wirespec.ForwardLogoutResult:
		c.conformForwardResult(s, from, to, f, wirespec.ForwardLogoutResult, wirespec.OffFLRNonce, wirespec.OffFLRClient, echo)
	}
}

func (c *Checker) conformForwardResult(s *conformance, from uint8, to int, f []byte, answer uint8, offNonce, offClient int, echo func(string, ...any)) {
	nonce, client := wirespec.Get128(f, offNonce), wirespec.Get128(f, offClient)
	if _, ok := s.answered(from, to, answer, nonce, 0, clientKey(f, offClient)); !ok {
		echo("for client %s to replica %d with nonce %s, which it never forwarded for that client to replica %d", client, to, nonce, from)
	}
}

// clientKey tells forwards of one nonce apart by their client: the nonce's
// counter is per boot (wire.md 5.15), so a restarted backup reuses it.
func clientKey(f []byte, off int) uint64 {
	c := wirespec.Get128(f, off)
	return c.Lo ^ c.Hi*0x9e3779b97f4a7c15
}

func (s *conformance) notePrepare(h []byte) {
	p := wirespec.ReadPrepare(h)
	s.prepares[p.Identity] = preparedFields{op: p.Op, timestamp: p.Timestamp, request: p.Request, group: p.Group,
		parent: p.Parent, operation: p.Operation}
}

// ask notes a request replica from sent to (its answer comes back from
// to, with the nonce at offNonce).
func (s *conformance) ask(from uint8, to int, answer uint8, f []byte, offNonce int, variant uint64, a asked) {
	k := askKey{from: from, to: to, answer: answer, nonce: wirespec.Get128(f, offNonce), group: a.group, variant: variant}
	s.asked[k] = a
	if answer == wirespec.StateChunk {
		k.variant = 0
		s.chunks[k] = a
	}
}

// answered finds the request an answer from replica from to replica to
// answers: one to asked from, sent to it (or to no replica the harness
// could name).
func (s *conformance) answered(from uint8, to int, answer uint8, nonce wirespec.U128, group, variant uint64) (asked, bool) {
	if to < 0 {
		return asked{}, true // no addressee to hold it to
	}
	for _, addressee := range []int{int(from), -1} {
		if a, ok := s.asked[askKey{from: uint8(to), to: addressee, answer: answer, nonce: nonce, group: group, variant: variant}]; ok {
			return a, true
		}
	}
	return asked{}, false
}

// anyChunkAsked finds a RequestStateChunk of the nonce sent from to to
// from, whatever its offset: a refusing target may answer one.
func (s *conformance) anyChunkAsked(from uint8, to int, nonce wirespec.U128, group uint64) (asked, bool) {
	for _, addressee := range []int{int(from), -1} {
		if a, ok := s.chunks[askKey{from: uint8(to), to: addressee, answer: wirespec.StateChunk, nonce: nonce, group: group}]; ok {
			return a, true
		}
	}
	return asked{}, false
}

// ToClient judges a frame replica r sends a client (a Reply or an
// Eviction) by the checker's own wire.md.
func (c *Checker) ToClient(nowNs int64, r uint8, frame []byte) {
	c.nowNs = nowNs
	if c.violation != nil {
		return
	}
	c.admissionSent(r, frame)
	if p := wirespec.CheckToClient(frame); p != nil {
		c.fail(Violation{Name: OffTheWire, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d sent a client a frame that breaks wire.md %s: %s", r, p.Rule, p.Detail)})
		return
	}
	c.sentToClient(r, frame)
}

// FromClient judges a Request a client sends: the clients speak the
// replica's codec, which wire.md binds as much as the replica's frames.
func (c *Checker) FromClient(nowNs int64, client int, frame []byte) {
	c.nowNs = nowNs
	if c.violation != nil {
		return
	}
	if p := wirespec.CheckFromClient(frame); p != nil && !c.offFormatOnPurpose(frame, p.Rule) {
		c.fail(Violation{Name: OffTheWire,
			Detail: fmt.Sprintf("client %d sent a Request that breaks wire.md %s (the codec encodes requests off the format): %s", client, p.Rule, p.Detail)})
	}
}
