package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/sim"
)

// The failure workbench (issue 14): -check-determinism, -shard and
// vopr report.

// TestCheckDeterminismDiverged: a seed whose two runs give different
// digests fails as a simulator error, names the first event where two
// traced runs part, and reproduces with -check-determinism; a seed whose
// digests agree passes after two runs.
func TestCheckDeterminismDiverged(t *testing.T) {
	f := &fakeSim{diverge: map[uint64]int{7: 2}}
	stdout, stderr, code := cli(t, f, "-seed", "7", "-check-determinism")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	seven := uint64(7)
	base := seven * 0x9e3779b97f4a7c15 // the fake's digest of seed 7
	want := []string{
		fmt.Sprintf("\nerror: nondeterminism: two runs of seed 7 gave digests %016x and %016x\n", base, base+1),
		"\nreproduce: vopr -seed 7 -check-determinism\n",
		fmt.Sprintf("\ndeterminism: diverged: digest %016x, then %016x; first divergence at event 2: "+
			"event 3 at 2000ns: network.deliver node 2 hash %016x vs event 3 at 2000ns: network.deliver node 2 hash %016x\n",
			base, base+1, 7+2+2, 7+2+3),
		"\nseed=7 result=error ",
	}
	for _, w := range want {
		if !strings.Contains(stdout, w) {
			t.Errorf("no %q in\n%s", w, stdout)
		}
	}
	if n := len(f.options()); n != 4 {
		t.Errorf("%d runs, want 4 (two compared, two traced)", n)
	}

	// The same digests: two runs, a pass.
	f = &fakeSim{}
	stdout, _, code = cli(t, f, "-seed", "8", "-check-determinism")
	if code != 0 || !strings.Contains(stdout, "\ndeterminism: ok\n") || strings.Contains(stdout, "reproduce") || len(f.options()) != 2 {
		t.Errorf("exit %d, %d runs\n%s", code, len(f.options()), stdout)
	}
	// Without the flag: one run, and -json says off.
	f = &fakeSim{diverge: map[uint64]int{7: 2}}
	stdout, _, code = cli(t, f, "-seed", "7", "-json")
	if code != 0 || len(f.options()) != 1 || !strings.Contains(stdout, `,"determinism":"off","divergence":"",`) {
		t.Errorf("exit %d, %d runs\n%s", code, len(f.options()), stdout)
	}

	// A divergence the traced runs do not show again is still a failure,
	// and says so.
	f = &fakeSim{diverge: map[uint64]int{7: 99}}
	stdout, _, code = cli(t, f, "-seed", "7", "-check-determinism")
	if code != 1 || !strings.Contains(stdout, "the two runs with the event trace recorded agreed (5 events): the divergence did not recur") {
		t.Errorf("exit %d\n%s", code, stdout)
	}
}

