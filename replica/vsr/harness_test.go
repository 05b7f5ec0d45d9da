package vsr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// A small deterministic world for scripting groups step by step, as etcd
// raft's interaction tests do: an in-memory network with per-pair FIFO
// queues, journals with an explicit durability model, and a checker that
// every committed op has one identity across replicas and chains to the op
// before it.

type message struct {
	from, to uint8
	frame    []byte
}

type cluster struct {
	t        testing.TB
	n        int
	rng      *rand.Rand
	replicas []*replica
	queue    []message
	later    []deferred
	drop     func(m message) bool
	// observe, when set, sees every frame a replica sends, as it is sent
	// (before any drop rule): a test's record of what left each replica.
	observe func(m message)
	// onEvent, when set, sees every event a replica emits, before the
	// harness's own checks: a test's hook at the moment a path is taken.
	onEvent func(r *replica, e Event)
	// tune, when set, adjusts every replica's configuration at each start.
	tune func(*Config)
	// plane, when set, gives each replica's group a Plane at each start.
	plane func(r *replica) Plane
	// stateTransfer, when set, is each replica's Deps.StateTransfer: a
	// test's stand-in for the state transfer a RangeEvicted starts.
	stateTransfer func(r *replica, peer uint8, retained uint64)
	// mutate, when set, may replace a frame on its way (a bit flipped on
	// the wire where no seal covers it); it returns the frame to deliver.
	mutate   func(m message) []byte
	canon    map[uint64]wire.U128 // the identity every replica committed at op
	steps    int
	last     string   // what the last step did, for failure messages
	log      []string // recent events, printed on failure
	blocked  map[link]bool
	probes   map[string]int
	views    map[uint32][]wire.Header // StartView suffix per view, to check agreement
	prepared map[[2]uint64]wire.U128  // the prepare built for (view, op), to check there is one
}

type deferred struct {
	replica     uint8
	incarnation int
	fn          func()
}

type replica struct {
	c           *cluster
	id          uint8
	up          bool
	incarnation int
	group       *Group
	journal     *durableJournal
	committed   []wire.Header
	clockUs     uint64
	sentView    uint32 // highest view any incarnation sent a message in
	// amnesiac: the next start loses the journal, as a partition plane's
	// memory journal does at a restart (only the state survives).
	amnesiac bool
}

func newCluster(t testing.TB, n int, seed uint64) *cluster { return newTunedCluster(t, n, seed, nil) }

// newTunedCluster is newCluster with every replica's configuration adjusted
// by tune (nil: testConfig as it is).
func newTunedCluster(t testing.TB, n int, seed uint64, tune func(*Config)) *cluster {
	c := &cluster{t: t, n: n, rng: rand.New(rand.NewPCG(seed, 7)), canon: make(map[uint64]wire.U128),
		probes: make(map[string]int), views: make(map[uint32][]wire.Header), prepared: make(map[[2]uint64]wire.U128),
		tune: tune}
	for i := range n {
		r := &replica{c: c, id: uint8(i), up: true}
		r.journal = newDurableJournal(r)
		c.replicas = append(c.replicas, r)
	}
	for _, r := range c.replicas {
		r.start(true)
	}
	return c
}

func testConfig(id uint8, n int) Config {
	t := DefaultTimeouts()
	t.NormalHeartbeatTicks = 200
	t.ViewChangeStatusTicks = 200
	return Config{Cluster: wire.ClusterID("vsr-test"), Group: wire.MetadataGroup, Replica: id, ReplicaCount: uint8(n),
		PipelineMax: 4, RequestQueueMax: 8, RepairChunkMax: 8, Timeouts: t}
}

