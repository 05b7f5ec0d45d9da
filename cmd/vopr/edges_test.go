package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/sim"
)

// The command's rough edges (issue 10, item 5): each behaviour here was
// found wrong by trying it.

// swarmSeed is the first seed from 0 whose swarm draw satisfies keep.
func swarmSeed(t *testing.T, keep func(o sim.Options) bool) uint64 {
	t.Helper()
	for s := uint64(0); s < 10_000; s++ {
		if keep(sim.Swarm(s)) {
			return s
		}
	}
	t.Fatal("no swarm seed in 0..9999 draws that")
	return 0
}

// TestFaultsNoneTurnsOffTheRollback: -faults=none turns the rollback
// nemesis off too (it partitions the replicas: a fault), and says so in the
// options; an explicit -rollback still wins, as every explicit knob does.
func TestFaultsNoneTurnsOffTheRollback(t *testing.T) {
	seed := strconv.FormatUint(swarmSeed(t, func(o sim.Options) bool { return o.Rollback }), 10)
	for _, c := range []struct {
		args     []string
		rollback bool
	}{
		{[]string{"-seed", seed}, true},
		{[]string{"-seed", seed, "-faults=none"}, false},
		{[]string{"-seed", seed, "-faults=none", "-rollback"}, true},
	} {
		f := &fakeSim{}
		stdout, stderr, code := cli(t, f, c.args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		if got := f.options()[0].Rollback; got != c.rollback {
			t.Errorf("%v: Rollback %v, want %v", c.args, got, c.rollback)
		}
		if word := fmt.Sprintf(" rollback=%v", c.rollback); !strings.Contains(stdout, word+" ") && !strings.Contains(stdout, word+"\n") {
			t.Errorf("%v: no %q in\n%s", c.args, word, stdout)
		}
	}
	// The real simulator: no network partition and no rollback probe at all
	// (the partition planes' own probes, "partition plane: ...", may fire).
	stdout, stderr, code := vopr(t, nil, "-seed", seed, "-faults=none", "-json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var obj struct {
		Partitions uint64         `json:"partitions"`
		Probes     map[string]int `json:"probes"`
	}
	if err := json.Unmarshal([]byte(stdout), &obj); err != nil {
		t.Fatal(err)
	}
	for name := range obj.Probes {
		if strings.Contains(name, "rollback") || strings.HasPrefix(name, "partition") && !strings.HasPrefix(name, "partition plane:") {
			t.Errorf("-faults=none: probe %q fired", name)
		}
	}
	if obj.Partitions != 0 {
		t.Errorf("-faults=none: %d partitions", obj.Partitions)
	}
}

// TestTraceOpensWriteOnly: the trace file is opened write-only, created or
// truncated. Read-write (os.Create) made `-trace /dev/stdout | head -1`
// hang: the process held a reader of its own pipe.
func TestTraceOpensWriteOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(strings.Repeat("old trace\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := openTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := f.Read(make([]byte, 1)); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("the trace file reads (%d bytes, %v): it is open for reading", n, err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != 0 {
		t.Errorf("an existing trace file was not truncated: %v, %v", fi.Size(), err)
	}
	// Through the command: the old content is replaced.
	if _, stderr, code := cli(t, &fakeSim{}, "-seed", "5", "-trace", path); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(path); string(b) != "{\"tick\":1,\"seed\":5}\n" {
		t.Errorf("trace %q", b)
	}
}

// failingWriter fails every write from the (after+1)th on, and counts the
// writes it was asked for.
type failingWriter struct {
	after  int
	writes int
	buf    bytes.Buffer
}

var errFull = errors.New("no space left on device")

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes > w.after {
		return 0, errFull
	}
	return w.buf.Write(p)
}

