package workload_test

import (
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// tickNs is the fake clock's step: one replica tick (10 ms), as the harness
// ticks clients.
const tickNs = 10_000_000

// sentFrame is one frame the client handed the fake network.
type sentFrame struct {
	conn   workload.ConnID
	target int // the replica the connection was dialed to
	frame  []byte
	atNs   int64
}

func (s sentFrame) request() wire.RequestHeader {
	var h wire.RequestHeader
	h.Decode(wire.HeaderOf(s.frame))
	return h
}

// fakeNet is a scripted Transport: it hands out connection ids in order,
// remembers every dial, send and close, and keeps the virtual clock that the
// tests advance. Nothing is delivered unless a test says so, so every step a
// client takes is the test's doing.
type fakeNet struct {
	nowNs   int64
	last    workload.ConnID
	targets map[workload.ConnID]int // looked up only, never iterated
	dials   []int                   // targets, in dial order
	sends   []sentFrame
	closed  []workload.ConnID
}

func newFakeNet() *fakeNet { return &fakeNet{targets: map[workload.ConnID]int{}} }

func (f *fakeNet) Dial(target int) workload.ConnID {
	f.last++
	f.targets[f.last] = target
	f.dials = append(f.dials, target)
	return f.last
}

func (f *fakeNet) Send(c workload.ConnID, frame []byte) bool {
	// The client may reuse its buffer: keep a copy, as the network does.
	f.sends = append(f.sends, sentFrame{conn: c, target: f.targets[c], frame: append([]byte(nil), frame...), atNs: f.nowNs})
	return true
}

func (f *fakeNet) Close(c workload.ConnID) { f.closed = append(f.closed, c) }

func (f *fakeNet) Now() int64 { return f.nowNs }

// record is one history entry as the fake recorder saw it, with the clock
// at the moment the client reported it.
type record struct {
	inv     *workload.Invocation
	done    *workload.Completion
	clockNs int64
}

type fakeRecorder struct {
	net      *fakeNet
	records  []record
	timeouts []workload.Timeout // it is a TimeoutRecorder too, as the harness is
}

func (r *fakeRecorder) TimedOut(t workload.Timeout) { r.timeouts = append(r.timeouts, t) }

func (r *fakeRecorder) Invoke(inv workload.Invocation) {
	r.records = append(r.records, record{inv: &inv, clockNs: r.net.nowNs})
}

func (r *fakeRecorder) Complete(c workload.Completion) {
	r.records = append(r.records, record{done: &c, clockNs: r.net.nowNs})
}

func (r *fakeRecorder) invocations() []workload.Invocation {
	var out []workload.Invocation
	for _, x := range r.records {
		if x.inv != nil {
			out = append(out, *x.inv)
		}
	}
	return out
}

func (r *fakeRecorder) completions() []workload.Completion {
	var out []workload.Completion
	for _, x := range r.records {
		if x.done != nil {
			out = append(out, *x.done)
		}
	}
	return out
}

// rig is one client on the fake network.
type rig struct {
	t   *testing.T
	net *fakeNet
	rec *fakeRecorder
	c   *workload.Client
	cfg workload.Config
}

func newRig(t *testing.T, cfg workload.Config) *rig {
	t.Helper()
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(uint64(cfg.Index)+1, 0xc11e47))
	}
	net := newFakeNet()
	rec := &fakeRecorder{net: net}
	return &rig{t: t, net: net, rec: rec, c: workload.New(cfg, net, rec), cfg: cfg}
}

// tick advances the clock by one tick and ticks the client.
func (g *rig) tick() {
	g.net.nowNs += tickNs
	g.c.Tick()
}

// connect completes the client's latest dial.
func (g *rig) connect() { g.c.Connected(g.net.last) }

// lastSend returns the last frame sent; the test fails if none was.
func (g *rig) lastSend() sentFrame {
	g.t.Helper()
	if len(g.net.sends) == 0 {
		g.t.Fatal("nothing sent")
	}
	return g.net.sends[len(g.net.sends)-1]
}

// deliver hands the client a frame on its latest connection.
func (g *rig) deliver(frame []byte) {
	g.t.Helper()
	if err := wire.Validate(frame); err != nil {
		g.t.Fatalf("the test built an invalid frame: %v", err)
	}
	g.c.Received(g.net.last, frame)
}

// register dials, connects, and answers the Register with session epoch
// session; it returns the id the client registered under.
func (g *rig) register(session uint64) wire.U128 {
	g.t.Helper()
	if g.c.Session() != 0 {
		g.t.Fatalf("register with session %d already held", g.c.Session())
	}
	g.tick()
	g.connect()
	h := g.lastSend().request()
	if h.Operation != wire.OperationRegister || h.Client != g.c.ID() {
		g.t.Fatalf("the first send is %v from %s, want a Register from %s", h.Operation, h.Client, g.c.ID())
	}
	g.deliver(replyFrame(h.Client, 0, session, 0))
	if g.c.Session() != session {
		g.t.Fatalf("session %d after the register reply, want %d", g.c.Session(), session)
	}
	return h.Client
}

// replyFrame is a Reply to client's request; commit is the session epoch
// for a Register, status nonzero a denial.
func replyFrame(client wire.U128, request, commit uint64, status uint32) []byte {
	h := wire.ReplyHeader{Client: client, Request: request, Op: commit, Commit: commit, Status: status,
		Operation: wire.OperationCreateStream}
	return wire.BuildFrame(&h, nil)
}

func evictionFrame(client wire.U128, reason wire.EvictionReason) []byte {
	h := wire.EvictionHeader{Client: client, Reason: reason}
	return wire.BuildFrame(&h, nil)
}

// op is a scripted request; n keeps the bodies apart, so a resend of the
// wrong request shows in its bytes.
func op(n int) workload.Op {
	return workload.Op{Operation: wire.OperationCreateStream,
		Body: metadata.CreateStream{Name: "s-" + string(rune('a'+n))}.Encode()}
}