func (r *replica) start(fresh bool) {
	r.incarnation++
	r.up = true
	if r.amnesiac {
		r.journal.forget()
	}
	r.journal.recover()
	rec := Recovered{State: r.journal.durableState, Head: r.journal.head(), Fresh: fresh, Amnesiac: r.amnesiac,
		LogHead: r.journal.recordedHead, LogHeadKnown: r.journal.recordedHeadKnown}
	r.committed = nil
	cfg := testConfig(r.id, r.c.n)
	if r.c.tune != nil {
		r.c.tune(&cfg)
	}
	deps := Deps{
		Out: r, Journal: r.journal, Machine: r, Sink: r,
		Rand:       rand.New(rand.NewPCG(uint64(r.id), uint64(r.incarnation))),
		RealtimeUs: func() uint64 { r.clockUs += 1000; return r.clockUs },
	}
	if r.c.plane != nil {
		deps.Plane = r.c.plane(r)
	}
	if r.c.stateTransfer != nil {
		deps.StateTransfer = func(peer uint8, retained uint64) { r.c.stateTransfer(r, peer, retained) }
	}
	r.group = New(cfg, deps, rec)
	if r.group.View() < r.sentView {
		r.c.t.Fatalf("replica %d restarted in view %d after sending in view %d", r.id, r.group.View(), r.sentView)
	}
}

func (r *replica) crash() {
	r.up = false
	r.incarnation++
	r.journal.crash()
}

// Send implements Outbox.
func (r *replica) Send(to uint8, frame []byte) {
	if err := wire.Validate(frame); err != nil {
		r.c.t.Fatalf("replica %d sent an invalid frame: %v", r.id, err)
	}
	r.checkSentDurable(frame)
	m := message{from: r.id, to: to, frame: append([]byte(nil), frame...)}
	if r.c.observe != nil {
		r.c.observe(m)
	}
	r.c.queue = append(r.c.queue, m)
}

// checkSentDurable is the harness's durability oracle (consensus.md
// correction 1, the "ungated acks" trap): a frame is a promise about its
// sender's disk, so every message that implies a view must leave only once
// the journal's state holds that view durably (and a DoViewChange's log_view
// too), and a PrepareOk only once that very prepare is durable. A crash right
// after the send would otherwise break the promise; checking at the send
// catches the bug without waiting for that crash.
func (r *replica) checkSentDurable(frame []byte) {
	h := wire.HeaderOf(frame)
	state := r.journal.durableState
	switch h.Command() {
	case wire.CommandPrepare, wire.CommandPrepareOk, wire.CommandCommit, wire.CommandStartViewChange,
		wire.CommandDoViewChange, wire.CommandStartView, wire.CommandRequestStartView:
		if h.View() > state.View {
			r.c.t.Fatalf("replica %d sent %v of view %d while its durable view was %d: sent before durable",
				r.id, h.Command(), h.View(), state.View)
		}
	default:
		return // repair frames carry no view of their sender's
	}
	switch h.Command() {
	case wire.CommandDoViewChange:
		var x wire.DoViewChangeHeader
		x.Decode(h)
		if x.LogView > state.LogView {
			r.c.t.Fatalf("replica %d sent a DoViewChange with log_view %d while its durable log_view was %d: sent before durable",
				r.id, x.LogView, state.LogView)
		}
	case wire.CommandPrepareOk:
		var x wire.PrepareOkHeader
		x.Decode(h)
		if d, ok := r.journal.durable[x.Op]; !ok || wire.HeaderOf(d).Checksum() != x.PrepareChecksum {
			r.c.t.Fatalf("replica %d sent PrepareOk for op %d before its journal made that prepare durable: ack before sync",
				r.id, x.Op)
		}
	}
}

// Commit implements StateMachine.
func (r *replica) Commit(prepare []byte) {}