// TestStdoutWriteError: a write error on stdout is reported on stderr and
// makes the status 1 (or worse, when a failure was found), for every kind
// of run; a campaign stops launching seeds when its output is lost.
func TestStdoutWriteError(t *testing.T) {
	sample := filepath.Join("testdata", "sample.bin")
	for _, c := range []struct {
		name     string
		after    int // successful writes before the failure
		outcomes map[uint64]sim.Outcome
		args     []string
		code     int
		maxRuns  int
	}{
		{"one seed", 0, nil, []string{"-seed", "3"}, 1, 1},
		{"one seed, result lost", 1, nil, []string{"-seed", "3"}, 1, 1},
		{"one seed that fails", 0, map[uint64]sim.Outcome{3: sim.Correctness}, []string{"-seed", "3"}, 129, 1},
		{"campaign", 0, nil, []string{"-seed", "3", "-seeds", "100"}, 1, 0},
		{"campaign, table lost", 1, nil, []string{"-seed", "3", "-seeds", "100", "-parallel", "1"}, 1, 2},
		{"campaign -json", 0, nil, []string{"-seed", "3", "-seeds", "100", "-json"}, 1, 2},
		{"decode", 0, nil, []string{"decode", sample}, 1, 0},
		{"decode -json", 0, nil, []string{"decode", "-json", sample}, 1, 0},
		{"help", 0, nil, []string{"-h"}, 1, 0},
		{"version", 0, nil, []string{"-version"}, 1, 0},
	} {
		f := &fakeSim{outcomes: c.outcomes}
		w := &failingWriter{after: c.after}
		var stderr bytes.Buffer
		code := runEnv(c.args, nil, w, &stderr, env{runSeed: f.run, now: (&fakeClock{}).now, random: func() uint64 { return 1 }})
		if code != c.code || !strings.Contains(stderr.String(), "vopr: writing stdout: "+errFull.Error()) {
			t.Errorf("%s: exit %d (want %d), stderr %q", c.name, code, c.code, stderr.String())
		}
		if n := len(f.options()); n > c.maxRuns {
			t.Errorf("%s: %d seeds ran after stdout broke, want %d at most", c.name, n, c.maxRuns)
		}
		if w.writes > c.after+1 {
			t.Errorf("%s: %d writes after the failing one", c.name, w.writes-c.after-1)
		}
	}
	// And a real full device, where there is one.
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	for _, args := range [][]string{{"-seed", "3", "-lite"}, {"decode", sample}} {
		var stderr bytes.Buffer
		if code := run(args, nil, full, &stderr); code != 1 || !strings.Contains(stderr.String(), "vopr: writing stdout:") {
			t.Errorf("%v > /dev/full: exit %d, stderr %q", args, code, stderr.String())
		}
	}
}

