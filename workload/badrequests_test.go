package workload_test

import (
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// A request owed no answer (a SendMessages the partition plane drops as
// undecodable) ends after one timeout, indefinite, and the client goes on
// with its next request on the same connection: trying every replica in
// turn would never end.
func TestSilentRequestIsGivenUpAfterOneTimeout(t *testing.T) {
	const timeoutTicks = 5
	g := newRig(t, workload.Config{Replicas: 3, TimeoutTicks: timeoutTicks})
	g.register(7)
	g.c.Submit(workload.Op{Operation: wire.OperationSendMessages, Body: []byte{1, 2, 3}, Silent: true})
	g.c.Submit(op(2))
	g.tick()
	dials := len(g.net.dials)
	for range timeoutTicks {
		g.tick()
	}
	dones := g.rec.completions()
	if last := dones[len(dones)-1]; last.Kind != workload.Indefinite || last.Request != 1 || last.Attempts != 1 {
		t.Fatalf("completion %+v, want request 1 indefinite after one attempt", last)
	}
	if len(g.net.dials) != dials {
		t.Fatalf("it failed over (%d dials, %d before)", len(g.net.dials), dials)
	}
	if h := g.lastSend().request(); h.Request != 2 || h.Operation != wire.OperationCreateStream {
		t.Fatalf("next send is request %d %v, want request 2", h.Request, h.Operation)
	}
}

// A bad request may carry a request_checksum other than its body's: the
// invocation records what went out, and says it is off the format on
// purpose; a zero checksum is within the format (client-ops.md 6.3).
func TestBadRequestChecksum(t *testing.T) {
	for _, sum := range []wire.U128{{Lo: 12345}, {}} {
		g := newRig(t, workload.Config{Replicas: 1, TimeoutTicks: 5})
		g.register(3)
		g.c.Submit(workload.Op{Operation: wire.OperationCreateStream, Body: []byte{1, 'a'}, SetChecksum: true, Checksum: sum})
		g.tick()
		invs := g.rec.invocations()
		inv := invs[len(invs)-1]
		if h := g.lastSend().request(); h.RequestChecksum != sum || inv.Checksum != sum || inv.OffFormat != !sum.IsZero() {
			t.Fatalf("sent checksum %s, invocation %s (off format %v), want %s", h.RequestChecksum, inv.Checksum, inv.OffFormat, sum)
		}
	}
}

// The bad mix is a function of its stream: two mixes of one seed draw the
// same requests, and a client without one draws nothing from it.
func TestBadMixIsDeterministic(t *testing.T) {
	draw := func() []workload.Op {
		mix := workload.NewMix(rand.New(rand.NewPCG(5, 1)), true)
		b := workload.NewBadMix(rand.New(rand.NewPCG(5, 2)), mix, 0.5)
		var out []workload.Op
		for range 200 {
			if b.Take() {
				out = append(out, b.Next())
			}
		}
		return out
	}
	a, b := draw(), draw()
	if len(a) != len(b) || len(a) < 50 {
		t.Fatalf("%d and %d bad requests of 200 draws at 0.5", len(a), len(b))
	}
	for i := range a {
		if a[i].Operation != b[i].Operation || string(a[i].Body) != string(b[i].Body) || a[i].Silent != b[i].Silent {
			t.Fatalf("draw %d differs: %v % x and %v % x", i, a[i].Operation, a[i].Body, b[i].Operation, b[i].Body)
		}
	}
}
