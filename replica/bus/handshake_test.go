package bus

import (
	"bytes"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// sentCommands lists the commands node sent, in order, from the network log.
func sentCommands(n *fakeNet, node uint8) []string {
	var out []string
	prefix := string(rune('0'+node)) + " send "
	for _, l := range n.log {
		if strings.HasPrefix(l, prefix) {
			out = append(out, strings.Fields(l)[3])
		}
	}
	return out
}

func wantFailures(t *testing.T, got [HandshakeFailureCount]uint64, want map[HandshakeFailure]uint64) {
	t.Helper()
	for f := range HandshakeFailureCount {
		if got[f] != want[f] {
			t.Errorf("%v failures: got %d, want %d", f, got[f], want[f])
		}
	}
}

func TestHandshakeAuthOff(t *testing.T) {
	c := newCluster(t)
	b0 := c.add(testConfig(0, 2), 1)
	b1 := c.add(testConfig(1, 2), 2)
	c.tick(1)
	if !b0.Established(1) || !b1.Established(0) {
		t.Fatalf("not established: %v %v", b0.Established(1), b1.Established(0))
	}
	// The dialer sent one Hello with a zero nonce; the acceptor sent nothing.
	if got := sentCommands(c.n, 0); len(got) != 1 || got[0] != "ReplicaHello" {
		t.Fatalf("dialer sent %v", got)
	}
	if got := sentCommands(c.n, 1); len(got) != 0 {
		t.Fatalf("acceptor sent %v", got)
	}
	// The connection carries consensus traffic both ways.
	f0, f1 := commit(0, 7), commit(1, 8)
	if !b0.Send(1, f0) || !b1.Send(0, f1) {
		t.Fatal("send refused")
	}
	c.n.run()
	if len(c.sinks[1].got) != 1 || !bytes.Equal(c.sinks[1].got[0].frame, f0) || c.sinks[1].got[0].peer != 0 {
		t.Fatalf("replica 1 got %v", c.sinks[1].got)
	}
	if len(c.sinks[0].got) != 1 || !bytes.Equal(c.sinks[0].got[0].frame, f1) || c.sinks[0].got[0].peer != 1 {
		t.Fatalf("replica 0 got %v", c.sinks[0].got)
	}
	s0, s1 := b0.Stats(), b1.Stats()
	if s0.Peers[1].HandshakesOK != 1 || s1.Peers[0].HandshakesOK != 1 || s0.Peers[1].Dials != 1 {
		t.Fatalf("stats %+v %+v", s0.Peers[1], s1.Peers[0])
	}
	if len(c.n.openConns()) != 1 {
		t.Fatalf("%d connections", len(c.n.openConns()))
	}
}

func TestHandshakeAuthOnWireBytes(t *testing.T) {
	n := newFakeNet(t)
	r := n.addRogue(1) // the acceptor, played by hand
	s := &sink{t: t}
	b := New(authConfig(0, 2), n.port(0), rngFor(5), s)
	s.b = b
	n.nodes[0] = b
	b.Tick()
	n.run()
	if len(r.accepted) != 1 {
		t.Fatal("no dial")
	}
	cid := r.accepted[0]
	hello := decodeHS(t, r.frames[cid][0])
	raw := r.frames[cid][0]
	if hello.Command != wire.CommandReplicaHello || hello.Cluster != testCluster || hello.Replica != 0 ||
		hello.Nonce.IsZero() || !hello.MAC.IsZero() || hello.Status != 0 || hello.Checksum != (wire.U128{}) ||
		hello.ChecksumBody != (wire.U128{}) || hello.Size != 256 || hello.View != 0 || hello.Release != 0 {
		t.Fatalf("hello %+v", hello)
	}
	for i := 62; i < 128; i++ {
		if raw[i] != 0 {
			t.Fatalf("hello byte %d = %d", i, raw[i])
		}
	}
	if b.Established(1) {
		t.Fatal("auth-on dialer established before the Challenge")
	}
	// A correct Challenge: the dialer verifies it and answers with Finish.
	key := wire.DeriveMACKey(secretOld)
	tr := wire.Transcript{Cluster: testCluster, Dialer: 0, Acceptor: 1, NonceD: hello.Nonce, NonceA: someNonce(9)}
	r.send(cid, handshakeFrame(wire.CommandReplicaChallenge, testCluster, 1, tr.NonceA, tr.MAC(key, wire.MACAcceptor), 0))
	n.run()
	if !b.Established(1) {
		t.Fatal("not established after the Challenge")
	}
	fin := decodeHS(t, r.frames[cid][1])
	if fin.Command != wire.CommandReplicaFinish || fin.Replica != 0 || fin.Cluster != testCluster ||
		!fin.Nonce.IsZero() || fin.Status != 0 || fin.MAC != tr.MAC(key, wire.MACDialer) {
		t.Fatalf("finish %+v", fin)
	}
	if err := b.checkInvariants(); err != nil {
		t.Fatal(err)
	}
}

func TestHandshakeAuthOnAcceptorWireBytes(t *testing.T) {
	n := newFakeNet(t)
	r := n.addRogue(0) // the dialer, played by hand
	s := &sink{t: t}
	b := New(authConfig(1, 2), n.port(1), rngFor(5), s)
	s.b = b
	n.nodes[1] = b
	cid := r.dial(1)
	n.run()
	nonceD := someNonce(3)
	r.send(cid, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, nonceD, wire.Bytes32{}, 0))
	n.run()
	ch := decodeHS(t, r.frames[cid][0])
	key := wire.DeriveMACKey(secretOld)
	tr := wire.Transcript{Cluster: testCluster, Dialer: 0, Acceptor: 1, NonceD: nonceD, NonceA: ch.Nonce}
	if ch.Command != wire.CommandReplicaChallenge || ch.Status != 0 || ch.Replica != 1 || ch.Cluster != testCluster ||
		ch.Nonce.IsZero() || ch.MAC != tr.MAC(key, wire.MACAcceptor) {
		t.Fatalf("challenge %+v", ch)
	}
	if b.Established(0) {
		t.Fatal("established before the Finish")
	}
	r.send(cid, handshakeFrame(wire.CommandReplicaFinish, testCluster, 0, wire.Bytes32{}, tr.MAC(key, wire.MACDialer), 0))
	n.run()
	if !b.Established(0) {
		t.Fatal("not established after the Finish")
	}
	// Consensus frames may follow the Finish at once.
	r.send(cid, commit(0, 1))
	n.run()
	if len(s.got) != 1 {
		t.Fatalf("%d deliveries", len(s.got))
	}
}

