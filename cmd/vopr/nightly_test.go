package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The nightly job's script (scripts/nightly.sh), run against a fake vopr:
// a shell script that logs its arguments, answers -version, and ends each
// kind of run (swarm campaign, long-run replay, -long campaign, a re-run
// with -trace) with the status the test gives it, printing one JSON line
// (between a campaign's start and end records, for a campaign).

const fakeVopr = `#!/bin/sh
echo "$*" >>"$FAKE_LOG"
case " $* " in
*" -version "*) echo "vopr fake version=v9 revision=abc modified=false go=go0"; exit 0 ;;
" mutants "*)
	while [ $# -gt 0 ]; do case $1 in -o) o=$2 ;; esac; shift; done
	echo '{"id":"a","build":"ok","vopr":{"verdict":"killed","class":"named"},"unit":{"verdict":"killed"}}' >"$o"
	echo '{"id":"b","build":"ok","vopr":{"verdict":"survived","seeds":100},"unit":{"verdict":"killed"}}' >>"$o"
	echo '{"id":"c","build":"failed","vopr":{"verdict":"not-run"},"unit":{"verdict":"not-run"}}' >>"$o"
	echo "VOPR recall: 50.0% (1 of the 2 mutants the unit tests kill)"
	echo "named kills: 100.0% (1 of 1 VOPR kills; 0 replica panics)"
	exit "${FAKE_MUTANTS:-0}" ;;
*" -trace "*)
	while [ $# -gt 0 ]; do case $1 in -trace|-o) : >"$2" ;; esac; shift; done
	echo "re-run output"; exit 129 ;;
*" -long "*) rc=$FAKE_LONG; seed=7 ;;
*" -duration "*) rc=$FAKE_SWARM; seed=42
	if [ -n "${FAKE_BLOCK:-}" ]; then
		trap 'kill $p; echo "campaign seeds=0 first=42 interrupted" >&2; exit 130' TERM
		sleep 1000 &
		p=$!
		echo started >"$FAKE_BLOCK"
		wait $p
	fi ;;
*) rc=$FAKE_REPLAY; seed=1 ;;
esac
case $rc in 0) result=pass ;; 128) result=liveness ;; 129) result=correctness ;; *) result=error ;; esac
case " $* " in *" -duration "*) echo "{\"schema\":1,\"campaign\":\"start\",\"first\":\"$seed\",\"shard\":\"0/1\"}" ;; esac
echo "{\"schema\":1,\"seed\":\"$seed\",\"result\":\"$result\",\"reproduce\":\"vopr -seed $seed -replicas=3\"}"
case " $* " in *" -duration "*) echo "{\"schema\":1,\"campaign\":\"end\",\"first\":\"$seed\",\"shard\":\"0/1\",\"seeds\":1}" ;; esac
echo "campaign seeds=1 first=$seed" >&2
exit $rc
`

// nightly runs the script with the fake; it returns the exit status, the
// run's directory, the fake's log (one line per call) and the output.
func nightly(t *testing.T, env []string, args ...string) (code int, dir string, calls []string, out string) {
	t.Helper()
	return nightlyWith(t, nil, env, args...)
}

// nightlyWith is nightly with more regression seed files (name to content)
// beside vopr-long-1.seed and vopr-5.seed.
func nightlyWith(t *testing.T, seedFiles map[string]string, env []string, args ...string) (code int, dir string, calls []string, out string) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	tmp := t.TempDir()
	vopr := filepath.Join(tmp, "vopr")
	if err := os.WriteFile(vopr, []byte(fakeVopr), 0o755); err != nil {
		t.Fatal(err)
	}
	seeds := filepath.Join(tmp, "seeds")
	os.Mkdir(seeds, 0o755)
	os.WriteFile(filepath.Join(seeds, "vopr-long-1.seed"), []byte("test: vopr-long\nseed: 1\nflags: -replicas=3 -requests=100000\n"), 0o644)
	os.WriteFile(filepath.Join(seeds, "vopr-5.seed"), []byte("test: vopr\nseed: 5\nflags:\n"), 0o644)
	for name, text := range seedFiles {
		os.WriteFile(filepath.Join(seeds, name), []byte(text), 0o644)
	}
	log := filepath.Join(tmp, "calls")
	cmd := exec.Command("sh", append([]string{"../../scripts/nightly.sh"}, args...)...)
	cmd.Env = append(os.Environ(), "VOPR="+vopr, "OUT="+filepath.Join(tmp, "out"), "SEEDS_DIR="+seeds,
		"FAKE_LOG="+log, "DURATION=1m", "PARALLEL=3", "FAKE_SWARM=0", "FAKE_LONG=0", "FAKE_REPLAY=0")
	cmd.Env = append(cmd.Env, env...)
	b, err := cmd.CombinedOutput()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	runs, _ := filepath.Glob(filepath.Join(tmp, "out", "*"))
	if len(runs) == 1 {
		dir = runs[0]
	}
	if l, err := os.ReadFile(log); err == nil {
		calls = lines(string(l))
	}
	return code, dir, calls, string(b)
}

