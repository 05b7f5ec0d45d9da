package timeline

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// traceOf writes trace lines as sim's tracer does, one Write a line.
func traceOf(r io.Writer, lines ...string) {
	for _, l := range lines {
		io.WriteString(r, l+"\n")
	}
}

func committed(atNs int64, replica int, op uint64) string {
	return fmt.Sprintf(`{"at_ns":%d,"replica":%d,"kind":"committed","op":%d,"commit":%d}`, atNs, replica, op, op)
}

func status(atNs int64, replica int, s string, view uint32, op, commit uint64) string {
	return fmt.Sprintf(`{"at_ns":%d,"replica":%d,"kind":"status","status":"%s","view":%d,"log_view":%d,"op":%d,"commit":%d}`,
		atNs, replica, s, view, view, op, commit)
}

// However long the run, the overview keeps at most Options.Buckets
// buckets a lane, and merging them loses no count and no extreme: the
// crashes add up, op's range is the range of all it was, and each lane's
// last bucket holds its last state.
func TestBucketsStayBounded(t *testing.T) {
	const buckets = 64
	r := NewRecorder(Options{Replicas: 2, Clients: 1, Buckets: buckets})
	op, crashes := uint64(0), 0
	traceOf(r, status(0, 0, "normal", 0, 0, 0))
	for i := range int64(10_000) {
		at := i * 997 * kernel.TickNs // some 100 M ticks in all
		op++
		traceOf(r, committed(at, 0, op))
		if i%33 == 0 {
			traceOf(r, fmt.Sprintf(`{"at_ns":%d,"replica":1,"kind":"crash"}`, at))
			crashes++
		}
	}
	// A truncation deep inside one bucket: op falls to 7, then rises.
	at := int64(10_000) * 997 * kernel.TickNs
	traceOf(r, status(at, 0, "view_change", 1, 7, 7), status(at+1, 0, "normal", 1, op+1, op))
	tl := r.Finish(sim.Result{Ticks: uint64(at/kernel.TickNs) + 1})
	if tl.Buckets > buckets || len(tl.ReplicaLanes[0]) != tl.Buckets || tl.Buckets < buckets/2 {
		t.Fatalf("%d buckets of %d ns for a run of %d ns; want at most %d, at least half of them used", tl.Buckets, tl.BucketNs, tl.EndNs, buckets)
	}
	if tl.BucketNs*int64(tl.Buckets) <= tl.EndNs || tl.BucketNs%kernel.TickNs != 0 {
		t.Fatalf("%d buckets of %d ns do not cover the run's %d ns in whole ticks", tl.Buckets, tl.BucketNs, tl.EndNs)
	}
	total := 0
	for _, b := range tl.ReplicaLanes[1] {
		total += b.Crashes
	}
	if total != crashes {
		t.Fatalf("the buckets count %d crashes, the trace has %d", total, crashes)
	}
	last := tl.ReplicaLanes[0][tl.Buckets-1]
	if last.Op.Min != 7 || last.Op.Last != op+1 || last.Op.Max != op+1 || last.Commit.Last != op || last.Last != StatusNormal ||
		last.Statuses != 1<<StatusNormal|1<<StatusViewChange || last.Worst != StatusViewChange {
		t.Fatalf("the last bucket: %+v; want op 7..%d, commit %d, normal after a view change", last, op+1, op)
	}
	first := tl.ReplicaLanes[0][0]
	if first.Op.Min != 0 || first.Commit.Last == 0 || first.Commit.Last >= op {
		t.Fatalf("the first bucket: %+v", first)
	}
	// Every bucket between two commits holds a commit at least the
	// earlier one's: the carried state fills the gaps.
	for i := 1; i < tl.Buckets; i++ {
		if a, b := tl.ReplicaLanes[0][i-1], tl.ReplicaLanes[0][i]; b.Commit.Min < a.Commit.Last && i < tl.Buckets-1 {
			t.Fatalf("bucket %d: commit %d..%d after bucket %d ended at %d", i, b.Commit.Min, b.Commit.Max, i-1, a.Commit.Last)
		}
	}
}