func TestHandshakeAuthOn(t *testing.T) {
	c := newCluster(t)
	b0 := c.add(authConfig(0, 2), 1)
	b1 := c.add(authConfig(1, 2), 2)
	c.tick(1)
	if !b0.Established(1) || !b1.Established(0) {
		t.Fatal("not established")
	}
	want := []string{"ReplicaHello", "ReplicaFinish"}
	if got := sentCommands(c.n, 0); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("dialer sent %v", got)
	}
	if got := sentCommands(c.n, 1); len(got) != 1 || got[0] != "ReplicaChallenge" {
		t.Fatalf("acceptor sent %v", got)
	}
	b1.Send(0, commit(1, 3))
	c.n.run()
	if len(c.sinks[0].got) != 1 {
		t.Fatal("no delivery")
	}
}

func TestHandshakeTLSBinding(t *testing.T) {
	for _, mitm := range []bool{false, true} {
		c := newCluster(t)
		c.n.mitm = mitm
		cfg0, cfg1 := authConfig(0, 2), authConfig(1, 2)
		cfg0.TLS, cfg1.TLS = true, true
		b0, b1 := c.add(cfg0, 1), c.add(cfg1, 2)
		c.tick(1)
		if got := b0.Established(1) && b1.Established(0); got == mitm {
			t.Fatalf("mitm %v: established %v", mitm, got)
		}
		if mitm {
			wantFailures(t, b0.Stats().Peers[1].HandshakeFailures, map[HandshakeFailure]uint64{FailMACMismatch: 1})
		}
	}
	// Plaintext and TLS MACs differ: a TLS dialer cannot pass a plaintext acceptor.
	c := newCluster(t)
	cfg0 := authConfig(0, 2)
	cfg0.TLS = true
	b0, b1 := c.add(cfg0, 1), c.add(authConfig(1, 2), 2)
	c.tick(1)
	if b0.Established(1) || b1.Established(0) {
		t.Fatal("TLS and plaintext MACs interoperate")
	}
}

