package wire

import (
	"pgregory.net/rapid"
)

// Generators of typed headers for the property tests. genValid draws a frame
// of command c that Validate must accept; genAny draws arbitrary field values
// (for encode/decode round trips, where nothing is validated).

func genU128(t *rapid.T, label string) U128 {
	return U128{Lo: rapid.Uint64().Draw(t, label+".lo"), Hi: rapid.Uint64().Draw(t, label+".hi")}
}

func genNonzeroU128(t *rapid.T, label string) U128 {
	u := genU128(t, label)
	if u.IsZero() {
		u.Lo = 1
	}
	return u
}

func genBytes32(t *rapid.T, label string) Bytes32 {
	var b Bytes32
	copy(b[:], rapid.SliceOfN(rapid.Byte(), 32, 32).Draw(t, label))
	return b
}

func genOperation(t *rapid.T, label string) Operation {
	return rapid.SampledFrom(Operations()).Draw(t, label)
}

func genGroup(t *rapid.T, label string) uint64 {
	if rapid.Bool().Draw(t, label+".metadata") {
		return MetadataGroup
	}
	return rapid.Uint64().Draw(t, label)
}

// genPrefix draws the generic fields; release is zero when zeroRelease.
func genPrefix(t *rapid.T, c Command, zeroRelease bool) Prefix {
	p := Prefix{
		Checksum:     genU128(t, "checksum"),
		ChecksumBody: genU128(t, "checksum_body"),
		Cluster:      genU128(t, "cluster"),
		Size:         rapid.Uint32().Draw(t, "size"),
		View:         rapid.Uint32().Draw(t, "view"),
		Command:      c,
		Replica:      rapid.Uint8().Draw(t, "replica"),
	}
	if !zeroRelease {
		p.Release = rapid.Uint32().Draw(t, "release")
	}
	return p
}

// replicaPlaneCommands are the commands with a header layout (5..29).
func replicaPlaneCommands() []Command {
	var cs []Command
	for c := CommandRequest; c <= CommandMax; c++ {
		cs = append(cs, c)
	}
	return cs
}

