package vsr

import "testing"

// TestQuorums pins the quorum table of consensus.md section 5 and
// correction 3 (q_nack is 1 at n = 2, unlike q_vc).
func TestQuorums(t *testing.T) {
	want := []struct{ rep, vc, nack int }{
		{1, 1, 1}, {2, 2, 1}, {2, 2, 2}, {2, 3, 3}, {3, 3, 3}, {3, 4, 4}, {3, 5, 5},
	}
	for i, w := range want {
		n := i + 1
		if got := QuorumReplication(n); got != w.rep {
			t.Errorf("n=%d: q_rep %d, want %d", n, got, w.rep)
		}
		if got := QuorumViewChange(n); got != w.vc {
			t.Errorf("n=%d: q_vc %d, want %d", n, got, w.vc)
		}
		if got := QuorumNack(n); got != w.nack {
			t.Errorf("n=%d: q_nack %d, want %d", n, got, w.nack)
		}
		// Any view-change quorum meets any replication quorum.
		if QuorumViewChange(n)+QuorumReplication(n) <= n {
			t.Errorf("n=%d: quorums do not intersect", n)
		}
	}
	for view := uint32(0); view < 12; view++ {
		if got := PrimaryIndex(view, 5); got != uint8(view%5) {
			t.Errorf("primary of view %d = %d", view, got)
		}
	}
}
