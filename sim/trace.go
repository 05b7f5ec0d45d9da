package sim

import (
	"encoding/json"
	"io"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
	"github.com/iggy-vopr/vopr/workload"
)

// The -trace file: one JSON object per line, each with at_ns (virtual time)
// and kind, in the order things happened. Kinds:
//
//	replica events      the vsr event kinds (prepared, committed, status, start_view, probe, ...),
//	                    reply, replay, eviction, deny, probe: with replica and the event's fields;
//	                    a partition group's events also carry its group id (group)
//	partition_group     a replica built the consensus group of a partition (group)
//	poll                a replica answered a client's poll (client, request, group)
//	crash, restart      a process fault (replica; crash: mid_io when I/O was in flight;
//	                    restart: reason "liveness" for the liveness core's restart)
//	freeze              a replica outside the liveness core stopped for good
//	pause, resume       a process paused (ticks: for how long) and resumed
//	phase               the liveness phase began (core: its replicas; cut: the paths still cut)
//	partition           a partition started (mode, symmetry, cut: the cut paths [from, to];
//	                    mode "rollback": a split by the rollback nemesis)
//	nemesis             the rollback nemesis moved on (replica, reason: what it did)
//	partition_heal      no path between replicas is cut any more
//	connection_reset    connections reset (cause, count)
//	clog                paths clogged (count; clogged: every path clogged now)
//	frame_corrupted     frames with a bit flipped in flight (from, to, command when known, count)
//	storage_fault       sectors faulted on a replica's disk (fault: latent, corrupt, misdirect,
//	                    read_fault, crash_torn, crash_lost; count)
//	client_invoke       a client's invocation (client_index, client, session, request, operation)
//	client_timeout      a request timed out (client_index, client, request, attempts, target:
//	                    the replica it is resent to)
//	client_complete     how it ended (client_index, client, request, outcome, reason, attempts)
//
// Node numbers in from, to, cut and clogged are network nodes: replicas 0..R-1,
// clients R and up. The network and the disks report faults as counters, so
// the trace turns them into events by looking at the counters after every
// loop event (tracer.poll); their at_ns is that of the event that caused
// them. Nothing here draws randomness or changes the run: a traced run has
// the digest of an untraced one.

// traceLine is one line of the trace; each kind fills its own fields.
type traceLine struct {
	AtNs        int64      `json:"at_ns"`
	Replica     *uint8     `json:"replica,omitempty"`
	Kind        string     `json:"kind"`
	Status      string     `json:"status,omitempty"`
	View        uint32     `json:"view,omitempty"`
	LogView     uint32     `json:"log_view,omitempty"`
	Op          uint64     `json:"op,omitempty"`
	Commit      uint64     `json:"commit,omitempty"`
	ID          string     `json:"identity,omitempty"`
	Probe       string     `json:"probe,omitempty"`
	ClientIndex *int       `json:"client_index,omitempty"`
	Client      string     `json:"client,omitempty"`
	Session     uint64     `json:"session,omitempty"`
	Request     uint64     `json:"request,omitempty"`
	Operation   string     `json:"operation,omitempty"`
	Outcome     string     `json:"outcome,omitempty"`
	Reason      string     `json:"reason,omitempty"`
	Attempts    int        `json:"attempts,omitempty"`
	Target      *int       `json:"target,omitempty"`
	MidIO       bool       `json:"mid_io,omitempty"`
	Ticks       int64      `json:"ticks,omitempty"`
	Phase       string     `json:"phase,omitempty"`
	Core        []int      `json:"core,omitempty"`
	Mode        string     `json:"mode,omitempty"`
	Symmetry    string     `json:"symmetry,omitempty"`
	Cut         [][2]int32 `json:"cut,omitempty"`
	Clogged     [][2]int32 `json:"clogged,omitempty"`
	Cause       string     `json:"cause,omitempty"`
	From        *int32     `json:"from,omitempty"`
	To          *int32     `json:"to,omitempty"`
	Command     string     `json:"command,omitempty"`
	Fault       string     `json:"fault,omitempty"`
	Count       uint64     `json:"count,omitempty"`
	Group       uint64     `json:"group,omitempty"`
}

// tracer writes one run's trace. A nil *tracer (no -trace) ignores every
// call, so the hooks cost nothing untraced.
type tracer struct {
	w io.Writer
	c *Cluster
	o *Options

	// What the counters said at the last poll.
	net             network.Stats
	partitioned     bool
	corruptPaths    map[[2]network.NodeID]uint64 // looked up only; output follows PathStats' order
	corruptCommands [256]uint64
	disks           []storage.Stats
}