// genAny draws a typed header of command c with arbitrary field values; only
// enum fields with a fixed width are left arbitrary too.
func genAny(t *rapid.T, c Command) Typed {
	p := genPrefix(t, c, false)
	switch c {
	case CommandRequest:
		return &RequestHeader{Prefix: p, Client: genU128(t, "client"), RequestChecksum: genU128(t, "rc"),
			Timestamp: rapid.Uint64().Draw(t, "ts"), Request: rapid.Uint64().Draw(t, "request"),
			Operation: Operation(rapid.Uint8().Draw(t, "operation")), Session: rapid.Uint64().Draw(t, "session"),
			UserID: rapid.Uint32().Draw(t, "user"), CommandCode: rapid.Uint32().Draw(t, "code"),
			Group: rapid.Uint64().Draw(t, "group")}
	case CommandPrepare, CommandRepairPrepare:
		return &PrepareHeader{Prefix: p, Client: genU128(t, "client"), Parent: genU128(t, "parent"),
			RequestChecksum: genU128(t, "rc"), Op: rapid.Uint64().Draw(t, "op"), Commit: rapid.Uint64().Draw(t, "commit"),
			Timestamp: rapid.Uint64().Draw(t, "ts"), Request: rapid.Uint64().Draw(t, "request"),
			Operation: Operation(rapid.Uint8().Draw(t, "operation")), Group: rapid.Uint64().Draw(t, "group"),
			UserID: rapid.Uint32().Draw(t, "user")}
	case CommandPrepareOk:
		return &PrepareOkHeader{Prefix: p, Parent: genU128(t, "parent"), PrepareChecksum: genU128(t, "pc"),
			Op: rapid.Uint64().Draw(t, "op"), Commit: rapid.Uint64().Draw(t, "commit"), Timestamp: rapid.Uint64().Draw(t, "ts"),
			Request: rapid.Uint64().Draw(t, "request"), Operation: Operation(rapid.Uint8().Draw(t, "operation")),
			Group: rapid.Uint64().Draw(t, "group")}
	case CommandReply:
		return &ReplyHeader{Prefix: p, RequestChecksum: genU128(t, "rc"), Context: genU128(t, "context"),
			Client: genU128(t, "client"), Op: rapid.Uint64().Draw(t, "op"), Commit: rapid.Uint64().Draw(t, "commit"),
			Timestamp: rapid.Uint64().Draw(t, "ts"), Request: rapid.Uint64().Draw(t, "request"),
			Operation: Operation(rapid.Uint8().Draw(t, "operation")), Status: rapid.Uint32().Draw(t, "status")}
	case CommandCommit:
		return &CommitHeader{Prefix: p, CommitChecksum: genU128(t, "cc"), TimestampMonotonic: rapid.Uint64().Draw(t, "tsm"),
			Commit: rapid.Uint64().Draw(t, "commit"), CheckpointOp: rapid.Uint64().Draw(t, "cp"), Group: rapid.Uint64().Draw(t, "group")}
	case CommandStartViewChange:
		return &StartViewChangeHeader{Prefix: p, Group: rapid.Uint64().Draw(t, "group")}
	case CommandDoViewChange:
		return &DoViewChangeHeader{Prefix: p, Op: rapid.Uint64().Draw(t, "op"), Commit: rapid.Uint64().Draw(t, "commit"),
			Group: rapid.Uint64().Draw(t, "group"), LogView: rapid.Uint32().Draw(t, "log_view"),
			NackBitset: genU128(t, "nack"), PresentBitset: genU128(t, "present")}
	case CommandStartView:
		return &StartViewHeader{Prefix: p, Op: rapid.Uint64().Draw(t, "op"), Commit: rapid.Uint64().Draw(t, "commit"),
			Group: rapid.Uint64().Draw(t, "group"), Incarnation: genU128(t, "inc")}
	case CommandEviction:
		return &EvictionHeader{Prefix: p, Client: genU128(t, "client"), ServerProtocolVersion: rapid.Uint32().Draw(t, "max"),
			ServerProtocolVersionMin: rapid.Uint32().Draw(t, "min"), Reason: EvictionReason(rapid.Uint8().Draw(t, "reason"))}
	case CommandReplicaHello, CommandReplicaChallenge, CommandReplicaFinish:
		return &HandshakeHeader{Prefix: p, Nonce: genBytes32(t, "nonce"), MAC: genBytes32(t, "mac"),
			Status: HandshakeStatus(rapid.Uint8().Draw(t, "status"))}
	case CommandRequestStartView:
		return &RequestStartViewHeader{Prefix: p, Group: rapid.Uint64().Draw(t, "group"), Incarnation: genU128(t, "inc")}
	case CommandRequestPrepares:
		return &RequestPreparesHeader{Prefix: p, Nonce: genU128(t, "nonce"), FromOp: rapid.Uint64().Draw(t, "from"),
			ToOp: rapid.Uint64().Draw(t, "to"), Group: rapid.Uint64().Draw(t, "group")}
	case CommandRepairDone, CommandRangeEvicted:
		return &RepairRangeHeader{Prefix: p, Nonce: genU128(t, "nonce"), Op: rapid.Uint64().Draw(t, "op"),
			Group: rapid.Uint64().Draw(t, "group")}
	case CommandRequestStateTransfer:
		return &RequestStateTransferHeader{Prefix: p, Nonce: genU128(t, "nonce"), Group: rapid.Uint64().Draw(t, "group")}
	case CommandStateTransferTarget:
		return &StateTransferTargetHeader{Prefix: p, Nonce: genU128(t, "nonce"), CommitOp: rapid.Uint64().Draw(t, "cop"),
			Group: rapid.Uint64().Draw(t, "group"), Available: rapid.Uint8().Draw(t, "avail"),
			UnavailableTransient: rapid.Uint8().Draw(t, "trans"), CommitMax: rapid.Uint64().Draw(t, "cmax")}
	case CommandRequestStateChunk:
		return &RequestStateChunkHeader{Prefix: p, Nonce: genU128(t, "nonce"), Offset: rapid.Uint64().Draw(t, "offset"),
			Group: rapid.Uint64().Draw(t, "group"), Len: rapid.Uint32().Draw(t, "len"), Artifact: rapid.Uint32().Draw(t, "art")}
	case CommandStateChunk:
		return &StateChunkHeader{Prefix: p, Nonce: genU128(t, "nonce"), Offset: rapid.Uint64().Draw(t, "offset"),
			Group: rapid.Uint64().Draw(t, "group"), Artifact: rapid.Uint32().Draw(t, "art")}
	case CommandForwardRegister:
		return &ForwardRegisterHeader{Prefix: p, Client: genU128(t, "client"), Nonce: genU128(t, "nonce"),
			UserID: rapid.Uint32().Draw(t, "user")}
	case CommandForwardRegisterResult:
		return &ForwardRegisterResultHeader{Prefix: p, Nonce: genU128(t, "nonce"), Client: genU128(t, "client"),
			Epoch: rapid.Uint64().Draw(t, "epoch"), Watermark: rapid.Uint64().Draw(t, "wm"),
			Outcome: ForwardRegisterOutcome(rapid.Uint8().Draw(t, "outcome"))}
	case CommandForwardLogout:
		return &ForwardLogoutHeader{Prefix: p, Client: genU128(t, "client"), Nonce: genU128(t, "nonce"),
			Session: rapid.Uint64().Draw(t, "session"), Request: rapid.Uint64().Draw(t, "request")}
	case CommandForwardLogoutResult:
		return &ForwardLogoutResultHeader{Prefix: p, Nonce: genU128(t, "nonce"), Client: genU128(t, "client"),
			Commit: rapid.Uint64().Draw(t, "commit"), Outcome: ForwardLogoutOutcome(rapid.Uint8().Draw(t, "outcome"))}
	}
	panic("genAny: no header type for " + c.String())
}