// TestHandshakeRotation runs the handshake between every pair of key
// configurations a rolling rotation passes through (wire.md 6.7: shared=old
// previous=new; shared=new previous=old; shared=new), in both dial
// directions, plus pairs a correct rotation never produces.
func TestHandshakeRotation(t *testing.T) {
	type keys struct{ cur, prev []byte }
	var (
		step0 = keys{secretOld, nil}
		step1 = keys{secretOld, secretNew}
		step2 = keys{secretNew, secretOld}
		step3 = keys{secretNew, nil}
	)
	cases := []struct {
		name             string
		dialer, acceptor keys
		ok               bool
		// for failures: which side detects the bad MAC
		dialerFails bool
	}{
		{"step0-step1", step0, step1, true, false},
		{"step1-step0", step1, step0, true, false},
		{"step1-step2 (dialer old, acceptor new)", step1, step2, true, false},
		{"step2-step1 (dialer new, acceptor old with new as previous)", step2, step1, true, false},
		{"step2-step3", step2, step3, true, false},
		{"step3-step2", step3, step2, true, false},
		{"step2-step2", step2, step2, true, false},
		// Not reachable in a correct roll: one side's signing key is unknown to the other.
		{"step3-step1: acceptor signs old, dialer knows only new", step3, step1, false, true},
		{"step0-step2: dialer signs old, acceptor verifies it but dialer cannot verify new", step0, step2, false, true},
		{"step1-step3: acceptor signs new (dialer verifies), dialer signs old", step1, step3, false, false},
		{"step0-step3", step0, step3, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t)
			cfg0, cfg1 := authConfig(0, 2), authConfig(1, 2)
			cfg0.Secret, cfg0.PreviousSecret = tc.dialer.cur, tc.dialer.prev
			cfg1.Secret, cfg1.PreviousSecret = tc.acceptor.cur, tc.acceptor.prev
			b0, b1 := c.add(cfg0, 1), c.add(cfg1, 2)
			c.tick(1)
			if tc.ok {
				if !b0.Established(1) || !b1.Established(0) {
					t.Fatal("not established")
				}
				return
			}
			if b0.Established(1) || b1.Established(0) {
				t.Fatal("established with keys that do not match")
			}
			s0, s1 := b0.Stats(), b1.Stats()
			if tc.dialerFails {
				wantFailures(t, s0.Peers[1].HandshakeFailures, map[HandshakeFailure]uint64{FailMACMismatch: 1})
				wantFailures(t, s1.Peers[0].HandshakeFailures, map[HandshakeFailure]uint64{FailClosed: 1})
			} else {
				// The dialer verified the Challenge, sent its Finish and
				// considered the connection established; the acceptor
				// rejected the Finish and closed it.
				wantFailures(t, s1.Peers[0].HandshakeFailures, map[HandshakeFailure]uint64{FailMACMismatch: 1})
				if s0.Peers[1].HandshakesOK != 1 || s0.Peers[1].ConnectionsClosed != 1 {
					t.Fatalf("dialer stats %+v", s0.Peers[1])
				}
			}
		})
	}
}

func TestHandshakeWrongSecret(t *testing.T) {
	c := newCluster(t)
	cfg1 := authConfig(1, 2)
	cfg1.Secret = secretOther
	b0, b1 := c.add(authConfig(0, 2), 1), c.add(cfg1, 2)
	c.tick(1)
	if b0.Established(1) || b1.Established(0) || len(c.n.openConns()) != 0 {
		t.Fatal("connected with the wrong secret")
	}
	wantFailures(t, b0.Stats().Peers[1].HandshakeFailures, map[HandshakeFailure]uint64{FailMACMismatch: 1})
	wantFailures(t, b1.Stats().Peers[0].HandshakeFailures, map[HandshakeFailure]uint64{FailClosed: 1})
	// The dialer never sent a Finish.
	if got := sentCommands(c.n, 0); len(got) != 1 {
		t.Fatalf("dialer sent %v", got)
	}
	// The sweep retries, and fails again the same way.
	c.tick(ReconnectTicksDefault)
	wantFailures(t, b0.Stats().Peers[1].HandshakeFailures, map[HandshakeFailure]uint64{FailMACMismatch: 2})
}

func TestHandshakeBadFinishMAC(t *testing.T) {
	n := newFakeNet(t)
	r := n.addRogue(0)
	s := &sink{t: t}
	b := New(authConfig(1, 2), n.port(1), rngFor(5), s)
	s.b = b
	n.nodes[1] = b
	cid := r.dial(1)
	n.run()
	r.send(cid, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, someNonce(1), wire.Bytes32{}, 0))
	n.run()
	ch := decodeHS(t, r.frames[cid][0])
	// The dialer's MAC under the wrong direction (a reflected acceptor MAC).
	tr := wire.Transcript{Cluster: testCluster, Dialer: 0, Acceptor: 1, NonceD: someNonce(1), NonceA: ch.Nonce}
	r.send(cid, handshakeFrame(wire.CommandReplicaFinish, testCluster, 0, wire.Bytes32{},
		tr.MAC(wire.DeriveMACKey(secretOld), wire.MACAcceptor), 0))
	n.run()
	if b.Established(0) || !r.closed[cid] || len(r.frames[cid]) != 1 {
		t.Fatalf("established %v closed %v frames %d", b.Established(0), r.closed[cid], len(r.frames[cid]))
	}
	wantFailures(t, b.Stats().Peers[0].HandshakeFailures, map[HandshakeFailure]uint64{FailMACMismatch: 1})
}