func newTracer(w io.Writer, c *Cluster, o *Options) *tracer {
	t := &tracer{w: w, c: c, o: o, corruptPaths: map[[2]network.NodeID]uint64{}, disks: make([]storage.Stats, len(c.Replicas))}
	for _, cn := range c.Clients {
		cn.OnInvoke, cn.OnComplete, cn.OnTimeout = t.invoke, t.complete, t.timeout
	}
	return t
}

func (t *tracer) write(l traceLine) {
	l.AtNs = t.c.Loop.Now()
	b, _ := json.Marshal(l)
	t.w.Write(append(b, '\n'))
}

func replicaRef(r uint8) *uint8 { return &r }
func intRef(i int) *int         { return &i }
func nodeRef(n network.NodeID) *int32 {
	i := int32(n)
	return &i
}

// runTick runs the loop for one tick. With a trace it fires one event at a
// time and polls the counters after each, exactly as RunUntil would fire
// them (RunUntil then only moves the time to the tick's end).
func (v *vopr) runTick() {
	l := v.c.Loop
	if b := v.out.Branch; b != nil && !v.branched && l.Now() >= b.AtNs {
		v.branched = true
		v.c.Streams.Reseed(b.Salt)
		v.out.Plan.Release()
		v.res.BranchedAtNs = l.Now()
	}
	limit := l.Now() + kernel.TickNs
	if v.tr != nil {
		for at, ok := l.NextAt(); ok && at <= limit; at, ok = l.NextAt() {
			l.Step()
			v.tr.poll()
		}
	}
	l.RunUntil(limit, 0)
}

// replica traces one replica event.
func (t *tracer) replica(e replica.Event) {
	if t == nil {
		return
	}
	l := traceLine{Replica: replicaRef(e.Replica)}
	switch e.Kind {
	case replica.EventGroup:
		g := e.Group
		l.Kind, l.View, l.LogView, l.Op, l.Commit, l.Probe = g.Kind.String(), g.View, g.LogView, g.Op, g.Commit, g.Probe
		if g.Kind == vsr.EventStatus {
			l.Status = g.Status.String()
		}
		if g.Kind == vsr.EventCommitted || g.Kind == vsr.EventPrepared {
			l.ID = g.Header.Checksum().String()
		}
		if g.Group != wire.MetadataGroup {
			l.Group = g.Group
		}
	case replica.EventPartitionBuilt:
		l.Kind, l.Group = "partition_group", e.PartitionGroup
	case replica.EventPoll:
		l.Kind, l.Client, l.Request, l.Group = "poll", e.Client.String(), e.Request, e.PartitionGroup
	case replica.EventReply:
		l.Kind, l.Op, l.Client, l.Request = "reply", e.Op, e.Client.String(), e.Request
	case replica.EventReplay:
		l.Kind, l.Client, l.Request = "replay", e.Client.String(), e.Request
	case replica.EventEviction:
		l.Kind, l.Client = "eviction", e.Client.String()
	case replica.EventDeny:
		l.Kind, l.Client, l.Request = "deny", e.Client.String(), e.Request
	case replica.EventProbe:
		l.Kind, l.Probe = "probe", e.Probe
	case replica.EventCheckpoint:
		l.Kind, l.Op = "checkpoint", e.Op
	case replica.EventRestored:
		l.Kind, l.Op = "checkpoint_restored", e.Op
	case replica.EventInstalled:
		l.Kind, l.Op = "state_installed", e.Op
	case replica.EventPartitionInstalled:
		l.Kind, l.Op, l.Group = "state_installed", e.Op, e.PartitionGroup
	case replica.EventOffsetsRecovered, replica.EventOffsetWrite, replica.EventOffsetDurable, replica.EventSegmentRecovered,
		replica.EventCheckpointRead, replica.EventJournalRecovered:
		return // for the checker's reading of the disk; the trace has the probes
	}
	t.write(l)
}

// process traces a process fault or the liveness phase acting on replica r:
// kind is crash, restart, freeze, pause or resume.
func (t *tracer) process(kind string, r uint8, midIO bool, reason string, ticks int64) {
	if t == nil {
		return
	}
	t.write(traceLine{Kind: kind, Replica: replicaRef(r), MidIO: midIO, Reason: reason, Ticks: ticks})
}

// liveness traces the start of the liveness phase: its core, and what is
// still cut once the core is healed.
func (t *tracer) liveness(core []bool) {
	if t == nil {
		return
	}
	l := traceLine{Kind: "phase", Phase: "liveness", Core: []int{}}
	for i, in := range core {
		if in {
			l.Core = append(l.Core, i)
		}
	}
	l.Cut = t.cut()
	t.write(l)
	t.poll()
}

func (t *tracer) invoke(inv workload.Invocation) {
	t.write(traceLine{Kind: "client_invoke", ClientIndex: intRef(inv.Client), Client: inv.ClientID.String(),
		Session: inv.Session, Request: inv.Request, Operation: inv.Operation.String()})
}