// TestExitWorse: the order of exit statuses a run combines.
func TestExitWorse(t *testing.T) {
	order := []int{0, exitInterrupted, 2, 1, 128, 129} // from best to worst
	for i, a := range order {
		for j, b := range order {
			want := a
			if j > i {
				want = b
			}
			if got := exitWorse(a, b); got != want {
				t.Errorf("exitWorse(%d, %d) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// TestDurationMinimum: a -duration below a second is refused (such a
// campaign may not reach its first seed), and a campaign whose clock is
// past its deadline before the first launch still runs one seed.
func TestDurationMinimum(t *testing.T) {
	for _, d := range []string{"1ns", "1us", "999ms"} {
		f := &fakeSim{}
		stdout, stderr, code := cli(t, f, "-duration", d)
		parsed, _ := time.ParseDuration(d)
		if code != 2 || stdout != "" || len(f.options()) != 0 ||
			!strings.Contains(stderr, "-duration "+parsed.String()+": a campaign that short may not run a single seed; give at least 1s") {
			t.Errorf("-duration %s: exit %d, %d runs, stderr %q", d, code, len(f.options()), stderr)
		}
	}
	// A clock that leaps 10 s at every reading: the deadline of -duration
	// 1s has passed before the first launch.
	var mu sync.Mutex
	now := time.Unix(1e9, 0)
	leap := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		now = now.Add(10 * time.Second)
		return now
	}
	f := &fakeSim{}
	stdout, stderr, code := cliEnv(t, f, env{now: leap}, "-seed", "4", "-duration", "1s")
	if code != 0 || len(f.options()) != 1 || !strings.Contains(stdout, "campaign seeds=1 first=4 last=4\n") {
		t.Errorf("exit %d, %d runs, stdout\n%s\nstderr %s", code, len(f.options()), stdout, stderr)
	}
}

// TestReplicaNeeds: -rollback needs 3 replicas, a partition mode 2 (a
// bridge 3). With -replicas fixed too small the combination is refused;
// with the count drawn, a seed drawn too small runs without it, and its
// options say so.
func TestReplicaNeeds(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // in stderr when refused, "" when accepted
	}{
		{[]string{"-replicas=2", "-rollback"}, "-rollback needs 3 replicas or more, and -replicas=2 gives 2"},
		{[]string{"-rollback=true", "-replicas=1"}, "-rollback needs 3 replicas or more, and -replicas=1 gives 1"},
		{[]string{"-replicas=1", "-partition-mode=isolate-single"}, "-partition-mode=isolate-single needs 2 replicas or more, and -replicas=1 gives 1"},
		{[]string{"-replicas=1", "-partition-mode=primary"}, "-partition-mode=primary needs 2 replicas or more"},
		{[]string{"-replicas=2", "-partition-mode=bridge"}, "-partition-mode=bridge needs 3 replicas or more, and -replicas=2 gives 2"},
		{[]string{"-replicas=1", "-partition-mode=bridge", "-seeds", "3"}, "-partition-mode=bridge needs 3 replicas or more"},
		{[]string{"-replicas=1", "-stale-answers"}, "-stale-answers needs 2 replicas or more, and -replicas=1 gives 1"},
		{[]string{"-view-change-faults", "-replicas=1"}, "-view-change-faults needs 2 replicas or more, and -replicas=1 gives 1"},
		{[]string{"-replicas=2", "-stale-answers", "-view-change-faults"}, ""},
		{[]string{"-replicas=3", "-rollback"}, ""},
		{[]string{"-replicas=2", "-rollback=false"}, ""},
		{[]string{"-replicas=2", "-partition-mode=uniform-size"}, ""},
		{[]string{"-replicas=3", "-partition-mode=bridge"}, ""},
		{[]string{"-replicas=1", "-partition-mode=none"}, ""},
	} {
		f := &fakeSim{}
		args := append([]string{"-seed", "1"}, c.args...)
		stdout, stderr, code := cli(t, f, args...)
		if c.want == "" {
			if code != 0 {
				t.Errorf("%v: exit %d: %s", c.args, code, stderr)
			}
			continue
		}
		if code != 2 || stdout != "" || len(f.options()) != 0 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "usage:") {
			t.Errorf("%v: exit %d, %d runs, stderr %q, want %q", c.args, code, len(f.options()), stderr, c.want)
		}
	}

	// Drawn counts: each case names a seed the swarm draws that small.
	small := func(n int) uint64 { return swarmSeed(t, func(o sim.Options) bool { return o.Replicas == n }) }
	for _, c := range []struct {
		name  string
		seed  uint64
		flags []string
		check func(o sim.Options) bool
		word  string // in the options lines
	}{
		{"rollback, 2 replicas", small(2), []string{"-rollback"},
			func(o sim.Options) bool { return !o.Rollback && o.PartitionMode == network.PartitionNone },
			"rollback=false(needs 3 replicas)"},
		{"bridge, 2 replicas", small(2), []string{"-partition-mode=bridge"},
			func(o sim.Options) bool { return o.PartitionMode == network.PartitionIsolateSingle },
			"partition-mode=isolate-single(bridge needs 3 replicas)"},
		{"uniform-size, 1 replica", small(1), []string{"-partition-mode=uniform-size"},
			func(o sim.Options) bool { return o.PartitionMode == network.PartitionNone },
			"partition-mode=none(uniform-size needs 2 replicas)"},
		{"the swarm's own partition mode, 1 replica",
			swarmSeed(t, func(o sim.Options) bool {
				return o.Replicas == 1 && o.PartitionMode == network.PartitionUniformPartition
			}), nil,
			func(o sim.Options) bool { return o.PartitionMode == network.PartitionNone },
			"partition-mode=none(uniform-partition needs 2 replicas)"},
		{"rollback, 3 replicas", small(3), []string{"-rollback"},
			func(o sim.Options) bool { return o.Rollback },
			"rollback=true "},
	} {
		f := &fakeSim{}
		args := append([]string{"-seed", strconv.FormatUint(c.seed, 10)}, c.flags...)
		stdout, stderr, code := cli(t, f, args...)
		if code != 0 || !c.check(f.options()[0]) || !strings.Contains(strings.ReplaceAll(stdout, "\noptions", ""), c.word) {
			t.Errorf("%s: exit %d, options %+v\n%s%s", c.name, code, f.options(), stdout, stderr)
		}
		// -json names it under "disabled".
		stdout, _, _ = cli(t, &fakeSim{}, append(args, "-json")...)
		var obj struct {
			Disabled map[string]string `json:"disabled"`
		}
		if err := json.Unmarshal([]byte(stdout), &obj); err != nil {
			t.Fatal(err)
		}
		knob, why, _ := strings.Cut(strings.TrimSuffix(c.word, ")"), "(")
		knob, _, _ = strings.Cut(knob, "=")
		if want := map[string]string{knob: why}; why != "" && !reflect.DeepEqual(obj.Disabled, want) {
			t.Errorf("%s: disabled %v, want %v", c.name, obj.Disabled, want)
		} else if why == "" && len(obj.Disabled) != 0 {
			t.Errorf("%s: disabled %v, want none", c.name, obj.Disabled)
		}
	}

	// In a campaign, only the seeds drawn too small go without the nemesis.
	f := &fakeSim{}
	if _, stderr, code := cli(t, f, "-seed", "0", "-seeds", "40", "-rollback", "-keep-going"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, o := range f.options() {
		if o.Rollback != (o.Replicas >= 3) {
			t.Errorf("seed %d: %d replicas, rollback %v", o.Seed, o.Replicas, o.Rollback)
		}
	}
}

// TestNeedsMetKeepsTheWorld: what needsMet turns off changes nothing the
// simulator does (the same digest), so a seed's options only become honest.
func TestNeedsMetKeepsTheWorld(t *testing.T) {
	seeds := map[int]uint64{}
	for _, n := range []int{1, 2} {
		seeds[n] = swarmSeed(t, func(o sim.Options) bool { return o.Replicas == n && o.PartitionProbability > 0 })
	}
	for _, c := range []struct {
		name     string
		replicas int
		set      func(o *sim.Options)
	}{
		{"rollback on 2", 2, func(o *sim.Options) { o.Rollback, o.PartitionMode = true, network.PartitionNone }},
		{"bridge on 2", 2, func(o *sim.Options) { o.PartitionMode = network.PartitionBridge }},
		{"uniform-size on 1", 1, func(o *sim.Options) { o.PartitionMode = network.PartitionUniformSize }},
		{"primary on 1", 1, func(o *sim.Options) { o.PartitionMode = network.PartitionPrimary }},
	} {
		o := sim.Swarm(seeds[c.replicas])
		o.Lite = true
		c.set(&o)
		asked := sim.Run(o, nil)
		if off := needsMet(&o); len(off) != 1 {
			t.Fatalf("%s: needsMet turned off %v", c.name, off)
		}
		ran := sim.Run(o, nil)
		if asked.Digest != ran.Digest {
			t.Errorf("%s (seed %d): digest %016x with the knob, %016x without", c.name, o.Seed, asked.Digest, ran.Digest)
		}
	}
}

// TestSeedRangeOverflow: seeds are u64s and a campaign never wraps past
// the last one: a -seeds range that would is refused, a random start is
// moved back, and a -duration campaign stops there.
func TestSeedRangeOverflow(t *testing.T) {
	for _, args := range [][]string{
		{"-seed", "18446744073709551615", "-seeds", "3"},
		{"-seed", "18446744073709551614", "-seeds", "3"},
		{"-seeds", "2", "-seed", "18446744073709551615"},
	} {
		f := &fakeSim{}
		stdout, stderr, code := cli(t, f, args...)
		if code != 2 || stdout != "" || len(f.options()) != 0 || !strings.Contains(stderr, "the campaign would run past seed 18446744073709551615, the last u64") {
			t.Errorf("%v: exit %d, %d runs, stderr %q", args, code, len(f.options()), stderr)
		}
	}
	// The last three seeds exactly.
	f := &fakeSim{}
	stdout, _, code := cli(t, f, "-seed", "18446744073709551613", "-seeds", "3")
	if code != 0 || len(f.options()) != 3 || !strings.Contains(stdout, "campaign seeds=3 first=18446744073709551613 last=18446744073709551615\n") {
		t.Errorf("exit %d, %d runs\n%s", code, len(f.options()), stdout)
	}
	// A random start at the top moves back.
	f = &fakeSim{}
	stdout, _, code = cliEnv(t, f, env{random: func() uint64 { return math.MaxUint64 - 1 }}, "-seeds", "3")
	if code != 0 || lines(stdout)[0] != "seed=18446744073709551613" || f.options()[2].Seed != math.MaxUint64 {
		t.Errorf("exit %d\n%s", code, stdout)
	}
	// -duration: stops at the last seed.
	f = &fakeSim{clock: &fakeClock{}}
	stdout, stderr, code := cli(t, f, "-seed", "18446744073709551614", "-duration", "1h")
	if code != 0 || len(f.options()) != 2 || !strings.Contains(stdout, "campaign seeds=2 first=18446744073709551614 last=18446744073709551615\n") ||
		!strings.Contains(stderr, "vopr: the campaign stops at seed 18446744073709551615, the last u64") {
		t.Errorf("exit %d, %d runs\n%s%s", code, len(f.options()), stdout, stderr)
	}
}

// interruptAt is a fake simulator and interrupt source: the run of seed
// `at` fires the interrupt, then blocks until the test ends (it is in
// flight when the campaign sees the interrupt, and must be dropped).
type interruptAt struct {
	f       *fakeSim
	stop    chan struct{}
	release chan struct{}
	fire    func() // fires the interrupt (close(stop), or a real signal)
}

func newInterruptAt(at uint64, outcomes map[uint64]sim.Outcome) *interruptAt {
	ia := &interruptAt{stop: make(chan struct{}), release: make(chan struct{})}
	ia.fire = func() { close(ia.stop) }
	ia.f = &fakeSim{outcomes: outcomes, gate: func(seed uint64) {
		if seed == at {
			ia.fire()
			<-ia.release
		}
	}}
	return ia
}

func (ia *interruptAt) interrupts() (<-chan struct{}, func()) { return ia.stop, func() {} }

// TestCampaignInterrupt: an interrupt stops the campaign: no new seed, the
// seeds finished so far printed, the one in flight dropped, the table
// marked interrupted; 130, or the worst failure's status if one was found.
func TestCampaignInterrupt(t *testing.T) {
	for _, c := range []struct {
		name     string
		outcomes map[uint64]sim.Outcome
		args     []string
		code     int
	}{
		{"passing", nil, nil, 130},
		{"after a liveness failure", map[uint64]sim.Outcome{11: sim.Liveness}, []string{"-keep-going"}, 128},
		{"after a simulator error", map[uint64]sim.Outcome{10: sim.SimError}, []string{"-keep-going"}, 1},
		{"after a correctness failure", map[uint64]sim.Outcome{10: sim.Correctness, 11: sim.Liveness}, []string{"-keep-going"}, 129},
		{"-json", nil, []string{"-json"}, 130},
		{"-duration", nil, []string{"-duration", "1h"}, 130},
	} {
		ia := newInterruptAt(12, c.outcomes)
		args := append([]string{"-seed", "10", "-parallel", "1"}, c.args...)
		if !slices.Contains(c.args, "-duration") {
			args = append(args, "-seeds", "100")
		}
		stdout, stderr, code := cliEnv(t, ia.f, env{interrupts: ia.interrupts}, args...)
		close(ia.release)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d", c.name, code, c.code)
		}
		if n := len(ia.f.options()); n != 3 {
			t.Errorf("%s: %d seeds started, want 10, 11, 12", c.name, n)
		}
		table := stdout
		if slices.Contains(c.args, "-json") {
			table = stderr
			ls, records := splitJSON(lines(stdout))
			if len(ls) != 2 || len(records) != 2 || !strings.Contains(records[1], `"seeds":2,"interrupted":true,`) {
				t.Errorf("%s: %d JSON lines, records %q", c.name, len(ls), records)
			}
			for _, l := range lines(stdout) {
				if !json.Valid([]byte(l)) {
					t.Errorf("%s: torn JSON line %q", c.name, l)
				}
			}
		} else if !strings.Contains(stdout, "\nseed=11 result=") || strings.Contains(stdout, "seed=12 result=") {
			t.Errorf("%s: stdout\n%s", c.name, stdout)
		}
		if !strings.Contains(table, "campaign seeds=2 first=10 last=11 interrupted\n") ||
			!strings.Contains(stderr, "vopr: interrupted: 2 seeds printed, 1 dropped while running") {
			t.Errorf("%s: table\n%s\nstderr %s", c.name, table, stderr)
		}
	}
}

// TestCampaignSignal: SIGINT and SIGTERM reach the campaign through
// notifyInterrupts (the process sends them to itself while seed 12 runs).
func TestCampaignSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		ia := newInterruptAt(12, nil)
		ia.fire = func() { syscall.Kill(os.Getpid(), sig) }
		stdout, stderr, code := cliEnv(t, ia.f, env{interrupts: notifyInterrupts}, "-seed", "10", "-seeds", "100", "-parallel", "1")
		close(ia.release)
		if code != 130 || !strings.Contains(stdout, "campaign seeds=2 first=10 last=11 interrupted\n") {
			t.Errorf("%v: exit %d\n%s%s", sig, code, stdout, stderr)
		}
	}
}