// Event implements Sink: the checker.
func (r *replica) Event(e Event) {
	c := r.c
	if c.onEvent != nil {
		c.onEvent(r, e)
	}
	if e.Kind != EventSent {
		desc := fmt.Sprintf("step %d r%d %v view=%d log_view=%d op=%d commit=%d %s", c.steps, r.id, e.Kind, e.View, e.LogView, e.Op, e.Commit, e.Probe)
		if e.Kind == EventCommitted {
			desc += " id=" + e.Header.Checksum().String()
		}
		if e.Kind == EventStatus {
			desc += " status=" + e.Status.String()
		}
		c.log = append(c.log, desc)
		if len(c.log) > 400 {
			c.log = c.log[len(c.log)-300:]
		}
	}
	switch e.Kind {
	case EventCommitted:
		var p wire.PrepareHeader
		p.Decode(&e.Header)
		if want := uint64(len(r.committed)) + 1; p.Op != want {
			c.t.Fatalf("replica %d committed op %d, expected %d", r.id, p.Op, want)
		}
		if len(r.committed) > 0 && p.Parent != r.committed[len(r.committed)-1].Checksum() {
			c.t.Fatalf("replica %d: op %d breaks the hash chain", r.id, p.Op)
		}
		if id, ok := c.canon[p.Op]; ok && id != p.Checksum {
			for _, l := range c.log {
				c.t.Log(l)
			}
			c.t.Fatalf("replica %d committed op %d as %s, another replica as %s", r.id, p.Op, p.Checksum, id)
		}
		c.canon[p.Op] = p.Checksum
		r.committed = append(r.committed, e.Header)
	case EventStartView:
		if prev, ok := c.views[e.View]; ok && fmt.Sprint(prev) != fmt.Sprint(e.Headers) {
			c.t.Fatalf("two StartViews for view %d", e.View)
		}
		c.views[e.View] = e.Headers
	case EventPrepared:
		key := [2]uint64{uint64(e.View), e.Op}
		if prev, ok := c.prepared[key]; ok && prev != e.Header.Checksum() {
			c.t.Fatalf("two prepares for view %d op %d: %s and %s", e.View, e.Op, prev, e.Header.Checksum())
		}
		c.prepared[key] = e.Header.Checksum()
	case EventProbe:
		c.probes[e.Probe]++
	case EventSent:
		r.sentView = max(r.sentView, e.View)
	case EventAcked:
		// The primary's own acknowledgement counts toward the quorum as a
		// backup's PrepareOk does: the same promise about its disk.
		if d, ok := r.journal.durable[e.Op]; !ok || wire.HeaderOf(d).Checksum() != e.Header.Checksum() {
			c.t.Fatalf("primary %d counted its own ack of op %d before its journal made that prepare durable: ack before sync",
				r.id, e.Op)
		}
		// And it implies the primary's log_view, as a backup's does
		// (consensus.md trap "ungated acks"; VOPR seed 2430102557).
		if lv := r.journal.durableState.LogView; lv != e.View {
			c.t.Fatalf("primary %d counted its own ack of op %d in view %d while its durable log_view is %d: ungated ack",
				r.id, e.Op, e.View, lv)
		}
	}
}

// later defers a journal completion to a later step.
func (r *replica) defer_(fn func()) {
	r.c.later = append(r.c.later, deferred{replica: r.id, incarnation: r.incarnation, fn: fn})
}

// step runs one thing: a message, a completion, or a tick of every replica.
func (c *cluster) step() {
	c.steps++
	switch k := c.rng.IntN(10); {
	case k < 5 && len(c.queue) > 0:
		// Per-pair FIFO: deliver the oldest message of a random pair.
		i := c.rng.IntN(len(c.queue))
		m := c.queue[i]
		for j := 0; j < i; j++ {
			if c.queue[j].from == m.from && c.queue[j].to == m.to {
				i, m = j, c.queue[j]
				break
			}
		}
		c.queue = append(c.queue[:i], c.queue[i+1:]...)
		r := c.replicas[m.to]
		if !r.up || !c.replicas[m.from].up || c.blocked[link{m.from, m.to}] || (c.drop != nil && c.drop(m)) {
			return
		}
		c.last = fmt.Sprintf("deliver %v from %d to %d", wire.HeaderOf(m.frame).Command(), m.from, m.to)
		if c.mutate != nil {
			m.frame = c.mutate(m)
		}
		r.group.Receive(m.from, m.frame)
	case k < 8 && len(c.later) > 0:
		d := c.later[0]
		c.later = c.later[1:]
		r := c.replicas[d.replica]
		if r.up && r.incarnation == d.incarnation {
			c.last = fmt.Sprintf("completion at %d", d.replica)
			d.fn()
		}
	default:
		c.last = "tick"
		for _, r := range c.replicas {
			if r.up {
				r.group.Tick()
			}
		}
	}
}

// stepChecked steps and then asserts every live group's invariants, so a
// violation is caught at the step that caused it, whatever path it took.
func (c *cluster) stepChecked() {
	c.step()
	defer func() {
		if e := recover(); e != nil {
			c.dump()
			panic(fmt.Sprintf("after step %d (%s): %v", c.steps, c.last, e))
		}
	}()
	for _, r := range c.replicas {
		if r.up {
			r.group.checkInvariants()
		}
	}
}

