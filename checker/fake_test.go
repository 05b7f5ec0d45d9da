package checker_test

import (
	"strings"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// The history builder: a fake cluster that emits, into a real Checker, the
// events a correct run would (the clients' invocations and completions, the
// primary's prepares, every replica's commits in op order, view changes),
// and lets a test bend exactly one of them.
//
// The fake keeps its own canonical log. A prepare joins the log when it is
// proposed (EventPrepared); it is applied to the reference model, and its
// reply built, when some replica first commits it, so that an uncommitted
// suffix can still be truncated by a view change. Every call advances the
// clock by one microsecond unless the test sets it (at).

// tb is what the fake needs of a test: a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// fakeCluster is the world of one history.
type fakeCluster struct {
	t   tb
	c   *checker.Checker
	n   int
	now int64

	view    uint32
	ts      uint64  // the last prepare timestamp handed out
	log     []*prep // log[k-1] is op k; log[:committed] is committed
	model   *metadata.Model
	applied uint64 // ops applied to model (the highest op committed anywhere)
	next    []uint64
	alloc   *metadata.GroupAllocator
	ids     uint64 // client ids handed out
}

// fakeClient is one client identity.
type fakeClient struct {
	index   int
	id      wire.U128
	session uint64
	request uint64
}

// req is one invocation, and what became of it.
type req struct {
	cl  *fakeClient
	inv workload.Invocation
	p   *prep // the canonical prepare, once proposed
}

// prep is one prepare.
type prep struct {
	x      wire.PrepareHeader // decoded, Checksum is the identity
	header wire.Header
	body   []byte
	reply  []byte // the committed reply frame (set at first commit)
	frame  []byte // the whole prepare frame
	r      *req   // the request it carries (nil for a forged prepare)
}

func (p *prep) op() uint64 { return p.x.Op }

func newFake(t tb, n int) *fakeCluster {
	f := &fakeCluster{t: t, c: checker.New(n), n: n, model: metadata.NewModel(), next: make([]uint64, n),
		alloc: metadata.NewGroupAllocator(0)}
	for i := range f.next {
		f.next[i] = 1
	}
	return f
}

// tick advances the clock and returns the new time.
func (f *fakeCluster) tick() int64 {
	f.now += 1000
	return f.now
}

// at sets the clock (tests of real-time order).
func (f *fakeCluster) at(ns int64) { f.now = ns }

func (f *fakeCluster) primary() uint8 { return uint8(f.view % uint32(f.n)) }

// client returns a new client identity (index i in the workload).
func (f *fakeCluster) client(i int) *fakeClient {
	f.ids++
	return &fakeClient{index: i, id: wire.U128{Lo: f.ids<<1 | 1, Hi: 0xc11e47}}
}

// evict gives the client a new identity, as the workload does after an
// eviction.
func (f *fakeCluster) evict(cl *fakeClient) {
	f.ids++
	cl.id = wire.U128{Lo: f.ids<<1 | 1, Hi: 0xc11e47}
	cl.session = 0
}

// register invokes a Register.
func (f *fakeCluster) register(cl *fakeClient) *req {
	inv := workload.Invocation{Client: cl.index, ClientID: cl.id, Operation: wire.OperationRegister, AtNs: f.tick()}
	f.c.Invoke(inv)
	return &req{cl: cl, inv: inv}
}

// invoke invokes a client request with its next request number.
func (f *fakeCluster) invoke(cl *fakeClient, c call) *req {
	op, body := c.op, c.body
	cl.request++
	inv := workload.Invocation{Client: cl.index, ClientID: cl.id, Session: cl.session, Request: cl.request,
		Operation: op, Body: body, Checksum: wire.BodySeal(body), AtNs: f.tick()}
	f.c.Invoke(inv)
	return &req{cl: cl, inv: inv}
}

// build builds the prepare the primary would build for r as the next op
// (without proposing it); edit, when given, changes the header before the
// frame is finished, so the identity covers the change.
func (f *fakeCluster) build(r *req, edit func(x *wire.PrepareHeader, body *[]byte)) *prep {
	op, body := r.inv.Operation, r.inv.Body
	if op == wire.OperationCreateTopic || op == wire.OperationCreatePartitions {
		pr, refusal := metadata.Project(op, body, f.alloc)
		if refusal.Refused() {
			f.t.Fatalf("fake: projection refused: %v", refusal)
		}
		op, body = pr.Operation, pr.Body
	}
	x := wire.PrepareHeader{
		Prefix:          wire.Prefix{Command: wire.CommandPrepare, View: f.view, Replica: f.primary()},
		Client:          r.inv.ClientID,
		Parent:          f.identity(uint64(len(f.log))),
		RequestChecksum: r.inv.Checksum,
		Op:              uint64(len(f.log)) + 1,
		Commit:          f.applied,
		Timestamp:       f.ts + 1,
		Request:         r.inv.Request,
		Operation:       op,
		Group:           wire.MetadataGroup,
	}
	if edit != nil {
		edit(&x, &body)
	}
	return f.frame(x, body, r)
}

// forge builds r's prepare at op (chained to the log's op-1, with a fresh
// timestamp): another prepare for an op the log already holds.
func (f *fakeCluster) forge(r *req, op uint64) *prep {
	return f.build(r, func(x *wire.PrepareHeader, _ *[]byte) {
		x.Op, x.Parent = op, f.identity(op-1)
	})
}

// frame finishes a prepare from its header fields.
func (f *fakeCluster) frame(x wire.PrepareHeader, body []byte, r *req) *prep {
	frame := wire.BuildFrame(&x, body)
	p := &prep{header: *wire.HeaderOf(frame), body: frame[wire.HeaderSize:], r: r, frame: frame}
	p.x.Decode(&p.header)
	return p
}

// identity returns the identity of op in the fake's log (zero for op 0).
func (f *fakeCluster) identity(op uint64) wire.U128 {
	if op == 0 {
		return wire.U128{}
	}
	return f.log[op-1].x.Checksum
}

// propose builds r's prepare as the next op, appends it to the log and
// emits EventPrepared from the primary.
func (f *fakeCluster) propose(r *req) *prep {
	return f.append(f.build(r, nil))
}

// append adds a built prepare to the log and emits EventPrepared.
func (f *fakeCluster) append(p *prep) *prep {
	if p.op() != uint64(len(f.log))+1 {
		f.t.Fatalf("fake: append of op %d to a log of %d", p.op(), len(f.log))
	}
	f.ts = max(f.ts, p.x.Timestamp)
	f.log = append(f.log, p)
	if p.r != nil {
		p.r.p = p
	}
	f.prepared(f.primary(), f.view, p)
	// The primary sends it on (the checker reads every frame sent).
	f.c.Sent(f.now, f.primary(), -1, p.frame)
	return p
}

// prepared emits EventPrepared of p on replica r in view.
func (f *fakeCluster) prepared(r uint8, view uint32, p *prep) {
	f.group(r, vsr.Event{Kind: vsr.EventPrepared, View: view, Op: p.op(), Header: p.header})
}

func (f *fakeCluster) group(r uint8, e vsr.Event) {
	e.Group, e.Replica = wire.MetadataGroup, r
	f.c.Replica(f.tick(), replica.Event{Kind: replica.EventGroup, Replica: r, Group: e})
}

// commit makes replica r commit its next op of the log.
func (f *fakeCluster) commit(r uint8) {
	op := f.next[r]
	if op > uint64(len(f.log)) {
		f.t.Fatalf("fake: replica %d has nothing to commit (next %d, log %d)", r, op, len(f.log))
	}
	f.commitPrep(r, f.log[op-1])
}

// commitTo makes replica r commit up to op.
func (f *fakeCluster) commitTo(r uint8, op uint64) {
	for f.next[r] <= op {
		f.commit(r)
	}
}

// commitAll makes every replica commit the whole log.
func (f *fakeCluster) commitAll() {
	for r := range f.n {
		f.commitTo(uint8(r), uint64(len(f.log)))
	}
}

// commitPrep emits EventCommitted of p on replica r, whatever p is; when p
// is the log's next op to be applied, the model applies it.
func (f *fakeCluster) commitPrep(r uint8, p *prep) {
	if p.op() == f.applied+1 && p.op() <= uint64(len(f.log)) && f.log[p.op()-1] == p {
		f.applied++
		p.reply = f.apply(p)
	}
	if p.op() == f.next[r] {
		f.next[r]++
	}
	f.group(r, vsr.Event{Kind: vsr.EventCommitted, View: f.view, Op: p.op(), Commit: p.op(), Header: p.header, Body: p.body})
}

// apply applies p to the fake's model and returns its reply frame; a
// prepare the model refuses (a test's forgery) gets none.
func (f *fakeCluster) apply(p *prep) (reply []byte) {
	defer func() {
		if recover() != nil {
			reply = nil
		}
	}()
	return clients.BuildReply(p.x, f.model.Apply(p.x, p.body))
}

// reply completes r with its committed reply.
func (f *fakeCluster) reply(r *req) {
	if r.p == nil || r.p.reply == nil {
		f.t.Fatalf("fake: reply to a request that did not commit")
	}
	if r.inv.Operation == wire.OperationRegister {
		r.cl.session = r.p.op()
	}
	f.complete(r, r.p.reply)
}

// complete completes r with the given reply frame.
func (f *fakeCluster) complete(r *req, frame []byte) {
	f.c.Complete(workload.Completion{Client: r.cl.index, ClientID: r.inv.ClientID, Request: r.inv.Request,
		Kind: workload.Replied, Frame: frame, Attempts: 1, AtNs: f.tick()})
}

// indefinite completes r as evicted in flight, and gives its client a new
// identity.
func (f *fakeCluster) indefinite(r *req) {
	f.c.Complete(workload.Completion{Client: r.cl.index, ClientID: r.inv.ClientID, Request: r.inv.Request,
		Kind: workload.Indefinite, Reason: wire.EvictionReason(1), Attempts: 2, AtNs: f.tick()})
	f.evict(r.cl)
}

// denied completes r with a status reply refused before consensus.
func (f *fakeCluster) denied(r *req) {
	h := wire.ReplyHeader{Client: r.inv.ClientID, Request: r.inv.Request, Operation: r.inv.Operation,
		RequestChecksum: r.inv.Checksum, Status: metadata.CodeTransientNotAccepted}
	f.c.Complete(workload.Completion{Client: r.cl.index, ClientID: r.inv.ClientID, Request: r.inv.Request,
		Kind: workload.Denied, Frame: wire.BuildFrame(&h, nil), Attempts: 1, AtNs: f.tick()})
}

// do runs one request through a healthy cluster: propose, every replica
// commits, reply.
func (f *fakeCluster) do(r *req) *req {
	f.propose(r)
	f.commitAll()
	f.reply(r)
	return r
}

// crash crashes replica r: it replays from op 1 when it comes back.
func (f *fakeCluster) crash(r uint8) {
	f.c.Crashed(r)
	f.next[r] = 1
}

// sent emits EventSent of replica r in view.
func (f *fakeCluster) sent(r uint8, view uint32) {
	f.group(r, vsr.Event{Kind: vsr.EventSent, View: view})
}

// status emits EventStatus of replica r.
func (f *fakeCluster) status(r uint8, s vsr.Status, view uint32) {
	f.group(r, vsr.Event{Kind: vsr.EventStatus, Status: s, View: view, LogView: view,
		Op: uint64(len(f.log)), Commit: f.applied})
}

// startView emits EventStartView of view from its primary, with the log's
// suffix above the commit (highest op first), as a correct primary does.
func (f *fakeCluster) startView(view uint32) {
	f.startViewWith(view, uint64(len(f.log)), f.suffix())
}

func (f *fakeCluster) startViewWith(view uint32, op uint64, headers []wire.Header) {
	r := uint8(view % uint32(f.n))
	f.group(r, vsr.Event{Kind: vsr.EventStartView, View: view, LogView: view, Op: op, Commit: f.applied,
		Headers: headers})
}

func (f *fakeCluster) suffix() []wire.Header {
	var hs []wire.Header
	for op := uint64(len(f.log)); op > f.applied && op > 0; op-- {
		hs = append(hs, f.log[op-1].header)
	}
	return hs
}

// viewChange moves the cluster to view: every replica goes through view
// change to normal, the new primary truncates the uncommitted suffix above
// keep (the ops no replica committed may be lost) and starts the view.
func (f *fakeCluster) viewChange(view uint32, keep uint64) {
	if keep < f.applied {
		f.t.Fatalf("fake: a view change cannot drop committed op %d", f.applied)
	}
	for r := range f.n {
		// Told of the view by its new primary (a replica moves more than
		// one view on only when a frame tells it of the view).
		f.c.Delivered(f.tick(), uint8(view%uint32(f.n)), uint8(r), startViewChange(view, uint8(view%uint32(f.n))))
		f.status(uint8(r), vsr.StatusViewChange, view)
		f.sent(uint8(r), view)
	}
	for _, p := range f.log[keep:] {
		if p.r != nil {
			p.r.p = nil
		}
	}
	f.log = f.log[:keep]
	f.view = view
	f.startView(view)
	for r := range f.n {
		f.status(uint8(r), vsr.StatusNormal, view)
	}
}

// Request bodies.

// call is an operation and its request body.
type call struct {
	op   wire.Operation
	body []byte
}

func createStream(name string) call {
	return call{wire.OperationCreateStream, metadata.CreateStream{Name: name}.Encode()}
}

func deleteStream(name string) call {
	return call{wire.OperationDeleteStream, metadata.DeleteStream{Stream: metadata.Named(name)}.Encode()}
}

func createTopic(stream, name string, partitions uint32) call {
	return call{wire.OperationCreateTopic, metadata.CreateTopic{Stream: metadata.Named(stream), PartitionsCount: partitions,
		Name: name}.Encode()}
}

func createPartitions(stream, topic string, n uint32) call {
	return call{wire.OperationCreatePartitions, metadata.CreatePartitions{Stream: metadata.Named(stream),
		Topic: metadata.Named(topic), PartitionsCount: n}.Encode()}
}

// Verdicts.

func wantPass(t tb, f *fakeCluster) {
	t.Helper()
	if v := f.c.Violation(); v != nil {
		t.Fatalf("unexpected violation: %v\nevidence:\n  %s", v, strings.Join(f.c.Evidence(), "\n  "))
	}
}

func wantViolation(t tb, f *fakeCluster, name string) *checker.Violation {
	t.Helper()
	v := f.c.Violation()
	if v == nil {
		t.Fatalf("no violation, want %q\nevidence:\n  %s", name, strings.Join(f.c.Evidence(), "\n  "))
	}
	if v.Name != name {
		t.Fatalf("violation %q, want %q: %v\nevidence:\n  %s", v.Name, name, v, strings.Join(f.c.Evidence(), "\n  "))
	}
	return v
}

// started returns a cluster of n replicas with clients registered (ops
// 1..len(clients)), every replica committed and every Register replied.
func started(t tb, n, clients int) (*fakeCluster, []*fakeClient) {
	f := newFake(t, n)
	f.status(0, vsr.StatusNormal, 0)
	cls := make([]*fakeClient, clients)
	for i := range cls {
		cls[i] = f.client(i)
		f.do(f.register(cls[i]))
	}
	return f, cls
}
