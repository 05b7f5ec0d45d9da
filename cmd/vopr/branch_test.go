package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/sim"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/timeline"
)

// doomedAtTick is the fake world of the sweep tests: a run of 1000 ticks
// that fails with "lost write: ..." at its end, whose failure every branch
// at or after tick doomedAtTick shares. A branch before it fails as the run
// for salts divisible by 4, fails otherwise for salts 1 mod 4, and passes
// else.
const doomedAtTick = 637

func doomedWorld(o sim.Options, out sim.Outputs) sim.Result {
	r := sim.Result{Seed: o.Seed, Options: o, Ticks: 1000, Outcome: sim.Correctness, Violation: "lost write: op 7 gone", BranchedAtNs: -1}
	b := out.Branch
	if b == nil || b.AtNs >= doomedAtTick*kernel.TickNs {
		return r
	}
	r.BranchedAtNs, r.Digest = b.AtNs, b.Salt
	switch b.Salt % 4 {
	case 0:
	case 1:
		r.Violation = "divergent commit: op 3"
	default:
		r.Outcome, r.Violation = sim.Pass, ""
	}
	return r
}

// TestSweepFindsTheMomentTheFailureBecameInevitable: the sweep's points
// and bisection land on the very tick from which the fake world's failure
// is certain, and its JSON says so.
func TestSweepFindsTheMomentTheFailureBecameInevitable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sweep.json")
	stdout, stderr, code := cliEnv(t, &fakeSim{}, env{runSeed: doomedWorld}, "branch", "-sweep", "-branches", "8", "-refine", "10", "-o", path, "-seed", "5")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	want := "sweep: inevitable from 6.37s (tick 637, 64% of the run): every branch from there fails as the run does (lost write); at 6.36s (tick 636) 6 of 8 escaped"
	if !strings.Contains(stdout, want) {
		t.Fatalf("the sweep did not find tick %d:\n%s", doomedAtTick, stdout)
	}
	if !strings.Contains(stdout, "sweep: at 3s           tick 300        30%  [#####...............]  4 of 8 fail, 2 as the run (lost write)") {
		t.Fatalf("the point at tick 300 is not the world's 4 failures, 2 as the run:\n%s", stdout)
	}
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	// The file is what vopr timeline -likelihood reads.
	var f timeline.Sweep
	if err := f.Read(file); err != nil {
		t.Fatalf("the sweep file breaks the schema: %v", err)
	}
	inevitable, found := f.Inevitable()
	if f.Schema != 1 || f.Seed != 5 || f.Violation != "lost write" || f.Branches != 8 || f.EndNs != 1000*kernel.TickNs ||
		!found || inevitable != doomedAtTick*kernel.TickNs || len(f.Points) < 10 {
		t.Fatalf("sweep file %+v", f)
	}
	for i, p := range f.Points {
		wantSame := 2
		if p.AtNs >= doomedAtTick*kernel.TickNs {
			wantSame = 8
		}
		if p.Same != wantSame || i > 0 && p.AtNs <= f.Points[i-1].AtNs {
			t.Fatalf("point %d %+v: want %d as the run, in time order", i, p, wantSame)
		}
	}
}

// TestBranchAtListsEveryBranchWithItsReproduction: -at prints a line per
// salt, a reproduction command for each failing one, and the tally.
func TestBranchAtListsEveryBranchWithItsReproduction(t *testing.T) {
	stdout, stderr, code := cliEnv(t, &fakeSim{}, env{runSeed: doomedWorld}, "branch", "-at", "20%", "-branches", "4", "-seed", "5", "-replicas", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"branch: seed 5: the run fails correctness (lost write) at tick 1000 (10s of virtual time)",
		"branch salt=1 result=correctness ticks=1000 crashes=0 partitions=0 digest=0000000000000001 divergent commit\n  reproduce: vopr -seed 5 -replicas=3 -branch 2s/1\n",
		"branch salt=2 result=pass",
		"branch salt=4 result=correctness ticks=1000 crashes=0 partitions=0 digest=0000000000000004 lost write (as the run)\n  reproduce: vopr -seed 5 -replicas=3 -branch 2s/4\n",
		"branch: at 2s (tick 200, 20% of the run): 2 of 4 fail, 1 as the run (lost write)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("missing %q in:\n%s", want, stdout)
		}
	}
}

