package wirespec_test

import (
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/replica/wire/wiresample"
)

// The two readings of wire.md agree: every replica-plane frame of the
// codec's sample stream passes the checker's own, and its two broken
// frames (a Commit whose seal a bit flip broke, a Pong) do not.
func TestTheCodecsSampleConforms(t *testing.T) {
	frames := wiresample.Frames()
	broken := frames[len(frames)-2:]
	for _, f := range frames[:len(frames)-2] {
		switch f[wirespec.OffCommand] {
		case wirespec.Request, wirespec.Reply, wirespec.Eviction:
			continue // client frames
		}
		p := wirespec.Check(f, f[wirespec.OffReplica], 4)
		if p != nil && !strings.HasSuffix(p.Rule, " nonce") {
			t.Errorf("%s: %v", wirespec.CommandName(f[wirespec.OffCommand]), p)
		}
	}
	for _, f := range broken {
		if p := wirespec.Check(f, f[wirespec.OffReplica], 4); p == nil {
			t.Errorf("the broken %s passes", wirespec.CommandName(f[wirespec.OffCommand]))
		}
	}
}

func reseal(f []byte) []byte {
	wire.HeaderOf(f).SealFrame()
	return f
}

func prepare(t *testing.T, edit func(x *wire.PrepareHeader)) []byte {
	x := wire.PrepareHeader{Prefix: wire.Prefix{Command: wire.CommandPrepare, Replica: 0}, Client: wire.U128{Lo: 7},
		Op: 3, Timestamp: 100, Request: 2, Operation: wire.OperationCreateStream, Group: wire.MetadataGroup}
	if edit != nil {
		edit(&x)
	}
	return wire.BuildFrame(&x, []byte("body"))
}

// Each rule fires on a frame that breaks it, and names itself.
func TestEachRuleFires(t *testing.T) {
	ok := func() []byte {
		x := wire.PrepareOkHeader{Prefix: wire.Prefix{Replica: 1}, Op: 3, Timestamp: 100, Request: 2,
			Operation: wire.OperationCreateStream, Group: wire.MetadataGroup}
		return wire.BuildFrame(&x, nil)
	}
	for _, tc := range []struct {
		name  string
		frame func() []byte
		from  uint8
		rule  string
	}{
		{"a conformant PrepareOk", ok, 1, ""},
		{"a conformant Prepare", func() []byte { return prepare(t, nil) }, 1, ""},
		{"size", func() []byte { f := ok(); return append(f, 0) }, 1, "2 size"},
		{"sender", ok, 2, "2 replica"},
		{"reserved", func() []byte { f := ok(); f[220] = 1; return reseal(f) }, 1, "5.2 reserved"},
		{"seal", func() []byte { f := ok(); f[220] = 1; return f }, 1, "3.2 seal"},
		{"operation", func() []byte { f := ok(); f[192] = 99; return reseal(f) }, 1, "5.2 operation"},
		{"identity", func() []byte { f := prepare(t, nil); f[200] ^= 1; return f }, 1, "3.3 identity"},
		{"prepare's body seal", func() []byte { f := prepare(t, nil); f[len(f)-1] ^= 1; return f }, 1, "3.4 checksum_body"},
		{"op 0", func() []byte { return prepare(t, func(x *wire.PrepareHeader) { x.Op = 0 }) }, 1, "5.1 op"},
		{"a partition operation on the metadata plane", func() []byte {
			return prepare(t, func(x *wire.PrepareHeader) { x.Operation = wire.OperationSendMessages })
		}, 1, "10.1 operation"},
		{"DoViewChange log_view", func() []byte {
			x := wire.DoViewChangeHeader{Prefix: wire.Prefix{View: 2, Replica: 1}, Op: 0, LogView: 3, Group: wire.MetadataGroup}
			return wire.BuildFrame(&x, nil)
		}, 1, "5.5 log_view"},
		{"ForwardRegisterResult Ok without an epoch", func() []byte {
			x := wire.ForwardRegisterResultHeader{Prefix: wire.Prefix{Replica: 1}, Nonce: wire.U128{Lo: 1, Hi: 2}, Client: wire.U128{Lo: 9}}
			return wire.BuildFrame(&x, nil)
		}, 1, "5.16 epoch"},
		{"RequestPrepares from above to", func() []byte {
			x := wire.RequestPreparesHeader{Prefix: wire.Prefix{Replica: 1}, Nonce: wire.U128{Lo: 1}, FromOp: 5, ToOp: 4, Group: wire.MetadataGroup}
			return wire.BuildFrame(&x, nil)
		}, 1, "5.8 range"},
	} {
		p := wirespec.Check(tc.frame(), tc.from, 3)
		switch {
		case tc.rule == "" && p != nil:
			t.Errorf("%s: %v", tc.name, p)
		case tc.rule != "" && (p == nil || p.Rule != tc.rule):
			t.Errorf("%s: %v, want rule %q", tc.name, p, tc.rule)
		}
	}
}

// A stamped batch is checked whole: its messages' checksums tile it, and
// its batch checksum covers the stamped fields.
func TestBatch(t *testing.T) {
	b := wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 5}, []wire.Message{{ID: wire.U128{Lo: 1}, Payload: []byte("hello")}})
	wire.StampBatch(b, 3, 10, 100)
	if p := wirespec.CheckBatch(b, 100); p != nil {
		t.Fatalf("a stamped batch: %v", p)
	}
	if p := wirespec.CheckBatch(b, 101); p == nil || p.Rule != "7.4 base_timestamp" {
		t.Errorf("another prepare's timestamp: %v", p)
	}
	b[wirespec.BatchHeaderSize+48] ^= 1 // the payload
	if p := wirespec.CheckBatch(b, 100); p == nil || p.Rule != "7.2 checksum" {
		t.Errorf("a payload bit flipped: %v", p)
	}
}

// Frames to and from clients: a reason Iggy never emits, a request whose
// checksum is not its body's, and a Register with a session.
func TestClientFrames(t *testing.T) {
	evict := func(reason wire.EvictionReason) []byte {
		x := wire.EvictionHeader{Client: wire.U128{Lo: 3}, Reason: reason}
		return wire.BuildFrame(&x, nil)
	}
	if p := wirespec.CheckToClient(evict(wire.EvictionSessionTooLow)); p != nil {
		t.Errorf("SessionTooLow: %v", p)
	}
	f := evict(wire.EvictionSessionTooLow)
	f[wirespec.OffEvictReason] = 6
	if p := wirespec.CheckToClient(f); p == nil || p.Rule != "client-ops 6.6 reason" {
		t.Errorf("reason 6: %v", p)
	}
	req := func(op wire.Operation, session, request uint64, body []byte) []byte {
		x := wire.RequestHeader{Client: wire.U128{Lo: 3}, Operation: op, Session: session, Request: request, RequestChecksum: wire.BodySeal(body)}
		return wire.BuildFrame(&x, body)
	}
	if p := wirespec.CheckFromClient(req(wire.OperationCreateStream, 4, 1, []byte("s"))); p != nil {
		t.Errorf("CreateStream: %v", p)
	}
	bad := req(wire.OperationCreateStream, 4, 1, []byte("s"))
	bad[len(bad)-1] = 't'
	if p := wirespec.CheckFromClient(bad); p == nil || p.Rule != "5.20 Request request_checksum" {
		t.Errorf("another body: %v", p)
	}
	if p := wirespec.CheckFromClient(req(wire.OperationRegister, 4, 0, nil)); p == nil || p.Rule != "5.20 Request session" {
		t.Errorf("a Register with a session: %v", p)
	}
}
