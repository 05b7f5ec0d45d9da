package sim

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// The bad-frames nemesis's catalogue: each entry builds a frame that a peer
// could put on its connection, sealed as its command is sealed (the frame
// seal, the prepare identity, the body seals where the rule is not one of
// them), which breaks exactly one receiver rule of wire.md. The rule is the
// one the checker's reader (wirespec.Receive) finds: the sim only builds,
// the checker judges (sim's TestBadFramesBreakTheirRule holds each entry to
// its rule).

// badCtx is what a builder knows of the pair it injects between.
type badCtx struct {
	rng      *rand.Rand
	cluster  wire.U128
	from     uint8  // the peer the frame claims to come from
	replicas int    // the cluster's size
	sizeMax  uint32 // the receiver's max_message_size
	view     uint32 // the receiver's metadata view
	op       uint64 // its metadata head
	commit   uint64 // its metadata commit_max
	// group: a partition group the receiver runs (for a SendMessages
	// prepare), 0 when it runs none; unknownGroup one it does not run.
	group, unknownGroup uint64
}

// badKind is one entry: the receiver rule it breaks (wirespec's name) and
// its builder.
type badKind struct {
	rule  string
	build func(x *badCtx) []byte
}

// reseal seals f as its command is sealed: the prepare identity for
// Prepare, the frame seal for every command but the unsealed ones (the
// client frames and the handshake), computed with the checker's own
// reading of wire.md 3.
func reseal(f []byte) []byte {
	c := f[wirespec.OffCommand]
	var sum wirespec.U128
	switch c {
	case wirespec.Prepare, wirespec.RepairPrepare:
		sum = wirespec.Identity(f)
	case wirespec.Request, wirespec.Reply, wirespec.Eviction, wirespec.ReplicaHello, wirespec.ReplicaChallenge, wirespec.ReplicaFinish:
	default:
		sum = wirespec.Seal(f)
	}
	binary.LittleEndian.PutUint64(f[0:], sum.Lo)
	binary.LittleEndian.PutUint64(f[8:], sum.Hi)
	return f
}

func (x *badCtx) prefix(view uint32) wire.Prefix {
	return wire.Prefix{Cluster: x.cluster, View: view, Replica: x.from}
}

// prepareOf is the prefix of a prepare x.from built.
func (x *badCtx) prepareOf(view uint32) wire.Prefix {
	p := x.prefix(view)
	p.Command = wire.CommandPrepare
	return p
}

// nonce is a nonzero nonce, as a forwarding backup mints them (wire.md
// 5.15: the sender in the high half).
func (x *badCtx) nonce() wire.U128 {
	return wire.U128{Lo: 1 + x.rng.Uint64N(1<<40), Hi: uint64(x.from)}
}

func (x *badCtx) commitFrame() []byte {
	return wire.BuildFrame(&wire.CommitHeader{Prefix: x.prefix(x.view), TimestampMonotonic: 1 + x.rng.Uint64N(1000),
		Commit: x.commit, Group: wire.MetadataGroup}, nil)
}

func (x *badCtx) dvc(body []byte) *wire.DoViewChangeHeader {
	n := uint64(len(body) / wire.HeaderSize)
	op := max(x.op, n)
	return &wire.DoViewChangeHeader{Prefix: x.prefix(x.view), Op: op, Commit: min(x.commit, op), Group: wire.MetadataGroup,
		LogView: x.view}
}

func (x *badCtx) startView(body []byte) *wire.StartViewHeader {
	n := uint64(len(body) / wire.HeaderSize)
	op := max(x.op, n)
	return &wire.StartViewHeader{Prefix: x.prefix(x.view), Op: op, Commit: min(x.commit, op), Group: wire.MetadataGroup}
}

// blanks is a suffix of n canonical blanks descending from op (wire.md
// 5.5): all zero but the command and the op.
func blanks(op uint64, n int) []byte {
	b := make([]byte, n*wire.HeaderSize)
	for i := range n {
		e := b[i*wire.HeaderSize:]
		e[wirespec.OffCommand] = wirespec.Prepare
		binary.LittleEndian.PutUint64(e[176:], op-uint64(i))
	}
	return b
}