func TestHandshakeClusterMismatch(t *testing.T) {
	other := wire.ClusterID("another-cluster")
	for _, auth := range []bool{false, true} {
		c := newCluster(t)
		cfg0, cfg1 := testConfig(0, 2), testConfig(1, 2)
		if auth {
			cfg0, cfg1 = authConfig(0, 2), authConfig(1, 2)
		}
		cfg0.Cluster = other
		b0, b1 := c.add(cfg0, 1), c.add(cfg1, 2)
		c.tick(1)
		if b1.Established(0) || b0.Established(1) {
			t.Fatalf("auth %v: established across clusters", auth)
		}
		acceptorSent := sentCommands(c.n, 1)
		if auth {
			// A reject Challenge with status 2, our cluster and replica, zero nonce and MAC.
			if len(acceptorSent) != 1 {
				t.Fatalf("acceptor sent %v", acceptorSent)
			}
			wantFailures(t, b0.Stats().Peers[1].HandshakeFailures,
				map[HandshakeFailure]uint64{FailRejectedClusterMismatch: 1})
		} else {
			// Silent close: the auth-off dialer was established after its
			// Hello, then saw the connection close.
			if len(acceptorSent) != 0 {
				t.Fatalf("acceptor sent %v", acceptorSent)
			}
			if s := b0.Stats().Peers[1]; s.HandshakesOK != 1 || s.ConnectionsClosed != 1 {
				t.Fatalf("dialer stats %+v", s)
			}
		}
		s1 := b1.Stats()
		wantFailures(t, s1.HandshakeFailuresAnonymous, map[HandshakeFailure]uint64{FailClusterMismatch: 1})
		wantFailures(t, s1.Peers[0].HandshakeFailures, nil)
	}
}

// acceptorWithRogue returns a bus for replica self of count and a rogue
// playing replica rogueID with a connection to it.
func acceptorWithRogue(t *testing.T, cfg Config, rogueID uint8) (*fakeNet, *Bus, *rogue, ConnID) {
	n := newFakeNet(t)
	r := n.addRogue(rogueID)
	s := &sink{t: t}
	b := New(cfg, n.port(cfg.Replica), rngFor(5), s)
	s.b = b
	n.nodes[cfg.Replica] = b
	cid := r.dial(cfg.Replica)
	n.run()
	return n, b, r, cid
}

func TestHandshakeRejectChallengeFrame(t *testing.T) {
	n, b, r, cid := acceptorWithRogue(t, authConfig(1, 3), 0)
	other := wire.ClusterID("another-cluster")
	r.send(cid, handshakeFrame(wire.CommandReplicaHello, other, 0, someNonce(1), wire.Bytes32{}, 0))
	n.run()
	if len(r.frames[cid]) != 1 || !r.closed[cid] {
		t.Fatalf("frames %d closed %v", len(r.frames[cid]), r.closed[cid])
	}
	raw := r.frames[cid][0]
	ch := decodeHS(t, raw)
	if ch.Command != wire.CommandReplicaChallenge || ch.Status != wire.HandshakeClusterMismatch ||
		ch.Cluster != testCluster || ch.Replica != 1 || !ch.Nonce.IsZero() || !ch.MAC.IsZero() {
		t.Fatalf("reject %+v", ch)
	}
	for i, v := range raw[193:] {
		if v != 0 {
			t.Fatalf("byte %d = %d", 193+i, v)
		}
	}
	if b.checkInvariants() != nil || len(b.conns) != 0 {
		t.Fatal("connection kept")
	}
}

