package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestStaleOpAloneInItsSlotIsNacked scripts VOPR seed 3449264250 (two
// replicas, -view-change-faults): view 0's primary, cut off, prepares ops 1
// and 2 alone; view 1 truncates them on the other replica's nack (adopted
// head 0), and the reconcile's write that should forget op 2 on replica 0
// is misdirected, so its slot keeps view 0's op 2. View 1's op 1 commits on
// both; replica 0 crashes; replica 1 prepares view 1's op 2 and crashes
// while writing it (the write tore). After the restarts replica 0's op 2
// does not chain under its log_view's op 1, and replica 1 cannot read its
// own: both votes reported op 2 blank without a nack, and the view change
// deadlocked for ever ("view change deadlocked: no header for an op without
// a nack quorum"), though view 1's op 2 never committed (its only copy was
// the primary's own write, torn in flight). Replica 0's slot shows no
// prepare of op 2 but view 0's, which is not its log's, so it never
// acknowledged its log's op 2: it nacks it, the view change truncates it,
// and the cluster goes on. With the head the superblock recorded known, the
// stale op is a leftover (markLeftovers) and is nacked by the same proof;
// where the slot shows another prepare of op 2 (the log's, acknowledged,
// whose writes a fault lost), it stays a blank without a nack and the view
// change waits.
func TestStaleOpAloneInItsSlotIsNacked(t *testing.T) {
	for _, tc := range []struct {
		name string
		// recordedHead: the superblock recorded the log_view's head at op 1
		// (else it recorded none the replica can use).
		recordedHead bool
		// other: replica 0's slot shows another op 2 written: the vote
		// proves nothing and must not nack.
		other bool
	}{{"off the chain", false, false}, {"leftover", true, false}, {"another op 2 written", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster(t, 2, 3449264250)
			r0, r1 := c.replicas[0], c.replicas[1]

			// View 0: the primary, cut off from replica 1, prepares ops 1
			// and 2 alone, then crashes.
			c.block(link{0, 1})
			proposeAt(t, r0, 1)
			proposeAt(t, r0, 2)
			c.settle()
			stale, ok := r0.journal.Frame(2)
			if !ok {
				t.Fatal("replica 0 did not journal op 2")
			}
			r0.crash()
			c.unblockAll()
			r0.start(false)

			// A view replica 1 leads: its empty log nacks ops 1 and 2, the
			// merge truncates them, replica 0 reconciles to head 0, and its
			// write that forgot op 2 is misdirected: the slot still holds
			// view 0's op 2 (the journal believes it cleared).
			viewChangeOf(t, c, r0, r1)
			view := r1.group.View()
			if c.primary() != r1 || r0.group.Op() != 0 {
				t.Fatalf("view %d: replica 0 at op %d, primary %v; want replica 1 leading, op 0", view, r0.group.Op(), c.primary())
			}
			r0.journal.durable[2] = stale

			// The view's op 1 commits on both.
			commitOpEverywhere(t, c, 3, 1)
			f1, _ := r1.journal.Frame(1)

			// Replica 0 crashes; replica 1 prepares the view's op 2 and
			// crashes while writing it: the write tore, its slot is
			// unreadable, and replica 0 never received it.
			r0.crash()
			proposeAt(t, r1, 4)
			r1.crash()
			r1.journal.faulty[2] = true
			if tc.recordedHead {
				r0.journal.recordedHead, r0.journal.recordedHeadKnown = 1, true
			}
			if tc.other {
				f2 := replacingPrepare(f1, view)
				r0.journal.acked[2] = wire.HeaderOf(f2).Checksum()
			}
			r0.start(false)
			r1.start(false)
			if r0.group.LogView() != view || r1.group.LogView() != view || r0.group.Op() != 2 || r1.group.Op() != 2 {
				t.Fatalf("after the restarts: replica 0 log_view %d op %d, replica 1 log_view %d op %d; want log_view %d op 2 for both",
					r0.group.LogView(), r0.group.Op(), r1.group.LogView(), r1.group.Op(), view)
			}

			v := r0.group.buildVote()
			e, i, in := v.entry(2)
			if !in || !wire.IsBlank(&e) || v.present.Bit(i) {
				t.Fatalf("replica 0 votes op 2 as %s (in %v, present %v), want blank", e.Checksum(), in, v.present.Bit(i))
			}
			if v.nack.Bit(i) == tc.other {
				t.Fatalf("replica 0's vote nacks op 2: %v, want %v", v.nack.Bit(i), !tc.other)
			}
			if tc.other {
				return // nothing proves op 2 unacknowledged: the view change waits, rightly
			}

			// The view change truncates op 2, and the cluster commits again.
			viewChangeOf(t, c, r0, r1)
			commitOpEverywhere(t, c, 5, 2)
			p := c.primary()
			f2, ok := p.journal.Frame(2)
			if !ok || wire.HeaderOf(f2).Checksum() == wire.HeaderOf(stale).Checksum() || p.group.CommitMin() < 2 {
				t.Fatalf("op 2 after the view change: held %v, the stale one %v, commit %d", ok,
					ok && wire.HeaderOf(f2).Checksum() == wire.HeaderOf(stale).Checksum(), p.group.CommitMin())
			}
			if c.probes["vote nacks a stale op its slot shows alone"] == 0 {
				t.Fatalf("the nack's probe never fired (probes %v)", c.probes)
			}
		})
	}
}

// commitOpEverywhere has the primary propose request, which becomes op, and
// runs until every replica committed it.
func commitOpEverywhere(t *testing.T, c *cluster, request, op uint64) {
	t.Helper()
	p := c.primary()
	if p == nil {
		t.Fatal("no primary")
	}
	proposeAt(t, p, request)
	c.settle()
	c.tick(p.id, 80) // a heartbeat tells the backups
	if !c.committedEverywhere(op) {
		c.dump()
		t.Fatalf("op %d not committed everywhere", op)
	}
}
