package timeline

import (
	"bytes"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// Options size a Recorder: the cluster, and how much it keeps.
type Options struct {
	Replicas, Clients int
	// Buckets is the overview's buckets per lane at most (default 2048;
	// rounded up to even, since they merge in pairs).
	Buckets int
	// Events and Frames are the detail window: the last Events events
	// (default 20,000) and Frames frames (default 4,000) before the end.
	Events, Frames int
	// Requests is the completed client requests kept for the window's
	// client lanes (default 5,000).
	Requests int
}

func (o *Options) defaults() {
	if o.Buckets <= 0 {
		o.Buckets = 2048
	}
	o.Buckets = max(2, o.Buckets+o.Buckets%2)
	if o.Events <= 0 {
		o.Events = 20_000
	}
	if o.Frames <= 0 {
		o.Frames = 4_000
	}
	if o.Requests <= 0 {
		o.Requests = 5_000
	}
}

// Frame is a frame between replicas as the timeline keeps it: when it was
// sent (-1: not known) and delivered, who to whom, its command, and the
// group, view and op its header names.
type Frame struct {
	SentNs, AtNs int64
	From, To     int
	Command      string
	Group        uint64 // 0: the metadata plane (as the trace numbers it)
	View         uint32
	// Op is the op a prepare or a prepare_ok names, the commit number of a
	// commit; 0 for other commands.
	Op uint64
}

// Request is one client request, from its invocation to its completion.
type Request struct {
	Client    int
	Request   uint64
	Operation string
	InvokedNs int64
	DoneNs    int64  // -1: still open when the run ended
	Outcome   string // replied, denied, indefinite; "" while open
	Timeouts  int
}

// Recorder reads one run's trace and frames as they stream and keeps the
// overview and the detail window (see the package doc). It is the run's
// sim.Outputs.Trace, and its Frame method sim.Outputs.Frames.
type Recorder struct {
	o       Options
	partial []byte // a line begun in one Write, ended in another
	live    States
	// base is every lane's state where the detail window begins: each
	// event that leaves the window is applied to it.
	base     States
	grid     *grid
	events   *ring[Event]
	frames   *ring[Frame]
	requests *ring[Request]
	lines    int
	bad      int
	firstBad string
	lastNs   int64
	// since is when each replica's status last changed: the time until
	// the next change accrues to it (ReplicaBucket.Time).
	since []int64
	// eventsBefore counts the trace's events that left the window (not
	// the ones a frame derived).
	eventsBefore int
}

// NewRecorder makes a Recorder for a cluster of o.Replicas and o.Clients.
func NewRecorder(o Options) *Recorder {
	o.defaults()
	return &Recorder{o: o, live: newStates(o.Replicas, o.Clients), base: newStates(o.Replicas, o.Clients),
		grid:   newGrid(kernel.TickNs, o.Buckets, o.Replicas, o.Clients),
		since:  make([]int64, o.Replicas),
		events: newRing[Event](o.Events), frames: newRing[Frame](o.Frames), requests: newRing[Request](o.Requests)}
}

// Write takes trace lines (any split: a line may span Writes). A line it
// cannot read is counted, and the page says so; Write never fails, so that
// a bad line cannot stop the run.
func (r *Recorder) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.partial = append(r.partial, p...)
			break
		}
		line := p[:i]
		if len(r.partial) > 0 {
			r.partial = append(r.partial, line...)
			line = r.partial
		}
		r.line(line)
		r.partial = r.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (r *Recorder) line(b []byte) {
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	r.lines++
	e, err := parseLine(b, r.o.Replicas)
	if err != nil {
		if r.bad == 0 {
			r.firstBad = fmt.Sprintf("line %d: %v", r.lines, err)
		}
		r.bad++
		return
	}
	r.event(e)
}

// event folds one event into the lanes, their buckets and the window.
func (r *Recorder) event(e Event) {
	r.lastNs = max(r.lastNs, e.AtNs)
	i := r.grid.index(e.AtNs)
	switch {
	case e.Replica >= 0 && e.Replica < r.o.Replicas:
		s, b := &r.live.Replicas[e.Replica], &r.grid.replicas[e.Replica][i]
		if !b.Seen {
			b.start(s)
		}
		was := s.Status
		s.apply(&e)
		if s.Status != was {
			r.grid.accrue(r.grid.replicas[e.Replica], was, r.since[e.Replica], e.AtNs)
			r.since[e.Replica] = e.AtNs
		}
		b.observe(s)
		if !e.Derived {
			b.count(&e)
		}
	case e.Client >= 0 && e.Client < r.o.Clients:
		s, b := &r.live.Clients[e.Client], &r.grid.clients[e.Client][i]
		if !b.Seen {
			b.start(s)
		}
		if e.Kind == "client_complete" && s.Open && s.Request == e.Request {
			r.requests.push(Request{Client: e.Client, Request: e.Request, Operation: s.Operation, InvokedNs: s.InvokedNs,
				DoneNs: e.AtNs, Outcome: e.Outcome, Timeouts: s.Timeouts})
		}
		s.apply(&e)
		b.observe(s)
		b.count(&e)
	case e.Replica < 0 && e.Client < 0:
		s, b := &r.live.Network, &r.grid.network[i]
		if !b.Seen {
			b.start(s)
		}
		s.apply(&e)
		b.observe(s)
		b.count(&e)
	}
	if old, evicted := r.events.push(e); evicted {
		r.base.apply(&old)
		if !old.Derived {
			r.eventsBefore++
		}
	}
}