// TestNightlyStatus: the script exits with the worst status of its
// campaigns (129 > 128 > 1 > 0; any other vopr status counts as 1) and
// writes it into status.txt and nightly.txt; failing seeds are re-run with
// their trace.
func TestNightlyStatus(t *testing.T) {
	for _, c := range []struct {
		swarm, replay, long int
		want                int
		rerun               []string // seeds re-run with a trace
	}{
		{0, 0, 0, 0, nil},
		{128, 0, 0, 128, []string{"42"}},
		{0, 0, 129, 129, []string{"7"}},
		{1, 0, 128, 128, []string{"42", "7"}},
		{0, 1, 0, 1, []string{"1"}},
		{2, 0, 0, 1, []string{"42"}},   // vopr's usage error is the script's bug: an error, not 2
		{130, 0, 0, 1, []string{"42"}}, // a vopr interrupted by someone else
		{129, 128, 1, 129, []string{"42", "1", "7"}},
	} {
		name := strconv.Itoa(c.swarm) + "/" + strconv.Itoa(c.replay) + "/" + strconv.Itoa(c.long)
		code, dir, calls, out := nightly(t, []string{"FAKE_SWARM=" + strconv.Itoa(c.swarm),
			"FAKE_REPLAY=" + strconv.Itoa(c.replay), "FAKE_LONG=" + strconv.Itoa(c.long)})
		if code != c.want {
			t.Errorf("%s: exit %d, want %d\n%s", name, code, c.want, out)
		}
		if dir == "" {
			t.Fatalf("%s: no run directory\n%s", name, out)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "status.txt")); string(b) != strconv.Itoa(c.want)+"\n" {
			t.Errorf("%s: status.txt %q", name, b)
		}
		manifest, _ := os.ReadFile(filepath.Join(dir, "nightly.txt"))
		for _, want := range []string{
			"status: " + strconv.Itoa(c.want) + "\n", "\nstart: 20", "\nend: 20", "\nparallel: 3\n",
			"\nduration: 1m (60 s: swarm 54 s, long runs 6 s)\n",
			"\nvopr: vopr fake version=v9 revision=abc modified=false go=go0\n",
			"\nswarm: vopr -duration 54s -parallel 3 -keep-going -json; exit " + strconv.Itoa(c.swarm) + "; seeds 1 in ",
			"\nreplay-vopr-long-1: vopr -seed 1 -replicas=3 -requests=100000 -json; exit " + strconv.Itoa(c.replay) + "; seeds 1 in ",
			"\nlong: vopr -long -duration ", "-parallel 3 -keep-going -json; exit " + strconv.Itoa(c.long) + "; seeds 1 in ",
			"seeds_per_second ",
		} {
			if !strings.Contains(string(manifest), want) {
				t.Errorf("%s: nightly.txt lacks %q:\n%s", name, want, manifest)
			}
		}
		var reruns []string
		for _, call := range calls {
			if strings.Contains(call, " -trace ") {
				seed := strings.Fields(call)[4]
				reruns = append(reruns, seed)
				want := "timeline -o " + filepath.Join(dir, "timeline-"+seed+".html") + " -seed " + seed + " -replicas=3 -trace " + filepath.Join(dir, "trace-"+seed+".jsonl")
				if call != want {
					t.Errorf("%s: re-run %q, want %q", name, call, want)
				}
				for _, file := range []string{"trace-" + seed + ".jsonl", "timeline-" + seed + ".html"} {
					if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
						t.Errorf("%s: %v", name, err)
					}
				}
				if b, _ := os.ReadFile(filepath.Join(dir, "failure-"+seed+".txt")); string(b) != "re-run output\n" {
					t.Errorf("%s: failure-%s.txt %q", name, seed, b)
				}
			}
		}
		if !slices.Equal(reruns, c.rerun) {
			t.Errorf("%s: re-ran %v, want %v", name, reruns, c.rerun)
		}
		// The plain regression seed is not replayed; the long one is.
		if slices.ContainsFunc(calls, func(s string) bool { return strings.HasPrefix(s, "-seed 5") }) {
			t.Errorf("%s: replayed a seed that is not vopr-long: %v", name, calls)
		}
	}
}