// A bucket no event touches carries the state of the one before it:
// status, numbers, a pause and a request in flight.
func TestQuietBucketsCarryTheState(t *testing.T) {
	r := NewRecorder(Options{Replicas: 1, Clients: 1})
	traceOf(r,
		status(5*kernel.TickNs, 0, "normal", 3, 9, 8),
		`{"at_ns":60000000,"replica":0,"kind":"pause","ticks":50}`,
		`{"at_ns":70000000,"kind":"client_invoke","client_index":0,"request":4,"operation":"CreateStream"}`,
		`{"at_ns":80000000,"kind":"partition","mode":"isolate-single","cut":[[0,1]]}`)
	tl := r.Finish(sim.Result{Ticks: 40})
	b := tl.ReplicaLanes[0][30]
	if b.Seen || b.Last != StatusNormal || b.View.Last != 3 || b.Op.Last != 9 || b.Commit.Last != 8 || !b.Paused {
		t.Fatalf("bucket 30 of replica 0: %+v; want normal, view 3, op 9, commit 8, paused, carried", b)
	}
	if c := tl.ClientLanes[0][30]; !c.InFlight {
		t.Fatalf("bucket 30 of client 0: %+v; want the request in flight", c)
	}
	if n := tl.Network[30]; !n.Partitioned {
		t.Fatalf("bucket 30 of the network: %+v; want partitioned", n)
	}
	if tl.ReplicaLanes[0][2].Last != StatusUnknown {
		t.Fatalf("bucket 2, before the replica reported: %+v", tl.ReplicaLanes[0][2])
	}
}

// The detail window keeps the last Options.Events events and
// Options.Frames frames, whatever came before, and the lane states where
// it begins are the states the events before it left.
func TestDetailWindowBounded(t *testing.T) {
	const events, frames = 500, 50
	r := NewRecorder(Options{Replicas: 3, Clients: 1, Events: events, Frames: frames})
	for i := range int64(20_000) {
		traceOf(r, committed(i*kernel.TickNs, int(i%3), uint64(i+1)))
	}
	for i := range int64(1_000) {
		f := make([]byte, wire.HeaderSize)
		var x wire.CommitHeader
		x.Command, x.Commit, x.Group = wire.CommandCommit, uint64(i), wire.MetadataGroup
		x.Encode(wire.HeaderOf(f))
		r.Frame(sim.PeerFrame{AtNs: 19_700*kernel.TickNs + i*1000, SentNs: 19_700*kernel.TickNs + i*1000 - 500, From: 0, To: 2, Frame: f})
	}
	tl := r.Finish(sim.Result{Ticks: 20_000})
	d := &tl.Detail
	if len(d.Events) != events || d.EventsBefore != 20_000-events || d.Events[0].AtNs != (20_000-events)*kernel.TickNs {
		t.Fatalf("window: %d events from %d ns, %d before; want the last %d", len(d.Events), d.Events[0].AtNs, d.EventsBefore, events)
	}
	if len(d.Frames) != frames || d.FramesBefore != 1_000-frames || d.Frames[0].Op != 1_000-frames || d.Frames[0].Command != "commit" || d.Frames[0].Group != 0 {
		t.Fatalf("window: %d frames (%d before), the first %+v; want the last %d commits", len(d.Frames), d.FramesBefore, d.Frames[0], frames)
	}
	if d.StartNs != d.Events[0].AtNs || d.FramesFromNs != d.Frames[0].AtNs {
		t.Fatalf("the window starts at %d ns, its frames at %d; want %d and %d", d.StartNs, d.FramesFromNs, d.Events[0].AtNs, d.Frames[0].AtNs)
	}
	// Event k (from 0) is replica k%3 committing op k+1: where the window
	// begins, at event 20000-events, each replica has committed its last
	// op before it.
	for rep := range 3 {
		k := 20_000 - events - 1
		for k%3 != rep {
			k--
		}
		if got := d.Start.Replicas[rep].Commit; got != uint64(k+1) {
			t.Fatalf("replica %d commits %d where the window begins; want %d", rep, got, k+1)
		}
	}
}