// Frame takes one frame delivered between replicas (sim.Outputs.Frames).
// A prepare_ok of the metadata plane also tells the lane of its sender
// that it holds the op it acknowledges (ReplicaState).
func (r *Recorder) Frame(pf sim.PeerFrame) {
	if len(pf.Frame) < wire.HeaderSize {
		return
	}
	h := wire.HeaderOf(pf.Frame)
	f := Frame{SentNs: pf.SentNs, AtNs: pf.AtNs, From: int(pf.From), To: int(pf.To), Command: h.Command().SnakeName(), View: h.View()}
	if g, ok := wire.GroupOf(pf.Frame); ok && g != wire.MetadataGroup {
		f.Group = g
	}
	switch h.Command() {
	case wire.CommandPrepare, wire.CommandRepairPrepare:
		var x wire.PrepareHeader
		x.Decode(h)
		f.Op = x.Op
	case wire.CommandPrepareOk:
		var x wire.PrepareOkHeader
		x.Decode(h)
		f.Op = x.Op
	case wire.CommandCommit:
		var x wire.CommitHeader
		x.Decode(h)
		f.Op = x.Commit
	}
	r.lastNs = max(r.lastNs, f.AtNs)
	r.frames.push(f)
	if h.Command() == wire.CommandPrepareOk && f.Group == 0 && f.From < r.o.Replicas && f.Op > r.live.Replicas[f.From].Op {
		r.event(Event{AtNs: f.AtNs, Kind: "prepare_ok", Replica: f.From, Client: -1, Op: f.Op, Derived: true,
			Text: fmt.Sprintf("its prepare_ok of op %d reached replica %d: it holds op %d", f.Op, f.To, f.Op)})
	}
}

// Finish ends the recording with the run's result and returns the
// timeline. The Recorder is spent.
func (r *Recorder) Finish(res sim.Result) *Timeline {
	if len(r.partial) > 0 {
		r.line(r.partial)
		r.partial = nil
	}
	end := max(r.lastNs, int64(res.Ticks)*kernel.TickNs, res.ViolationAtNs)
	last := r.grid.index(end)
	for i, s := range r.live.Replicas {
		r.grid.accrue(r.grid.replicas[i], s.Status, r.since[i], end)
	}
	r.grid.fill(last + 1)
	t := &Timeline{
		Seed: res.Seed, Replicas: r.o.Replicas, Clients: r.o.Clients, EndNs: end,
		Outcome: res.Outcome.String(), Violation: res.Violation, Evidence: res.Evidence, Summary: res.Summary(),
		BucketNs: r.grid.widthNs, Buckets: last + 1,
		Network: r.grid.network[:last+1], ReplicaLanes: make([][]ReplicaBucket, r.o.Replicas), ClientLanes: make([][]ClientBucket, r.o.Clients),
		Lines: r.lines, BadLines: r.bad, FirstBad: r.firstBad,
	}
	if res.Outcome != sim.Pass {
		t.ViolationAtNs = res.ViolationAtNs
		t.ViolationName, _, _ = cutViolation(res.Violation)
	}
	for i := range t.ReplicaLanes {
		t.ReplicaLanes[i] = r.grid.replicas[i][:last+1]
	}
	for i := range t.ClientLanes {
		t.ClientLanes[i] = r.grid.clients[i][:last+1]
	}
	d := &t.Detail
	d.Events, d.Frames = r.events.all(), r.frames.all()
	d.EventsBefore, d.FramesBefore = r.eventsBefore, r.frames.dropped
	d.StartNs = 0
	if r.events.dropped > 0 && len(d.Events) > 0 {
		d.StartNs = d.Events[0].AtNs
	}
	d.FramesFromNs = d.StartNs
	if d.FramesBefore > 0 && len(d.Frames) > 0 {
		d.FramesFromNs = max(d.StartNs, d.Frames[0].AtNs)
	}
	d.Start = r.base
	for _, q := range r.requests.all() {
		if q.DoneNs >= d.StartNs {
			d.Requests = append(d.Requests, q)
		}
	}
	for c, s := range r.live.Clients {
		if s.Open {
			d.Requests = append(d.Requests, Request{Client: c, Request: s.Request, Operation: s.Operation, InvokedNs: s.InvokedNs,
				DoneNs: -1, Timeouts: s.Timeouts})
		}
	}
	t.cite()
	return t
}