func TestHandshakeDirectionalRule(t *testing.T) {
	// Replica 2 of 4 accepts only from 0 and 1.
	for _, tc := range []struct {
		hello    uint8 // the id the Hello announces
		auth     bool
		peerStat bool // counted under that peer (a real peer of ours)
	}{
		{2, true, false}, {3, true, true}, {4, true, false}, {200, true, false},
		{2, false, false}, {3, false, true}, {31, false, false},
	} {
		cfg := testConfig(2, 4)
		if tc.auth {
			cfg = authConfig(2, 4)
		}
		n, b, r, cid := acceptorWithRogue(t, cfg, 0)
		nonce := wire.Bytes32{}
		if tc.auth {
			nonce = someNonce(1)
		}
		r.send(cid, handshakeFrame(wire.CommandReplicaHello, testCluster, tc.hello, nonce, wire.Bytes32{}, 0))
		n.run()
		if !r.closed[cid] {
			t.Fatalf("%+v: not closed", tc)
		}
		if tc.auth {
			if len(r.frames[cid]) != 1 || decodeHS(t, r.frames[cid][0]).Status != wire.HandshakeDirectionalRule {
				t.Fatalf("%+v: frames %v", tc, r.frames[cid])
			}
		} else if len(r.frames[cid]) != 0 {
			t.Fatalf("%+v: auth-off acceptor replied", tc)
		}
		s := b.Stats()
		total := s.HandshakeFailures()
		if total[FailDirectionalRule] != 1 {
			t.Fatalf("%+v: failures %v", tc, total)
		}
		if tc.peerStat && s.Peers[tc.hello].HandshakeFailures[FailDirectionalRule] != 1 {
			t.Fatalf("%+v: not counted under peer %d", tc, tc.hello)
		}
		if err := b.checkInvariants(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHandshakeDirectionalRuleBetweenBuses(t *testing.T) {
	// A real higher replica (2) dialing replica 1 breaks the rule: status 3,
	// counted under peer 2.
	n, b, r, cid := acceptorWithRogue(t, authConfig(1, 3), 2)
	r.send(cid, handshakeFrame(wire.CommandReplicaHello, testCluster, 2, someNonce(4), wire.Bytes32{}, 0))
	n.run()
	if decodeHS(t, r.frames[cid][0]).Status != wire.HandshakeDirectionalRule {
		t.Fatal("no status 3")
	}
	if b.Stats().Peers[2].HandshakeFailures[FailDirectionalRule] != 1 {
		t.Fatal("not counted")
	}
}

func TestHandshakeFirstFrameNotHello(t *testing.T) {
	cm := commit(0, 0) // bytes 128..160: commit checksum, timestamp, commit: all zero here
	withNonce := commit(0, 1)
	withNonce[150] = 1 // make bytes 128..160 nonzero; framing only looks at size and command
	finish := handshakeFrame(wire.CommandReplicaFinish, testCluster, 0, wire.Bytes32{}, someNonce(2), 0)
	finishNonce := handshakeFrame(wire.CommandReplicaFinish, testCluster, 0, someNonce(2), someNonce(2), 0)
	for _, tc := range []struct {
		name  string
		frame []byte
		auth  bool
		reply bool
	}{
		{"commit, auth, no nonce", cm, true, false},
		{"commit, auth, nonce region set", withNonce, true, true},
		{"finish, auth, zero nonce", finish, true, false},
		{"finish, auth, nonce", finishNonce, true, true},
		{"commit, auth off", withNonce, false, false},
	} {
		cfg := testConfig(1, 2)
		if tc.auth {
			cfg = authConfig(1, 2)
		}
		n, b, r, cid := acceptorWithRogue(t, cfg, 0)
		r.send(cid, tc.frame)
		n.run()
		if !r.closed[cid] {
			t.Fatalf("%s: not closed", tc.name)
		}
		if got := len(r.frames[cid]) == 1; got != tc.reply {
			t.Fatalf("%s: replied %v", tc.name, got)
		}
		if tc.reply && decodeHS(t, r.frames[cid][0]).Status != wire.HandshakeUnknownCommand {
			t.Fatalf("%s: status %d", tc.name, decodeHS(t, r.frames[cid][0]).Status)
		}
		wantFailures(t, b.Stats().HandshakeFailuresAnonymous, map[HandshakeFailure]uint64{FailUnknownCommand: 1})
		if len(b.conns) != 0 {
			t.Fatal("connection kept")
		}
	}
}

func TestHandshakeHelloWithoutNonce(t *testing.T) {
	n, b, r, cid := acceptorWithRogue(t, authConfig(1, 2), 0)
	r.send(cid, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, wire.Bytes32{}, wire.Bytes32{}, 0))
	n.run()
	if !r.closed[cid] || len(r.frames[cid]) != 0 || b.Established(0) {
		t.Fatalf("closed %v frames %d", r.closed[cid], len(r.frames[cid]))
	}
	wantFailures(t, b.Stats().Peers[0].HandshakeFailures, map[HandshakeFailure]uint64{FailAuthRequired: 1})
}

func TestHandshakeHelloWithBody(t *testing.T) {
	// A Hello is read as any size (wire.md 4): a body does not fail it.
	n, b, r, cid := acceptorWithRogue(t, testConfig(1, 2), 0)
	r.send(cid, wire.BuildFrame(&wire.HandshakeHeader{Prefix: wire.Prefix{Cluster: testCluster,
		Command: wire.CommandReplicaHello, Replica: 0}}, []byte("body")))
	n.run()
	if !b.Established(0) {
		t.Fatal("hello with a body rejected")
	}
}

func TestHandshakeFramingErrorCloses(t *testing.T) {
	bad := commit(0, 1)
	bad[60] = 30 // command outside the registry
	tooBig := make([]byte, 2048)
	copy(tooBig, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, someNonce(1), wire.Bytes32{}, 0))
	wire.HeaderOf(tooBig).SetSize(2048)
	for _, frame := range [][]byte{bad, tooBig} {
		cfg := authConfig(1, 2)
		cfg.FrameSizeMax = 1024
		n, b, r, cid := acceptorWithRogue(t, cfg, 0)
		r.send(cid, frame)
		n.run()
		if !r.closed[cid] || len(r.frames[cid]) != 0 {
			t.Fatal("framing error did not close silently")
		}
		wantFailures(t, b.Stats().HandshakeFailuresAnonymous, map[HandshakeFailure]uint64{FailFraming: 1})
	}
}

func TestHandshakeFinishNotFinish(t *testing.T) {
	n, b, r, cid := acceptorWithRogue(t, authConfig(1, 2), 0)
	r.send(cid, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, someNonce(1), wire.Bytes32{}, 0))
	r.send(cid, commit(0, 1)) // consensus traffic before the Finish
	n.run()
	if !r.closed[cid] || len(r.frames[cid]) != 1 || b.Established(0) {
		t.Fatal("non-Finish accepted")
	}
	wantFailures(t, b.Stats().Peers[0].HandshakeFailures, map[HandshakeFailure]uint64{FailUnexpectedCommand: 1})
}

