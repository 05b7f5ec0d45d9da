package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica/wire"
)

func refusalsChecker() *checker.Checker {
	c := checker.New(3)
	c.SetFrameSizeMax(128 << 10)
	return c
}

func goodCommit() []byte {
	return wire.BuildFrame(&wire.CommitHeader{Prefix: wire.Prefix{View: 3, Replica: 0}, TimestampMonotonic: 4, Commit: 9,
		Group: wire.MetadataGroup}, nil)
}

// A RequestPrepares from op 0, sealed: it breaks 5.8 (from_op >= 1) only.
func fromOpZero() []byte {
	return wire.BuildFrame(&wire.RequestPreparesHeader{Prefix: wire.Prefix{Replica: 0}, Nonce: wire.U128{Lo: 5}, FromOp: 0, ToOp: 4,
		Group: wire.MetadataGroup}, nil)
}

// A Commit of command 30: it breaks a framing rule (1.1).
func commandThirty() []byte {
	f := goodCommit()
	f[60] = 30 // the seal does not matter: framing comes first
	return f
}

// Each refusal check fires on the receipt that breaks it, with its name,
// and passes the receipt of a correct receiver.
func TestRefusals(t *testing.T) {
	refused := func(rule wire.Rule) checker.Receipt { return checker.Receipt{Counted: true, WireRule: rule} }
	for _, tc := range []struct {
		name     string
		frame    []byte
		injected bool
		r        checker.Receipt
		want     string
	}{
		{"a good frame passed on", goodCommit(), false, checker.Receipt{Counted: true, Delivered: true, GroupRun: true}, ""},
		{"a good frame refused", goodCommit(), false, refused(wire.ErrSealMismatch), checker.ValidFrameRefused},
		{"a good frame dropped as of an unknown group", goodCommit(), false,
			checker.Receipt{Counted: true, Delivered: true, GroupRun: true, Probes: []string{checker.UnknownGroupProbe}}, checker.FrameMisrouted},
		{"a frame on a connection in its handshake", fromOpZero(), true, checker.Receipt{Delivered: true}, ""},
		{"from_op 0 refused by its rule", fromOpZero(), true, refused(wire.ErrFromOpZero), ""},
		{"from_op 0 passed on", fromOpZero(), true, checker.Receipt{Counted: true, Delivered: true, GroupRun: true}, checker.InvalidFrameAccepted},
		{"from_op 0 refused by another rule", fromOpZero(), true, refused(wire.ErrFromOpAboveToOp), checker.RefusedByAnotherRule},
		{"from_op 0 refused with the connection", fromOpZero(), true,
			checker.Receipt{Counted: true, WireRule: wire.ErrFromOpZero, Closed: true}, checker.RefusalConnection},
		{"from_op 0 refused, and a frame sent", fromOpZero(), true,
			checker.Receipt{Counted: true, WireRule: wire.ErrFromOpZero, Sends: 1}, checker.RefusedFrameActed},
		{"from_op 0 refused, and a status changed", fromOpZero(), true,
			checker.Receipt{Counted: true, WireRule: wire.ErrFromOpZero, Events: []string{"group status"}}, checker.RefusedFrameActed},
		{"command 30 closes", commandThirty(), true, checker.Receipt{Counted: true, WireRule: wire.ErrCommandUnknown, Closed: true}, ""},
		{"command 30 kept the connection", commandThirty(), true, refused(wire.ErrNotReplicaPlane), checker.RefusalConnection},
		{"a flipped bit refused by any rule", func() []byte { f := goodCommit(); f[140] ^= 1; return f }(), false, refused(wire.ErrSealMismatch), ""},
		{"a flipped bit passed on", func() []byte { f := goodCommit(); f[140] ^= 1; return f }(), false,
			checker.Receipt{Counted: true, Delivered: true}, checker.InvalidFrameAccepted},
	} {
		c := refusalsChecker()
		c.PeerFrame(1, 0, 1, tc.frame, tc.injected, tc.r)
		wantNamed(t, tc.name, c.Violation(), tc.want)
	}
}

// A void frame (wire-valid, void by the protocol) that changed state is
// named; a chunk request of an offer never made must get wire.md 5.12's
// transient refusal; a panic on a frame the rules refuse is named for it.
func TestVoidFramesAndPanics(t *testing.T) {
	chunk := wire.BuildFrame(&wire.RequestStateChunkHeader{Prefix: wire.Prefix{Replica: 0}, Nonce: wire.U128{Lo: 77}, Group: wire.MetadataGroup, Len: 9}, nil)
	refusal := func(transient uint8) []byte {
		return wire.BuildFrame(&wire.StateTransferTargetHeader{Prefix: wire.Prefix{Replica: 1}, Nonce: wire.U128{Lo: 77}, Group: wire.MetadataGroup,
			UnavailableTransient: transient}, nil)
	}
	delivered := func(answers ...[]byte) checker.Receipt {
		return checker.Receipt{Counted: true, Delivered: true, GroupRun: true, Answers: answers}
	}
	for _, tc := range []struct {
		name string
		r    checker.Receipt
		want string
	}{
		{"refused transiently", delivered(refusal(1)), ""},
		{"refused for good", delivered(refusal(0)), checker.VoidFrameAnsweredWrong},
		{"not answered", delivered(), checker.VoidFrameAnsweredWrong},
		{"a status changed", checker.Receipt{Counted: true, Delivered: true, GroupRun: true, Events: []string{"group status"}, Answers: [][]byte{refusal(1)}},
			checker.InvalidFrameIgnoredActed},
	} {
		c := refusalsChecker()
		c.Injecting(0, 1, chunk)
		c.PeerFrame(1, 0, 1, chunk, true, tc.r)
		wantNamed(t, tc.name, c.Violation(), tc.want)
	}
	c := refusalsChecker()
	c.PeerFramePanicked(1, 0, 1, goodCommit(), nil, "boom")
	if v := c.Violation(); v != nil {
		t.Fatalf("a panic on a valid frame named: %v", v)
	}
	c.PeerFramePanicked(1, 0, 1, fromOpZero(), nil, "boom")
	if v := c.Violation(); v == nil || v.Name != checker.FrameCrashed {
		t.Fatalf("a panic on from_op 0: %v", v)
	}
}

// wantNamed fails the test case name unless v is the violation want names
// (none where want is empty).
func wantNamed(t *testing.T, name string, v *checker.Violation, want string) {
	t.Helper()
	switch {
	case want == "" && v != nil:
		t.Errorf("%s: %v", name, v)
	case want != "" && (v == nil || v.Name != want):
		t.Errorf("%s: %v, want %q", name, v, want)
	}
}