// concurrency wraps a fake simulator's gate to record the most runs at once.
type concurrency struct {
	mu        sync.Mutex
	running   int
	most      int
	innerGate func(uint64)
}

func (c *concurrency) gate(seed uint64) {
	c.mu.Lock()
	c.running++
	c.most = max(c.most, c.running)
	c.mu.Unlock()
	c.innerGate(seed)
	c.mu.Lock()
	c.running--
	c.mu.Unlock()
}

// TestParallelCappedAtCPUs: -parallel above the CPUs warns and runs as many
// simulations at once as there are CPUs; the output is that of -parallel 1.
func TestParallelCappedAtCPUs(t *testing.T) {
	serial, _, _ := cli(t, &fakeSim{}, "-seed", "100", "-seeds", "8", "-parallel", "1")
	for _, c := range []struct {
		cpus, parallel, most int
		warn                 bool
	}{
		{2, 8, 2, true},
		{8, 8, 8, false},
		{0, 8, 8, false}, // no CPU count: no bound
	} {
		g := newGated(c.parallel)
		cc := &concurrency{innerGate: g.gate}
		f := &fakeSim{gate: cc.gate}
		stdout, stderr, code := cliEnv(t, f, env{cpus: c.cpus}, "-seed", "100", "-seeds", "8", "-parallel", strconv.Itoa(c.parallel))
		g.close()
		warning := fmt.Sprintf("vopr: -parallel %d is more than the %d CPUs: running %d simulations at a time", c.parallel, c.cpus, c.cpus)
		if code != 0 || stdout != serial || strings.Contains(stderr, warning) != c.warn {
			t.Errorf("cpus %d: exit %d, stderr %q\n%s", c.cpus, code, stderr, stdout)
		}
		if cc.most > c.most || (c.most == 2 && cc.most != 2) {
			t.Errorf("cpus %d -parallel %d: %d simulations at once, want %d at most", c.cpus, c.parallel, cc.most, c.most)
		}
	}
}

