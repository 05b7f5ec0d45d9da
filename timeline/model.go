package timeline

// Timeline is one run, ready to draw: the overview (every lane in Buckets
// buckets of BucketNs), the detail window, and the result. Recorder.Finish
// makes it; the caller may set Command and Sweep before writing it.
type Timeline struct {
	Seed uint64
	// Command is the command line that reproduces the run, shown on the
	// page ("" for none).
	Command string
	Summary string // the run's summary line (sim.Result.Summary)
	Outcome string // pass, correctness, liveness, error
	// Violation is the failure as the run reported it, ViolationName its
	// name (the text before the first ": "), ViolationAtNs when it was
	// found (0 for a pass).
	Violation     string
	ViolationName string
	ViolationAtNs int64
	Evidence      []string
	// Cites are the evidence lines read for what they name; Named what
	// the violation itself names (evidence.go).
	Cites []Cite
	Named Named

	Replicas, Clients int
	EndNs             int64 // the run's end: its last tick
	BucketNs          int64
	Buckets           int
	Network           []NetworkBucket
	ReplicaLanes      [][]ReplicaBucket
	ClientLanes       [][]ClientBucket

	Detail Detail
	// Sweep, when set, draws the failure likelihood lane.
	Sweep *Sweep

	// Lines are the trace lines read; BadLines those that could not be,
	// FirstBad why the first of them could not.
	Lines    int
	BadLines int
	FirstBad string
}

// Detail is the window of the run kept whole: from StartNs (0 when the
// whole run fit) to the end, every event, and every frame from
// FramesFromNs; Start is every lane's state at StartNs.
type Detail struct {
	StartNs      int64
	FramesFromNs int64
	Events       []Event
	Frames       []Frame
	Requests     []Request // overlapping the window, in the order they ended (open ones last)
	// EventsBefore and FramesBefore are what the window left out, before
	// it: trace events (Events also holds what frames told of their
	// senders, Event.Derived) and frames.
	EventsBefore, FramesBefore int
	Start                      States
}

// BucketOf is the overview bucket of time t (ns).
func (t *Timeline) BucketOf(ns int64) int {
	return min(max(int(ns/t.BucketNs), 0), t.Buckets-1)
}
