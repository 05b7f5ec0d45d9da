package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/sim"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// fakeSim is a simulator whose results are a function of the seed, and
// which records the options it was given.
type fakeSim struct {
	mu       sync.Mutex
	got      []sim.Options
	outcomes map[uint64]sim.Outcome // seeds that do not pass
	// gate, when set, is called at the start of each run (it may block).
	gate func(seed uint64)
	// clock, when set, advances by a second per run (a fake wall clock).
	clock *fakeClock
	// diverge: seeds whose digest changes from one run to the next (a
	// nondeterministic simulator); the traces Outputs.RecordTrace gets for
	// them (five events) part at the index given, or never when it is 5
	// or more.
	diverge map[uint64]int
	runs    map[uint64]int // runs so far, per seed
}

func (f *fakeSim) run(o sim.Options, out sim.Outputs) sim.Result {
	trace := out.Trace
	f.mu.Lock()
	f.got = append(f.got, o)
	if f.runs == nil {
		f.runs = map[uint64]int{}
	}
	nth := f.runs[o.Seed]
	f.runs[o.Seed]++
	f.mu.Unlock()
	if f.gate != nil {
		f.gate(o.Seed)
	}
	if f.clock != nil {
		f.clock.advance(time.Second)
	}
	if trace != nil {
		fmt.Fprintf(trace, "{\"tick\":1,\"seed\":%d}\n", o.Seed)
	}
	s := o.Seed
	r := sim.Result{
		Seed:            s,
		Options:         o,
		Outcome:         f.outcomes[s],
		Liveness:        sim.LivenessConverged,
		Ticks:           1000 + s%97,
		Requests:        uint64(o.Requests),
		Commits:         10 + s%7,
		Frames:          100 + s%13,
		FramesByCommand: map[string]uint64{"prepare": 60 + s%13, "prepare_ok": 30, "commit": 10},
		Digest:          s * 0x9e3779b97f4a7c15,
		Probes:          map[string]int{"alpha": 1},
	}
	if n := int(s % 3); n > 0 {
		r.Probes["beta"] = n
	}
	if s%10 == 5 {
		r.Probes["gamma"] = 7
	}
	switch r.Outcome {
	case sim.Correctness:
		r.Violation = fmt.Sprintf("lost write: op %d committed then replaced", s%100)
		r.Evidence = []string{"tick 10 replica 0 commit op 3", "tick 20 replica 1 commit op 3 (different checksum)"}
		r.Liveness = sim.LivenessSkipped
	case sim.Liveness:
		r.Violation = "core did not converge"
		r.Evidence = []string{"tick 900 replica 2 status view_change"}
		r.Liveness = sim.LivenessFailed
	case sim.SimError:
		r.Violation = "harness: event queue empty"
	}
	if s%10 == 7 && r.Outcome == sim.Pass {
		r.Liveness = sim.LivenessExplained
		r.Explanation = "op 12 missing on every core replica"
	}
	at, diverges := f.diverge[s]
	if diverges {
		r.Digest += uint64(nth)
	}
	if out.RecordTrace != nil {
		events := make([]kernel.TraceEntry, 5)
		for i := range events {
			events[i] = kernel.TraceEntry{AtNs: int64(i) * 1000, Seq: uint64(i + 1), Kind: "network.deliver", Node: int32(i % 3), Hash: s + uint64(i)}
		}
		if diverges && at < len(events) {
			events[at].Hash += uint64(nth)
		}
		*out.RecordTrace = events
	}
	return r
}

func (f *fakeSim) options() []sim.Options {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.got)
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// cli runs the command in-process with a fake simulator.
func cli(t *testing.T, f *fakeSim, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return cliEnv(t, f, env{}, args...)
}