// dialerWithRogue returns a bus for replica 0 of 2 that has dialed a rogue
// acceptor playing replica 1, and the Hello it received.
func dialerWithRogue(t *testing.T, cfg Config) (*fakeNet, *Bus, *rogue, ConnID, wire.HandshakeHeader) {
	n := newFakeNet(t)
	r := n.addRogue(1)
	s := &sink{t: t}
	b := New(cfg, n.port(0), rngFor(5), s)
	s.b = b
	n.nodes[0] = b
	b.Tick()
	n.run()
	cid := r.accepted[0]
	return n, b, r, cid, decodeHS(t, r.frames[cid][0])
}

func TestHandshakeChallengeStatus(t *testing.T) {
	want := map[int]HandshakeFailure{1: FailRejectedUnknownCommand, 2: FailRejectedClusterMismatch,
		3: FailRejectedDirectionalRule, 4: FailRejectedAuthRequired, 5: FailRejectedMACMismatch,
		6: FailRejectedUnknownCommand, 200: FailRejectedUnknownCommand, 255: FailRejectedUnknownCommand}
	for status := 1; status < 256; status++ {
		n, b, r, cid, hello := dialerWithRogue(t, authConfig(0, 2))
		// Even a correct nonce and MAC do not save a nonzero status.
		tr := wire.Transcript{Cluster: testCluster, Dialer: 0, Acceptor: 1, NonceD: hello.Nonce, NonceA: someNonce(2)}
		r.send(cid, handshakeFrame(wire.CommandReplicaChallenge, testCluster, 1, tr.NonceA,
			tr.MAC(wire.DeriveMACKey(secretOld), wire.MACAcceptor), wire.HandshakeStatus(status)))
		n.run()
		if b.Established(1) || !r.closed[cid] || len(r.frames[cid]) != 1 {
			t.Fatalf("status %d accepted", status)
		}
		f, ok := want[status]
		if !ok {
			f = FailRejectedUnknownCommand
		}
		wantFailures(t, b.Stats().Peers[1].HandshakeFailures, map[HandshakeFailure]uint64{f: 1})
	}
}

