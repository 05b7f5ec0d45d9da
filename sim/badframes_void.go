package sim

import (
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Void frames: well-formed on the wire (wirespec.Receive passes them) and
// void by the protocol at their receiver: a stale view, an op beyond what
// the receiver holds or has in its pipeline, a group it does not run, a
// chunk request of an offer it never made. The receiver must take them
// in (the bus passes them on) and change nothing: no event but probes and
// the messages it sends (a stale primary's Commit is answered with a
// StartView), no disk I/O; and a chunk request of an unknown offer gets
// wire.md 5.12's transient refusal (checker.PeerFrame).

// voidKind is one entry: what makes the frame void, and its builder (nil
// result: not buildable against this receiver now).
type voidKind struct {
	name  string
	build func(x *badCtx) []byte
}

// staleView is a view below the receiver's (it has one above 0).
func (x *badCtx) staleView() uint32 { return x.rng.Uint32N(x.view) }

var voidKinds = []voidKind{
	{"a chunk request of an offer never made", func(x *badCtx) []byte {
		return wire.BuildFrame(&wire.RequestStateChunkHeader{Prefix: x.prefix(0), Nonce: wire.U128{Lo: x.rng.Uint64(), Hi: x.rng.Uint64() | 1},
			Group: wire.MetadataGroup, Offset: 0, Len: 1 + x.rng.Uint32N(1<<16), Artifact: x.rng.Uint32N(2)}, nil)
	}},
	{"a Commit of a stale view", func(x *badCtx) []byte {
		if x.view == 0 {
			return nil
		}
		return wire.BuildFrame(&wire.CommitHeader{Prefix: x.prefix(x.staleView()), TimestampMonotonic: 1 + x.rng.Uint64N(1<<20),
			Commit: x.commit, Group: wire.MetadataGroup}, nil)
	}},
	{"a StartViewChange of a stale view", func(x *badCtx) []byte {
		if x.view == 0 {
			return nil
		}
		return wire.BuildFrame(&wire.StartViewChangeHeader{Prefix: x.prefix(x.staleView()), Group: wire.MetadataGroup}, nil)
	}},
	{"a DoViewChange of a stale view", func(x *badCtx) []byte {
		if x.view == 0 {
			return nil
		}
		v := x.staleView()
		return wire.BuildFrame(&wire.DoViewChangeHeader{Prefix: x.prefix(v), Op: x.op, Commit: x.commit, LogView: x.rng.Uint32N(v + 1),
			Group: wire.MetadataGroup}, nil)
	}},
	{"a StartView of a stale view", func(x *badCtx) []byte {
		if x.view == 0 {
			return nil
		}
		return wire.BuildFrame(&wire.StartViewHeader{Prefix: x.prefix(x.staleView()), Op: x.op, Commit: x.commit, Group: wire.MetadataGroup}, nil)
	}},
	{"a PrepareOk of an op beyond the pipeline", func(x *badCtx) []byte {
		return wire.BuildFrame(&wire.PrepareOkHeader{Prefix: x.prefix(x.view), Op: x.op + 1 + x.rng.Uint64N(1000), Commit: x.commit,
			Timestamp: 1 + x.rng.Uint64N(1<<40), Request: 1, Operation: wire.OperationCreateStream, Group: wire.MetadataGroup,
			PrepareChecksum: wire.U128{Lo: x.rng.Uint64() | 1}}, nil)
	}},
	{"a RequestPrepares of ops beyond the head", func(x *badCtx) []byte {
		from := x.op + 1 + x.rng.Uint64N(64)
		return wire.BuildFrame(&wire.RequestPreparesHeader{Prefix: x.prefix(0), Nonce: wire.U128{Lo: x.rng.Uint64() | 1, Hi: x.rng.Uint64()},
			FromOp: from, ToOp: from + x.rng.Uint64N(64), Group: wire.MetadataGroup}, nil)
	}},
	{"a SendMessages prepare of a group the receiver does not run", func(x *badCtx) []byte {
		// Its batch whole: the receiver's ingress check of the batch
		// (wire.md 7, DEVIATIONS 22) passes it, the routing drops it.
		return x.sendMessagesOf(x.unknownGroup, func([]byte) bool { return false })
	}},
	{"a Commit of a group the receiver does not run", func(x *badCtx) []byte {
		return wire.BuildFrame(&wire.CommitHeader{Prefix: x.prefix(x.rng.Uint32N(8)), TimestampMonotonic: 1 + x.rng.Uint64N(1<<20),
			Commit: x.rng.Uint64N(16), Group: x.unknownGroup}, nil)
	}},
}