// TestCheckDeterminismCampaign: in a campaign, a diverging passing seed is
// an error, a diverging correctness failure stays one (the campaign exits
// 129), -json carries determinism and divergence, and the table counts
// the seeds checked.
func TestCheckDeterminismCampaign(t *testing.T) {
	outcomes := map[uint64]sim.Outcome{7: sim.Correctness}
	f := &fakeSim{outcomes: outcomes, diverge: map[uint64]int{6: 0, 7: 4}}
	stdout, stderr, code := cli(t, f, "-seed", "5", "-seeds", "4", "-keep-going", "-check-determinism", "-json")
	if code != 129 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	seeds, _ := splitJSON(lines(stdout))
	var got []string
	for _, l := range seeds {
		var obj struct {
			Seed, Result, Determinism, Divergence, Violation, Reproduce string
		}
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %s %v %s", obj.Seed, obj.Result, obj.Determinism,
			strings.Contains(obj.Divergence, "first divergence at event"), obj.Reproduce))
		if obj.Seed == "6" && !strings.HasPrefix(obj.Violation, "nondeterminism: ") ||
			obj.Seed == "7" && !strings.HasPrefix(obj.Violation, "lost write") {
			t.Errorf("seed %s: violation %q", obj.Seed, obj.Violation)
		}
	}
	want := []string{
		"5 pass ok false vopr -seed 5",
		"6 error diverged true vopr -seed 6 -check-determinism",
		"7 correctness diverged true vopr -seed 7 -check-determinism",
		"8 pass ok false vopr -seed 8",
	}
	if !slices.Equal(got, want) {
		t.Errorf("seeds\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !strings.Contains(stderr, "\ndeterminism: 4 seeds run twice, 2 diverged\n") ||
		!strings.Contains(stderr, "\n  seed=6 result=error violation=\"nondeterminism: two runs of seed 6 gave digests") {
		t.Errorf("table\n%s", stderr)
	}
	// Text: the diverging seeds print their divergence, the others only
	// their summary lines.
	stdout, _, _ = cli(t, &fakeSim{outcomes: outcomes, diverge: map[uint64]int{6: 0, 7: 4}}, "-seed", "5", "-seeds", "4", "-keep-going", "-check-determinism")
	if n := strings.Count(stdout, "\ndeterminism: diverged: "); n != 2 || strings.Contains(stdout, "determinism: ok") {
		t.Errorf("%d divergences\n%s", n, stdout)
	}
}

// TestRealCheckDeterminism: the real simulator passes -check-determinism.
func TestRealCheckDeterminism(t *testing.T) {
	stdout, stderr, code := vopr(t, nil, "-seed", "3", "-lite", "-safety-ticks=2000", "-check-determinism")
	if code == 1 || code == 2 || !strings.Contains(stdout, "\ndeterminism: ok\n") {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// shardSeeds runs one shard (or, with shard "", the whole campaign) with
// -json and returns its output and the seeds it ran, in order.
func shardSeeds(t *testing.T, f *fakeSim, shard string, args ...string) (out string, seeds []uint64, code int) {
	t.Helper()
	if shard != "" {
		args = append(args, "-shard", shard)
	}
	out, stderr, code := cli(t, f, append(args, "-json")...)
	if code == 2 {
		t.Fatalf("%v: usage: %s", args, stderr)
	}
	ls, records := splitJSON(lines(out))
	if len(records) != 2 {
		t.Fatalf("%v: records %q", args, records)
	}
	for _, l := range ls {
		var obj struct{ Seed string }
		if err := json.Unmarshal([]byte(l), &obj); err != nil {
			t.Fatal(err)
		}
		s, _ := strconv.ParseUint(obj.Seed, 10, 64)
		seeds = append(seeds, s)
	}
	return out, seeds, code
}

// tableOf is the campaign table of a text output: from its campaign line
// on, without the wall-time lines.
func tableOf(s string) string {
	i := strings.Index(s, "campaign seeds=")
	if i < 0 {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(s[i:], "\n") {
		if !strings.HasPrefix(l, "wall ") {
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestShardsMergeToTheCampaign: the n shards of a -seeds campaign are
// disjoint, cover it, each seed where j mod n says; vopr report over
// their -json output prints the table the unsharded campaign prints
// (but for the wall-time lines) and exits as it does; report -json gives
// its seeds' lines, in order.
func TestShardsMergeToTheCampaign(t *testing.T) {
	outcomes := map[uint64]sim.Outcome{12: sim.Correctness, 15: sim.Liveness, 19: sim.SimError}
	campaign := []string{"-seed", "10", "-seeds", "11", "-keep-going", "-clients=3"}
	text, _, wantCode := cli(t, &fakeSim{outcomes: outcomes}, campaign...)
	want := tableOf(text)
	if wantCode != 129 || !strings.HasPrefix(want, "campaign seeds=11 first=10 last=20\n") || !strings.Contains(want, "reproduce: vopr -seed 19 -clients=3") {
		t.Fatalf("the unsharded campaign: exit %d\n%s", wantCode, text)
	}
	whole, all, _ := shardSeeds(t, &fakeSim{outcomes: outcomes}, "", campaign...)

	dir := t.TempDir()
	const n = 3
	var files []string
	var union []uint64
	clock := &fakeClock{}
	for i := range n {
		f := &fakeSim{outcomes: outcomes, clock: clock} // a second per seed, shard after shard
		out, seeds, code := shardSeeds(t, f, fmt.Sprintf("%d/%d", i, n), campaign...)
		for _, s := range seeds {
			if (s-10)%n != uint64(i) {
				t.Errorf("shard %d/%d ran seed %d", i, n, s)
			}
		}
		if want := slices.ContainsFunc(seeds, func(s uint64) bool { return outcomes[s] == sim.Correctness }); want != (code == 129) {
			t.Errorf("shard %d: exit %d", i, code)
		}
		union = append(union, seeds...)
		files = append(files, filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i)))
		if err := os.WriteFile(files[i], []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(union)
	if !slices.Equal(union, all) || len(slices.Compact(slices.Clone(union))) != len(union) {
		t.Errorf("the shards ran %v, the campaign %v", union, all)
	}

	stdout, stderr, code := cli(t, &fakeSim{}, append([]string{"report"}, files...)...)
	if code != wantCode || stderr != "" {
		t.Errorf("report: exit %d, want %d; stderr %q", code, wantCode, stderr)
	}
	if got := tableOf(stdout); got != want {
		t.Errorf("report's table\n%s\nthe campaign's\n%s", got, want)
	}
	// Seeds per second: eleven seeds, a second each, shard after shard.
	for _, w := range []string{
		"\nwall shard=0/3 first=10 seeds=4 started_at=0001-01-01T00:00:00Z ended_at=0001-01-01T00:00:04Z seconds=4.000 seeds_per_second=1.00 file=" + files[0] + "\n",
		"\nwall shard=2/3 first=10 seeds=3 started_at=0001-01-01T00:00:08Z ended_at=0001-01-01T00:00:11Z seconds=3.000 seeds_per_second=1.00 file=" + files[2] + "\n",
		"\nwall campaigns=3 seeds=11 started_at=0001-01-01T00:00:00Z ended_at=0001-01-01T00:00:11Z seconds=11.000 seeds_per_second=1.00\n",
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("report lacks %q:\n%s", w, stdout)
		}
	}
	// -json: the campaign's seed lines, in seed order, between merged
	// records; the table on stderr.
	stdout, stderr, code = cli(t, &fakeSim{}, append([]string{"report", "-json"}, files...)...)
	gotSeeds, records := splitJSON(lines(stdout))
	wantSeeds, _ := splitJSON(lines(whole))
	if code != wantCode || !slices.Equal(gotSeeds, wantSeeds) || tableOf(stderr) != want {
		t.Errorf("report -json: exit %d\n%s\nstderr\n%s", code, stdout, stderr)
	}
	if len(records) != 2 || !strings.HasPrefix(records[0], `{"schema":1,"campaign":"start","first":"10","shard":"0/1","started_at":"0001-01-01T00:00:00Z","build":{"module":`) ||
		records[1] != `{"schema":1,"campaign":"end","first":"10","shard":"0/1","seeds":11,"interrupted":false,"started_at":"0001-01-01T00:00:00Z","ended_at":"0001-01-01T00:00:11Z","wall_seconds":11,"seeds_per_second":1}` {
		t.Errorf("records %q", records)
	}
	// And the merge reads back as the campaign it is.
	merged := filepath.Join(dir, "merged.jsonl")
	os.WriteFile(merged, []byte(stdout), 0o644)
	if again, _, _ := cli(t, &fakeSim{}, "report", merged); tableOf(again) != want {
		t.Errorf("report of the merge\n%s", again)
	}

	// A shard missing: the table of the rest, and an error.
	stdout, stderr, code = cli(t, &fakeSim{}, "report", files[0], files[2])
	if code != 129 || !strings.Contains(stderr, "vopr report: the campaign from seed 10 lacks shards 1/3: the table covers 2 of its 3 shards\n") ||
		!strings.HasPrefix(tableOf(stdout), "campaign seeds=7 first=10 last=19\n") {
		t.Errorf("missing shard: exit %d, stderr %q\n%s", code, stderr, stdout)
	}
	// The same shard twice: its seeds twice, exit 1.
	if _, _, code := cli(t, &fakeSim{}, "report", mustShard(t, dir, "0/2"), mustShard(t, dir, "0/2b")); code != 1 {
		t.Errorf("a seed given twice: exit %d, want 1", code)
	}
	// A passing campaign's shard alone: the rest missing, exit 1.
	if _, stderr, code := cli(t, &fakeSim{}, "report", mustShard(t, dir, "0/2")); code != 1 || !strings.Contains(stderr, "lacks shards 1/2") {
		t.Errorf("a passing shard alone: exit %d, %q", code, stderr)
	}
}

// mustShard writes the -json output of shard i/n (name "i/n", or with a
// suffix for a second copy) of a passing 5-seed campaign from seed 40.
func mustShard(t *testing.T, dir, name string) string {
	t.Helper()
	shard := strings.TrimRight(name, "b")
	out, _, code := shardSeeds(t, &fakeSim{}, shard, "-seed", "40", "-seeds", "5")
	if code != 0 {
		t.Fatalf("shard %s: exit %d", shard, code)
	}
	path := filepath.Join(dir, strings.ReplaceAll(name, "/", "-")+".jsonl")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestShardDuration: a -duration shard runs N+i, N+i+n, ... until the time
// is up; a shard with no seed of a -seeds campaign runs nothing; a shard
// past the last u64 stops there.
func TestShardDuration(t *testing.T) {
	f := &fakeSim{clock: &fakeClock{}} // a second per seed
	_, seeds, code := shardSeeds(t, f, "1/3", "-seed", "10", "-duration", "5s")
	if code != 0 || !slices.Equal(seeds, []uint64{11, 14, 17, 20, 23}) {
		t.Errorf("exit %d, seeds %v", code, seeds)
	}
	stdout, _, code := cli(t, &fakeSim{}, "-seed", "5", "-seeds", "2", "-shard", "2/3")
	if code != 0 || !strings.Contains(stdout, "\ncampaign seeds=0 first=5 shard=2/3\n") {
		t.Errorf("an empty shard: exit %d\n%s", code, stdout)
	}
	stdout, _, _ = cli(t, &fakeSim{}, "-seed", "5", "-seeds", "7", "-shard", "2/3")
	if !strings.Contains(stdout, "\ncampaign seeds=2 first=7 last=10 shard=2/3\n") {
		t.Errorf("shard 2/3 of 5..11:\n%s", stdout)
	}
	f = &fakeSim{clock: &fakeClock{}}
	_, stderr, code := cli(t, f, "-seed", "18446744073709551610", "-duration", "1h", "-shard", "1/2")
	var ran []uint64
	for _, o := range f.options() {
		ran = append(ran, o.Seed)
	}
	if code != 0 || !slices.Equal(ran, []uint64{18446744073709551611, 18446744073709551613, 18446744073709551615}) ||
		!strings.Contains(stderr, "the campaign stops at seed 18446744073709551615") {
		t.Errorf("exit %d, seeds %v, stderr %q", code, ran, stderr)
	}
}

// TestReportInput: what report refuses, and its usage.
func TestReportInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(text), 0o644)
		return p
	}
	out, _, _ := cli(t, &fakeSim{}, "-seed", "3", "-json")
	one := write("one.jsonl", out)
	for _, c := range []struct {
		args []string
		code int
		want string // in stderr
	}{
		{nil, 2, "usage: vopr report [-json] FILE..."},
		{[]string{"-bogus", one}, 2, "usage: vopr report"},
		{[]string{one, one}, 1, "seed 3 is in " + one + ":1 and in " + one + ":1"},
		{[]string{filepath.Join(dir, "absent")}, 1, "no such file"},
		{[]string{write("text.jsonl", "seed=3 result=pass\n")}, 1, "text.jsonl:1: not one JSON object"},
		{[]string{write("other.jsonl", "{\"schema\":2,\"seed\":\"3\"}\n")}, 1, "other.jsonl:1: not a vopr -json line of schema 1"},
		{[]string{write("frame.jsonl", "{\"schema\":1,\"index\":0}\n")}, 1, "frame.jsonl:1: neither a seed's line nor a campaign record"},
		{[]string{write("bad.jsonl", strings.Replace(out, `"result":"pass"`, `"result":"maybe"`, 1))}, 1, `bad.jsonl:1: seed 3: result "maybe"`},
		{[]string{one}, 0, "no campaign records"},
	} {
		stdout, stderr, code := cli(t, &fakeSim{}, append([]string{"report"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("report %v: exit %d, want %d\nstdout %q\nstderr %q", c.args, code, c.code, stdout, stderr)
		}
	}
	stdout, stderr, code := cli(t, &fakeSim{}, "report", "-h")
	if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: vopr report") {
		t.Errorf("report -h: exit %d\n%s%s", code, stdout, stderr)
	}
	// The command's own usage names the subcommand and the flags.
	stdout, _, _ = cli(t, &fakeSim{}, "-h")
	for _, w := range []string{"vopr report [-json] FILE...", "-shard i/n", "-check-determinism"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("usage lacks %q", w)
		}
	}
	// An interrupted campaign's output reports interrupted: 130.
	ia := newInterruptAt(12, nil)
	out, _, _ = cliEnv(t, ia.f, env{interrupts: ia.interrupts}, "-seed", "10", "-seeds", "100", "-json")
	close(ia.release)
	stdout, _, code = cli(t, &fakeSim{}, "report", write("stopped.jsonl", out))
	if code != exitInterrupted || !strings.HasPrefix(stdout, "campaign seeds=2 first=10 last=11 interrupted\n") {
		t.Errorf("interrupted: exit %d\n%s", code, stdout)
	}
}

// TestReportOptionsRoundTrip: the options a seed's -json line lists read
// back as the options it ran with (the trap families are functions of
// them), for swarm seeds and long runs.
func TestReportOptionsRoundTrip(t *testing.T) {
	build := readBuild(nil)
	for seed := range uint64(200) {
		o := sim.Swarm(seed)
		if seed%2 == 1 {
			o = sim.Long(seed)
		}
		off := needsMet(&o)
		sr := &seedRun{seed: seed, opts: o, off: off, result: sim.Result{Seed: seed, Options: o}, determinism: determinismOff}
		var b bytes.Buffer
		writeSeedJSON(&b, sr, "vopr -seed "+strconv.FormatUint(seed, 10), &build)
		var l reportLine
		d := json.NewDecoder(&b)
		d.UseNumber()
		if err := d.Decode(&l); err != nil {
			t.Fatal(err)
		}
		s, err := seedOfLine(&l)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !reflect.DeepEqual(s.options, o) {
			t.Fatalf("seed %d: read back\n%+v\nran\n%+v", seed, s.options, o)
		}
	}
}