func TestHandshakeChallengeBad(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(hello wire.HandshakeHeader) []byte
		want  HandshakeFailure
	}{
		{"wrong MAC", func(h wire.HandshakeHeader) []byte {
			return handshakeFrame(wire.CommandReplicaChallenge, testCluster, 1, someNonce(2), someNonce(3), 0)
		}, FailMACMismatch},
		{"MAC over another nonce_d", func(h wire.HandshakeHeader) []byte {
			tr := wire.Transcript{Cluster: testCluster, Dialer: 0, Acceptor: 1, NonceD: someNonce(7), NonceA: someNonce(2)}
			return handshakeFrame(wire.CommandReplicaChallenge, testCluster, 1, tr.NonceA,
				tr.MAC(wire.DeriveMACKey(secretOld), wire.MACAcceptor), 0)
		}, FailMACMismatch},
		{"dialer-direction MAC", func(h wire.HandshakeHeader) []byte {
			tr := wire.Transcript{Cluster: testCluster, Dialer: 0, Acceptor: 1, NonceD: h.Nonce, NonceA: someNonce(2)}
			return handshakeFrame(wire.CommandReplicaChallenge, testCluster, 1, tr.NonceA,
				tr.MAC(wire.DeriveMACKey(secretOld), wire.MACDialer), 0)
		}, FailMACMismatch},
		{"a consensus frame", func(wire.HandshakeHeader) []byte { return commit(1, 1) }, FailUnexpectedCommand},
		{"a Hello", func(wire.HandshakeHeader) []byte {
			return handshakeFrame(wire.CommandReplicaHello, testCluster, 1, someNonce(2), wire.Bytes32{}, 0)
		}, FailUnexpectedCommand},
		{"framing", func(wire.HandshakeHeader) []byte {
			f := commit(1, 1)
			f[60] = 99
			return f
		}, FailFraming},
	} {
		n, b, r, cid, hello := dialerWithRogue(t, authConfig(0, 2))
		r.send(cid, tc.build(hello))
		n.run()
		if b.Established(1) || !r.closed[cid] || len(r.frames[cid]) != 1 {
			t.Fatalf("%s: accepted", tc.name)
		}
		wantFailures(t, b.Stats().Peers[1].HandshakeFailures, map[HandshakeFailure]uint64{tc.want: 1})
		if err := b.checkInvariants(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestHandshakeGraceTimeout(t *testing.T) {
	const grace = 50
	// Acceptor: a connection that never sends its Hello.
	cfg := authConfig(1, 2)
	cfg.HandshakeGraceTicks = grace
	n, b, r, cid := acceptorWithRogue(t, cfg, 0)
	for range grace - 1 {
		b.Tick()
	}
	n.run()
	if r.closed[cid] {
		t.Fatal("closed before the grace ended")
	}
	b.Tick()
	n.run()
	if !r.closed[cid] {
		t.Fatal("not closed after the grace")
	}
	wantFailures(t, b.Stats().HandshakeFailuresAnonymous, map[HandshakeFailure]uint64{FailTimeout: 1})

	// Acceptor, auth on: a Hello, then no Finish.
	n, b, r, cid = acceptorWithRogue(t, cfg, 0)
	r.send(cid, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, someNonce(1), wire.Bytes32{}, 0))
	n.run()
	for range grace {
		b.Tick()
	}
	n.run()
	if !r.closed[cid] {
		t.Fatal("not closed after the grace")
	}
	wantFailures(t, b.Stats().Peers[0].HandshakeFailures, map[HandshakeFailure]uint64{FailTimeout: 1})

	// Dialer: an acceptor that never answers the Hello; the sweep redials
	// after the connection is abandoned.
	dcfg := authConfig(0, 2)
	dcfg.HandshakeGraceTicks = grace
	dcfg.ReconnectTicks = 20
	n, b, r, cid, _ = dialerWithRogue(t, dcfg)
	for range grace - 1 {
		b.Tick()
		n.run()
	}
	if r.closed[cid] || b.Stats().Peers[1].Dials != 1 {
		t.Fatal("dial abandoned early or repeated while in progress")
	}
	b.Tick() // tick 51 (the Hello went out on tick 1): abandoned
	n.run()
	if !r.closed[cid] {
		t.Fatal("dial not abandoned")
	}
	wantFailures(t, b.Stats().Peers[1].HandshakeFailures, map[HandshakeFailure]uint64{FailTimeout: 1})
	for range 20 {
		b.Tick()
	}
	n.run()
	if got := b.Stats().Peers[1].Dials; got != 2 || len(r.accepted) != 2 {
		t.Fatalf("dials %d", got)
	}
}

func TestHandshakeMixedAuth(t *testing.T) {
	t.Run("dialer on, acceptor off, quiet", func(t *testing.T) {
		c := newCluster(t)
		cfg0, cfg1 := authConfig(0, 2), testConfig(1, 2)
		cfg0.HandshakeGraceTicks = 30
		b0, b1 := c.add(cfg0, 1), c.add(cfg1, 2)
		c.tick(1)
		// The auth-off acceptor took the Hello as complete; the dialer waits
		// for a Challenge that never comes.
		if !b1.Established(0) || b0.Established(1) {
			t.Fatal("unexpected state")
		}
		c.tick(30) // the dial went out on tick 1: abandoned on tick 31
		if b0.Established(1) || b1.Established(0) {
			t.Fatal("still connected after the grace")
		}
		wantFailures(t, b0.Stats().Peers[1].HandshakeFailures, map[HandshakeFailure]uint64{FailTimeout: 1})
	})
	t.Run("dialer on, acceptor off, traffic", func(t *testing.T) {
		c := newCluster(t)
		b0, b1 := c.add(authConfig(0, 2), 1), c.add(testConfig(1, 2), 2)
		c.tick(1)
		if !b1.Send(0, commit(1, 1)) {
			t.Fatal("acceptor cannot send")
		}
		c.n.run()
		if b0.Established(1) || b1.Established(0) || len(c.sinks[0].got) != 0 {
			t.Fatal("consensus frame taken as a Challenge")
		}
		wantFailures(t, b0.Stats().Peers[1].HandshakeFailures, map[HandshakeFailure]uint64{FailUnexpectedCommand: 1})
	})
	t.Run("dialer off, acceptor on", func(t *testing.T) {
		c := newCluster(t)
		b0, b1 := c.add(testConfig(0, 2), 1), c.add(authConfig(1, 2), 2)
		c.tick(1)
		if b0.Established(1) || b1.Established(0) {
			t.Fatal("connected")
		}
		wantFailures(t, b1.Stats().Peers[0].HandshakeFailures, map[HandshakeFailure]uint64{FailAuthRequired: 1})
		if s := b0.Stats().Peers[1]; s.HandshakesOK != 1 || s.ConnectionsClosed != 1 {
			t.Fatalf("dialer %+v", s)
		}
		if got := sentCommands(c.n, 1); len(got) != 0 {
			t.Fatalf("acceptor replied %v", got)
		}
	})
}

func TestHandshakeSendRefused(t *testing.T) {
	// Dialer: the Hello (allow 0) or the Finish (allow 1) is refused.
	for _, tc := range []struct {
		auth  bool
		allow int
	}{{false, 0}, {true, 0}, {true, 1}} {
		n := newFakeNet(t)
		r := n.addRogue(1)
		cfg := testConfig(0, 2)
		if tc.auth {
			cfg = authConfig(0, 2)
		}
		s := &sink{t: t}
		b := New(cfg, &refusingPort{port: n.port(0), allow: tc.allow}, rngFor(1), s)
		s.b = b
		n.nodes[0] = b
		b.Tick()
		n.run()
		if tc.allow == 1 {
			hello := decodeHS(t, r.frames[r.accepted[0]][0])
			tr := wire.Transcript{Cluster: testCluster, Dialer: 0, Acceptor: 1, NonceD: hello.Nonce, NonceA: someNonce(2)}
			r.send(r.accepted[0], handshakeFrame(wire.CommandReplicaChallenge, testCluster, 1, tr.NonceA,
				tr.MAC(wire.DeriveMACKey(secretOld), wire.MACAcceptor), 0))
			n.run()
		}
		if b.Established(1) || !r.closed[r.accepted[0]] {
			t.Fatalf("%+v: established", tc)
		}
		wantFailures(t, b.Stats().Peers[1].HandshakeFailures, map[HandshakeFailure]uint64{FailSendRefused: 1})
	}
	// Acceptor: the Challenge is refused.
	n := newFakeNet(t)
	r := n.addRogue(0)
	s := &sink{t: t}
	b := New(authConfig(1, 2), &refusingPort{port: n.port(1)}, rngFor(1), s)
	s.b = b
	n.nodes[1] = b
	cid := r.dial(1)
	n.run()
	r.send(cid, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, someNonce(1), wire.Bytes32{}, 0))
	n.run()
	if !r.closed[cid] {
		t.Fatal("not closed")
	}
	wantFailures(t, b.Stats().Peers[0].HandshakeFailures, map[HandshakeFailure]uint64{FailSendRefused: 1})
}

