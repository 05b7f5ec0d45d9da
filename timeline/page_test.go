package timeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/sim"
)

// recordRun runs o with a Recorder as its trace and frame tap.
func recordRun(t *testing.T, o sim.Options) (*Timeline, sim.Result) {
	t.Helper()
	r := NewRecorder(Options{Replicas: o.Replicas, Clients: o.Clients})
	res := sim.RunWith(o, sim.Outputs{Trace: r, Frames: r.Frame})
	return r.Finish(res), res
}

// smallRun is a short faulty run of three replicas and three clients.
func smallRun() sim.Options {
	o := sim.Swarm(5)
	o.Replicas, o.Clients, o.Requests = 3, 3, 30
	o.SafetyTicksMax = 3000
	o.CrashProbability, o.RestartDelayMeanTicks = 0.002, 40
	o.PauseProbability, o.PauseMeanTicks = 0.002, 20
	o.PartitionMode, o.PartitionProbability, o.UnpartitionProbability = network.PartitionUniformSize, 0.01, 0.02
	o.Rollback = false
	return o
}

// The page of a real run holds a lane per replica and per client,
// labelled as the issue asks, drawn in its markup, and loads nothing from
// anywhere: no URL, no link, no external script or image.
func TestPageHasTheLanesAndIsSelfContained(t *testing.T) {
	o := smallRun()
	tl, res := recordRun(t, o)
	if res.Outcome != sim.Pass {
		t.Fatalf("the fixture must pass: %s: %s", res.Summary(), res.Violation)
	}
	var b bytes.Buffer
	if err := tl.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{">replica 0<", ">replica 1<", ">replica 2<", ">client 0<", ">client 2<", ">network<",
		`<svg class="plot"`, `class="op"`, `class="commit"`, `class="view"`, `class="f f-prepare`, "k-crash", res.Summary()} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, ">replica 3<") || strings.Contains(page, ">client 3<") {
		t.Errorf("the page draws lanes the cluster does not have")
	}
	for _, banned := range []string{"http://", "https://", "<link", "src=", "@import", "url(", "<iframe", "<img"} {
		if strings.Contains(strings.ToLower(page), banned) {
			t.Errorf("the page holds %q: it must load nothing", banned)
		}
	}
	if open, closed := strings.Count(page, "<svg"), strings.Count(page, "</svg>"); open != closed || open < 4 {
		t.Errorf("%d <svg> and %d </svg>", open, closed)
	}
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.HasSuffix(page, "</html>\n") {
		t.Errorf("not a whole HTML document")
	}
	// The same run draws the same page.
	again, _ := recordRun(t, o)
	var b2 bytes.Buffer
	again.WriteHTML(&b2)
	if !bytes.Equal(b.Bytes(), b2.Bytes()) {
		t.Errorf("two pages of one run differ")
	}
}

