// Package wiresample builds a deterministic sample of replica-plane traffic:
// one frame of every command a three-replica cluster exchanges, in the order
// a short story of that cluster would produce them, plus two frames that a
// receiver rejects. `make run` decodes it, the decoder's golden test prints
// it, and the fuzz targets seed their corpora with it.
//
// Nothing here is random: nonces and timestamps are fixed constants, so the
// bytes never change unless the codec does.
package wiresample

import (
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Secret is the shared secret of the sample cluster's handshake.
const Secret = "vopr-sample-shared-secret-32-bytes!"

// ClusterName is the sample cluster's name.
const ClusterName = "iggy-cluster"

// Frames returns the sample conversation, frame by frame.
func Frames() [][]byte {
	cluster := wire.ClusterID(ClusterName)
	partition, err := wire.PackGroup(wire.PartitionGroup{Stream: 1, Topic: 2, Partition: 3})
	if err != nil {
		panic(err)
	}
	var frames [][]byte
	add := func(x wire.Typed, body []byte) []byte {
		f := wire.BuildFrame(x, body)
		frames = append(frames, f)
		return f
	}
	pre := func(c wire.Command, view uint32, replica uint8) wire.Prefix {
		return wire.Prefix{Cluster: cluster, View: view, Command: c, Replica: replica}
	}

	// Replica 0 dials replica 1: the authenticated handshake.
	tr := wire.Transcript{Cluster: cluster, Dialer: 0, Acceptor: 1}
	for i := range tr.NonceD {
		tr.NonceD[i] = byte(0xd0 + i%16)
		tr.NonceA[i] = byte(0xa0 + i%16)
	}
	key := wire.DeriveMACKey([]byte(Secret))
	add(&wire.HandshakeHeader{Prefix: pre(wire.CommandReplicaHello, 0, 0), Nonce: tr.NonceD}, nil)
	add(&wire.HandshakeHeader{Prefix: pre(wire.CommandReplicaChallenge, 0, 1), Nonce: tr.NonceA,
		MAC: tr.MAC(key, wire.MACAcceptor), Status: wire.HandshakeOk}, nil)
	add(&wire.HandshakeHeader{Prefix: pre(wire.CommandReplicaFinish, 0, 0),
		MAC: tr.MAC(key, wire.MACDialer)}, nil)

	// A client registers; the primary (replica 0, view 0) replicates it. The
	// request leaves group zero: only the server's routed form carries one.
	client := wire.U128{Lo: 0x0123456789abcdef, Hi: 0xfedcba9876543210}
	add(&wire.RequestHeader{Prefix: pre(wire.CommandRequest, 0, 0), Client: client,
		Operation: wire.OperationRegister}, []byte("login"))
	const ts0 = 1_750_000_000_000_000
	register := add(&wire.PrepareHeader{Prefix: pre(wire.CommandPrepare, 0, 0), Client: client, Op: 1,
		Timestamp: ts0, Operation: wire.OperationRegister, Group: wire.MetadataGroup, UserID: 1}, nil)
	identity1 := wire.HeaderOf(register).Checksum()
	add(&wire.PrepareOkHeader{Prefix: pre(wire.CommandPrepareOk, 0, 1), PrepareChecksum: identity1, Op: 1,
		Timestamp: ts0, Operation: wire.OperationRegister, Group: wire.MetadataGroup}, nil)
	add(&wire.CommitHeader{Prefix: pre(wire.CommandCommit, 0, 0), TimestampMonotonic: 1, Commit: 1,
		Group: wire.MetadataGroup}, nil)
	add(&wire.ReplyHeader{Prefix: pre(wire.CommandReply, 0, 0), Client: client, Op: 1, Commit: 1,
		Timestamp: ts0, Operation: wire.OperationRegister}, nil)

	// CreateStream, then a produce on partition (1, 2, 3).
	createStream := add(&wire.PrepareHeader{Prefix: pre(wire.CommandPrepare, 0, 0), Client: client,
		Parent: identity1, Op: 2, Commit: 1, Timestamp: ts0 + 1000, Request: 1,
		Operation: wire.OperationCreateStream, Group: wire.MetadataGroup, UserID: 1},
		[]byte("\x06orders"))
	batch := wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 1000}, []wire.Message{
		{ID: wire.U128From64(7), Payload: []byte("first-payload")},
		{ID: wire.U128From64(8), OffsetDelta: 1, TimestampDelta: 50, Payload: []byte("second-payload"),
			UserHeaders: []byte("user-header-bytes")},
	})
	wire.StampBatch(batch, 3, 100, ts0+2000)
	add(&wire.PrepareHeader{Prefix: pre(wire.CommandPrepare, 0, 0), Client: client, Op: 101, Commit: 100,
		Timestamp: ts0 + 2000, Request: 2, Operation: wire.OperationSendMessages, Group: partition}, batch)

	// Replica 0 falls silent; replica 1 takes over in view 1.
	add(&wire.StartViewChangeHeader{Prefix: pre(wire.CommandStartViewChange, 1, 2), Group: wire.MetadataGroup}, nil)
	suffix := wire.EncodeSuffix([]wire.Header{*wire.HeaderOf(createStream), *wire.HeaderOf(register)})
	add(&wire.DoViewChangeHeader{Prefix: pre(wire.CommandDoViewChange, 1, 2), Op: 2, Commit: 1,
		Group: wire.MetadataGroup, LogView: 0, PresentBitset: wire.U128From64(0b11)}, suffix)
	blank := wire.BlankEntry(2)
	add(&wire.DoViewChangeHeader{Prefix: pre(wire.CommandDoViewChange, 1, 1), Op: 2, Commit: 1,
		Group: wire.MetadataGroup, LogView: 0, PresentBitset: wire.U128From64(0b10)},
		wire.EncodeSuffix([]wire.Header{blank, *wire.HeaderOf(register)}))
	add(&wire.StartViewHeader{Prefix: pre(wire.CommandStartView, 1, 1), Op: 2, Commit: 1,
		Group: wire.MetadataGroup}, suffix)

	// Replica 0 restarts, probes for the view, and repairs op 2.
	incarnation := wire.U128{Lo: 0x5eed0001, Hi: 0x00c0ffee}
	add(&wire.RequestStartViewHeader{Prefix: pre(wire.CommandRequestStartView, 0, 0),
		Group: wire.MetadataGroup, Incarnation: incarnation}, nil)
	add(&wire.StartViewHeader{Prefix: pre(wire.CommandStartView, 1, 1), Op: 2, Commit: 2,
		Group: wire.MetadataGroup, Incarnation: incarnation}, nil)
	repairNonce := wire.U128From64(0x7e9a1)
	add(&wire.RequestPreparesHeader{Prefix: pre(wire.CommandRequestPrepares, 0, 0), Nonce: repairNonce,
		FromOp: 2, ToOp: 2, Group: wire.MetadataGroup}, nil)
	repair := append([]byte(nil), createStream...)
	wire.ToRepairPrepare(repair)
	frames = append(frames, repair)
	add(&wire.RepairRangeHeader{Prefix: pre(wire.CommandRepairDone, 0, 1), Nonce: repairNonce, Op: 2,
		Group: wire.MetadataGroup}, nil)
	add(&wire.RepairRangeHeader{Prefix: pre(wire.CommandRangeEvicted, 0, 1), Nonce: repairNonce, Op: 40,
		Group: partition}, nil)

	// A state transfer of the partition: offer, one chunk.
	transferNonce := wire.U128From64(0x57a7e)
	segment := batch
	offsets := wire.EncodeConsumerOffsets(wire.ConsumerOffsets{NextOffset: 102,
		Consumers: []wire.OffsetEntry{{ID: 1, Offset: 100}}, Groups: []wire.OffsetEntry{{ID: 7, Offset: 101}}})
	manifest := wire.EncodeManifest([]wire.ManifestEntry{
		{Kind: wire.ArtifactSegmentLog, Frontier: 100, Len: uint64(len(segment)), Checksum: wire.BodySeal(segment).Lo},
		{Kind: wire.ArtifactConsumerOffsets, Frontier: 101, Len: uint64(len(offsets)), Checksum: wire.BodySeal(offsets).Lo},
	})
	add(&wire.RequestStateTransferHeader{Prefix: pre(wire.CommandRequestStateTransfer, 0, 2),
		Nonce: transferNonce, Group: partition}, nil)
	add(&wire.StateTransferTargetHeader{Prefix: pre(wire.CommandStateTransferTarget, 1, 1), Nonce: transferNonce,
		CommitOp: 101, Group: partition, Available: 1, CommitMax: 101}, manifest)
	add(&wire.RequestStateChunkHeader{Prefix: pre(wire.CommandRequestStateChunk, 0, 2), Nonce: transferNonce,
		Offset: 0, Group: partition, Len: 262144, Artifact: 0}, nil)
	add(&wire.StateChunkHeader{Prefix: pre(wire.CommandStateChunk, 0, 1), Nonce: transferNonce,
		Offset: 0, Group: partition, Artifact: 0}, segment)

	// A client on backup 2 logs in and out through the primary.
	forwardNonce := wire.U128{Lo: 1, Hi: 2} // high half: sender replica id
	add(&wire.ForwardRegisterHeader{Prefix: pre(wire.CommandForwardRegister, 1, 2), Client: client,
		Nonce: forwardNonce, UserID: 1}, nil)
	add(&wire.ForwardRegisterResultHeader{Prefix: pre(wire.CommandForwardRegisterResult, 1, 1),
		Nonce: forwardNonce, Client: client, Epoch: 3, Watermark: 0, Outcome: wire.ForwardRegisterOk}, nil)
	add(&wire.ForwardLogoutHeader{Prefix: pre(wire.CommandForwardLogout, 1, 2), Client: client,
		Nonce: wire.U128{Lo: 2, Hi: 2}, Session: 3, Request: 4}, nil)
	add(&wire.ForwardLogoutResultHeader{Prefix: pre(wire.CommandForwardLogoutResult, 1, 1),
		Nonce: wire.U128{Lo: 2, Hi: 2}, Client: client, Outcome: wire.ForwardLogoutPipelineFull}, nil)
	add(&wire.EvictionHeader{Prefix: pre(wire.CommandEviction, 1, 1), Client: client,
		Reason: wire.EvictionSessionTooLow}, nil)

	// Two frames a receiver drops: a Commit whose seal a bit flip broke, and
	// a Pong (command 2), which has no place on this plane.
	broken := add(&wire.CommitHeader{Prefix: pre(wire.CommandCommit, 1, 1), TimestampMonotonic: 2, Commit: 2,
		Group: wire.MetadataGroup}, nil)
	broken[152] ^= 0x04
	var pong wire.Header
	pong.SetSize(wire.HeaderSize)
	pong.SetCommand(wire.CommandPong)
	frames = append(frames, pong[:])
	return frames
}

// Stream returns Frames concatenated, as they would cross one connection.
func Stream() []byte {
	var b []byte
	for _, f := range Frames() {
		b = append(b, f...)
	}
	return b
}