// A line may arrive in pieces: the recorder reads the same events from
// any split of the stream.
func TestRecorderReadsLinesInPieces(t *testing.T) {
	var stream bytes.Buffer
	traceOf(&stream, status(1, 0, "normal", 1, 2, 1), committed(20, 0, 2), `not json`,
		`{"at_ns":30,"kind":"client_invoke","client_index":0,"request":1,"operation":"Register"}`)
	whole := NewRecorder(Options{Replicas: 1, Clients: 1})
	whole.Write(stream.Bytes())
	pieces := NewRecorder(Options{Replicas: 1, Clients: 1})
	for b := stream.Bytes(); len(b) > 0; b = b[min(7, len(b)):] {
		pieces.Write(b[:min(7, len(b))])
	}
	a, b := whole.Finish(sim.Result{}), pieces.Finish(sim.Result{})
	if len(a.Detail.Events) != 3 || len(b.Detail.Events) != 3 || a.BadLines != 1 || b.BadLines != 1 {
		t.Fatalf("whole: %d events, %d bad; in pieces: %d events, %d bad; want 3 and 1", len(a.Detail.Events), a.BadLines, len(b.Detail.Events), b.BadLines)
	}
	for i := range a.Detail.Events {
		if a.Detail.Events[i] != b.Detail.Events[i] {
			t.Fatalf("event %d: %+v in pieces, %+v whole", i, b.Detail.Events[i], a.Detail.Events[i])
		}
	}
	if !strings.Contains(a.FirstBad, "line 3") {
		t.Fatalf("the first bad line: %q; want it to say line 3", a.FirstBad)
	}
}

// A prepare_ok a replica sends raises its op in its lane: the trace has no
// line per op a backup takes in.
func TestPrepareOkRaisesTheSendersOp(t *testing.T) {
	r := NewRecorder(Options{Replicas: 2, Clients: 0})
	traceOf(r, status(1, 1, "normal", 0, 3, 3))
	f := make([]byte, wire.HeaderSize)
	var x wire.PrepareOkHeader
	x.Command, x.Op, x.Group = wire.CommandPrepareOk, 9, wire.MetadataGroup
	x.Encode(wire.HeaderOf(f))
	r.Frame(sim.PeerFrame{AtNs: 3 * kernel.TickNs, SentNs: 2 * kernel.TickNs, From: 1, To: 0, Frame: f})
	tl := r.Finish(sim.Result{Ticks: 5})
	if b := tl.ReplicaLanes[1][3]; b.Op.Last != 9 || b.Commit.Last != 3 {
		t.Fatalf("replica 1 after its prepare_ok of op 9: %+v", b)
	}
	if len(tl.Detail.Frames) != 1 || tl.Detail.Frames[0].Op != 9 || tl.Detail.Frames[0].Command != "prepare_ok" {
		t.Fatalf("frames: %+v", tl.Detail.Frames)
	}
}

// A replica's commit is its commit number (commit_max, as status lines
// carry it): an op it applies below that leaves it; a restart's status
// line sets it to what the replica recovered, and the replay raises it.
func TestReplicaCommitIsItsCommitNumber(t *testing.T) {
	var s ReplicaState
	for _, step := range []struct {
		line        string
		status      uint8
		op, commit  uint64
		view, lview uint32
	}{
		{status(1, 0, "view_change", 1, 2, 14), StatusViewChange, 2, 14, 1, 1},
		{committed(2, 0, 1), StatusViewChange, 2, 14, 1, 1},
		{`{"at_ns":3,"replica":0,"kind":"crash"}`, StatusDown, 2, 14, 1, 1},
		{`{"at_ns":4,"replica":0,"kind":"restart"}`, StatusBooting, 2, 14, 1, 1},
		{`{"at_ns":5,"replica":0,"kind":"status","status":"recovering"}`, StatusRecovering, 0, 0, 0, 0},
		{committed(6, 0, 1), StatusRecovering, 1, 1, 0, 0},
		{`{"at_ns":7,"replica":0,"kind":"reconciled","view":2,"op":0}`, StatusRecovering, 0, 1, 0, 0},
	} {
		e, err := parseLine([]byte(step.line), 1)
		if err != nil {
			t.Fatal(err)
		}
		s.apply(&e)
		if s.Status != step.status || s.Op != step.op || s.Commit != step.commit || s.View != step.view || s.LogView != step.lview {
			t.Fatalf("after %s: %+v; want %s op %d commit %d view %d log_view %d", step.line, s, StatusName(step.status), step.op, step.commit, step.view, step.lview)
		}
	}
}
