package wiresample

import (
	"bytes"
	"errors"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

func TestSampleFramesValidate(t *testing.T) {
	frames := Frames()
	seen := map[wire.Command]bool{}
	for i, f := range frames[:len(frames)-2] {
		if err := wire.Validate(f); err != nil {
			t.Errorf("frame %d (%v): %v", i, wire.HeaderOf(f).Command(), err)
		}
		seen[wire.HeaderOf(f).Command()] = true
	}
	for c := wire.CommandRequest; c <= wire.CommandMax; c++ {
		if !seen[c] {
			t.Errorf("the sample has no %v frame", c)
		}
	}
	if err := wire.Validate(frames[len(frames)-2]); !errors.Is(err, wire.ErrSealMismatch) {
		t.Errorf("broken commit: %v", err)
	}
	if err := wire.Validate(frames[len(frames)-1]); !errors.Is(err, wire.ErrNotReplicaPlane) {
		t.Errorf("pong: %v", err)
	}
}

func TestSampleIsDeterministic(t *testing.T) {
	if !bytes.Equal(Stream(), Stream()) {
		t.Fatal("two calls built different streams")
	}
}

func TestSampleHandshakeVerifies(t *testing.T) {
	frames := Frames()
	var hello, challenge, finish wire.HandshakeHeader
	hello.Decode(wire.HeaderOf(frames[0]))
	challenge.Decode(wire.HeaderOf(frames[1]))
	finish.Decode(wire.HeaderOf(frames[2]))
	tr := wire.Transcript{Cluster: hello.Cluster, Dialer: hello.Replica, Acceptor: challenge.Replica,
		NonceD: hello.Nonce, NonceA: challenge.Nonce}
	key := wire.DeriveMACKey([]byte(Secret))
	if !tr.VerifyMAC(challenge.MAC, wire.MACAcceptor, key, nil) {
		t.Error("challenge MAC does not verify")
	}
	if !tr.VerifyMAC(finish.MAC, wire.MACDialer, key, nil) {
		t.Error("finish MAC does not verify")
	}
	if tr.VerifyMAC(finish.MAC, wire.MACAcceptor, key, nil) {
		t.Error("a dialer MAC verified as the acceptor's (reflection)")
	}
}
