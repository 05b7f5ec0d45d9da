package wirespec_test

import (
	"encoding/hex"
	"testing"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/replica/wire/wiresample"
)

// Every frame of the codec's sample that replicas send each other passes
// the receiver's rules; its Pong and the Commit whose seal a flip broke do
// not, and neither do the client frames and the handshake on an
// established connection.
func TestReceiveTheSample(t *testing.T) {
	frames := wiresample.Frames()
	for i, f := range frames {
		r := wirespec.Receive(f, 4, 128<<10)
		switch c := f[wirespec.OffCommand]; {
		case i >= len(frames)-2:
			if r == nil {
				t.Errorf("the broken %s passes", wirespec.CommandName(c))
			}
		case c == wirespec.Request || c == wirespec.Reply || c == wirespec.Eviction || c >= wirespec.ReplicaHello && c <= wirespec.ReplicaFinish:
			if r == nil || r.Close {
				t.Errorf("a %s: %v (dropped at dispatch)", wirespec.CommandName(c), r)
			}
		case r != nil:
			t.Errorf("the sample's %s: %v", wirespec.CommandName(c), r)
		}
	}
}

// Each receiver rule fires on a frame that breaks it alone, and says
// whether the connection goes with it.
func TestReceiveRules(t *testing.T) {
	seal := func(f []byte) []byte { wire.HeaderOf(f).SealFrame(); return f }
	commit := func() []byte {
		return wire.BuildFrame(&wire.CommitHeader{Prefix: wire.Prefix{View: 2, Replica: 1}, Commit: 3, Group: wire.MetadataGroup}, nil)
	}
	for _, tc := range []struct {
		name  string
		frame []byte
		rule  string
		close bool
	}{
		{"a Commit", commit(), "", false},
		{"size 100", func() []byte { f := commit(); f[48], f[49] = 100, 0; return seal(f) }(), wirespec.RuleSizeBelowHeader, true},
		{"size above max", func() []byte { f := commit(); f[50] = 0x10; return seal(f) }(), wirespec.RuleSizeAboveMax, true},
		{"command 40", func() []byte { f := commit(); f[60] = 40; return f }(), wirespec.RuleCommandRange, true},
		{"a size that is not the length", func() []byte { f := commit(); f[49] = 2; return seal(f) }(), wirespec.RuleSizeDelimits, true},
		{"a Ping", func() []byte { f := commit(); f[60] = 1; return f }(), wirespec.RuleNoTraffic, false},
		{"a Commit of a body", seal(append(commit(), make([]byte, 256)...)), "", false}, // size is the field: resealed below
		{"a Commit sealed wrong", func() []byte { f := commit(); f[200] = 1; return f }(), wirespec.RuleSeal, false},
		{"replica 3 of 3", func() []byte { f := commit(); f[61] = 3; return seal(f) }(), wirespec.RuleReplicaRange, false},
		{"from_op 0", wire.BuildFrame(&wire.RequestPreparesHeader{Nonce: wire.U128{Lo: 1}, ToOp: 2, Group: wire.MetadataGroup}, nil),
			wirespec.RuleFromOp, false},
		{"a refusing StateTransferTarget with a body", wire.BuildFrame(&wire.StateTransferTargetHeader{Nonce: wire.U128{Lo: 1}}, []byte("x")),
			wirespec.RuleRefusalBody, false},
	} {
		f := tc.frame
		if tc.name == "a Commit of a body" {
			f[48], f[49] = 0, 2 // size 512, the frame's length
			seal(f)
			tc.rule = wirespec.RuleHeaderOnly
		}
		r := wirespec.Receive(f, 3, 128<<10)
		switch {
		case tc.rule == "" && r != nil:
			t.Errorf("%s: %v", tc.name, r)
		case tc.rule != "" && (r == nil || r.Rule != tc.rule || r.Close != tc.close):
			t.Errorf("%s: %+v, want %q (close %v)", tc.name, r, tc.rule, tc.close)
		}
	}
}

// GroupOf reads the group at each command's own offset.
func TestGroupOf(t *testing.T) {
	const g = 0x0005_0020_0007
	for _, x := range []wire.Typed{
		&wire.CommitHeader{Group: g}, &wire.PrepareOkHeader{Group: g, Operation: wire.OperationSendMessages},
		&wire.StartViewChangeHeader{Group: g}, &wire.DoViewChangeHeader{Group: g}, &wire.StartViewHeader{Group: g},
		&wire.RequestStartViewHeader{Group: g}, &wire.RequestPreparesHeader{Group: g, FromOp: 1, ToOp: 1},
		&wire.RequestStateTransferHeader{Group: g}, &wire.StateTransferTargetHeader{Group: g},
		&wire.RequestStateChunkHeader{Group: g, Len: 1}, &wire.StateChunkHeader{Group: g},
	} {
		f := wire.BuildFrame(x, nil)
		if got, ok := wirespec.GroupOf(f); !ok || got != g {
			t.Errorf("%s: group %#x, %v", wirespec.CommandName(f[wirespec.OffCommand]), got, ok)
		}
	}
	f := wire.BuildFrame(&wire.ForwardRegisterHeader{Client: wire.U128{Lo: 1}, Nonce: wire.U128{Lo: 1}}, nil)
	if _, ok := wirespec.GroupOf(f); ok {
		t.Error("a ForwardRegister names a group")
	}
}

// The checker's own MAC reproduces wire.md 12.B's B3 vectors (Iggy's
// auth.rs transcript: secret 0123456789abcdef0123456789abcdef, cluster
// 0xDEADBEEF, dialer 3, acceptor 1, nonces 11 x 32 and 22 x 32, plaintext).
func TestMACVectorB3(t *testing.T) {
	key := wirespec.MACKey([]byte("0123456789abcdef0123456789abcdef"))
	if got := hex.EncodeToString(key[:]); got != "39ec545024b097198cbf082b239525e97c0da3a60f3a18fd29f7d169de6a54be" {
		t.Fatalf("mac_key %s", got)
	}
	tr := wirespec.Transcript{Cluster: wirespec.U128{Lo: 0xDEADBEEF}, Dialer: 3, Acceptor: 1}
	for i := range tr.NonceD {
		tr.NonceD[i], tr.NonceA[i] = 0x11, 0x22
	}
	for _, tc := range []struct {
		dir  byte
		want string
	}{
		{wirespec.MACAcceptor, "d01fab02794764b228d1817948d0b60c24739807a19b3da9023a8082c3d5e0ee"},
		{wirespec.MACDialer, "58437a3a453354283bb2522096dc7a5e2091051961bf28a6d6022bc7b950b92f"},
	} {
		mac := tr.MAC(key, tc.dir)
		if got := hex.EncodeToString(mac[:]); got != tc.want {
			t.Errorf("direction %d: %s, want %s", tc.dir, got, tc.want)
		}
		if !tr.Verifies(mac, tc.dir, [][]byte{[]byte("another secret of thirty-two bytes"), []byte("0123456789abcdef0123456789abcdef")}) ||
			tr.Verifies(mac, tc.dir, [][]byte{[]byte("another secret of thirty-two bytes")}) {
			t.Errorf("direction %d: Verifies", tc.dir)
		}
	}
}