func (x *badCtx) prepareOk(operation wire.Operation) []byte {
	return wire.BuildFrame(&wire.PrepareOkHeader{Prefix: x.prefix(x.view), Op: x.op + 1 + x.rng.Uint64N(4), Commit: x.commit,
		Timestamp: 1, Request: 1, Operation: operation, Group: wire.MetadataGroup,
		PrepareChecksum: wire.U128{Lo: x.rng.Uint64() | 1}}, nil)
}

// metadataPrepare is a metadata Register prepare beyond the receiver's
// head (its body empty, sealed).
func (x *badCtx) metadataPrepare() []byte {
	return wire.BuildFrame(&wire.PrepareHeader{Prefix: x.prepareOf(x.view), Client: wire.U128{Lo: 1 + x.rng.Uint64N(1<<30)},
		Op: x.op + 2 + x.rng.Uint64N(8), Commit: x.commit, Timestamp: 1, Operation: wire.OperationCreateStream,
		Group: wire.MetadataGroup, Request: 1}, []byte("bad-frames"))
}

// sendMessages is a partition SendMessages prepare whose body is a
// stamped batch of two messages, before edit changes its batch; the batch
// checksum is recomputed over the edited bytes unless edit returns false.
func (x *badCtx) sendMessages(edit func(b []byte) bool) []byte {
	group := x.group
	if group == 0 {
		group = 1
	}
	return x.sendMessagesOf(group, edit)
}

// sendMessagesOf is sendMessages for group.
func (x *badCtx) sendMessagesOf(group uint64, edit func(b []byte) bool) []byte {
	batch := wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 1000}, []wire.Message{
		{ID: wire.U128{Lo: x.rng.Uint64() | 1}, Payload: []byte("bad-frames-one")},
		{ID: wire.U128{Lo: x.rng.Uint64() | 1}, TimestampDelta: 3, Payload: []byte("bad-frames-two"), UserHeaders: []byte("h")},
	})
	wire.StampBatch(batch, group&(1<<20-1), 0, 5000)
	if edit(batch) {
		binary.LittleEndian.PutUint64(batch[wirespec.OffBatchChecksum:], batchSum(batch))
	}
	// The batch is not covered by the identity (partition checksum_body
	// is 0, wire.md 3.4): BuildFrame seals the header alone.
	return wire.BuildFrame(&wire.PrepareHeader{Prefix: x.prepareOf(x.view), Client: wire.U128{Lo: 1 + x.rng.Uint64N(1<<30)},
		Op: 1 + x.rng.Uint64N(64), Timestamp: 5000, Request: 1, Operation: wire.OperationSendMessages, Group: group}, batch)
}

// batchSum is wire.md 7.3's batch_checksum over b's header fields and
// the stored checksums of the frames its lengths delimit (as many as fit).
func batchSum(b []byte) uint64 {
	in := append([]byte(nil), b[:40]...)
	in = append(in, b[48:52]...)
	count := binary.LittleEndian.Uint32(b[48:])
	at := wire.BatchHeaderSize
	for i := uint32(0); i < count && at+48 <= len(b); i++ {
		in = append(in, b[at:at+8]...)
		at += 48 + int(binary.LittleEndian.Uint32(b[at+36:])) + int(binary.LittleEndian.Uint32(b[at+32:]))
	}
	return xxh3.Hash(in)
}

// messageSum is a message frame's checksum (wire.md 7.2).
func messageSum(m []byte) uint64 {
	end := 48 + int(binary.LittleEndian.Uint32(m[36:])) + int(binary.LittleEndian.Uint32(m[32:]))
	return xxh3.Hash(m[8:end])
}

func (x *badCtx) forwardRegister() []byte {
	return wire.BuildFrame(&wire.ForwardRegisterHeader{Prefix: x.prefix(x.view), Client: wire.U128{Lo: 1 + x.rng.Uint64N(1<<30)},
		Nonce: x.nonce(), UserID: 1}, nil)
}

func (x *badCtx) forwardLogout() []byte {
	return wire.BuildFrame(&wire.ForwardLogoutHeader{Prefix: x.prefix(x.view), Client: wire.U128{Lo: 1 + x.rng.Uint64N(1<<30)},
		Nonce: x.nonce(), Session: 1 + x.rng.Uint64N(100), Request: 1 + x.rng.Uint64N(100)}, nil)
}