func (c *cluster) run(steps int) {
	for range steps {
		c.stepChecked()
	}
}

// runUntil steps until cond holds or the budget runs out.
func (c *cluster) runUntil(steps int, cond func() bool) bool {
	for range steps {
		if cond() {
			return true
		}
		c.stepChecked()
	}
	return cond()
}

func (c *cluster) primary() *replica {
	for _, r := range c.replicas {
		if r.up && r.group.IsPrimary() {
			return r
		}
	}
	return nil
}

// propose sends n requests to whoever is primary, retrying until accepted.
func (c *cluster) propose(n int, steps int) int {
	accepted := 0
	for i := 0; i < steps && accepted < n; i++ {
		if p := c.primary(); p != nil {
			res := p.group.Propose(Proposal{Client: wire.U128From64(1), Request: uint64(accepted + 1),
				Operation: wire.OperationCreateStream, Body: []byte(fmt.Sprintf("op-%d", accepted))})
			if res != Refused {
				accepted++
			}
		}
		c.stepChecked()
	}
	return accepted
}

func (c *cluster) committedEverywhere(op uint64) bool {
	for _, r := range c.replicas {
		if !r.up || r.group.CommitMin() < op {
			return false
		}
	}
	return true
}

// durableJournal is a journal with a durability model: Append and state
// writes become durable when their completion runs; a crash keeps only
// what was durable.
type durableJournal struct {
	r            *replica
	frames       map[uint64][]byte
	headers      map[uint64]wire.Header // header known, body not
	durable      map[uint64][]byte
	durableHdrs  map[uint64]wire.Header
	state        wire.VsrState
	durableState wire.VsrState
	// acked: per op, the identity whose append completed (what the replica
	// may have acknowledged), durable; a header recorded by Reconcile for
	// another identity (or none) is unacked: the op may be nacked.
	acked          map[uint64]wire.U128
	unacked        map[uint64]bool
	durableUnacked map[uint64]bool
	// faulty: ops whose slot a test declared unreadable (a write torn by a
	// crash): nothing is known of them, and the head reaches them.
	faulty map[uint64]bool
	// evicted: every op at or below it is no longer served (a test's model
	// of a journal that dropped what a checkpoint covers).
	evicted uint64
	// ringSlots, when set, makes the journal a ring of that many slots: it
	// admits no op above the durable checkpoint plus the ring.
	ringSlots uint64
	// recordedHead: the log head a test says the superblock recorded with
	// durableState (Recovered.LogHead), when recordedHeadKnown.
	recordedHead      uint64
	recordedHeadKnown bool
}

func newDurableJournal(r *replica) *durableJournal {
	j := &durableJournal{r: r, frames: map[uint64][]byte{}, headers: map[uint64]wire.Header{},
		durable: map[uint64][]byte{}, durableHdrs: map[uint64]wire.Header{},
		acked: map[uint64]wire.U128{}, unacked: map[uint64]bool{}, durableUnacked: map[uint64]bool{}, faulty: map[uint64]bool{}}
	j.durableState = wire.VsrState{Cluster: wire.ClusterID("vsr-test"), ReplicaID: r.id, ReplicaCount: uint8(r.c.n)}
	return j
}

func (j *durableJournal) recover() {
	j.frames = map[uint64][]byte{}
	j.headers = map[uint64]wire.Header{}
	for op, f := range j.durable {
		j.frames[op] = f
	}
	for op, h := range j.durableHdrs {
		j.headers[op] = h
	}
	j.unacked = map[uint64]bool{}
	for op, u := range j.durableUnacked {
		j.unacked[op] = u
	}
	j.state = j.durableState
}

func (j *durableJournal) crash() {}

// forget loses every prepare and header, durable or not, keeping the
// durable state: a memory journal's restart.
func (j *durableJournal) forget() {
	j.durable, j.durableHdrs = map[uint64][]byte{}, map[uint64]wire.Header{}
	j.acked, j.durableUnacked = map[uint64]wire.U128{}, map[uint64]bool{}
	j.faulty = map[uint64]bool{}
}