// fakeBuild is a build as `go build` in a modified git checkout records it.
func fakeBuild() (*debug.BuildInfo, bool) {
	return &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/iggy-vopr/vopr", Version: "v0.0.0-20251201204400-887c407abcde+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "-tags", Value: "x"},
			{Key: "vcs.revision", Value: "887c407abcde887c407abcde887c407abcde887c"},
			{Key: "vcs.modified", Value: "true"},
		},
	}, true
}

// TestVersion: -version prints the build; the header and -json carry it;
// a build that records nothing reads unknown.
func TestVersion(t *testing.T) {
	words := "version=v0.0.0-20251201204400-887c407abcde+dirty revision=887c407abcde887c407abcde887c407abcde887c modified=true go=go1.26.8"
	for _, args := range [][]string{{"-version"}, {"-version", "-seed", "3"}, {"-seeds", "0", "-version"}} {
		f := &fakeSim{}
		stdout, stderr, code := cliEnv(t, f, env{build: fakeBuild}, args...)
		if code != 0 || stderr != "" || len(f.options()) != 0 || stdout != "vopr github.com/iggy-vopr/vopr "+words+"\n" {
			t.Errorf("%v: exit %d, %d runs, stdout %q, stderr %q", args, code, len(f.options()), stdout, stderr)
		}
	}
	stdout, _, _ := cliEnv(t, &fakeSim{}, env{build: fakeBuild}, "-seed", "3")
	if ls := lines(stdout); ls[1] != "build "+words {
		t.Errorf("header %q", ls[:2])
	}
	stdout, _, _ = cliEnv(t, &fakeSim{}, env{build: fakeBuild}, "-seed", "3", "-seeds", "2")
	if ls := lines(stdout); ls[1] != "build "+words || strings.Count(stdout, "build ") != 1 {
		t.Errorf("campaign header %q", ls[:2])
	}
	stdout, _, _ = cliEnv(t, &fakeSim{}, env{build: fakeBuild}, "-seed", "3", "-json")
	var obj struct {
		Build map[string]string `json:"build"`
	}
	if err := json.Unmarshal([]byte(stdout), &obj); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"module": "github.com/iggy-vopr/vopr", "version": "v0.0.0-20251201204400-887c407abcde+dirty",
		"revision": "887c407abcde887c407abcde887c407abcde887c", "modified": "true", "go": "go1.26.8"}
	if !reflect.DeepEqual(obj.Build, want) {
		t.Errorf("build %v\nwant %v", obj.Build, want)
	}
	none := readBuild(func() (*debug.BuildInfo, bool) { return nil, false })
	if none.words() != "version=unknown revision=unknown modified=unknown go=unknown" {
		t.Errorf("no build info: %s", none.words())
	}
}