func (x *badCtx) registerResult() []byte {
	return wire.BuildFrame(&wire.ForwardRegisterResultHeader{Prefix: x.prefix(x.view), Client: wire.U128{Lo: 1 + x.rng.Uint64N(1<<30)},
		Nonce: wire.U128{Lo: 1 + x.rng.Uint64N(1<<20), Hi: uint64(x.rng.IntN(x.replicas))}, Outcome: wire.ForwardRegisterNotPrimary}, nil)
}

func (x *badCtx) logoutResult() []byte {
	return wire.BuildFrame(&wire.ForwardLogoutResultHeader{Prefix: x.prefix(x.view), Client: wire.U128{Lo: 1 + x.rng.Uint64N(1<<30)},
		Nonce: wire.U128{Lo: 1 + x.rng.Uint64N(1<<20), Hi: uint64(x.rng.IntN(x.replicas))}, Outcome: wire.ForwardLogoutNotPrimary}, nil)
}

func (x *badCtx) target() []byte {
	return wire.BuildFrame(&wire.StateTransferTargetHeader{Prefix: x.prefix(x.view), Nonce: wire.U128{Lo: x.rng.Uint64() | 1},
		Group: wire.MetadataGroup, CommitMax: x.commit}, nil)
}

func put32(f []byte, off int, v uint32) []byte { binary.LittleEndian.PutUint32(f[off:], v); return f }
func put64(f []byte, off int, v uint64) []byte { binary.LittleEndian.PutUint64(f[off:], v); return f }

// withBody returns f with n more body bytes (drawn), its size field
// covering them, resealed.
func (x *badCtx) withBody(f []byte, n int) []byte {
	g := make([]byte, len(f)+n)
	copy(g, f)
	for i := len(f); i < len(g); i++ {
		g[i] = byte(x.rng.IntN(256))
	}
	put32(g, wirespec.OffSize, uint32(len(g)))
	return reseal(g)
}

