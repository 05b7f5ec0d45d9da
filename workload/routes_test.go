package workload_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// deleteOffset is a partition op on partition p of one topic.
func deleteOffset(p uint32) workload.Op {
	q := partition.OffsetRequest{ConsumerKind: partition.ConsumerSingle, Consumer: metadata.ID(1),
		Stream: metadata.Named("s"), Topic: metadata.Named("t"), HasPartition: true, Partition: p, Ack: partition.AckQuorum}
	return workload.Op{Operation: wire.OperationDeleteConsumerOffset, Body: partition.EncodeOffsetRequest(q, false)}
}

const codeNotAccepted = 58

// A client whose metadata primary and partition primary are different
// replicas walks to each once, and from then on goes straight to the
// replica that last admitted each route; a refusal there forgets the hint,
// and the walk resumes from it.
func TestRouteHintsSendEachRequestWhereItsRouteWasAdmitted(t *testing.T) {
	g := newRig(t, workload.Config{Index: 0, Replicas: 4, TimeoutTicks: 1000})
	id := g.register(1)
	answer := func(status uint32) {
		t.Helper()
		h := g.lastSend().request()
		g.deliver(replyFrame(id, h.Request, 1, status))
	}
	// waitSend ticks through the client's hold until it dials, connects,
	// and returns the target the request went to.
	waitSend := func() int {
		t.Helper()
		sends := len(g.net.sends)
		for range 400 {
			if len(g.net.sends) > sends {
				return g.lastSend().target
			}
			dials := len(g.net.dials)
			g.tick()
			if len(g.net.dials) > dials {
				g.connect()
			}
		}
		t.Fatal("the client sent nothing in 400 ticks")
		return -1
	}

	// The metadata primary is replica 1: refused at 0, admitted at 1.
	g.c.Submit(op(1))
	g.c.Submit(deleteOffset(0))
	g.tick()
	if got := g.lastSend().target; got != 0 {
		t.Fatalf("the first metadata request went to replica %d, want 0 (where it registered)", got)
	}
	answer(codeNotAccepted)
	if got := waitSend(); got != 1 {
		t.Fatalf("after a refusal at 0 the request went to %d, want 1", got)
	}
	answer(0)
	// The partition op starts at replica 1 (no hint for its route), is
	// refused there, and admitted at 2.
	if h := g.lastSend(); h.request().Operation != wire.OperationDeleteConsumerOffset || h.target != 1 {
		t.Fatalf("the partition op went out as %v to replica %d, want DeleteConsumerOffset to 1", h.request().Operation, h.target)
	}
	answer(codeNotAccepted)
	if got := waitSend(); got != 2 {
		t.Fatalf("the refused partition op went to %d, want 2", got)
	}
	answer(0)

	// Now each route goes straight to its replica: no refusal on the way.
	for i, want := range []struct {
		op     workload.Op
		target int
	}{{op(2), 1}, {deleteOffset(0), 2}, {op(3), 1}} {
		transients := g.c.Transients
		g.c.Submit(want.op)
		if got := waitSend(); got != want.target || g.c.Transients != transients {
			t.Fatalf("request %d went to replica %d after %d refusals, want %d at once", i, got, g.c.Transients-transients, want.target)
		}
		answer(0)
	}
	if g.c.RouteMoves != 3 {
		t.Fatalf("%d route moves, want 3", g.c.RouteMoves)
	}

	// The partition primary moved: its hint's replica refuses, the hint is
	// forgotten, and the walk goes on to replica 3.
	g.c.Submit(deleteOffset(0))
	if got := waitSend(); got != 2 {
		t.Fatalf("the partition op went to %d, want its hint 2", got)
	}
	answer(codeNotAccepted)
	if got := waitSend(); got != 3 {
		t.Fatalf("after its hint refused, the partition op went to %d, want 3", got)
	}
	answer(0)
	// Another partition of the topic is another route: no hint, it goes
	// where the client is.
	g.c.Submit(deleteOffset(1))
	if got := waitSend(); got != 3 {
		t.Fatalf("a partition op of a new route went to %d, want 3 (where the client is)", got)
	}
}