// TestABranchsReproductionIsThatBranch: on the real simulator, the -salt
// command a listing prints runs the branch the listing ran (its digest),
// and that is not the run's own digest.
func TestABranchsReproductionIsThatBranch(t *testing.T) {
	e := env{runSeed: sim.RunWith}
	stdout, stderr, code := cliEnv(t, &fakeSim{}, e, "branch", "-at", "30%", "-branches", "2", "-seed", "3")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	m := regexp.MustCompile(`branch salt=2 result=\S+ .*digest=([0-9a-f]{16})`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no branch 2 in:\n%s", stdout)
	}
	at := regexp.MustCompile(`branch: at (\S+) `).FindStringSubmatch(stdout)
	one, stderr, _ := cliEnv(t, &fakeSim{}, e, "branch", "-at", at[1], "-salt", "2", "-seed", "3")
	if !strings.Contains(one, "digest="+m[1]) || !strings.Contains(one, "branch: at "+at[1]+" (tick ") {
		t.Fatalf("-salt 2 is not branch 2 (digest %s):\n%s%s", m[1], one, stderr)
	}
	plain, _, _ := cliEnv(t, &fakeSim{}, e, "-seed", "3")
	if strings.Contains(plain, "digest="+m[1]) {
		t.Fatalf("branch 2 is the run itself (digest %s)", m[1])
	}
	// vopr -branch T/S is the same branch, -check-determinism runs it
	// twice as a branch, and a plan written from it replays it.
	planPath := filepath.Join(t.TempDir(), "branch.plan")
	flagged, stderr, _ := cliEnv(t, &fakeSim{}, e, "-seed", "3", "-branch", at[1]+"/2", "-check-determinism", "-write-plan", planPath)
	if !strings.Contains(flagged, "digest="+m[1]) || strings.Contains(flagged, "diverged") {
		t.Fatalf("vopr -branch %s/2 is not branch 2 (digest %s), or its two runs differ:\n%s%s", at[1], m[1], flagged, stderr)
	}
	replayed, stderr, _ := cliEnv(t, &fakeSim{}, e, "-plan", planPath)
	planText, _ := os.ReadFile(planPath)
	if !strings.Contains(replayed, "digest="+m[1]) || !strings.Contains(string(planText), " -branch "+at[1]+"/2") {
		t.Fatalf("the branch's plan does not replay it (digest %s):\n%s%s", m[1], replayed, stderr)
	}
}

// TestBranchFlag: -branch T/S is checked, and refused where a branch of
// one seed's run makes no sense.
func TestBranchFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-seed", "1", "-branch", "1s"}, `invalid value "1s" for flag -branch: want T/S`},
		{[]string{"-seed", "1", "-branch", "1s/0"}, `invalid value "1s/0" for flag -branch: want T/S: the salt S is a whole number from 1`},
		{[]string{"-seed", "1", "-branch", "-1s/2"}, `invalid value "-1s/2" for flag -branch`},
		{[]string{"-seed", "1", "-seeds", "3", "-branch", "1s/2"}, "-branch 1s/2 is a branch of one seed's run"},
		{[]string{"shrink", "-seed", "1", "-branch", "1s/2"}, "shrink takes a seed's own run, not a branch of it"},
		{[]string{"branch", "-sweep", "-seed", "1", "-branch", "1s/2"}, "-branch 1s/2 is a branch already"},
	} {
		stdout, stderr, code := cliEnv(t, &fakeSim{}, env{runSeed: doomedWorld}, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "usage:") {
			t.Errorf("%q: exit %d, want 2 with %q and a usage; stdout %q stderr:\n%s", c.args, code, c.want, stdout, stderr)
		}
	}
	// The tick a branch happens at is the one it names.
	stdout, stderr, _ := cliEnv(t, &fakeSim{}, env{runSeed: doomedWorld}, "-seed", "1", "-branch", "2.005s/4")
	if !strings.Contains(stdout, "reproduce: vopr -seed 1 -branch 2.01s/4") {
		t.Fatalf("-branch 2.005s/4 is not rounded up to tick 201:\n%s%s", stdout, stderr)
	}
}

func TestBranchUsage(t *testing.T) {
	stdout, _, code := cliEnv(t, &fakeSim{}, env{runSeed: doomedWorld}, "branch", "-h")
	if code != 0 || !strings.HasPrefix(stdout, "usage: vopr branch") {
		t.Fatalf("-h: exit %d\n%s", code, stdout)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-seed", "1"}, "give -at T (where to branch) or -sweep"},
		{[]string{"-seed", "1", "-at", "1s", "-sweep"}, "-at and -sweep"},
		{[]string{"-seed", "1", "-at", "101%"}, `invalid value "101%" for flag -at`},
		{[]string{"-seed", "1", "-at", "-1s"}, `invalid value "-1s" for flag -at`},
		{[]string{"-seed", "1", "-at", "1s", "-salt", "0"}, "-salt S runs one branch at -at T: S from 1"},
		{[]string{"-seed", "1", "-sweep", "-branches", "0"}, "-branches 0: from 1 to 4096"},
		{[]string{"-seed", "1", "-sweep", "-points", "0"}, "-points 0: from 1 to 1000"},
		{[]string{"-seed", "1", "-sweep", "-refine", "-1"}, "-refine -1: from 0 to 64"},
		{[]string{"-seed", "1", "-sweep", "-parallel", "0"}, "-parallel 0: at least 1"},
		{[]string{"-seed", "1", "-seeds", "4", "-sweep"}, "branch takes one run"},
		{[]string{"-sweep"}, "give the run's -seed N"},
		{[]string{"-seed", "1", "-sweep", "-trace", "t.jsonl"}, "-trace and -capture record one run"},
		{[]string{"-seed", "1", "-sweep", "-replicas", "x"}, `invalid value "x" for flag -replicas`},
	} {
		stdout, stderr, code := cliEnv(t, &fakeSim{}, env{runSeed: doomedWorld}, append([]string{"branch"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "usage: vopr branch") || stdout != "" {
			t.Errorf("%q: exit %d, want 2 with %q and the usage; stdout %q stderr:\n%s", c.args, code, c.want, stdout, stderr)
		}
	}
}