// badKinds is the catalogue, in a fixed order (the nemesis draws an index).
var badKinds = []badKind{
	// Framing (1.1): the receiver closes the connection.
	{wirespec.RuleSizeBelowHeader, func(x *badCtx) []byte {
		return reseal(put32(x.commitFrame(), wirespec.OffSize, uint32(x.rng.IntN(wire.HeaderSize))))
	}},
	{wirespec.RuleSizeAboveMax, func(x *badCtx) []byte {
		// The reader refuses the header before it reads a body.
		return reseal(put32(x.commitFrame(), wirespec.OffSize, x.sizeMax+1+uint32(x.rng.IntN(1<<20))))
	}},
	{wirespec.RuleCommandRange, func(x *badCtx) []byte {
		f := x.commitFrame()
		f[wirespec.OffCommand] = byte(30 + x.rng.IntN(226))
		return reseal(f)
	}},
	// Dispatch (4.1 step 3): dropped, the connection stays.
	{wirespec.RuleNoTraffic, func(x *badCtx) []byte {
		f := x.commitFrame()
		f[wirespec.OffCommand] = byte(x.rng.IntN(5))
		return reseal(f)
	}},
	{wirespec.RuleRequest, func(x *badCtx) []byte {
		return wire.BuildFrame(&wire.RequestHeader{Prefix: x.prefix(0), Client: wire.U128{Lo: 1 + x.rng.Uint64N(1<<30)},
			Request: 1, Session: 1, Operation: wire.OperationCreateStream}, []byte("s"))
	}},
	{wirespec.RuleClientBound, func(x *badCtx) []byte {
		if x.rng.IntN(2) == 0 {
			return wire.BuildFrame(&wire.EvictionHeader{Prefix: x.prefix(0), Client: wire.U128{Lo: 1 + x.rng.Uint64N(1<<30)},
				Reason: wire.EvictionSessionTooLow}, nil)
		}
		return wire.BuildFrame(&wire.ReplyHeader{Prefix: x.prefix(x.view), Client: wire.U128{Lo: 1 + x.rng.Uint64N(1<<30)},
			Op: x.commit, Commit: x.commit, Request: 1, Operation: wire.OperationCreateStream}, nil)
	}},
	{wirespec.RuleHandshake, func(x *badCtx) []byte {
		c := wire.CommandReplicaHello + wire.Command(x.rng.IntN(3))
		h := wire.HandshakeHeader{Prefix: wire.Prefix{Cluster: x.cluster, Size: wire.HeaderSize, Command: c, Replica: x.from}}
		f := make([]byte, wire.HeaderSize)
		h.Encode(wire.HeaderOf(f))
		return f
	}},
	// Bit patterns (4.1 step 4).
	{wirespec.RuleOperation, func(x *badCtx) []byte {
		if x.rng.IntN(2) == 0 {
			f := x.prepareOk(wire.OperationCreateStream)
			f[wirespec.OffPrepareOkOpn] = byte(4 + x.rng.IntN(60)) // 4..63: no operation
			return reseal(f)
		}
		f := x.metadataPrepare()
		f[208] = byte(150 + x.rng.IntN(10)) // 150..159: no operation
		return reseal(f)
	}},
	{wirespec.RuleOutcome, func(x *badCtx) []byte {
		if x.rng.IntN(2) == 0 {
			f := x.registerResult()
			f[wirespec.OffFRROutcome] = byte(7 + x.rng.IntN(249))
			return reseal(f)
		}
		f := x.logoutResult()
		f[wirespec.OffFLROutcome] = byte(5 + x.rng.IntN(251))
		return reseal(f)
	}},
	// validate() (5): dropped, the connection stays.
	{wirespec.RuleHeaderOnly, func(x *badCtx) []byte {
		switch x.rng.IntN(4) {
		case 0:
			return x.withBody(x.commitFrame(), 1+x.rng.IntN(512))
		case 1:
			return x.withBody(wire.BuildFrame(&wire.RequestStateTransferHeader{Prefix: x.prefix(0), Nonce: wire.U128{Lo: x.rng.Uint64() | 1},
				Group: wire.MetadataGroup}, nil), 1+x.rng.IntN(512))
		case 2:
			return x.withBody(wire.BuildFrame(&wire.RequestStateChunkHeader{Prefix: x.prefix(0), Nonce: wire.U128{Lo: x.rng.Uint64() | 1},
				Group: wire.MetadataGroup, Len: 4096}, nil), 1+x.rng.IntN(512))
		}
		return x.withBody(x.forwardRegister(), 1+x.rng.IntN(512))
	}},
	{wirespec.RuleRelease, func(x *badCtx) []byte {
		var f []byte
		if x.rng.IntN(2) == 0 {
			f = wire.BuildFrame(&wire.StartViewChangeHeader{Prefix: x.prefix(x.view), Group: wire.MetadataGroup}, nil)
		} else {
			f = wire.BuildFrame(&wire.RequestStartViewHeader{Prefix: x.prefix(x.view), Group: wire.MetadataGroup,
				Incarnation: wire.U128{Lo: x.rng.Uint64() | 1}}, nil)
		}
		return reseal(put32(f, wirespec.OffRelease, 1+x.rng.Uint32N(1000)))
	}},
	{wirespec.RuleLogView, func(x *badCtx) []byte {
		d := x.dvc(nil)
		d.LogView = d.View + 1 + x.rng.Uint32N(5)
		return wire.BuildFrame(d, nil)
	}},
	{wirespec.RuleCommitOp, func(x *badCtx) []byte {
		if x.rng.IntN(2) == 0 {
			d := x.dvc(nil)
			d.Commit = d.Op + 1 + x.rng.Uint64N(5)
			return wire.BuildFrame(d, nil)
		}
		s := x.startView(nil)
		s.Commit = s.Op + 1 + x.rng.Uint64N(5)
		return wire.BuildFrame(s, nil)
	}},
	{wirespec.RuleSuffixSize, func(x *badCtx) []byte {
		body := make([]byte, 1+x.rng.IntN(wire.HeaderSize-1))
		if x.rng.IntN(2) == 0 {
			return wire.BuildFrame(x.dvc(nil), body)
		}
		return wire.BuildFrame(x.startView(nil), body)
	}},
	{wirespec.RuleSuffixLength, func(x *badCtx) []byte {
		// The oversized suffix: 129 to 132 canonical blanks.
		n := wire.SuffixEntriesMax + 1 + x.rng.IntN(4)
		s := x.startView(make([]byte, n*wire.HeaderSize))
		return wire.BuildFrame(s, blanks(s.Op, n))
	}},
	{wirespec.RuleBitsets, func(x *badCtx) []byte {
		n := x.rng.IntN(3)
		d := x.dvc(make([]byte, n*wire.HeaderSize))
		bit := n + x.rng.IntN(wire.SuffixEntriesMax-n)
		if bit < 64 {
			d.NackBitset = wire.U128{Lo: 1 << bit}
		} else {
			d.NackBitset = wire.U128{Hi: 1 << (bit - 64)}
		}
		if x.rng.IntN(2) == 0 {
			d.NackBitset, d.PresentBitset = wire.U128{}, d.NackBitset
		}
		return wire.BuildFrame(d, blanks(d.Op, n))
	}},
	{wirespec.RuleBodySeal, func(x *badCtx) []byte {
		var f []byte
		switch x.rng.IntN(3) {
		case 0:
			d := x.dvc(make([]byte, wire.HeaderSize))
			f = wire.BuildFrame(d, blanks(d.Op, 1))
		case 1:
			s := x.startView(make([]byte, wire.HeaderSize))
			f = wire.BuildFrame(s, blanks(s.Op, 1))
		default:
			// A metadata prepare whose body is not the one its
			// checksum_body seals (its identity covers the field).
			f = x.metadataPrepare()
			f[len(f)-1] ^= byte(1 + x.rng.IntN(255))
			return f
		}
		put64(f, wirespec.OffChecksumBody, binary.LittleEndian.Uint64(f[wirespec.OffChecksumBody:])+1+x.rng.Uint64N(1<<20))
		return reseal(f)
	}},
	{wirespec.RuleFromOp, func(x *badCtx) []byte {
		return wire.BuildFrame(&wire.RequestPreparesHeader{Prefix: x.prefix(0), Nonce: wire.U128{Lo: x.rng.Uint64() | 1},
			FromOp: 0, ToOp: x.rng.Uint64N(x.op + 2), Group: wire.MetadataGroup}, nil)
	}},
	{wirespec.RuleFromTo, func(x *badCtx) []byte {
		to := 1 + x.rng.Uint64N(x.op+2)
		return wire.BuildFrame(&wire.RequestPreparesHeader{Prefix: x.prefix(0), Nonce: wire.U128{Lo: x.rng.Uint64() | 1},
			FromOp: to + 1 + x.rng.Uint64N(4), ToOp: to, Group: wire.MetadataGroup}, nil)
	}},
	{wirespec.RuleAvailable, func(x *badCtx) []byte {
		f := x.target()
		f[wirespec.OffSTTAvailable] = byte(2 + x.rng.IntN(254))
		return reseal(f)
	}},
	{wirespec.RuleTransient, func(x *badCtx) []byte {
		f := x.target()
		f[wirespec.OffSTTTransient] = byte(2 + x.rng.IntN(254))
		return reseal(f)
	}},
	{wirespec.RuleAvailableBoth, func(x *badCtx) []byte {
		f := x.withBody(x.target(), 17)
		f[wirespec.OffSTTAvailable], f[wirespec.OffSTTTransient] = 1, 1
		return reseal(f)
	}},
	{wirespec.RuleRefusalBody, func(x *badCtx) []byte {
		return x.withBody(x.target(), 1+x.rng.IntN(64))
	}},
	{wirespec.RuleLen, func(x *badCtx) []byte {
		return wire.BuildFrame(&wire.RequestStateChunkHeader{Prefix: x.prefix(0), Nonce: wire.U128{Lo: x.rng.Uint64() | 1},
			Group: wire.MetadataGroup, Offset: x.rng.Uint64N(1 << 16), Len: 0}, nil)
	}},
	{wirespec.RuleClient, func(x *badCtx) []byte {
		f := x.forwardRegister()
		if x.rng.IntN(2) == 0 {
			f = x.forwardLogout()
		}
		clear(f[128:144])
		return reseal(f)
	}},
	{wirespec.RuleNonce, func(x *badCtx) []byte {
		f := x.forwardRegister()
		if x.rng.IntN(2) == 0 {
			f = x.forwardLogout()
		}
		clear(f[144:160])
		return reseal(f)
	}},
	{wirespec.RuleSession, func(x *badCtx) []byte {
		f := x.forwardLogout()
		clear(f[wirespec.OffFLSession : wirespec.OffFLSession+8])
		return reseal(f)
	}},
	{wirespec.RuleRequestNumber, func(x *badCtx) []byte {
		f := x.forwardLogout()
		clear(f[wirespec.OffFLRequest : wirespec.OffFLRequest+8])
		return reseal(f)
	}},
	{wirespec.RuleOutcomeFields, func(x *badCtx) []byte {
		if x.rng.IntN(2) == 0 {
			return reseal(put64(x.registerResult(), wirespec.OffFRREpoch+8*x.rng.IntN(2), 1+x.rng.Uint64N(100)))
		}
		return reseal(put64(x.logoutResult(), wirespec.OffFLRCommit, 1+x.rng.Uint64N(100)))
	}},
	{wirespec.RuleReserved, func(x *badCtx) []byte {
		switch x.rng.IntN(3) {
		case 0:
			f := x.forwardRegister()
			f[164+x.rng.IntN(92)] = byte(1 + x.rng.IntN(255))
			return reseal(f)
		case 1:
			f := x.forwardLogout()
			f[176+x.rng.IntN(80)] = byte(1 + x.rng.IntN(255))
			return reseal(f)
		}
		f := x.metadataPrepare()
		f[228+x.rng.IntN(28)] = byte(1 + x.rng.IntN(255))
		return reseal(f)
	}},
	{wirespec.RuleReservedFrame, func(x *badCtx) []byte {
		f := x.metadataPrepare()
		f[62+x.rng.IntN(66)] = byte(1 + x.rng.IntN(255))
		return reseal(f)
	}},
	{wirespec.RuleReplicaRange, func(x *badCtx) []byte {
		f := x.commitFrame()
		f[wirespec.OffReplica] = byte(x.replicas + x.rng.IntN(256-x.replicas))
		return reseal(f)
	}},
	// The batch of a SendMessages prepare (7), verified at ingress.
	{wirespec.RuleBatchLength, func(x *badCtx) []byte {
		return x.sendMessages(func(b []byte) bool {
			n := uint64(len(b))
			if x.rng.IntN(2) == 0 {
				put64(b, wirespec.OffBatchLength, n+1+x.rng.Uint64N(4096))
			} else {
				put64(b, wirespec.OffBatchLength, wire.BatchHeaderSize+x.rng.Uint64N(n-wire.BatchHeaderSize))
			}
			return true
		})
	}},
	{wirespec.RuleBatchReserved, func(x *badCtx) []byte {
		return x.sendMessages(func(b []byte) bool { b[52+x.rng.IntN(204)] = byte(1 + x.rng.IntN(255)); return true })
	}},
	{wirespec.RuleBatchCount, func(x *badCtx) []byte {
		return x.sendMessages(func(b []byte) bool { put32(b, wirespec.OffBatchCount, 0); return true })
	}},
	{wirespec.RuleBatchFrames, func(x *badCtx) []byte {
		return x.sendMessages(func(b []byte) bool {
			switch x.rng.IntN(3) {
			case 0: // one message more than the blob holds
				put32(b, wirespec.OffBatchCount, 3)
			case 1: // one message fewer: the blob has bytes after the last
				put32(b, wirespec.OffBatchCount, 1)
			default: // the second message's payload runs past the batch
				second := wire.BatchHeaderSize + 48 + int(binary.LittleEndian.Uint32(b[wire.BatchHeaderSize+36:]))
				put32(b, second+36, binary.LittleEndian.Uint32(b[second+36:])+1+x.rng.Uint32N(1000))
			}
			return true
		})
	}},
	{wirespec.RuleBatchMsgSum, func(x *badCtx) []byte {
		return x.sendMessages(func(b []byte) bool {
			// A stored checksum that is not its frame's, and the batch
			// checksum over what is stored.
			at := wire.BatchHeaderSize
			if x.rng.IntN(2) == 0 {
				at += 48 + int(binary.LittleEndian.Uint32(b[at+36:])) + int(binary.LittleEndian.Uint32(b[at+32:]))
			}
			put64(b, at, messageSum(b[at:])+1+x.rng.Uint64N(1<<30))
			return true
		})
	}},
	{wirespec.RuleBatchMsgReserv, func(x *badCtx) []byte {
		return x.sendMessages(func(b []byte) bool {
			at := wire.BatchHeaderSize
			b[at+40+x.rng.IntN(8)] = byte(1 + x.rng.IntN(255))
			put64(b, at, messageSum(b[at:]))
			return true
		})
	}},
	{wirespec.RuleBatchChecksum, func(x *badCtx) []byte {
		return x.sendMessages(func(b []byte) bool {
			put64(b, wirespec.OffBatchChecksum, batchSum(b)+1+x.rng.Uint64N(1<<30))
			return false
		})
	}},
}