func (t *tracer) timeout(to workload.Timeout) {
	t.write(traceLine{Kind: "client_timeout", ClientIndex: intRef(to.Client), Client: to.ClientID.String(),
		Request: to.Request, Attempts: to.Attempts, Target: intRef(to.Target)})
}

func (t *tracer) complete(d workload.Completion) {
	l := traceLine{Kind: "client_complete", ClientIndex: intRef(d.Client), Client: d.ClientID.String(),
		Request: d.Request, Outcome: d.Kind.String(), Attempts: d.Attempts}
	if d.Kind == workload.Indefinite {
		l.Reason = d.Reason.String()
	}
	t.write(l)
}

// cut lists the cut paths between replicas, in id order.
func (t *tracer) cut() [][2]int32 {
	var out [][2]int32
	for a := range t.c.Replicas {
		for b := range t.c.Replicas {
			if a != b && t.c.Net.Cut(network.NodeID(a), network.NodeID(b)) {
				out = append(out, [2]int32{int32(a), int32(b)})
			}
		}
	}
	return out
}

// clogged lists every clogged path between nodes, in id order.
func (t *tracer) clogged() [][2]int32 {
	nodes := len(t.c.Replicas) + len(t.c.Clients)
	var out [][2]int32
	for a := range nodes {
		for b := range nodes {
			if a != b && t.c.Net.Clogged(network.NodeID(a), network.NodeID(b)) {
				out = append(out, [2]int32{int32(a), int32(b)})
			}
		}
	}
	return out
}

// poll turns what the network's and the disks' counters gained since the
// last poll into trace lines.
func (t *tracer) poll() {
	if t == nil {
		return
	}
	ns := t.c.Net.Stats()
	if ns.Partitions > t.net.Partitions {
		mode, symmetry := partitionModeName(t.o.PartitionMode), partitionSymmetryName(t.o.PartitionSymmetry)
		if t.o.Rollback {
			mode, symmetry = "rollback", "symmetric" // the nemesis's splits (rollback.go)
		}
		t.write(traceLine{Kind: "partition", Mode: mode, Symmetry: symmetry, Cut: t.cut()})
	}
	if p := t.c.Net.Partitioned(); p != t.partitioned {
		if !p {
			t.write(traceLine{Kind: "partition_heal"})
		}
		t.partitioned = p
	}
	for cause := range network.ResetCauseCount {
		if d := ns.Resets[cause] - t.net.Resets[cause]; d > 0 {
			t.write(traceLine{Kind: "connection_reset", Cause: cause.String(), Count: d})
		}
	}
	if ns.Clogs > t.net.Clogs {
		t.write(traceLine{Kind: "clog", Count: ns.Clogs - t.net.Clogs, Clogged: t.clogged()})
	}
	if ns.FramesCorrupted > t.net.FramesCorrupted {
		t.corrupted(ns.FramesCorrupted - t.net.FramesCorrupted)
	}
	t.net = ns
	for i, rn := range t.c.Replicas {
		s, was := rn.Device().Stats(), t.disks[i]
		for _, f := range []struct {
			name     string
			now, was uint64
		}{
			{"latent", s.LatentMarked, was.LatentMarked},
			{"corrupt", s.CorruptMarked, was.CorruptMarked},
			{"misdirect", s.Misdirected, was.Misdirected},
			{"read_fault", s.ReadFaults, was.ReadFaults},
			{"crash_torn", s.CrashTorn, was.CrashTorn},
			{"crash_lost", s.CrashLost, was.CrashLost},
		} {
			if f.now > f.was {
				t.write(traceLine{Kind: "storage_fault", Replica: replicaRef(uint8(i)), Fault: f.name, Count: f.now - f.was})
			}
		}
		t.disks[i] = s
	}
}

// corrupted traces the n frames corrupted since the last poll, one line per
// path, naming the command when only one command's count grew.
func (t *tracer) corrupted(n uint64) {
	command := ""
	grew := 0
	for _, cs := range t.c.Net.CommandStats() {
		if cs.FramesCorrupted > t.corruptCommands[cs.Command] {
			grew++
			command = wire.Command(cs.Command).SnakeName()
			t.corruptCommands[cs.Command] = cs.FramesCorrupted
		}
	}
	if grew != 1 {
		command = ""
	}
	lines := 0
	for _, ps := range t.c.Net.PathStats() {
		k := [2]network.NodeID{ps.From, ps.To}
		if d := ps.FramesCorrupted - t.corruptPaths[k]; d > 0 {
			t.corruptPaths[k] = ps.FramesCorrupted
			t.write(traceLine{Kind: "frame_corrupted", From: nodeRef(ps.From), To: nodeRef(ps.To), Command: command, Count: d})
			lines++
		}
	}
	if lines == 0 {
		t.write(traceLine{Kind: "frame_corrupted", Count: n})
	}
}