func (j *durableJournal) head() uint64 {
	h := uint64(0)
	for op := range j.frames {
		h = max(h, op)
	}
	for op := range j.headers {
		h = max(h, op)
	}
	for op := range j.faulty {
		h = max(h, op)
	}
	return h
}

func (j *durableJournal) Append(frame []byte, done func()) {
	f := append([]byte(nil), frame...)
	op := u64op(wire.HeaderOf(f))
	j.frames[op] = f
	delete(j.headers, op)
	j.r.defer_(func() {
		j.durable[op] = f
		delete(j.durableHdrs, op)
		delete(j.durableUnacked, op)
		delete(j.faulty, op)
		j.acked[op] = wire.HeaderOf(f).Checksum()
		done()
	})
}

func (j *durableJournal) Frame(op uint64) ([]byte, bool) { f, ok := j.frames[op]; return f, ok }

func (j *durableJournal) RetainedFrom() uint64 { return j.evicted + 1 }

// Admits admits every op up to AdmitsThrough: the test journal is a map,
// which a test may bound like a ring (ringSlots).
func (j *durableJournal) Admits(op uint64) Admission {
	if op > j.AdmitsThrough() {
		return AdmitAfterCheckpoint
	}
	return Admitted
}

func (j *durableJournal) AdmitsThrough() uint64 {
	if j.ringSlots == 0 {
		return math.MaxUint64
	}
	return j.durableState.CheckpointOp + j.ringSlots
}

func (j *durableJournal) Durable(op uint64) bool {
	f, ok := j.frames[op]
	d, durable := j.durable[op]
	return ok && durable && &f[0] == &d[0]
}

func (j *durableJournal) Header(op uint64) (wire.Header, bool) {
	if f, ok := j.frames[op]; ok {
		return *wire.HeaderOf(f), true
	}
	h, ok := j.headers[op]
	return h, ok
}

func (j *durableJournal) Knowledge(op uint64) Knowledge {
	if j.faulty[op] {
		return KnowledgeNone
	}
	if _, ok := j.frames[op]; ok {
		return KnowledgeHeld
	}
	if _, ok := j.headers[op]; ok {
		if j.unacked[op] {
			return KnowledgeHeaderNever
		}
		return KnowledgeHeader
	}
	return KnowledgeNever
}

// WrittenOnly models a slot's evidence: what a restart would find at op (a
// durable frame or header) and the prepare last acknowledged there must be
// id's or none, with no append in flight and nothing torn.
func (j *durableJournal) WrittenOnly(op uint64, id wire.U128) bool {
	if j.faulty[op] {
		return false
	}
	if a, ok := j.acked[op]; ok && a != id {
		return false
	}
	if f, ok := j.frames[op]; ok {
		if d, durable := j.durable[op]; !durable || &d[0] != &f[0] {
			return false
		}
	}
	if f, ok := j.durable[op]; ok && wire.HeaderOf(f).Checksum() != id {
		return false
	}
	if h, ok := j.durableHdrs[op]; ok && h.Checksum() != id {
		return false
	}
	return true
}

func (j *durableJournal) Truncate(afterOp uint64) {
	for op := range j.frames {
		if op > afterOp {
			delete(j.frames, op)
		}
	}
	for op := range j.headers {
		if op > afterOp {
			delete(j.headers, op)
		}
	}
}

func (j *durableJournal) Reconcile(head uint64, canonical []wire.Header, done func()) {
	j.Truncate(head)
	var stale []wire.Header
	for _, h := range canonical {
		op := u64op(&h)
		if f, ok := j.frames[op]; !ok || wire.HeaderOf(f).Checksum() != h.Checksum() {
			delete(j.frames, op)
			j.headers[op] = h
			j.unacked[op] = j.acked[op] != h.Checksum()
			stale = append(stale, h)
		}
	}
	j.r.defer_(func() {
		for op := range j.durable {
			if op > head {
				delete(j.durable, op)
			}
		}
		for op := range j.durableHdrs {
			if op > head {
				delete(j.durableHdrs, op)
				delete(j.durableUnacked, op)
			}
		}
		for op := range j.acked {
			if op > head {
				delete(j.acked, op)
			}
		}
		for op := range j.faulty {
			if op > head {
				delete(j.faulty, op)
			}
		}
		for _, h := range stale {
			op := u64op(&h)
			delete(j.durable, op)
			j.durableHdrs[op] = h
			j.durableUnacked[op] = j.acked[op] != h.Checksum()
			delete(j.faulty, op)
		}
		done()
	})
}

