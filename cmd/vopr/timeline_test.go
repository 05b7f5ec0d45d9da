package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A short run of seed 1: three replicas, few requests.
var timelineRun = []string{"-seed", "1", "-replicas=3", "-clients=3", "-requests=30"}

func TestTimelineUsage(t *testing.T) {
	out, _, code := vopr(t, nil, "timeline", "-h")
	if code != 0 || !strings.HasPrefix(out, "usage: vopr timeline") {
		t.Fatalf("timeline -h: exit %d, stdout %q", code, out)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema":1,"branches":4,"points":[{"at_ns":1,"branches":4,"failed":1,"same":2}]}`), 0o644)
	page := filepath.Join(dir, "page.html")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"timeline", "-seed", "1"}, "-o FILE"},
		{[]string{"timeline", "-o", page, "-seed", "1", "-seeds", "4"}, "one run"},
		{[]string{"timeline", "-o", page, "-performance"}, "one run"},
		{[]string{"timeline", "-seed", "1", "-o"}, "needs an argument"},
		{[]string{"timeline", "-o", page, "-seed", "1", "-no-such-flag"}, "no-such-flag"},
		{[]string{"timeline", "-o", page, "-seed", "1", "-replicas=99"}, "replicas"},
		{[]string{"timeline", "-o", page, "-seed", "1", "-likelihood", bad}, "same <= failed"},
		{[]string{"timeline", "-o", page, "-seed", "1", "-likelihood", filepath.Join(dir, "none.json")}, "no such file"},
	} {
		_, errOut, code := vopr(t, nil, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "usage: vopr timeline") {
			t.Errorf("vopr %v: exit %d, stderr %q; want 2, %q and the usage", tc.args, code, errOut, tc.want)
		}
	}
	if _, err := os.Stat(page); err == nil {
		t.Errorf("a refused command line wrote the page")
	}
}

// vopr timeline runs the run as vopr does (the same output, the same
// digest) and writes the page, the Perfetto file and the likelihood lane.
func TestTimelineWritesThePage(t *testing.T) {
	dir := t.TempDir()
	page, trace, sweep, lines := filepath.Join(dir, "run.html"), filepath.Join(dir, "run.json"), filepath.Join(dir, "sweep.json"), filepath.Join(dir, "run.jsonl")
	if err := os.WriteFile(sweep, []byte(`{"schema":1,"seed":1,"flags":[],"violation":"x","branches":8,`+
		`"points":[{"at_ns":500000000,"branches":8,"failed":2,"same":1}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, _, plainCode := vopr(t, nil, timelineRun...)
	out, errOut, code := vopr(t, nil, append([]string{"timeline", "-o", page, "-perfetto", trace, "-likelihood", sweep, "-trace", lines}, timelineRun...)...)
	if code != plainCode || digestOf(t, out) != digestOf(t, plain) {
		t.Fatalf("timeline: exit %d, digest %s; the plain run: exit %d, digest %s\n%s%s", code, digestOf(t, out), plainCode, digestOf(t, plain), out, errOut)
	}
	if !strings.HasPrefix(out, plain) || !strings.Contains(out, "timeline: -o "+page+" (") || !strings.Contains(out, "timeline: -perfetto "+trace+" (") {
		t.Fatalf("the output is not the run's, then where the files went:\n%s\nthe run's:\n%s", out, plain)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">replica 0<", ">replica 2<", ">client 0<", ">client 2<", ">failure likelihood<",
		"reproduce: <code>vopr -seed 1 -replicas=3 -clients=3 -requests=30</code>", "digest=" + digestOf(t, plain)} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if b, err := os.ReadFile(trace); err != nil || json.Unmarshal(b, &doc) != nil || len(doc.TraceEvents) < 10 {
		t.Fatalf("the Perfetto file: %v, %d events", err, len(doc.TraceEvents))
	}
	// -trace still writes the trace, the same lines the recorder read.
	if b, err := os.ReadFile(lines); err != nil || !strings.HasPrefix(string(b), `{"at_ns":`) ||
		!strings.Contains(string(html), fmt.Sprintf("Drawn from %d trace lines", strings.Count(string(b), "\n"))) {
		t.Fatalf("the -trace file (%v, %d bytes) is not the lines the page drew", err, len(b))
	}
	// Written again, the page is overwritten.
	if _, _, code := vopr(t, nil, append([]string{"timeline", "-o", page}, timelineRun...)...); code != plainCode {
		t.Fatalf("again: exit %d", code)
	}
	if again, _ := os.ReadFile(page); len(again) >= len(html) || !strings.Contains(string(again), ">replica 2<") {
		t.Fatalf("the page without -likelihood: %d bytes, with it %d", len(again), len(html))
	}
}

// -plan works with timeline as with a run: the plan's seed and flags, its
// firings replayed (the replay's digest and plan line), and the page
// names the plan in its command line.
func TestTimelineReplaysAPlan(t *testing.T) {
	dir := t.TempDir()
	planPath, page := filepath.Join(dir, "run.plan"), filepath.Join(dir, "run.html")
	rec, errOut, code := vopr(t, nil, append(timelineRun, "-crash=0.003", "-write-plan", planPath)...)
	if code != 0 {
		t.Fatalf("recording: exit %d\n%s%s", code, rec, errOut)
	}
	replay, _, _ := vopr(t, nil, "-plan", planPath)
	out, errOut, code := vopr(t, nil, "timeline", "-o", page, "-plan", planPath)
	if code != 0 || digestOf(t, out) != digestOf(t, rec) || digestOf(t, out) != digestOf(t, replay) ||
		!strings.Contains(out, "plan: firings=") || !strings.Contains(out, "suppressed=0 missed=0") {
		t.Fatalf("timeline -plan: exit %d, digest %s (recorded %s)\n%s%s", code, digestOf(t, out), digestOf(t, rec), out, errOut)
	}
	html, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(html), "-plan "+planPath) || !strings.Contains(string(html), ">replica 2<") {
		t.Fatalf("the page of the replay (%v) does not name the plan or lacks its lanes", err)
	}
}

// With -json stdout holds only the run's JSON line; where the page went
// is said on stderr.
func TestTimelineJSON(t *testing.T) {
	page := filepath.Join(t.TempDir(), "run.html")
	out, errOut, _ := vopr(t, nil, append([]string{"timeline", "-json", "-o", page}, timelineRun...)...)
	var line map[string]any
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &line) != nil {
		t.Fatalf("stdout is not one JSON line:\n%s", out)
	}
	if !strings.Contains(errOut, "timeline: -o "+page) {
		t.Fatalf("stderr %q does not say where the page went", errOut)
	}
}

// TestTimelineIsDeterministic: one run drawn twice gives the same bytes,
// page and Perfetto file alike (the page carries no wall time).
func TestTimelineIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	var pages, traces [2][]byte
	for i := range 2 {
		page, trace := filepath.Join(dir, fmt.Sprintf("run%d.html", i)), filepath.Join(dir, fmt.Sprintf("run%d.json", i))
		if _, errOut, code := vopr(t, nil, append([]string{"timeline", "-o", page, "-perfetto", trace}, timelineRun...)...); code > 129 || code == 2 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		var err error
		if pages[i], err = os.ReadFile(page); err != nil {
			t.Fatal(err)
		}
		if traces[i], err = os.ReadFile(trace); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(pages[0], pages[1]) || !bytes.Equal(traces[0], traces[1]) {
		t.Fatalf("two timelines of one run differ: pages %d and %d bytes, Perfetto %d and %d bytes",
			len(pages[0]), len(pages[1]), len(traces[0]), len(traces[1]))
	}
}
