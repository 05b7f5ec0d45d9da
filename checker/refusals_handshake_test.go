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
		{"a Challenge with a broken MAC, established", challenge(0), checker.HandshakeReceipt{Step: func() wirespec.HandshakeStep {
			s := dialer
			s.BadMAC = true
			return s
		}(), Established: 2}, checker.HandshakeAccepted},
	} {
		c := refusalsChecker()
		c.HandshakeFrame(1, 0, 2, tc.frame, true, tc.r)
		v := c.Violation()
		switch {
		case tc.want == "" && v != nil:
			t.Errorf("%s: %v", tc.name, v)
		case tc.want != "" && (v == nil || v.Name != tc.want):
			t.Errorf("%s: %v, want %q", tc.name, v, tc.want)
		}
	}
}