func (j *durableJournal) WriteState(s wire.VsrState, done func()) {
	j.state = s
	j.r.defer_(func() {
		j.durableState = s
		done()
	})
}

func (c *cluster) dump() {
	for _, r := range c.replicas {
		g := r.group
		acks := []uint64{}
		for _, p := range g.pipeline {
			acks = append(acks, p.acks)
		}
		_, canonHead := g.canon[g.op]
		c.t.Logf("replica %d: up %v status %v view %d log_view %d op %d commit %d/%d durable %d/%d pipeline %v acked %d canon(head) %v repair %+v",
			r.id, r.up, g.Status(), g.View(), g.LogView(), g.Op(), g.CommitMin(), g.CommitMax(),
			g.durable.View, g.durable.LogView, acks, g.ackedTo, canonHead, g.repair)
	}
}

// Scripting helpers: block links, settle, tick.

type link struct{ from, to uint8 }

// block drops every message on the given directed links (and keeps any
// other drop rule).
func (c *cluster) block(links ...link) {
	if c.blocked == nil {
		c.blocked = map[link]bool{}
	}
	for _, l := range links {
		c.blocked[l] = true
	}
}

// isolate blocks every link to and from r.
func (c *cluster) isolate(r uint8) {
	for i := range c.n {
		if uint8(i) != r {
			c.block(link{r, uint8(i)}, link{uint8(i), r})
		}
	}
}

// unblockAll lifts every block.
func (c *cluster) unblockAll() { c.blocked = nil }

// settle delivers every queued message and runs every completion, in
// order, until nothing is left (no ticks).
func (c *cluster) settle() {
	for i := 0; i < 1_000_000 && (len(c.queue) > 0 || len(c.later) > 0); i++ {
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue = c.queue[1:]
			c.deliver(m)
		} else {
			d := c.later[0]
			c.later = c.later[1:]
			if r := c.replicas[d.replica]; r.up && r.incarnation == d.incarnation {
				d.fn()
			}
		}
	}
}

// settleExcept is settle, but leaves the completions of replica r pending
// (its journal is slow).
func (c *cluster) settleExcept(r uint8) {
	var held []deferred
	for i := 0; i < 1_000_000 && (len(c.queue) > 0 || len(c.later) > 0); i++ {
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue = c.queue[1:]
			c.deliver(m)
			continue
		}
		d := c.later[0]
		c.later = c.later[1:]
		if d.replica == r {
			held = append(held, d)
			continue
		}
		if rr := c.replicas[d.replica]; rr.up && rr.incarnation == d.incarnation {
			d.fn()
		}
	}
	c.later = append(c.later, held...)
}

func (c *cluster) deliver(m message) {
	r := c.replicas[m.to]
	if !r.up || !c.replicas[m.from].up || c.blocked[link{m.from, m.to}] || (c.drop != nil && c.drop(m)) {
		return
	}
	if c.mutate != nil {
		m.frame = c.mutate(m)
	}
	r.group.Receive(m.from, m.frame)
}

// tick ticks replica r n times, settling after each tick.
func (c *cluster) tick(r uint8, n int) {
	for range n {
		if c.replicas[r].up {
			c.replicas[r].group.Tick()
		}
		c.settle()
	}
}

// tickHolding ticks replica r n times, settling everything but hold's
// completions after each tick.
func (c *cluster) tickHolding(r uint8, n int, hold uint8) {
	for range n {
		if c.replicas[r].up {
			c.replicas[r].group.Tick()
		}
		c.settleExcept(hold)
	}
}

// tickAll ticks every up replica n times, settling after each tick: time
// passes for the whole cluster at once, with no message loss.
func (c *cluster) tickAll(n int) {
	for range n {
		for _, r := range c.replicas {
			if r.up {
				r.group.Tick()
			}
		}
		c.settle()
	}
}