// A failure shows as a line at its time, its name in the heading, the
// lanes and events its evidence names in red (class cite), and the
// replicas it names labelled in red.
func TestPageHighlightsTheViolationAndItsEvidence(t *testing.T) {
	r := NewRecorder(Options{Replicas: 3, Clients: 1})
	traceOf(r,
		status(1_000_000, 1, "normal", 0, 0, 0),
		`{"at_ns":1212719400,"replica":0,"kind":"prepared","op":14}`,
		`{"at_ns":1212719400,"replica":1,"kind":"prepared","op":14}`,
		`{"at_ns":1250000000,"replica":2,"kind":"crash"}`,
		`{"at_ns":1283265000,"kind":"client_complete","client_index":0,"request":8,"outcome":"denied"}`,
		`{"at_ns":1300000000,"replica":1,"kind":"committed","op":14,"commit":14}`)
	res := sim.Result{Seed: 7, Outcome: sim.Correctness, Ticks: 140, ViolationAtNs: 1_350_000_000,
		Violation: "committed op replaced: op 14 (at 1.350 s, replicas [1], ops [14])",
		Evidence: []string{
			"1.212719s replica 0 prepared op 14 in view 0 0x00000000000000006535ac9d092e7184",
			"1.250000s replica 2 crashed (or was frozen outside the liveness core)",
			"1.283265s client 0 (0xb0bf63b16ba6b508ee51be94c4075f51) request 8 denied",
			"1.300000s 4 replicas are without partition memory at once",
		}}
	tl := r.Finish(res)
	if tl.ViolationName != "committed op replaced" || tl.ViolationAtNs != res.ViolationAtNs {
		t.Fatalf("violation %q at %d", tl.ViolationName, tl.ViolationAtNs)
	}
	if len(tl.Cites) != 4 || tl.Cites[0].Replica != 0 || tl.Cites[0].Op != 14 || tl.Cites[0].AtNs != 1_212_719_000 ||
		tl.Cites[2].Client != 0 || !tl.Cites[2].HasRequest || tl.Cites[2].Request != 8 || tl.Cites[3].Replica != -1 {
		t.Fatalf("cites: %+v", tl.Cites)
	}
	var cited []string
	for i := range tl.Detail.Events {
		if e := &tl.Detail.Events[i]; tl.cited(e) {
			cited = append(cited, fmt.Sprintf("%s/%d/%d", e.Kind, e.Replica, e.Client))
		}
	}
	if got := strings.Join(cited, " "); got != "prepared/0/-1 crash/2/-1 client_complete/-1/0" {
		t.Fatalf("the evidence names %q; want replica 0's prepare (not replica 1's, at the same time), the crash and the denial", got)
	}
	if !tl.Named.names(&tl.Detail.Events[5]) || tl.Named.names(&tl.Detail.Events[1]) {
		t.Fatalf("the violation names op 14 on replica 1: %+v", tl.Named)
	}
	if !tl.ReplicaLanes[0][tl.BucketOf(1_212_719_000)].Evidence || !tl.ClientLanes[0][tl.BucketOf(1_283_265_000)].Evidence {
		t.Fatalf("the overview buckets the evidence names are not marked")
	}
	var b bytes.Buffer
	tl.WriteHTML(&b)
	page := b.String()
	for _, want := range []string{`class="viol"`, `class="k-prepared cite"`, `class="k-crash cite"`, `class="k-client_complete cite"`,
		`class="k-committed named"`, `class="lane-label marked" x="4" y="`, `data-viol="1350000000"`, "committed op replaced", "1.212719s replica 0 prepared op 14"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(page, "lane-label marked"); n != 2 {
		t.Errorf("%d lane labels marked; the violation names one replica, labelled in both charts", n)
	}
}

// The Perfetto file is trace-event JSON: a thread named for every lane,
// slices, counters and instants, microsecond times, the violation.
func TestPerfettoIsTraceEventJSON(t *testing.T) {
	tl, _ := recordRun(t, smallRun())
	tl.ViolationAtNs, tl.ViolationName = tl.EndNs, "a test's violation"
	var b bytes.Buffer
	if err := tl.WritePerfetto(&b); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name string          `json:"name"`
			Ph   string          `json:"ph"`
			Ts   float64         `json:"ts"`
			Dur  *float64        `json:"dur"`
			Pid  int             `json:"pid"`
			Tid  int             `json:"tid"`
			ID   string          `json:"id"`
			Args json.RawMessage `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	threads := map[string]bool{}
	phases := map[string]int{}
	flows := map[string]int{}
	for _, e := range doc.TraceEvents {
		phases[e.Ph]++
		if e.Ph == "M" && e.Name == "thread_name" {
			var a struct{ Name string }
			json.Unmarshal(e.Args, &a)
			threads[a.Name] = true
		}
		if e.Ph != "M" && (e.Ts < 0 || e.Ts > float64(tl.EndNs)/1e3+1) {
			t.Fatalf("%s %q at %v µs: outside the run's 0..%v", e.Ph, e.Name, e.Ts, float64(tl.EndNs)/1e3)
		}
		if e.Ph == "X" && (e.Dur == nil || *e.Dur < 0) {
			t.Fatalf("a slice %q without a duration", e.Name)
		}
		if e.Ph == "s" || e.Ph == "f" {
			flows[e.ID]++
		}
		if e.Ph == "i" && strings.HasPrefix(e.Name, "violation: ") && e.Ts != float64(tl.EndNs)/1e3 {
			t.Fatalf("the violation at %v µs", e.Ts)
		}
	}
	for _, want := range []string{"network", "replica 0", "replica 1", "replica 2", "replica 0 messages", "client 0", "client 1", "client 2"} {
		if !threads[want] {
			t.Errorf("no thread named %q (threads: %v)", want, threads)
		}
	}
	if phases["X"] == 0 || phases["C"] == 0 || phases["i"] == 0 || phases["s"] == 0 || phases["s"] != phases["f"] {
		t.Errorf("events by phase %v: want slices, counters, instants and whole flows", phases)
	}
	for id, n := range flows {
		if n != 2 {
			t.Fatalf("flow %s has %d ends", id, n)
		}
	}
	if !bytes.Contains(b.Bytes(), []byte(`"violation: a test's violation"`)) {
		t.Errorf("no violation instant")
	}
}

// A sweep draws the likelihood lane above the replicas, each point's
// figures in its tooltip.
func TestPageDrawsTheLikelihood(t *testing.T) {
	tl, _ := recordRun(t, smallRun())
	var s Sweep
	// As vopr branch -sweep -o writes it (indented, with the run's outcome,
	// length and the moment its failure became inevitable).
	err := s.Read(strings.NewReader(`{
 "schema": 1, "seed": 5, "flags": ["-seed", "5"], "outcome": "correctness", "violation": "committed op replaced",
 "branches": 32, "end_ns": 2500000000, "inevitable_ns": 2000000000,
 "points": [
  {"at_ns": 1000000, "branches": 32, "failed": 3, "same": 2},
  {"at_ns": 2000000000, "branches": 30, "failed": 30, "same": 15, "errors": 1}
 ]
}
`))
	if err != nil {
		t.Fatal(err)
	}
	tl.Sweep = &s
	var b bytes.Buffer
	tl.WriteHTML(&b)
	page := b.String()
	for _, want := range []string{">failure likelihood<", `class="lk-same"`, `class="lk-failed"`,
		"branching at 0.001000s: 3 of 32 branches failed (9.4%), 2 with the run&#39;s violation (committed op replaced) (6.2%)",
		"branching at 2.000000s: 30 of 30 branches failed (100.0%), 15 with", `class="inevitable"`, "inevitable from 2.000000s"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if i, j := strings.Index(page, ">failure likelihood<"), strings.Index(page, ">replica 0<"); i < 0 || j < i {
		t.Errorf("the likelihood lane is not above the replicas")
	}
}

// A sweep file that breaks a rule is refused with the rule named.
func TestSweepReadRefusesBadFiles(t *testing.T) {
	good := `{"schema":1,"seed":17,"flags":[],"violation":"v","branches":4,"points":[{"at_ns":10,"branches":4,"failed":2,"same":1},{"at_ns":20,"branches":4,"failed":0,"same":0}],"future":true}`
	var s Sweep
	if err := s.Read(strings.NewReader(good)); err != nil || s.Seed != 17 || len(s.Points) != 2 || s.Points[0].Same != 1 {
		t.Fatalf("a good file: %v, %+v", err, s)
	}
	if _, ok := s.Inevitable(); ok {
		t.Fatalf("a sweep without inevitable_ns has an inevitable moment")
	}
	var none Sweep
	if err := none.Read(strings.NewReader(strings.Replace(good, `"seed":17`, `"seed":17,"inevitable_ns":-1`, 1))); err != nil {
		t.Fatal(err)
	} else if _, ok := none.Inevitable(); ok {
		t.Fatalf("inevitable_ns -1 (none found) reads as a moment")
	}
	for _, tc := range []struct{ file, rule string }{
		{`{"schema":1`, "not a JSON object"},
		{`[1,2]`, "not a JSON object"},
		{good + `{}`, "one JSON object"},
		{strings.Replace(good, `"schema":1`, `"schema":2`, 1), "reads schema 1"},
		{strings.Replace(good, `"branches":4,"points"`, `"branches":0,"points"`, 1), "at least once"},
		{`{"schema":1,"branches":4,"points":[]}`, "at least one point"},
		{strings.Replace(good, `"at_ns":20`, `"at_ns":10`, 1), "forward in time"},
		{strings.Replace(good, `"at_ns":10`, `"at_ns":-1`, 1), "never negative"},
		{strings.Replace(good, `"branches":4,"failed":2`, `"branches":5,"failed":2`, 1), "between 1 and the sweep's 4"},
		{strings.Replace(good, `"failed":2,"same":1`, `"failed":5,"same":1`, 1), "between 0 and the point's 4"},
		{strings.Replace(good, `"failed":2,"same":1`, `"failed":1,"same":2`, 1), "same <= failed"},
		{strings.Replace(good, `"seed":17`, `"seed":17,"end_ns":-5`, 1), "never negative"},
		{strings.Replace(good, `"seed":17`, `"seed":17,"inevitable_ns":-2`, 1), "or -1 for none"},
	} {
		var s Sweep
		err := s.Read(strings.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.rule) || !strings.HasPrefix(err.Error(), "sweep: ") {
			t.Errorf("%.60s...: error %v; want one naming %q", tc.file, err, tc.rule)
		}
	}
}

// Axis labels are round times inside the span, in order.
func TestAxisTicks(t *testing.T) {
	ticks := axisTicks(0, 182.84e9)
	var labels []string
	for _, tk := range ticks {
		labels = append(labels, tk.label)
	}
	if got := strings.Join(labels, " "); got != "0s 20s 40s 60s 80s 100s 120s 140s 160s 180s" {
		t.Fatalf("ticks %q", got)
	}
	if tk := axisTicks(1.2e9, 1.25e9); len(tk) < 4 || !regexp.MustCompile(`^1\.2\d+s$`).MatchString(tk[0].label) {
		t.Fatalf("ticks %+v", tk)
	}
}

// A word from the trace never breaks out of its class attribute.
func TestTraceWordsStayInTheirAttributes(t *testing.T) {
	r := NewRecorder(Options{Replicas: 1, Clients: 0})
	traceOf(r, `{"at_ns":5,"replica":0,"kind":"x\" onload=\"alert(1)","probe":"<script>"}`)
	var b bytes.Buffer
	r.Finish(sim.Result{Ticks: 1}).WriteHTML(&b)
	if page := b.String(); strings.Contains(page, `" onload="`) || !strings.Contains(page, "k-x__onload__alert_1_") ||
		strings.Count(page, "<script>") != 1 {
		t.Fatalf("the trace's words escaped their attribute or text")
	}
}
