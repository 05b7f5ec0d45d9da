package workload_test

import (
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// readOp is a scripted read (a NonReplicated request).
func readOp() workload.Op {
	return workload.Op{Operation: wire.OperationNonReplicated, Code: 100, Body: []byte{1, 2, 3}}
}

// registerReply answers client's Register with session epoch session.
func registerReply(client wire.U128, session uint64) []byte {
	h := wire.ReplyHeader{Client: client, Op: session, Commit: session, Operation: wire.OperationRegister}
	return wire.BuildFrame(&h, nil)
}

// TestReadLinks: a read at the replica where the home session logged in on
// the home connection goes out there; once the home connection has moved
// to a replica it did not log in on, a read goes out on a read link of its
// own: a second connection, which logs in first under an id of its own,
// then reads on that session. The home session is never bound twice. An
// eviction of the link's session ends its read Indefinite, and the next
// read logs in again under a new id.
func TestReadLinks(t *testing.T) {
	g := newRig(t, workload.Config{Index: 0, Replicas: 3, TimeoutTicks: 50})
	home := g.register(7)
	g.c.Submit(readOp())
	g.tick()
	if s := g.lastSend(); s.conn != 1 || s.request().Client != home || s.request().Operation != wire.OperationNonReplicated {
		t.Fatalf("the read at the home replica went to connection %d as %s %v, want the home connection and session",
			s.conn, s.request().Client, s.request().Operation)
	}
	g.deliver(replyFrame(home, 1, 2, 0))

	g.c.Retarget(1)
	g.c.Submit(readOp())
	g.tick()
	g.connect() // the home connection to replica 1
	if len(g.net.dials) != 3 || g.net.dials[2] != 1 {
		t.Fatalf("dials %v: want the read link dialed to replica 1", g.net.dials)
	}
	g.connect() // the read link
	reg := g.lastSend()
	link := reg.request().Client
	if reg.conn != 3 || reg.request().Operation != wire.OperationRegister || link == home || link.IsZero() {
		t.Fatalf("the read link's first frame: connection %d, %v from %s (home %s): want a Register of its own id",
			reg.conn, reg.request().Operation, link, home)
	}
	g.deliver(registerReply(link, 9))
	read := g.lastSend().request()
	if read.Client != link || read.Session != 9 || read.Request != 1 || read.Operation != wire.OperationNonReplicated {
		t.Fatalf("the read on the link: %+v", read)
	}
	g.deliver(replyFrame(link, 1, 9, 0))
	last := g.rec.completions()[len(g.rec.completions())-1]
	if last.ClientID != link || last.Kind != workload.Replied || last.Request != 1 {
		t.Fatalf("the read's completion %+v", last)
	}
	for _, s := range g.net.sends {
		if h := s.request(); h.Client == home && h.Operation == wire.OperationRegister && s.conn != 1 {
			t.Fatal("the home session logged in on a second connection")
		}
	}

	g.c.Submit(readOp())
	g.tick()
	if s := g.lastSend(); s.conn != 3 || s.request().Client != link || s.request().Request != 2 {
		t.Fatalf("the next read: connection %d request %d from %s, want the link's request 2", s.conn, s.request().Request, s.request().Client)
	}
	g.deliver(evictionFrame(link, wire.EvictionNoSession))
	last = g.rec.completions()[len(g.rec.completions())-1]
	if last.ClientID != link || last.Kind != workload.Indefinite || last.Request != 2 {
		t.Fatalf("the evicted read's completion %+v, want Indefinite", last)
	}
	g.c.Submit(readOp())
	g.tick()
	if h := g.lastSend().request(); h.Operation != wire.OperationRegister || h.Client == link || h.Client == home {
		t.Fatalf("after the eviction the link sent %v from %s, want a Register under a new id", h.Operation, h.Client)
	}
	if !g.c.Pending() {
		t.Fatal("nothing in flight while the link logs in")
	}
}

// TestAReadRunsAlongsideAStore: with a Mix, a Quorum offset store the home
// session sends is joined, for some draws of the client's stream, by a Next
// poll of its consumer on a read link while the store is in flight: two
// requests at once, one per session, and the poll names the store's
// consumer and partition.
func TestAReadRunsAlongsideAStore(t *testing.T) {
	store := partition.OffsetRequest{ConsumerKind: partition.ConsumerSingle, Consumer: metadata.ID(2),
		Stream: metadata.Named("s"), Topic: metadata.Named("t"), HasPartition: true, Partition: 1, Offset: 3, Ack: partition.AckQuorum}
	joined := 0
	for seed := uint64(1); seed <= 16; seed++ {
		g := newRig(t, workload.Config{Index: 0, Replicas: 3, TimeoutTicks: 1000,
			Mix: workload.NewMix(rand.New(rand.NewPCG(seed, 1)), true), Rand: rand.New(rand.NewPCG(seed, 2))})
		home := g.register(7)
		g.c.Submit(workload.Op{Operation: wire.OperationStoreConsumerOffset, Body: partition.EncodeOffsetRequest(store, true)})
		g.tick()
		if h := g.lastSend().request(); h.Client != home || h.Operation != wire.OperationStoreConsumerOffset {
			t.Fatalf("seed %d: the store went out as %v from %s", seed, h.Operation, h.Client)
		}
		if len(g.net.dials) == 1 {
			continue // this draw sent no poll alongside
		}
		g.connect() // the read link
		reg := g.lastSend().request()
		g.deliver(registerReply(reg.Client, 9))
		poll := g.lastSend()
		h := poll.request()
		q, err := partition.DecodePoll(poll.frame[wire.HeaderSize:])
		if h.Client == home || h.Operation != wire.OperationNonReplicated || err != nil || q.Strategy != partition.PollNext ||
			q.Partition != 1 || q.Consumer != store.Consumer {
			t.Fatalf("seed %d: the read alongside: %v from %s, %+v (%v)", seed, h.Operation, h.Client, q, err)
		}
		joined++
	}
	if joined == 0 || joined == 16 {
		t.Fatalf("%d of 16 stores joined by a poll: want some, not all", joined)
	}
}