func cliEnv(t *testing.T, f *fakeSim, e env, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	if e.runSeed == nil {
		e.runSeed = f.run
	}
	if e.now == nil {
		if f.clock != nil {
			e.now = f.clock.now
		} else {
			clock := &fakeClock{}
			e.now = clock.now
		}
	}
	if e.random == nil {
		e.random = func() uint64 { return 777 }
	}
	code = runEnv(args, nil, &out, &errOut, e)
	return out.String(), errOut.String(), code
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func TestParseSeed(t *testing.T) {
	for s, want := range map[string]uint64{
		"0":                    0,
		"123":                  123,
		"18446744073709551615": 1<<64 - 1,
		"0123456789abcdef0123456789abcdef01234567": 0x0123456789abcdef,
		"FFFFFFFFFFFFFFFF0000000000000000000000AA": 1<<64 - 1,
		"52ad553f00000000000000000000000000000000": 0x52ad553f00000000,
		// 40 decimal digits are hex digits too: a commit hash.
		"1234567890123456789012345678901234567890": 0x1234567890123456,
	} {
		got, err := parseSeed(s)
		if err != nil || got != want {
			t.Errorf("parseSeed(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{
		"", "-1", "abc", "0x10", "1e3", " 1", "18446744073709551616",
		"0123456789abcdef0123456789abcdef0123456",   // 39 hex digits
		"0123456789abcdef0123456789abcdef012345678", // 41
		"0123456789abcdef0123456789abcdef0123456g",
	} {
		if got, err := parseSeed(s); err == nil {
			t.Errorf("parseSeed(%q) = %d, want an error", s, got)
		}
	}
}

func TestSeedFlag(t *testing.T) {
	f := &fakeSim{}
	stdout, _, code := cli(t, f, "-seed", "0123456789abcdef0123456789abcdef01234567")
	if code != 0 || lines(stdout)[0] != "seed=81985529216486895" {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	if got := f.options()[0].Seed; got != 0x0123456789abcdef {
		t.Errorf("ran seed %d", got)
	}
	// No -seed: the random source picks it, and it is printed first.
	stdout, _, _ = cli(t, f)
	if lines(stdout)[0] != "seed=777" || f.options()[1].Seed != 777 {
		t.Errorf("random seed: stdout %q", stdout)
	}
	for _, bad := range []string{"abc", "-5", "0x10", "18446744073709551616", "0123456789abcdef"} {
		stdout, stderr, code := cli(t, f, "-seed", bad)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "-seed") ||
			!strings.Contains(stderr, "40-hex") || !strings.Contains(stderr, "usage:") {
			t.Errorf("-seed %s: exit %d, stdout %q, stderr %q", bad, code, stdout, stderr)
		}
	}
}

// TestKnobsMatchFields: one flag per Options knob, named and ordered as
// Options.Fields.
func TestKnobsMatchFields(t *testing.T) {
	var o sim.Options
	var names []string
	for _, f := range o.Fields() {
		names = append(names, f.Name)
	}
	var ours []string
	for _, k := range knobs {
		ours = append(ours, k.name)
	}
	if !slices.Equal(names, ours) {
		t.Fatalf("knob flags %v\nOptions.Fields %v", ours, names)
	}
	// Each knob points at its own field.
	seen := map[any]string{}
	for i := range knobs {
		p := knobs[i].field(&o)
		if prev, ok := seen[p]; ok {
			t.Errorf("knobs %s and %s share a field", prev, knobs[i].name)
		}
		seen[p] = knobs[i].name
	}
}

// TestKnobOverrides: every knob flag, of every type, lands in the options
// the simulator gets (as Fields prints them), for every seed of a campaign.
func TestKnobOverrides(t *testing.T) {
	value := func(k *knob) string {
		if k.name == "journal-slots" {
			return "300" // at least the checkpoint interval (up to 128) plus two pipelines
		}
		switch k.field(&sim.Options{}).(type) {
		case *int, *int64:
			return "3"
		case *float64:
			if k.prob {
				return "0.125"
			}
			return "2.5"
		case *bool:
			return "true"
		}
		switch k.name {
		case "partition-mode":
			return "uniform-size"
		case "partition-symmetry":
			return "one-way"
		}
		t.Fatalf("no test value for knob %s", k.name)
		return ""
	}
	for i := range knobs {
		k := &knobs[i]
		v := value(k)
		f := &fakeSim{}
		args := []string{"-seed", "11", "-seeds", "3", "-auth=true", "-" + k.name + "=" + v}
		if _, stderr, code := cli(t, f, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		got := f.options()
		if len(got) != 3 {
			t.Fatalf("%v: %d runs", args, len(got))
		}
		for _, o := range got {
			// Everything else is the swarm's draw.
			want := sim.Swarm(o.Seed)
			want.Auth = true
			setKnob(k, &want, mustParseKnob(t, k, v))
			switch {
			case k.name == "rollback":
				want.PartitionMode = network.PartitionNone // the nemesis takes the partitions
			case k.name == "partition-mode" && want.Rollback:
				want.Rollback = false // an explicit partition mode takes them back
			case k.name == "sends":
				want.MemoryLossBounded = true // sends need the bound
			}
			// A seed drawn with too few replicas for the knob runs without it.
			off := needsMet(&want)
			for _, field := range o.Fields() {
				if field.Name == k.name && field.Value != v && !slices.ContainsFunc(off, func(d disabled) bool { return d.knob == k.name }) {
					t.Errorf("-%s=%s: seed %d has %s=%s", k.name, v, o.Seed, field.Name, field.Value)
				}
			}
			if !reflect.DeepEqual(o, want) {
				t.Errorf("-%s=%s: seed %d options\n%+v\nwant\n%+v", k.name, v, o.Seed, o, want)
			}
		}
	}
}

func mustParseKnob(t *testing.T, k *knob, s string) any {
	t.Helper()
	v, err := parseKnob(k, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestBoolKnobForms: a bool knob takes -lite, -lite=true and -lite=false.
func TestBoolKnobForms(t *testing.T) {
	for args, want := range map[string]bool{"-lite": true, "-lite=true": true, "-lite=false": false} {
		f := &fakeSim{}
		if _, stderr, code := cli(t, f, "-seed", "3", args); code != 0 {
			t.Fatalf("%s: exit %d: %s", args, code, stderr)
		}
		if got := f.options()[0].Lite; got != want {
			t.Errorf("%s: Lite=%v", args, got)
		}
	}
}

func TestBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in stderr, naming the flag and the rule
	}{
		{[]string{"-replicas=abc"}, "-replicas: want a decimal integer"},
		{[]string{"-replicas=9"}, "replicas 9 outside 1..6"},
		{[]string{"-replicas=0"}, "replicas 0 outside 1..6"},
		{[]string{"-clients=0"}, "clients 0 outside 1..64"},
		{[]string{"-requests=-1"}, "requests -1 outside"},
		{[]string{"-delay-min-ns=1.5"}, "-delay-min-ns: want a decimal integer"},
		{[]string{"-delay-min-ns=-1"}, "negative network delay"},
		{[]string{"-safety-ticks=0"}, "tick budgets must be positive"},
		{[]string{"-reset=1.5"}, "-reset: a probability must lie in [0, 1]"},
		{[]string{"-reset=-0.1"}, "-reset: a probability must lie in [0, 1]"},
		{[]string{"-crash=2"}, "-crash: a probability must lie in [0, 1]"},
		{[]string{"-corrupt=NaN"}, "-corrupt: want a finite number"},
		{[]string{"-clog=x"}, "-clog: want a finite number"},
		{[]string{"-crash-io-factor=-1"}, "-crash-io-factor: must not be negative"},
		{[]string{"-crash-torn=1", "-crash-lost=0.5"}, "crash torn + lost probabilities above 1"},
		{[]string{"-clock-drift-ppb=2000000"}, "clock knobs outside their range"},
		{[]string{"-lite=maybe"}, "-lite"},
		{[]string{"-auth=yes"}, "-auth"},
		{[]string{"-partition-mode=bogus"}, `partition mode "bogus": want one of none, isolate-single`},
		{[]string{"-partition-symmetry=sideways"}, `partition symmetry "sideways": want one of symmetric, one-way`},
		{[]string{"-rotation=true", "-auth=false"}, "a rotation window needs auth"},
		{[]string{"-rollback=true", "-partition-mode=bridge"}, "the rollback nemesis drives the partitions: partition mode must be none, not bridge"},
		{[]string{"-seeds", "0"}, "-seeds 0: the campaign needs at least one seed"},
		{[]string{"-seeds", "x"}, "-seeds"},
		{[]string{"-parallel", "0"}, "-parallel 0"},
		{[]string{"-duration", "-1s"}, "-duration -1s: the duration must be positive"},
		{[]string{"-duration", "soon"}, "-duration"},
		{[]string{"-faults=some"}, "-faults: want swarm or none"},
		{[]string{"-performance", "-seed", "3"}, "-seed does not combine"},
		{[]string{"-performance", "-seeds", "3"}, "-seeds does not combine"},
		{[]string{"-performance", "-lite"}, "-lite does not combine"},
		{[]string{"-bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"nonsense"}, `unexpected argument "nonsense"`},
		{[]string{"-seed", "1", "2"}, `unexpected argument "2"`},
		{[]string{"-seed", "1", "-seeds", "9", "-shard", "3/3"}, `invalid value "3/3" for flag -shard: want i/n with 0 <= i < n`},
		{[]string{"-seed", "1", "-seeds", "9", "-shard", "0/0"}, "want i/n with 0 <= i < n"},
		{[]string{"-seed", "1", "-seeds", "9", "-shard", "1"}, "want i/n with 0 <= i < n"},
		{[]string{"-seed", "1", "-seeds", "9", "-shard", "-1/2"}, "want i/n with 0 <= i < n"},
		{[]string{"-seed", "1", "-seeds", "9", "-shard", "a/b"}, "want i/n with 0 <= i < n"},
		{[]string{"-seeds", "9", "-shard", "1/2"}, "-shard 1/2 needs -seed N"},
		{[]string{"-seed", "1", "-shard", "0/2"}, "-shard 0/2 splits a campaign"},
		{[]string{"-performance", "-shard", "0/1"}, "-shard 0/1 splits a campaign"},
	} {
		f := &fakeSim{}
		stdout, stderr, code := cli(t, f, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "usage:") ||
			!strings.Contains(stderr, "-seed") || stdout != "" || len(f.options()) != 0 {
			t.Errorf("%v: exit %d, %d runs, stdout %q\nstderr %q\nwant %q", c.args, code, len(f.options()), stdout, stderr, c.want)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"-help"}, {"--help"}, {"help"}} {
		f := &fakeSim{}
		stdout, stderr, code := cli(t, f, args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "-seed") || !strings.Contains(stdout, "vopr decode") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
		for _, k := range knobs {
			if !strings.Contains(stdout, "-"+k.name+" ") {
				t.Errorf("usage does not mention -%s", k.name)
			}
		}
	}
}

func TestSingleSeedOutput(t *testing.T) {
	f := &fakeSim{}
	stdout, stderr, code := cli(t, f, "-seed", "42")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	o := f.options()[0]
	if !reflect.DeepEqual(o, sim.Swarm(42)) {
		t.Errorf("options %+v, want Swarm(42)", o)
	}
	ls := lines(stdout)
	if ls[0] != "seed=42" {
		t.Errorf("first line %q", ls[0])
	}
	// Then the build, as cliEnv's env (no build info) reads it.
	if ls[1] != "build version=unknown revision=unknown modified=unknown go=unknown" {
		t.Errorf("second line %q", ls[1])
	}
	// The options lines hold every field, in order.
	var words []string
	i := 2
	for ; strings.HasPrefix(ls[i], "options "); i++ {
		words = append(words, strings.Fields(strings.TrimPrefix(ls[i], "options "))...)
	}
	var want []string
	for _, f := range o.Fields() {
		want = append(want, f.Name+"="+f.Value)
	}
	if !slices.Equal(words, want) {
		t.Errorf("options lines %q\nwant %q", words, want)
	}
	r := f.run(o, sim.Outputs{})
	if i != len(ls)-1 || ls[len(ls)-1] != r.Summary() {
		t.Errorf("after the options: %q, want only the summary %q", ls[i:], r.Summary())
	}
	if strings.Contains(stdout, "reproduce") || strings.Contains(stdout, "wall") {
		t.Errorf("a passing run printed %q", stdout)
	}
	again, _, _ := cli(t, f, "-seed", "42")
	if again != stdout {
		t.Errorf("two runs differ:\n%s\n%s", stdout, again)
	}
	// -v adds wall time on stderr only.
	verbose, stderr, _ := cli(t, f, "-seed", "42", "-v")
	if verbose != stdout || !strings.Contains(stderr, "seed=42 wall=") {
		t.Errorf("-v: stdout %q, stderr %q", verbose, stderr)
	}
}

// TestFailureOutput: a failure prints its violation, evidence and a
// reproduction command that, parsed back, rebuilds the same options.
func TestFailureOutput(t *testing.T) {
	for _, c := range []struct {
		outcome sim.Outcome
		code    int
		label   string
	}{
		{sim.Correctness, 129, "violation: lost write"},
		{sim.Liveness, 128, "violation: core did not converge"},
		{sim.SimError, 1, "error: harness: event queue empty"},
	} {
		f := &fakeSim{outcomes: map[uint64]sim.Outcome{42: c.outcome}}
		args := []string{"-faults=none", "-seed", "42", "-lite", "-reset=0.0123456789012345", "-replicas", "3",
			"-partition-mode=uniform-partition", "-auth=false", "-crash-io-factor=0.5", "-replicas=4"}
		stdout, _, code := cli(t, f, args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d", c.outcome, code, c.code)
		}
		ls := lines(stdout)
		r := f.run(f.options()[0], sim.Outputs{})
		if ls[0] != "seed=42" || ls[len(ls)-1] != r.Summary() {
			t.Errorf("%v: first %q last %q", c.outcome, ls[0], ls[len(ls)-1])
		}
		if !strings.Contains(stdout, "\n"+c.label) {
			t.Errorf("%v: no %q in\n%s", c.outcome, c.label, stdout)
		}
		for _, e := range r.Evidence {
			if !strings.Contains(stdout, "\n  "+e+"\n") {
				t.Errorf("%v: evidence %q missing in\n%s", c.outcome, e, stdout)
			}
		}
		var repro string
		for _, l := range ls {
			if s, ok := strings.CutPrefix(l, "reproduce: "); ok {
				repro = s
			}
		}
		want := "vopr -seed 42 -faults=none -replicas=4 -lite=true -reset=0.0123456789012345 -partition-mode=uniform-partition -crash-io-factor=0.5 -auth=false"
		if repro != want {
			t.Errorf("reproduce: %q\nwant %q", repro, want)
		}
		assertReproduces(t, repro, f.options()[0])
	}
}

// assertReproduces parses a reproduction command back and checks that it
// rebuilds the options the seed ran with.
func assertReproduces(t *testing.T, repro string, want sim.Options) {
	t.Helper()
	words := strings.Fields(repro)
	if len(words) < 2 || words[0] != "vopr" {
		t.Fatalf("reproduce %q", repro)
	}
	f := &fakeSim{}
	if _, stderr, code := cli(t, f, words[1:]...); code == 2 {
		t.Fatalf("%q: usage error: %s", repro, stderr)
	}
	got := f.options()
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Errorf("%q rebuilds %+v\nwant %+v", repro, got, want)
	}
}

// gated makes seeds of a campaign finish out of seed order: each run blocks
// until the driver releases it, and the driver releases the highest seed
// running whenever p are running (or, when no seed has started for a
// moment, at the end or after a stop). Only the completion order depends on
// the timing; what the tests assert must not.
type gated struct {
	started    chan uint64
	stop       chan struct{}
	finished   chan struct{}
	mu         sync.Mutex
	release    map[uint64]chan struct{}
	completion []uint64
}

func newGated(p int) *gated {
	g := &gated{started: make(chan uint64), stop: make(chan struct{}), finished: make(chan struct{}),
		release: map[uint64]chan struct{}{}}
	go func() {
		defer close(g.finished)
		var running []uint64
		for {
			select {
			case s := <-g.started:
				running = append(running, s)
				if len(running) < p {
					continue
				}
			case <-time.After(20 * time.Millisecond):
				if len(running) == 0 {
					continue
				}
			case <-g.stop:
				return
			}
			slices.Sort(running)
			last := running[len(running)-1]
			running = running[:len(running)-1]
			g.mu.Lock()
			g.completion = append(g.completion, last)
			g.mu.Unlock()
			close(g.channel(last))
		}
	}()
	return g
}

func (g *gated) channel(seed uint64) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	ch := g.release[seed]
	if ch == nil {
		ch = make(chan struct{})
		g.release[seed] = ch
	}
	return ch
}

func (g *gated) gate(seed uint64) {
	ch := g.channel(seed)
	g.started <- seed
	<-ch
}

func (g *gated) close() []uint64 {
	close(g.stop)
	<-g.finished
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.completion)
}

// campaignRun runs a campaign on the fake, gated at -parallel p > 1.
func campaignRun(t *testing.T, outcomes map[uint64]sim.Outcome, p int, args ...string) (stdout, stderr string, code int, runs []sim.Options, completion []uint64) {
	t.Helper()
	f := &fakeSim{outcomes: outcomes}
	var g *gated
	if p > 1 {
		g = newGated(p)
		f.gate = g.gate
	}
	args = append(args, "-parallel", strconv.Itoa(p))
	stdout, stderr, code = cli(t, f, args...)
	if g != nil {
		completion = g.close()
	}
	return stdout, stderr, code, f.options(), completion
}

// seedLines are the lines of stdout that begin with `seed=`.
func seedLines(stdout string) []string {
	var out []string
	for _, l := range lines(stdout) {
		if strings.HasPrefix(l, "seed=") {
			out = append(out, l)
		}
	}
	return out
}

func TestCampaignSeedOrder(t *testing.T) {
	serial, _, code1, _, _ := campaignRun(t, nil, 1, "-seed", "100", "-seeds", "10")
	parallel, stderr, code3, runs, completion := campaignRun(t, nil, 3, "-seed", "100", "-seeds", "10")
	if code1 != 0 || code3 != 0 || stderr != "" {
		t.Fatalf("exit %d and %d, stderr %q", code1, code3, stderr)
	}
	if slices.IsSorted(completion) || len(completion) != 10 {
		t.Fatalf("the fake completed in order %v: the test proves nothing", completion)
	}
	if parallel != serial {
		t.Errorf("-parallel 3 printed\n%s\n-parallel 1 printed\n%s", parallel, serial)
	}
	if len(runs) != 10 {
		t.Errorf("%d runs", len(runs))
	}
	f := &fakeSim{}
	want := []string{"seed=100"}
	for s := uint64(100); s < 110; s++ {
		r := f.run(sim.Swarm(s), sim.Outputs{})
		want = append(want, r.Summary())
	}
	if got := seedLines(parallel); !slices.Equal(got, want) {
		t.Errorf("seed lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A passing seed prints no options; an explained stall its explanation.
	if strings.Contains(parallel, "options ") || !strings.Contains(parallel, "explanation: op 12 missing on every core replica\nseed=107 ") {
		t.Errorf("campaign output\n%s", parallel)
	}
}

func TestCampaignStopsAtFirstFailure(t *testing.T) {
	for _, c := range []struct {
		outcomes map[uint64]sim.Outcome
		last     uint64 // the last seed printed: the first failing one
		code     int
	}{
		// 101 is held until every other seed has finished: seeds after it
		// ran and passed, but are not reported.
		{map[uint64]sim.Outcome{101: sim.Correctness, 104: sim.Liveness}, 101, 129},
		// 104 finishes while 100 and 101 still run; they are reported.
		{map[uint64]sim.Outcome{104: sim.Liveness, 107: sim.Correctness}, 104, 128},
		{map[uint64]sim.Outcome{109: sim.SimError}, 109, 1},
	} {
		serial, _, code1, runs1, _ := campaignRun(t, c.outcomes, 1, "-seed", "100", "-seeds", "10")
		parallel, _, code3, _, _ := campaignRun(t, c.outcomes, 3, "-seed", "100", "-seeds", "10")
		if code1 != c.code || code3 != c.code {
			t.Errorf("%v: exit %d and %d, want %d", c.outcomes, code1, code3, c.code)
		}
		if parallel != serial {
			t.Errorf("%v: -parallel 3 printed\n%s\n-parallel 1 printed\n%s", c.outcomes, parallel, serial)
		}
		if len(runs1) != int(c.last-99) {
			t.Errorf("%v: -parallel 1 ran %d seeds", c.outcomes, len(runs1))
		}
		var summaries []string
		for _, l := range seedLines(parallel) {
			if strings.Contains(l, " result=") {
				summaries = append(summaries, l)
			}
		}
		n := int(c.last - 99)
		if len(summaries) != n || !strings.HasPrefix(summaries[n-1], fmt.Sprintf("seed=%d result=", c.last)) {
			t.Errorf("%v: summaries\n%s", c.outcomes, strings.Join(summaries, "\n"))
		}
		if !strings.Contains(parallel, fmt.Sprintf("campaign seeds=%d first=100 last=%d\n", n, c.last)) ||
			!strings.Contains(parallel, fmt.Sprintf("reproduce: vopr -seed %d\n", c.last)) {
			t.Errorf("%v: output\n%s", c.outcomes, parallel)
		}
	}
}

// table parses the campaign table: its `key  value...` rows.
func table(t *testing.T, stdout string) map[string][]string {
	t.Helper()
	i := strings.Index(stdout, "\ncampaign seeds=")
	if i < 0 {
		t.Fatalf("no campaign table in\n%s", stdout)
	}
	rows := map[string][]string{}
	for _, l := range lines(stdout[i+1:]) {
		w := strings.Fields(l)
		if len(w) > 0 {
			rows[w[0]] = w[1:]
		}
	}
	return rows
}

func TestCampaignKeepGoing(t *testing.T) {
	outcomes := map[uint64]sim.Outcome{103: sim.Liveness, 106: sim.Correctness, 108: sim.SimError}
	args := []string{"-seed", "100", "-seeds", "10", "-keep-going", "-replicas=3"}
	serial, _, code1, _, _ := campaignRun(t, outcomes, 1, args...)
	parallel, _, code3, runs, _ := campaignRun(t, outcomes, 3, args...)
	if code1 != 129 || code3 != 129 || len(runs) != 10 {
		t.Fatalf("exit %d and %d, %d runs", code1, code3, len(runs))
	}
	if parallel != serial {
		t.Errorf("-parallel 3 printed\n%s\n-parallel 1 printed\n%s", parallel, serial)
	}
	// Every failure prints its whole block, reproduction included.
	for _, s := range []uint64{103, 106, 108} {
		o := sim.Swarm(s)
		o.Replicas = 3
		var hdr bytes.Buffer
		fmt.Fprintf(&hdr, "seed=%d\n", s)
		writeOptions(&hdr, &o, needsMet(&o))
		repro := fmt.Sprintf("reproduce: vopr -seed %d -replicas=3\n", s)
		if !strings.Contains(parallel, hdr.String()) || !strings.Contains(parallel, repro) {
			t.Errorf("seed %d: no header or %q in\n%s", s, repro, parallel)
		}
		assertReproduces(t, strings.TrimSpace(strings.TrimPrefix(repro, "reproduce: ")), o)
	}
	rows := table(t, parallel)
	for key, want := range map[string]string{
		"campaign":           "seeds=10 first=100 last=109",
		"result=pass":        "7",
		"result=correctness": "1",
		"result=liveness":    "1",
		"result=error":       "1",
		"liveness=converged": "7", // 103 failed, 106 skipped, 107 explained
		"liveness=explained": "1",
		"liveness=skipped":   "1",
		"liveness=failed":    "1",
		"failing":            "seeds: 3",
		"probes":             "fired: 3",
		"alpha":              "10 10",
		"beta":               "7 10",
		"gamma":              "1 7",
	} {
		if got := strings.Join(rows[key], " "); got != want {
			t.Errorf("table row %s: %q, want %q\n%s", key, got, want, parallel)
		}
	}
	for _, s := range []uint64{103, 106, 108} {
		if !strings.Contains(parallel, fmt.Sprintf("    reproduce: vopr -seed %d -replicas=3\n", s)) {
			t.Errorf("table lacks seed %d's reproduction", s)
		}
	}
	// The worst outcome decides the exit status.
	for _, c := range []struct {
		outcomes map[uint64]sim.Outcome
		code     int
	}{
		{nil, 0},
		{map[uint64]sim.Outcome{102: sim.SimError}, 1},
		{map[uint64]sim.Outcome{102: sim.SimError, 105: sim.Liveness}, 128},
		{map[uint64]sim.Outcome{102: sim.Correctness, 105: sim.Liveness, 107: sim.SimError}, 129},
	} {
		if _, _, code, _, _ := campaignRun(t, c.outcomes, 2, "-seed", "100", "-seeds", "8", "-keep-going"); code != c.code {
			t.Errorf("%v: exit %d, want %d", c.outcomes, code, c.code)
		}
	}
}

func TestCampaignDuration(t *testing.T) {
	f := &fakeSim{clock: &fakeClock{t: time.Unix(1e9, 0)}}
	stdout, stderr, code := cli(t, f, "-seed", "0", "-duration", "5s", "-v")
	if code != 0 || len(f.options()) != 5 {
		t.Fatalf("exit %d, %d runs: %s", code, len(f.options()), stderr)
	}
	if strings.Contains(stdout, "wall") || !strings.Contains(stdout, "campaign seeds=5 first=0 last=4\n") {
		t.Errorf("stdout\n%s", stdout)
	}
	if !strings.Contains(stderr, "seed=3 wall=1s") || !strings.Contains(stderr, "vopr: campaign seeds=5 wall=5s") {
		t.Errorf("-v stderr\n%s", stderr)
	}
	// With -seeds too, whichever ends first.
	f = &fakeSim{clock: &fakeClock{}}
	if _, _, code := cli(t, f, "-seed", "0", "-duration", "5s", "-seeds", "3"); code != 0 || len(f.options()) != 3 {
		t.Errorf("exit %d, %d runs", code, len(f.options()))
	}
}

func TestCampaignRandomStart(t *testing.T) {
	f := &fakeSim{}
	stdout, _, _ := cli(t, f, "-seeds", "2")
	if lines(stdout)[0] != "seed=777" || f.options()[0].Seed != 777 || f.options()[1].Seed != 778 {
		t.Errorf("stdout\n%s", stdout)
	}
}

// TestCampaignProgress: with stderr a terminal (injected), a campaign draws
// one progress line there, in place (\r, erase line), with the seeds done,
// the rate, the failures and the time left of a -duration campaign; and
// erases it before the table. Stdout is what it is without a terminal.
func TestCampaignProgress(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want []string // progress lines, in order
	}{
		{"seeds", []string{"-seed", "1", "-seeds", "3"}, []string{
			"vopr: 1 seeds, 1.0 seeds/s, 0 failed, 1s",
			"vopr: 2 seeds, 1.0 seeds/s, 0 failed, 2s",
			"vopr: 3 seeds, 1.0 seeds/s, 1 failed, 3s",
		}},
		{"duration", []string{"-seed", "1", "-duration", "3s", "-keep-going"}, []string{
			"vopr: 1 seeds, 1.0 seeds/s, 0 failed, 2s left",
			"vopr: 2 seeds, 1.0 seeds/s, 0 failed, 1s left",
			"vopr: 3 seeds, 1.0 seeds/s, 1 failed, 0s left",
		}},
	} {
		outcomes := map[uint64]sim.Outcome{3: sim.Liveness}
		plain, _, _ := cli(t, &fakeSim{outcomes: outcomes, clock: &fakeClock{}}, c.args...)
		f := &fakeSim{outcomes: outcomes, clock: &fakeClock{}}
		stdout, stderr, _ := cliEnv(t, f, env{terminal: true}, c.args...)
		if stdout != plain {
			t.Errorf("%s: stdout with a terminal\n%s\nwithout\n%s", c.name, stdout, plain)
		}
		var want strings.Builder
		for _, l := range c.want {
			want.WriteString("\r\x1b[K" + l + "\r\x1b[K")
		}
		if stderr != want.String() {
			t.Errorf("%s: stderr %q\nwant %q", c.name, stderr, want.String())
		}
	}
	// Not a terminal: no progress line at all.
	if _, stderr, _ := cli(t, &fakeSim{clock: &fakeClock{}}, "-seed", "1", "-seeds", "3"); stderr != "" {
		t.Errorf("stderr without a terminal %q", stderr)
	}
}

// TestCampaignProgressTicker: between seeds, the ticker redraws the line
// (a long run ends rarely), and a campaign not on a terminal never asks for
// a ticker.
func TestCampaignProgressTicker(t *testing.T) {
	ticks := make(chan time.Time)
	release := make(chan struct{})
	f := &fakeSim{gate: func(seed uint64) {
		if seed == 1 {
			ticks <- time.Time{} // received only by the waiting campaign
			close(release)
		}
		<-release
	}}
	e := env{terminal: true, ticker: func() (<-chan time.Time, func()) { return ticks, func() {} }}
	_, stderr, code := cliEnv(t, f, e, "-seed", "1", "-seeds", "1")
	if code != 0 || !strings.HasPrefix(stderr, "\r\x1b[Kvopr: 0 seeds, 0.0 seeds/s, 0 failed, 0s") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	asked := false
	e = env{ticker: func() (<-chan time.Time, func()) { asked = true; return nil, func() {} }}
	if cliEnv(t, &fakeSim{}, e, "-seed", "1", "-seeds", "2"); asked {
		t.Error("a campaign without a terminal asked for a ticker")
	}
}

// jsonKeyOrder returns the keys of the JSON object in line, in order, and
// those of its nested object named nested.
func jsonKeyOrder(t *testing.T, line []byte, nested string) (keys, nestedKeys []string) {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(line))
	tok := func() json.Token {
		tk, err := d.Token()
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return tk
	}
	if tok() != json.Delim('{') {
		t.Fatalf("not an object: %s", line)
	}
	for d.More() {
		k := tok().(string)
		keys = append(keys, k)
		if k == nested {
			tok() // {
			for d.More() {
				nestedKeys = append(nestedKeys, tok().(string))
				var v any
				if err := d.Decode(&v); err != nil {
					t.Fatal(err)
				}
			}
			tok() // }
			continue
		}
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys, nestedKeys
}

func TestJSON(t *testing.T) {
	outcomes := map[uint64]sim.Outcome{101: sim.Correctness}
	stdout, stderr, code, _, _ := campaignRun(t, outcomes, 2, "-seed", "100", "-seeds", "3", "-keep-going", "-json", "-clients=4")
	if code != 129 {
		t.Fatalf("exit %d", code)
	}
	ls, records := splitJSON(lines(stdout))
	if len(ls) != 3 || len(records) != 2 {
		t.Fatalf("%d seed lines, %d records:\n%s", len(ls), len(records), stdout)
	}
	// The campaign's records open and close it.
	all := lines(stdout)
	if all[0] != records[0] || all[len(all)-1] != records[1] ||
		!strings.HasPrefix(records[0], `{"schema":1,"campaign":"start","first":"100","shard":"0/1","started_at":"0001-01-01T00:00:00Z","build":{`) ||
		records[1] != `{"schema":1,"campaign":"end","first":"100","shard":"0/1","seeds":3,"interrupted":false,"started_at":"0001-01-01T00:00:00Z","ended_at":"0001-01-01T00:00:00Z","wall_seconds":0,"seeds_per_second":0}` {
		t.Errorf("records %q", records)
	}
	var knobNames []string
	for _, k := range knobs {
		knobNames = append(knobNames, k.name)
	}
	f := &fakeSim{outcomes: outcomes}
	for i, l := range ls {
		seed := uint64(100 + i)
		keys, optionKeys := jsonKeyOrder(t, []byte(l), "options")
		if !slices.Equal(keys, jsonKeys) || !slices.Equal(optionKeys, knobNames) {
			t.Errorf("keys %v\noptions %v", keys, optionKeys)
		}
		var obj struct {
			Schema          int               `json:"schema"`
			Seed            string            `json:"seed"`
			Result          string            `json:"result"`
			Liveness        string            `json:"liveness"`
			Clients         int               `json:"clients"`
			Commits         uint64            `json:"commits"`
			Digest          string            `json:"digest"`
			Options         map[string]any    `json:"options"`
			Probes          map[string]int    `json:"probes"`
			Violation       string            `json:"violation"`
			Evidence        []string          `json:"evidence"`
			FramesByCommand map[string]uint64 `json:"frames_by_command"`
			Reproduce       string            `json:"reproduce"`
		}
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatal(err)
		}
		o := sim.Swarm(seed)
		o.Clients = 4
		r := f.run(o, sim.Outputs{})
		if obj.Schema != 1 || obj.Seed != strconv.FormatUint(seed, 10) || obj.Result != r.Outcome.String() || obj.Liveness != r.Liveness.String() ||
			obj.Clients != 4 || obj.Commits != r.Commits || obj.Digest != fmt.Sprintf("%016x", r.Digest) ||
			obj.Options["clients"] != 4.0 || obj.Options["partition-mode"] == nil ||
			!reflect.DeepEqual(obj.Probes, r.Probes) || obj.Violation != r.Violation ||
			len(obj.Evidence) != len(r.Evidence) || !reflect.DeepEqual(obj.FramesByCommand, r.FramesByCommand) ||
			obj.Reproduce != fmt.Sprintf("vopr -seed %d -clients=4", seed) {
			t.Errorf("seed %d: %s", seed, l)
		}
		// The summary line's words are the first keys, with the same values.
		words := strings.Fields(r.Summary())
		var m map[string]any
		json.Unmarshal([]byte(l), &m)
		for j, w := range words {
			k, v, _ := strings.Cut(w, "=")
			if keys[j+1] != k || fmt.Sprint(m[k]) != v {
				t.Errorf("seed %d: summary word %s, JSON %s=%v", seed, w, keys[j+1], m[k])
			}
		}
	}
	if !strings.Contains(stderr, "campaign seeds=3 first=100 last=102") {
		t.Errorf("the table is not on stderr: %q", stderr)
	}
	// One seed: one line, nothing else.
	stdout, _, _ = cli(t, &fakeSim{}, "-seed", "5", "-json")
	if ls := lines(stdout); len(ls) != 1 || !json.Valid([]byte(ls[0])) {
		t.Errorf("-json: %q", stdout)
	}
}

// splitJSON parts a -json output's lines into the seeds' lines and the
// campaign records.
func splitJSON(ls []string) (seeds, records []string) {
	for _, l := range ls {
		if strings.HasPrefix(l, `{"schema":1,"campaign":`) {
			records = append(records, l)
		} else if l != "" {
			seeds = append(seeds, l)
		}
	}
	return seeds, records
}

func TestTrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.jsonl")
	if _, stderr, code := cli(t, &fakeSim{}, "-seed", "5", "-trace", path); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{\"tick\":1,\"seed\":5}\n" {
		t.Errorf("trace %q, %v", b, err)
	}
	if _, stderr, code := cli(t, &fakeSim{}, "-seed", "5", "-seeds", "2", "-parallel", "2", "-trace", path); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, s := range []int{5, 6} {
		p := filepath.Join(dir, fmt.Sprintf("trace.%d.jsonl", s))
		if b, err := os.ReadFile(p); err != nil || string(b) != fmt.Sprintf("{\"tick\":1,\"seed\":%d}\n", s) {
			t.Errorf("%s: %q, %v", p, b, err)
		}
	}
	if got := (&config{trace: "out/t", seeds: 2}).tracePath(9); got != "out/t.9" {
		t.Errorf("tracePath %q", got)
	}
	stdout, stderr, code := cli(t, &fakeSim{}, "-seed", "5", "-trace", filepath.Join(dir, "missing", "t.jsonl"))
	if code != 1 || !strings.Contains(stderr, "-trace") || !strings.Contains(stdout, "result=error") {
		t.Errorf("unwritable trace: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

func TestPerformance(t *testing.T) {
	f := &fakeSim{}
	stdout, stderr, code := cli(t, f, "-performance")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if o := f.options(); len(o) != 1 || !reflect.DeepEqual(o[0], sim.Performance()) {
		t.Fatalf("options %+v", o)
	}
	r := f.run(sim.Performance(), sim.Outputs{})
	ls := lines(stdout)
	if ls[0] != fmt.Sprintf("seed=%d", sim.Performance().Seed) || ls[len(ls)-1] != r.Summary() {
		t.Errorf("output\n%s", stdout)
	}
	var perOp []string
	for _, l := range ls {
		if strings.HasPrefix(l, "frames_per_op ") {
			perOp = append(perOp, l)
		}
	}
	var names []string
	for n := range r.FramesByCommand {
		names = append(names, n)
	}
	sort.Strings(names)
	var want []string
	for _, n := range names {
		want = append(want, fmt.Sprintf("frames_per_op command=%s frames=%d per_op=%.3f", n, r.FramesByCommand[n],
			float64(r.FramesByCommand[n])/float64(r.Commits)))
	}
	want = append(want, fmt.Sprintf("frames_per_op command=all frames=%d per_op=%.3f", r.Frames, float64(r.Frames)/float64(r.Commits)))
	if !slices.Equal(perOp, want) {
		t.Errorf("frames per op\n%s\nwant\n%s", strings.Join(perOp, "\n"), strings.Join(want, "\n"))
	}
	// Knob overrides apply on top of the performance configuration.
	f = &fakeSim{}
	cli(t, f, "-performance", "-requests=64")
	want2 := sim.Performance()
	want2.Requests = 64
	if !reflect.DeepEqual(f.options()[0], want2) {
		t.Errorf("-performance -requests=64: %+v", f.options()[0])
	}
}

// TestFaultsNone: -faults=none turns every fault off, then explicit knobs win.
func TestFaultsNone(t *testing.T) {
	f := &fakeSim{}
	if _, stderr, code := cli(t, f, "-crash=0.01", "-seed", "5", "-faults=none"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := sim.Swarm(5)
	want.NoFaults()
	want.CrashProbability = 0.01
	if got := f.options()[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("options %+v\nwant %+v", got, want)
	}
}

func TestSimulatorPanic(t *testing.T) {
	f := &fakeSim{gate: func(uint64) { panic("boom") }}
	stdout, stderr, code := cli(t, f, "-seed", "5")
	if code != 1 || !strings.Contains(stdout, "error: simulator panic: boom\n") ||
		!strings.Contains(stdout, "reproduce: vopr -seed 5\n") || !strings.Contains(stderr, "boom") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestOptionsErrorMidCampaign: an override that is valid for the first seed
// but not for a later one's swarm draw stops the campaign with exit 2.
func TestOptionsErrorMidCampaign(t *testing.T) {
	// -crash-torn=0.9 is invalid wherever the swarm drew crash-lost > 0.1.
	var bad uint64
	for s := uint64(0); ; s++ {
		o := sim.Swarm(s)
		o.CrashTornProbability = 0.9
		if o.Check() != nil {
			if s == 0 {
				continue
			}
			prev := sim.Swarm(s - 1)
			prev.CrashTornProbability = 0.9
			if prev.Check() == nil {
				bad = s
				break
			}
		}
	}
	var calls atomic.Int32
	f := &fakeSim{gate: func(uint64) { calls.Add(1) }}
	stdout, stderr, code := cli(t, f, "-seed", strconv.FormatUint(bad-1, 10), "-seeds", "5", "-crash-torn=0.9")
	if code != 2 || calls.Load() != 1 || !strings.Contains(stderr, fmt.Sprintf("seed %d: options", bad)) ||
		!strings.Contains(stdout, "campaign seeds=1") {
		t.Errorf("exit %d, %d runs\n%s\n%s", code, calls.Load(), stdout, stderr)
	}
}
