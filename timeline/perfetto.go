package timeline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Process ids of the trace-event file: one process per kind of lane, a
// thread per lane in it.
const (
	pidReplicas = 1
	pidClients  = 2
	pidNetwork  = 3
)

// traceEvent is one Chrome trace event (the JSON trace-event format that
// Perfetto and chrome://tracing read). Ts and Dur are microseconds.
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"` // a pointer: a frame's slice has a duration of 0
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	S    string         `json:"s,omitempty"`  // an instant's scope
	ID   string         `json:"id,omitempty"` // a flow's
	Bp   string         `json:"bp,omitempty"` // a flow end's binding point
	Args map[string]any `json:"args,omitempty"`
}

// messagesTid is the thread of replica i's messages: frames are instants
// in time, kept apart from its status slices so that neither breaks the
// other's nesting.
func messagesTid(i int) int { return 1001 + i }

func us(ns int64) float64 { return float64(ns) / 1e3 }

func dur(ns int64) *float64 {
	d := max(float64(ns)/1e3, 0)
	return &d
}

// WritePerfetto writes the timeline as Chrome trace-event JSON
// ({"traceEvents":[...]}): a thread per lane (replica i, client i, the
// network), named by metadata events. It holds what the page holds: the
// whole run at bucket resolution (a replica's status as slices, its view,
// log_view, op and commit as counters, the faults counted per bucket as
// instants) and the detail window whole (every event an instant, every
// client request a slice, every frame a slice at each end joined by a
// flow arrow), with the violation and the evidence as instants.
func (t *Timeline) WritePerfetto(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(`{"displayTimeUnit":"ms","otherData":{"seed":"` + strconv.FormatUint(t.Seed, 10) + `"},"traceEvents":[` + "\n")
	first := true
	var err error
	emit := func(e traceEvent) {
		if err != nil {
			return
		}
		b, merr := json.Marshal(e)
		if merr != nil {
			err = merr
			return
		}
		if !first {
			bw.WriteString(",\n")
		}
		first = false
		_, err = bw.Write(b)
	}
	meta := func(name string, pid, tid int, value string) {
		emit(traceEvent{Name: name, Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"name": value}})
	}
	sortIndex := func(pid, tid, index int) {
		emit(traceEvent{Name: "thread_sort_index", Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"sort_index": index}})
	}
	meta("process_name", pidNetwork, 0, "network")
	meta("process_name", pidReplicas, 0, "replicas")
	meta("process_name", pidClients, 0, "clients")
	emit(traceEvent{Name: "process_sort_index", Ph: "M", Pid: pidNetwork, Args: map[string]any{"sort_index": 0}})
	emit(traceEvent{Name: "process_sort_index", Ph: "M", Pid: pidReplicas, Args: map[string]any{"sort_index": 1}})
	emit(traceEvent{Name: "process_sort_index", Ph: "M", Pid: pidClients, Args: map[string]any{"sort_index": 2}})
	meta("thread_name", pidNetwork, 1, "network")
	for i := range t.Replicas {
		meta("thread_name", pidReplicas, i+1, "replica "+strconv.Itoa(i))
		sortIndex(pidReplicas, i+1, 2*i)
		meta("thread_name", pidReplicas, messagesTid(i), "replica "+strconv.Itoa(i)+" messages")
		sortIndex(pidReplicas, messagesTid(i), 2*i+1)
	}
	for i := range t.Clients {
		meta("thread_name", pidClients, i+1, "client "+strconv.Itoa(i))
		sortIndex(pidClients, i+1, i)
	}
	// The overview: status slices and counters per replica, fault counts
	// per bucket.
	for r, bs := range t.ReplicaLanes {
		runs(len(bs), func(i int) uint8 { return bs[i].Last }, func(a, b int, s uint8) {
			emit(traceEvent{Name: StatusName(s), Cat: "status", Ph: "X", Ts: us(int64(a) * t.BucketNs), Dur: dur(int64(b-a) * t.BucketNs),
				Pid: pidReplicas, Tid: r + 1})
		})
		var last [4]uint64
		for i := range bs {
			b := &bs[i]
			now := [4]uint64{b.View.Last, b.LogView.Last, b.Op.Last, b.Commit.Last}
			if i == 0 || now != last {
				emit(traceEvent{Name: "replica " + strconv.Itoa(r), Cat: "state", Ph: "C", Ts: us(int64(i) * t.BucketNs), Pid: pidReplicas, Tid: r + 1,
					Args: map[string]any{"view": now[0], "log_view": now[1], "op": now[2], "commit": now[3]}})
				last = now
			}
			if b.Crashes+b.Restarts+b.Freezes+b.Pauses > 0 || b.DiskFaults > 0 {
				emit(traceEvent{Name: "faults", Cat: "overview", Ph: "i", S: "t", Ts: us(int64(i) * t.BucketNs), Pid: pidReplicas, Tid: r + 1,
					Args: map[string]any{"crashes": b.Crashes, "restarts": b.Restarts, "freezes": b.Freezes, "pauses": b.Pauses,
						"sector_faults": b.DiskFaults, "bucket_ms": float64(t.BucketNs) / 1e6}})
			}
		}
	}
	runs(len(t.Network), func(i int) bool { return t.Network[i].Partitioned }, func(a, b int, on bool) {
		if on {
			emit(traceEvent{Name: "partitioned", Cat: "network", Ph: "X", Ts: us(int64(a) * t.BucketNs), Dur: dur(int64(b-a) * t.BucketNs),
				Pid: pidNetwork, Tid: 1})
		}
	})
	for i := range t.Network {
		b := &t.Network[i]
		if b.Clogs+b.Resets+b.Corrupted > 0 {
			emit(traceEvent{Name: "network faults", Cat: "overview", Ph: "i", S: "t", Ts: us(int64(i) * t.BucketNs), Pid: pidNetwork, Tid: 1,
				Args: map[string]any{"clogs": b.Clogs, "resets": b.Resets, "corrupted": b.Corrupted, "bucket_ms": float64(t.BucketNs) / 1e6}})
		}
	}
	if s := t.Sweep; s != nil {
		for _, q := range s.Points {
			emit(traceEvent{Name: "failure likelihood", Cat: "sweep", Ph: "C", Ts: us(q.AtNs), Pid: pidNetwork, Tid: 1,
				Args: map[string]any{"same_pct": pct(q.Same, q.Branches), "failed_pct": pct(q.Failed, q.Branches)}})
		}
		if at, ok := s.Inevitable(); ok {
			emit(traceEvent{Name: "failure inevitable", Cat: "sweep", Ph: "i", S: "g", Ts: us(at), Pid: pidNetwork, Tid: 1})
		}
	}
	// The detail window.
	d := &t.Detail
	for i := range d.Events {
		e := &d.Events[i]
		if e.Derived {
			continue
		}
		ev := traceEvent{Name: e.Kind, Cat: "event", Ph: "i", S: "t", Ts: us(e.AtNs), Args: map[string]any{"what": e.Title(t.Replicas)}}
		switch {
		case e.Replica >= 0:
			ev.Pid, ev.Tid = pidReplicas, e.Replica+1
		case e.Client >= 0:
			ev.Pid, ev.Tid = pidClients, e.Client+1
		default:
			ev.Pid, ev.Tid = pidNetwork, 1
		}
		if t.cited(e) {
			ev.Cat = "evidence"
		}
		emit(ev)
	}
	for _, q := range d.Requests {
		done, outcome := q.DoneNs, q.Outcome
		if done < 0 {
			done, outcome = t.EndNs, "open"
		}
		emit(traceEvent{Name: fmt.Sprintf("request %d %s", q.Request, q.Operation), Cat: "request", Ph: "X", Ts: us(q.InvokedNs),
			Dur: dur(done - q.InvokedNs), Pid: pidClients, Tid: q.Client + 1,
			Args: map[string]any{"outcome": outcome, "timeouts": q.Timeouts}})
	}
	zero := 0.0
	for i := range d.Frames {
		f := &d.Frames[i]
		args := map[string]any{"from": f.From, "to": f.To, "view": f.View, "op": f.Op, "group": f.Group}
		id := strconv.Itoa(i + 1)
		if f.SentNs >= 0 {
			emit(traceEvent{Name: f.Command, Cat: "send", Ph: "X", Ts: us(f.SentNs), Dur: &zero, Pid: pidReplicas, Tid: messagesTid(f.From), Args: args})
			emit(traceEvent{Name: f.Command, Cat: "message", Ph: "s", Ts: us(f.SentNs), Pid: pidReplicas, Tid: messagesTid(f.From), ID: id})
			emit(traceEvent{Name: f.Command, Cat: "message", Ph: "f", Bp: "e", Ts: us(f.AtNs), Pid: pidReplicas, Tid: messagesTid(f.To), ID: id})
		}
		emit(traceEvent{Name: f.Command, Cat: "deliver", Ph: "X", Ts: us(f.AtNs), Dur: &zero, Pid: pidReplicas, Tid: messagesTid(f.To), Args: args})
	}
	for _, c := range t.Cites {
		ev := traceEvent{Name: "evidence", Cat: "evidence", Ph: "i", S: "t", Ts: us(c.AtNs), Args: map[string]any{"line": c.Line}}
		switch {
		case c.Replica >= 0 && c.Replica < t.Replicas:
			ev.Pid, ev.Tid = pidReplicas, c.Replica+1
		case c.Client >= 0 && c.Client < t.Clients:
			ev.Pid, ev.Tid = pidClients, c.Client+1
		default:
			ev.Pid, ev.Tid = pidNetwork, 1
		}
		emit(ev)
	}
	if t.ViolationAtNs > 0 {
		emit(traceEvent{Name: "violation: " + t.ViolationName, Cat: "violation", Ph: "i", S: "g", Ts: us(t.ViolationAtNs),
			Pid: pidNetwork, Tid: 1, Args: map[string]any{"violation": t.Violation}})
	}
	if err != nil {
		return err
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}
