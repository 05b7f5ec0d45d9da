package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/wire"
)

func hello(cluster wire.U128, replica uint8, nonce bool) []byte {
	h := wire.HandshakeHeader{Prefix: wire.Prefix{Cluster: cluster, Size: wire.HeaderSize, Command: wire.CommandReplicaHello, Replica: replica}}
	if nonce {
		h.Nonce[0] = 7
	}
	f := make([]byte, wire.HeaderSize)
	h.Encode(wire.HeaderOf(f))
	return f
}

// Each handshake check fires on the receipt that breaks it, and passes
// the receipt of a correct receiver.
func TestHandshakeRefusals(t *testing.T) {
	cluster := wire.ClusterID("vopr")
	step := func(auth bool) wirespec.HandshakeStep {
		return wirespec.HandshakeStep{Acceptor: true, Cluster: wirespec.U128{Lo: cluster.Lo, Hi: cluster.Hi}, Replica: 2, Replicas: 3, Auth: auth, SizeMax: 1 << 17}
	}
	refused := func(failure string) checker.HandshakeReceipt {
		return checker.HandshakeReceipt{Step: step(false), Failure: failure, Established: -1, Closed: true}
	}
	challenge := func(status uint8) []byte {
		f := hello(cluster, 2, false)
		f[wirespec.OffCommand], f[192] = wirespec.ReplicaChallenge, status
		return f
	}
	dialer := wirespec.HandshakeStep{Cluster: wirespec.U128{Lo: cluster.Lo, Hi: cluster.Hi}, Replica: 0, Replicas: 3, Auth: true, SizeMax: 1 << 17}
	for _, tc := range []struct {
		name  string
		frame []byte
		r     checker.HandshakeReceipt
		want  string
	}{
		{"a Hello establishes its replica", hello(cluster, 0, false), checker.HandshakeReceipt{Step: step(false), Established: 0}, ""},
		{"a Hello establishes another replica", hello(cluster, 1, false), checker.HandshakeReceipt{Step: step(false), Established: 0},
			checker.HandshakeWrongPeer},
		{"a Hello refused", hello(cluster, 0, false), refused("cluster_mismatch"), checker.ValidFrameRefused},
		{"with auth, a Hello whose Challenge the transport refused", hello(cluster, 0, true),
			checker.HandshakeReceipt{Step: step(true), Failure: "send_refused", Established: -1, Closed: true}, ""},
		{"with auth, a Hello establishes nothing yet", hello(cluster, 0, true), checker.HandshakeReceipt{Step: step(true), Established: -1}, ""},
		{"with auth, a Hello establishes at once", hello(cluster, 0, true), checker.HandshakeReceipt{Step: step(true), Established: 0},
			checker.HandshakeAccepted},
		{"another cluster's Hello refused", hello(wire.ClusterID("other"), 0, false), refused("cluster_mismatch"), ""},
		{"another cluster's Hello accepted", hello(wire.ClusterID("other"), 0, false), checker.HandshakeReceipt{Step: step(false), Established: 0},
			checker.HandshakeAccepted},
		{"another cluster's Hello kept", hello(wire.ClusterID("other"), 0, false), checker.HandshakeReceipt{Step: step(false), Established: -1},
			checker.RefusalConnection},
		{"another cluster's Hello refused as another", hello(wire.ClusterID("other"), 0, false), refused("directional_rule"),
			checker.RefusedByAnotherRule},
		{"a Hello from above refused", hello(cluster, 2, false), refused("directional_rule"), ""},
		{"a Commit first refused", goodCommit(), refused("unknown_command"), ""},
		{"a Challenge that rejects", challenge(2), checker.HandshakeReceipt{Step: dialer, Failure: "rejected_cluster_mismatch", Established: -1, Closed: true}, ""},
		{"a Challenge of status 9", challenge(9), checker.HandshakeReceipt{Step: dialer, Failure: "rejected_unknown_command", Established: -1, Closed: true}, ""},
		{"a Challenge that rejects, kept", challenge(2), checker.HandshakeReceipt{Step: dialer, Established: -1}, checker.RefusalConnection},
	} {
		c := refusalsChecker()
		c.HandshakeFrame(1, 0, 2, tc.frame, true, tc.r)
		wantNamed(t, tc.name, c.Violation(), tc.want)
	}
}

// A Challenge's MAC is judged by the checker's own MAC over the
// connection's transcript (the Hello's nonce the acceptor read, the
// Challenge's own) under the dialer's secrets; an honest acceptor's is
// its transcript's under its current key.
func TestHandshakeMACs(t *testing.T) {
	const secret, other = "vopr-simulated-cluster-secret-old-32", "someone-else-s-secret-of-32-bytes!"
	cluster := wire.ClusterID("vopr")
	cl := wirespec.U128{Lo: cluster.Lo, Hi: cluster.Hi}
	acceptor := wirespec.HandshakeStep{Acceptor: true, Cluster: cl, Replica: 2, Replicas: 3, Auth: true, SizeMax: 1 << 17, Secrets: [][]byte{[]byte(secret)}}
	dialer := acceptor
	dialer.Acceptor, dialer.Replica = false, 0
	challenge := func(key string) []byte {
		f := hello(cluster, 2, false)
		f[wirespec.OffCommand] = wirespec.ReplicaChallenge
		for i := 128; i < 160; i++ {
			f[i] = 0x22
		}
		tr := wirespec.Transcript{Cluster: cl, Dialer: 0, Acceptor: 2, NonceA: wirespec.Nonce(f)}
		tr.NonceD[0] = 7 // hello's nonce
		mac := tr.MAC(wirespec.MACKey([]byte(key)), wirespec.MACAcceptor)
		copy(f[160:192], mac[:])
		return f
	}
	for _, tc := range []struct {
		name     string
		key      string
		injected bool
		r        checker.HandshakeReceipt
		want     string
	}{
		{"an honest Challenge, established", secret, false, checker.HandshakeReceipt{Step: dialer, Established: 2}, ""},
		{"an honest acceptor's Challenge under another key", other, false, checker.HandshakeReceipt{Step: dialer, Established: 2}, checker.HandshakeMACWrong},
		{"an impostor's Challenge, refused", other, true, checker.HandshakeReceipt{Step: dialer, Failure: "mac_mismatch", Established: -1, Closed: true}, ""},
		{"an impostor's Challenge, established", other, true, checker.HandshakeReceipt{Step: dialer, Established: 2}, checker.HandshakeAccepted},
		{"an honest Challenge, refused", secret, false, checker.HandshakeReceipt{Step: dialer, Failure: "mac_mismatch", Established: -1, Closed: true}, checker.ValidFrameRefused},
	} {
		c := refusalsChecker()
		c.HandshakeFrame(1, 0, 2, hello(cluster, 0, true), false, checker.HandshakeReceipt{Step: acceptor, Established: -1, Conn: 9, SenderSecret: []byte(secret)})
		r := tc.r
		r.Conn, r.SenderSecret = 9, []byte(secret)
		c.HandshakeFrame(2, 2, 0, challenge(tc.key), tc.injected, r)
		wantNamed(t, tc.name, c.Violation(), tc.want)
	}
}