// TestNightlyUsage: the script's own usage errors exit 2 and run nothing;
// -h prints the usage and exits 0.
func TestNightlyUsage(t *testing.T) {
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"DURATION=5s"}, nil, "DURATION=5s: at least 10s"},
		{[]string{"DURATION=soon"}, nil, "DURATION=soon: want a duration"},
		{[]string{"DURATION=1.5h"}, nil, "DURATION=1.5h: want a duration"},
		{[]string{"DURATION="}, nil, "DURATION=1h"}, // empty: the default, runs
		{[]string{"PARALLEL=0"}, nil, "PARALLEL=0: want a positive integer"},
		{nil, []string{"extra"}, "unexpected argument 'extra'"},
		{[]string{"SHARD=2/2", "SEED=9"}, nil, "SHARD=2/2: want i/n with 0 <= i < n"},
		{[]string{"SHARD=0/0", "SEED=9"}, nil, "SHARD=0/0: want i/n with 0 <= i < n"},
		{[]string{"SHARD=3", "SEED=9"}, nil, "SHARD=3: want i/n with 0 <= i < n"},
		{[]string{"SHARD=1/x", "SEED=9"}, nil, "SHARD=1/x: want i/n with 0 <= i < n"},
		{[]string{"SHARD=/2", "SEED=9"}, nil, "SHARD=/2: want i/n with 0 <= i < n"},
		{[]string{"SHARD=1/2"}, nil, "SHARD=1/2 needs SEED"},
		{[]string{"SEED=-5"}, nil, "SEED=-5: want a decimal u64"},
	} {
		code, dir, calls, out := nightly(t, c.env, c.args...)
		if c.want == "DURATION=1h" {
			if code != 0 || !strings.Contains(out, "swarm: vopr -duration 3240s") {
				t.Errorf("%v: exit %d\n%s", c.env, code, out)
			}
			continue
		}
		if code != 2 || !strings.Contains(out, c.want) || !strings.Contains(out, "scripts/nightly.sh [-h]") || dir != "" || len(calls) != 0 {
			t.Errorf("%v %v: exit %d, %d calls, dir %q\n%s", c.env, c.args, code, len(calls), dir, out)
		}
	}
	code, _, calls, out := nightly(t, nil, "-h")
	if code != 0 || len(calls) != 0 || !strings.HasPrefix(out, "nightly.sh: the nightly job") {
		t.Errorf("-h: exit %d\n%s", code, out)
	}
}

// TestNightlyInterrupted: SIGTERM to the script reaches the running vopr
// (which prints its table and exits 130); no later stage runs, and the job
// exits 130 with that in status.txt.
func TestNightlyInterrupted(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	tmp := t.TempDir()
	fifo := filepath.Join(tmp, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	vopr := filepath.Join(tmp, "vopr")
	os.WriteFile(vopr, []byte(fakeVopr), 0o755)
	log := filepath.Join(tmp, "calls")
	out := filepath.Join(tmp, "out")
	cmd := exec.Command("sh", "../../scripts/nightly.sh")
	cmd.Env = append(os.Environ(), "VOPR="+vopr, "OUT="+out, "SEEDS_DIR="+tmp, "FAKE_LOG="+log,
		"DURATION=1m", "PARALLEL=1", "FAKE_SWARM=0", "FAKE_LONG=0", "FAKE_REPLAY=0", "FAKE_BLOCK="+fifo)
	var output strings.Builder
	cmd.Stdout, cmd.Stderr = &output, &output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The swarm campaign has started when the fake writes to the fifo.
	f, err := os.Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	bufio.NewReader(f).ReadString('\n')
	f.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130\n%s", err, output.String())
	}
	runs, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(runs) != 1 {
		t.Fatalf("runs %v", runs)
	}
	status, _ := os.ReadFile(filepath.Join(runs[0], "status.txt"))
	manifest, _ := os.ReadFile(filepath.Join(runs[0], "nightly.txt"))
	calls, _ := os.ReadFile(log)
	if string(status) != "130\n" || !strings.Contains(string(manifest), "\ninterrupted: yes\n") ||
		strings.Contains(string(calls), "-long") || !strings.Contains(string(manifest), "swarm: vopr -duration 54s -parallel 1 -keep-going -json; exit 130") {
		t.Errorf("status %q\nnightly.txt\n%s\ncalls\n%s", status, manifest, calls)
	}
}

