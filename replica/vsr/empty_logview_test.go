package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestLeftoverAboveAnEmptyLogViewIsVotedBlank: view 0's primary, cut off,
// prepares op 1 alone; the view replica 1 leads adopts its empty log (its
// nack truncates op 1), and replica 0's reconcile write that should forget
// op 1 is misdirected, so the slot keeps view 0's op 1 above that
// log_view's head, op 0. The superblock recorded that head with the
// log_view; a journal reports a head of op 0 as Known (the empty log has
// no header: journal.LogHead.Known, DEVIATIONS.md 74). After a restart
// replica 0 must vote op 1 blank, a leftover (markLeftovers), and nack it
// (its slot shows that prepare alone: DEVIATIONS.md 73): voted present, it
// was reported as the log_view's op 1, which a merge of that log_view takes
// over any vote whose reported suffix starts above op 1 (the divergent
// commit of VOPR seed 31915). With the nack the view change truncates it
// and the cluster commits another op 1.
func TestLeftoverAboveAnEmptyLogViewIsVotedBlank(t *testing.T) {
	c := newCluster(t, 2, 74)
	r0, r1 := c.replicas[0], c.replicas[1]

	c.block(link{0, 1})
	proposeAt(t, r0, 1)
	c.settle()
	stale, ok := r0.journal.Frame(1)
	if !ok {
		t.Fatal("replica 0 did not journal op 1")
	}
	r0.crash()
	c.unblockAll()
	r0.start(false)

	viewChangeOf(t, c, r0, r1)
	view := r1.group.View()
	if c.primary() != r1 || r0.group.Op() != 0 {
		t.Fatalf("view %d: replica 0 at op %d, primary %v; want replica 1 leading, op 0", view, r0.group.Op(), c.primary())
	}
	c.settle()                    // the log_view is durable
	r0.journal.durable[1] = stale // the misdirected clear left it

	r0.crash()
	r0.journal.recordedHead, r0.journal.recordedHeadKnown = 0, true
	r0.start(false)
	if r0.group.LogView() != view || r0.group.Op() != 1 || !r0.group.Leftover(1) {
		t.Fatalf("after the restart: log_view %d, op %d, op 1 a leftover %v; want log_view %d, op 1, a leftover",
			r0.group.LogView(), r0.group.Op(), r0.group.Leftover(1), view)
	}
	v := r0.group.buildVote()
	e, i, in := v.entry(1)
	if !in || !wire.IsBlank(&e) || v.present.Bit(i) || !v.nack.Bit(i) {
		t.Fatalf("replica 0 votes op 1 as %s (in %v, present %v, nack %v), want a blank with a nack",
			e.Checksum(), in, in && v.present.Bit(i), in && v.nack.Bit(i))
	}

	viewChangeOf(t, c, r0, r1)
	commitOpEverywhere(t, c, 2, 1)
	p := c.primary()
	f1, ok := p.journal.Frame(1)
	if !ok || wire.HeaderOf(f1).Checksum() == wire.HeaderOf(stale).Checksum() {
		t.Fatalf("op 1 after the view change: held %v, the stale one %v", ok, ok && wire.HeaderOf(f1).Checksum() == wire.HeaderOf(stale).Checksum())
	}
}