// genValid draws a typed header of command c and a body such that
// BuildFrame(x, body) passes Validate.
func genValid(t *rapid.T, c Command) (Typed, []byte) {
	p := genPrefix(t, c, true)
	smallBody := func() []byte { return rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "body") }
	u64 := func(label string) uint64 { return rapid.Uint64().Draw(t, label) }
	switch c {
	case CommandRequest:
		x := &RequestHeader{Prefix: p, Client: genNonzeroU128(t, "client"), RequestChecksum: genU128(t, "rc"),
			Timestamp: u64("ts"), Operation: genOperation(t, "operation"), UserID: rapid.Uint32().Draw(t, "user"),
			CommandCode: rapid.Uint32().Draw(t, "code"), Group: u64("group")}
		switch x.Operation {
		case OperationReserved:
			x.Operation = OperationCreateStream
			fallthrough
		default:
			x.Session = rapid.Uint64Min(1).Draw(t, "session")
			x.Request = rapid.Uint64Min(1).Draw(t, "request")
		case OperationRegister:
		case OperationNonReplicated:
			x.Session, x.Request = u64("session"), u64("request")
		}
		return x, smallBody()
	case CommandPrepare:
		x := genAny(t, c).(*PrepareHeader)
		x.Operation = genOperation(t, "operation")
		x.Group = genGroup(t, "group")
		if x.Operation == OperationSendMessages {
			return x, genBatch(t)
		}
		return x, smallBody()
	case CommandRepairPrepare:
		panic("genValid: a RepairPrepare is a converted Prepare")
	case CommandPrepareOk:
		x := genAny(t, c).(*PrepareOkHeader)
		x.Operation = genOperation(t, "operation")
		return x, nil
	case CommandReply:
		x := genAny(t, c).(*ReplyHeader)
		x.Operation = genOperation(t, "operation")
		return x, smallBody()
	case CommandStartViewChange, CommandRequestStartView, CommandCommit, CommandRequestStateTransfer,
		CommandRepairDone, CommandRangeEvicted, CommandReplicaHello, CommandReplicaChallenge, CommandReplicaFinish:
		x := genAny(t, c)
		x.(interface{ setPrefix(Prefix) }).setPrefix(p)
		return x, nil
	case CommandDoViewChange:
		n := rapid.IntRange(0, SuffixEntriesMax).Draw(t, "n")
		op := rapid.Uint64Min(uint64(n)).Draw(t, "op")
		x := &DoViewChangeHeader{Prefix: p, Op: op, Commit: rapid.Uint64Max(op).Draw(t, "commit"), Group: u64("group"),
			NackBitset: genBitset(t, "nack", n), PresentBitset: genBitset(t, "present", n)}
		x.LogView = rapid.Uint32Max(x.View).Draw(t, "log_view")
		return x, genSuffixBody(t, n)
	case CommandStartView:
		n := rapid.IntRange(0, SuffixEntriesMax).Draw(t, "n")
		op := rapid.Uint64Min(uint64(n)).Draw(t, "op")
		x := &StartViewHeader{Prefix: p, Op: op, Commit: rapid.Uint64Max(op).Draw(t, "commit"), Group: u64("group"),
			Incarnation: genU128(t, "inc")}
		return x, genSuffixBody(t, n)
	case CommandEviction:
		x := &EvictionHeader{Prefix: p, Client: genNonzeroU128(t, "client"),
			Reason: EvictionReason(rapid.IntRange(1, 15).Draw(t, "reason"))}
		if x.Reason == EvictionIncompatibleProtocol {
			x.ServerProtocolVersionMin = rapid.Uint32Min(1).Draw(t, "min")
			x.ServerProtocolVersion = rapid.Uint32Min(x.ServerProtocolVersionMin).Draw(t, "max")
		}
		return x, nil
	case CommandRequestPrepares:
		from := rapid.Uint64Min(1).Draw(t, "from")
		return &RequestPreparesHeader{Prefix: p, Nonce: genU128(t, "nonce"), FromOp: from,
			ToOp: rapid.Uint64Min(from).Draw(t, "to"), Group: u64("group")}, nil
	case CommandStateTransferTarget:
		x := genAny(t, c).(*StateTransferTargetHeader)
		x.Prefix = p
		x.Available, x.UnavailableTransient = 0, 0
		switch rapid.IntRange(0, 2).Draw(t, "form") {
		case 0:
			x.Available = 1
			return x, smallBody()
		case 1:
			x.UnavailableTransient = 1
		}
		return x, nil
	case CommandRequestStateChunk:
		x := genAny(t, c).(*RequestStateChunkHeader)
		x.Prefix = p
		x.Len = rapid.Uint32Min(1).Draw(t, "len")
		return x, nil
	case CommandStateChunk:
		x := genAny(t, c).(*StateChunkHeader)
		x.Prefix = p
		return x, smallBody()
	case CommandForwardRegister:
		return &ForwardRegisterHeader{Prefix: p, Client: genNonzeroU128(t, "client"), Nonce: genNonzeroU128(t, "nonce"),
			UserID: rapid.Uint32().Draw(t, "user")}, nil
	case CommandForwardRegisterResult:
		x := &ForwardRegisterResultHeader{Prefix: p, Client: genNonzeroU128(t, "client"), Nonce: genNonzeroU128(t, "nonce"),
			Outcome: ForwardRegisterOutcome(rapid.IntRange(0, 6).Draw(t, "outcome"))}
		if x.Outcome == ForwardRegisterOk {
			x.Epoch, x.Watermark = u64("epoch"), u64("wm")
		}
		return x, nil
	case CommandForwardLogout:
		return &ForwardLogoutHeader{Prefix: p, Client: genNonzeroU128(t, "client"), Nonce: genNonzeroU128(t, "nonce"),
			Session: rapid.Uint64Min(1).Draw(t, "session"), Request: rapid.Uint64Min(1).Draw(t, "request")}, nil
	case CommandForwardLogoutResult:
		x := &ForwardLogoutResultHeader{Prefix: p, Client: genNonzeroU128(t, "client"), Nonce: genNonzeroU128(t, "nonce"),
			Outcome: ForwardLogoutOutcome(rapid.IntRange(0, 4).Draw(t, "outcome"))}
		if x.Outcome == ForwardLogoutOk {
			x.Commit = u64("commit")
		}
		return x, nil
	}
	panic("genValid: no header type for " + c.String())
}

