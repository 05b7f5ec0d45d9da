package bus

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// PeerStats is one peer's entry of Stats, and moves with each frame: a
// harness reads it around a delivery to learn what the bus did.
func TestPeerStatsIsStatsOfOnePeer(t *testing.T) {
	n, b, _, r, cid := establishedWithRogue(t)
	bad := commit(0, 1)
	bad[60] = 30 // a framing rule: the connection closes
	before := b.PeerStats(0)
	r.send(cid, commit(0, 1))
	n.run()
	mid := b.PeerStats(0)
	if mid.FramesDelivered != before.FramesDelivered+1 || mid.FramesReceived != before.FramesReceived+1 {
		t.Fatalf("a good frame: delivered %d -> %d", before.FramesDelivered, mid.FramesDelivered)
	}
	r.send(cid, bad)
	n.run()
	after := b.PeerStats(0)
	if after.FramesDelivered != mid.FramesDelivered || after.WireRejected[wire.ErrCommandUnknown] != 1 || after.ConnectionsClosed != 1 {
		t.Fatalf("a frame of command 30: %+v", after)
	}
	if s := b.Stats(); s.Peers[0] != after {
		t.Fatal("PeerStats(0) differs from Stats().Peers[0]")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("PeerStats of itself did not panic")
		}
	}()
	b.PeerStats(1)
}