// TestLongPreset: -long is sim.Long's world for every seed, composes with
// campaigns, yields to explicit knobs, and shows in reproduction commands.
func TestLongPreset(t *testing.T) {
	if sim.LongRequests(8) != 3500 || sim.LongRequests(1) != 3500 || sim.LongRequests(9) != 1750 {
		t.Errorf("LongRequests: %d %d %d", sim.LongRequests(1), sim.LongRequests(8), sim.LongRequests(9))
	}
	for s := uint64(0); s < 50; s++ {
		o, sw := sim.Long(s), sim.Swarm(s)
		if o.SafetyTicksMax != 10_000_000 || o.Requests != sim.LongRequests(sw.Clients) || o.ThinkTicks != sim.LongThinkTicks(sw.Clients) {
			t.Errorf("Long(%d): %d ticks, %d requests, %d think ticks", s, o.SafetyTicksMax, o.Requests, o.ThinkTicks)
		}
		// The clients' requests spread over the budget: each client's share
		// with its think time spans most of it, and no more.
		if span := o.ThinkTicks * (o.Requests / sw.Clients); span > o.SafetyTicksMax*4/5 || span < o.SafetyTicksMax*7/10 {
			t.Errorf("Long(%d): %d clients thinking %d ticks over %d requests span %d ticks", s, sw.Clients, o.ThinkTicks, o.Requests, span)
		}
		o.SafetyTicksMax, o.Requests, o.ThinkTicks = sw.SafetyTicksMax, sw.Requests, sw.ThinkTicks
		if o != sw {
			t.Errorf("Long(%d) differs from Swarm(%d) beyond ticks and requests", s, s)
		}
	}
	for _, c := range []struct {
		args []string
		want func(seed uint64) sim.Options
	}{
		{[]string{"-long", "-seed", "5"}, sim.Long},
		{[]string{"-long", "-seed", "5", "-seeds", "3"}, sim.Long},
		{[]string{"-seed", "5", "-duration", "3s", "-long"}, sim.Long},
		{[]string{"-long", "-seed", "5", "-requests=100"}, func(s uint64) sim.Options {
			o := sim.Long(s)
			o.Requests = 100
			return o
		}},
		{[]string{"-long", "-seed", "5", "-clients=12"}, func(s uint64) sim.Options {
			o := sim.Long(s)
			o.Clients, o.Requests, o.ThinkTicks = 12, 1750, sim.LongThinkTicks(12)
			return o
		}},
		{[]string{"-long", "-seed", "5", "-clients=2", "-safety-ticks=7"}, func(s uint64) sim.Options {
			o := sim.Long(s)
			o.Clients, o.Requests, o.SafetyTicksMax, o.ThinkTicks = 2, 3500, 7, sim.LongThinkTicks(2)
			return o
		}},
	} {
		f := &fakeSim{outcomes: map[uint64]sim.Outcome{5: sim.Liveness}, clock: &fakeClock{}}
		stdout, stderr, code := cli(t, f, append(c.args, "-keep-going")...)
		if code != 128 {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr)
		}
		for _, o := range f.options() {
			want := c.want(o.Seed)
			needsMet(&want)
			if !reflect.DeepEqual(o, want) {
				t.Errorf("%v: seed %d options\n%+v\nwant\n%+v", c.args, o.Seed, o, want)
			}
		}
		var repro string
		for _, l := range lines(stdout) {
			if r, ok := strings.CutPrefix(l, "reproduce: "); ok {
				repro = r
			}
		}
		if !strings.HasPrefix(repro, "vopr -seed 5 -long") {
			t.Errorf("%v: reproduce %q", c.args, repro)
		}
		assertReproduces(t, repro, f.options()[0])
	}
	if _, stderr, code := cli(t, &fakeSim{}, "-performance", "-long"); code != 2 || !strings.Contains(stderr, "-long does not combine") {
		t.Errorf("-performance -long: exit %d, %s", code, stderr)
	}
}

// TestVersionOfAGitBuild: `go build` in a git checkout (as make build runs
// it, -buildvcs=auto whatever GOFLAGS says) records the revision, and
// -version prints it.
func TestVersionOfAGitBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout, or no git: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "vopr")
	if out, err := exec.Command("go", "build", "-buildvcs=auto", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-version").Output()
	if err != nil {
		t.Fatal(err)
	}
	// HEAD again: a commit may land while the build runs.
	after, _ := exec.Command("git", "rev-parse", "HEAD").Output()
	want := "revision=" + strings.TrimSpace(string(head)) + " modified="
	wantAfter := "revision=" + strings.TrimSpace(string(after)) + " modified="
	if !strings.HasPrefix(string(out), "vopr github.com/iggy-vopr/vopr version=") ||
		!strings.Contains(string(out), want) && !strings.Contains(string(out), wantAfter) {
		t.Errorf("-version %q, want %q in it", out, want)
	}
}