// TestNightlyShard: SHARD=i/n (with SEED) passes -seed and -shard to the
// swarm and long campaigns and replays every n-th long-run regression
// seed from the i-th; the manifest names both; SEED alone passes -seed;
// neither keeps the job as it was (TestNightlyStatus).
func TestNightlyShard(t *testing.T) {
	more := map[string]string{
		"vopr-long-2.seed": "test: vopr-long\nseed: 2\nflags:\n",
		"vopr-long-3.seed": "test: vopr-long\nseed: 3\nflags: -lite\n",
	}
	for _, c := range []struct {
		env     []string
		flags   string   // after -keep-going in the campaigns
		replays []string // the replay calls
	}{
		{[]string{"SHARD=1/2", "SEED=99"}, " -seed 99 -shard 1/2", []string{"-seed 2 -json"}},
		{[]string{"SHARD=0/2", "SEED=99"}, " -seed 99 -shard 0/2", []string{"-seed 1 -replicas=3 -requests=100000 -json", "-seed 3 -lite -json"}},
		{[]string{"SHARD=0/1"}, " -shard 0/1", []string{"-seed 1 -replicas=3 -requests=100000 -json", "-seed 2 -json", "-seed 3 -lite -json"}},
		{[]string{"SEED=7"}, " -seed 7", []string{"-seed 1 -replicas=3 -requests=100000 -json", "-seed 2 -json", "-seed 3 -lite -json"}},
	} {
		code, dir, calls, out := nightlyWith(t, more, c.env)
		if code != 0 || dir == "" {
			t.Fatalf("%v: exit %d\n%s", c.env, code, out)
		}
		var replays []string
		for _, call := range calls {
			if strings.HasPrefix(call, "-seed ") && !strings.Contains(call, "-duration") {
				replays = append(replays, call)
			}
		}
		if !slices.Equal(replays, c.replays) {
			t.Errorf("%v: replays %q, want %q", c.env, replays, c.replays)
		}
		wantSwarm := "-duration 54s -parallel 3 -keep-going" + c.flags + " -json"
		if !slices.Contains(calls, wantSwarm) || !slices.ContainsFunc(calls, func(s string) bool {
			return strings.HasPrefix(s, "-long -duration ") && strings.HasSuffix(s, " -keep-going"+c.flags+" -json")
		}) {
			t.Errorf("%v: calls %q, want the swarm's %q and the long runs' flags", c.env, calls, wantSwarm)
		}
		manifest, _ := os.ReadFile(filepath.Join(dir, "nightly.txt"))
		for _, e := range c.env {
			k, v, _ := strings.Cut(e, "=")
			if want := "\n" + strings.ToLower(k) + ": " + v + "\n"; !strings.Contains(string(manifest), want) {
				t.Errorf("%v: nightly.txt lacks %q:\n%s", c.env, want, manifest)
			}
		}
		if !strings.Contains(string(manifest), "\nswarm: vopr "+wantSwarm+"; exit 0; seeds 1 in ") {
			t.Errorf("%v: nightly.txt\n%s", c.env, manifest)
		}
	}
}

// The mutant stage: shard 0 (or the whole job) draws MUTANTS mutants with
// the UTC date for seed, keeps the survivors' lines and states the VOPR's
// recall; a vopr mutants that cannot run makes the status 1, survivors do
// not; MUTANTS=0 and the other shards skip it.
func TestNightlyMutants(t *testing.T) {
	code, dir, calls, out := nightly(t, nil)
	if code != 0 || dir == "" {
		t.Fatalf("exit %d\n%s", code, out)
	}
	var mcall string
	for _, c := range calls {
		if strings.HasPrefix(c, "mutants ") {
			mcall = c
		}
	}
	want := "mutants -seed " + time.Now().UTC().Format("20060102") + " -n 100 -parallel 3 -o " + filepath.Join(dir, "mutants.jsonl")
	if mcall != want && mcall != strings.Replace(want, time.Now().UTC().Format("20060102"), time.Now().UTC().Add(-time.Minute).Format("20060102"), 1) {
		t.Errorf("the mutant call %q, want %q", mcall, want)
	}
	surv, _ := os.ReadFile(filepath.Join(dir, "survivors.jsonl"))
	if got := lines(string(surv)); len(got) != 1 || !strings.Contains(got[0], `"id":"b"`) {
		t.Errorf("survivors.jsonl %q, want mutant b's line alone", surv)
	}
	manifest, _ := os.ReadFile(filepath.Join(dir, "nightly.txt"))
	for _, w := range []string{"\nVOPR recall: 50.0% (1 of the 2 mutants the unit tests kill)\n", "; exit 0; ", "survivors 1; VOPR recall: 50.0%", "named kills: 100.0%"} {
		if !strings.Contains(string(manifest), w) {
			t.Errorf("nightly.txt lacks %q:\n%s", w, manifest)
		}
	}
	if code, _, _, out := nightly(t, []string{"FAKE_MUTANTS=1"}); code != 1 {
		t.Errorf("a vopr mutants that exits 1: status %d, want 1\n%s", code, out)
	}
	for _, env := range [][]string{{"MUTANTS=0"}, {"SHARD=1/2", "SEED=5"}} {
		_, _, calls, _ := nightly(t, env)
		for _, c := range calls {
			if strings.HasPrefix(c, "mutants ") {
				t.Errorf("%v: the mutant stage ran: %s", env, c)
			}
		}
	}
	if code, _, _, out := nightly(t, []string{"MUTANTS=many"}); code != 2 || !strings.Contains(out, "MUTANTS=many") {
		t.Errorf("MUTANTS=many: exit %d\n%s", code, out)
	}
}