// genBitset draws a u128 with bits only below n.
func genBitset(t *rapid.T, label string, n int) U128 {
	var u U128
	for _, i := range rapid.SliceOfN(rapid.IntRange(0, 127), 0, 8).Draw(t, label) {
		if i < n {
			u = u.WithBit(i)
		}
	}
	return u
}

// genSuffixBody draws n arbitrary 256-byte entries: the frame rules do not
// look inside them.
func genSuffixBody(t *rapid.T, n int) []byte {
	body := make([]byte, n*HeaderSize)
	seed := rapid.Uint64().Draw(t, "suffix.seed")
	for i := range body {
		seed = seed*6364136223846793005 + 1442695040888963407
		body[i] = byte(seed >> 56)
	}
	return body
}

// setPrefix lets generic test code replace the prefix of any typed header.
func (p *Prefix) setPrefix(q Prefix) { *p = q }

// genBatch draws a valid stamped message batch, the body of a SendMessages
// prepare.
func genBatch(t *rapid.T) []byte {
	n := rapid.IntRange(1, 4).Draw(t, "messages")
	msgs := make([]Message, n)
	for i := range msgs {
		msgs[i] = Message{ID: genU128(t, "id"), OffsetDelta: uint32(i),
			Payload: rapid.SliceOfN(rapid.Byte(), 0, 40).Draw(t, "payload")}
	}
	b := EncodeBatch(BatchHeader{OriginTimestamp: rapid.Uint64().Draw(t, "origin")}, msgs)
	StampBatch(b, rapid.Uint64().Draw(t, "partition"), rapid.Uint64().Draw(t, "base"), rapid.Uint64().Draw(t, "ts"))
	return b
}