func TestHandshakeFinishFraming(t *testing.T) {
	n, b, r, cid := acceptorWithRogue(t, authConfig(1, 2), 0)
	r.send(cid, handshakeFrame(wire.CommandReplicaHello, testCluster, 0, someNonce(1), wire.Bytes32{}, 0))
	bad := handshakeFrame(wire.CommandReplicaFinish, testCluster, 0, wire.Bytes32{}, someNonce(1), 0)
	wire.HeaderOf(bad).SetSize(255)
	r.send(cid, bad)
	n.run()
	if !r.closed[cid] || b.Established(0) {
		t.Fatal("accepted")
	}
	wantFailures(t, b.Stats().Peers[0].HandshakeFailures, map[HandshakeFailure]uint64{FailFraming: 1})
}

func TestNames(t *testing.T) {
	seen := map[string]bool{}
	for f := range HandshakeFailureCount + 1 {
		seen[f.String()] = true
	}
	for d := range SendDropCount + 1 {
		seen[d.String()] = true
	}
	for r := range DropRuleCount + 1 {
		seen[r.String()] = true
	}
	if len(seen) != int(HandshakeFailureCount)+int(SendDropCount)+int(DropRuleCount)+3 {
		t.Fatalf("names are not unique: %d", len(seen))
	}
	if FailRejectedMACMismatch.String() != "rejected_mac_mismatch" || SendDropQueueFull.String() != "queue_full" ||
		DropReplicaRange.String() != "replica_range" {
		t.Fatal("names")
	}
}
