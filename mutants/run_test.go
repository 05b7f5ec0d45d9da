package mutants

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A module small enough to build in a moment, shaped as the vopr tree is:
// a package of code (lib) with its unit tests, and a command that runs a
// "campaign" over it and prints vopr's -json seed lines.
var fakeModule = map[string]string{
	"go.mod": "module example.com/fake\n\ngo 1.22\n",
	"lib/lib.go": `package lib

// Max is the larger of a and b.
func Max(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// Count counts up to n.
func Count(n int) int {
	c := 0
	for c < n {
		c++
	}
	return c
}

// Depth recurses n deep.
func Depth(n int) int {
	if n == 0 {
		return 0
	}
	return 1 + Depth(n-1)
}

// Stamp is what the unit tests do not look at.
func Stamp(x int) int {
	return x * 3
}
`,
	"lib/lib_test.go": `package lib

import "testing"

func TestMax(t *testing.T) {
	if Max(1, 2) != 2 || Max(2, 1) != 2 {
		t.Fatal("max")
	}
}

func TestCount(t *testing.T) {
	if Count(4) != 4 {
		t.Fatal("count")
	}
}
`,
	"cmd/fake/main.go": `package main

import (
	"flag"
	"fmt"
	"os"
	"runtime/debug"

	"example.com/fake/lib"
)

func main() {
	debug.SetMaxStack(1 << 20)
	seed := flag.Uint64("seed", 1, "")
	seeds := flag.Int("seeds", 1, "")
	flag.Int("parallel", 1, "")
	flag.Bool("json", false, "")
	panicky := flag.Bool("panic", false, "")
	flag.Parse()
	fmt.Println(` + "`" + `{"schema":1,"campaign":"start"}` + "`" + `)
	for s := *seed; s < *seed+uint64(*seeds); s++ {
		n := int(s)
		switch {
		case *panicky && lib.Stamp(n) != 3*n:
			fmt.Printf("{\"seed\":\"%d\",\"result\":\"correctness\",\"violation\":\"replica panic: stamp (in lib.Stamp)\"}\n", s)
			os.Exit(129)
		case lib.Max(n, 3) != max(n, 3):
			fmt.Printf("{\"seed\":\"%d\",\"result\":\"correctness\",\"violation\":\"wrong max: %d\"}\n", s, lib.Max(n, 3))
			os.Exit(129)
		case lib.Count(n) != n || lib.Depth(n) != n:
			fmt.Printf("{\"seed\":\"%d\",\"result\":\"liveness\",\"violation\":\"the core did not converge in view %d\"}\n", s, n)
			os.Exit(128)
		}
		fmt.Printf("{\"seed\":\"%d\",\"result\":\"pass\"}\n", s)
	}
	fmt.Println(` + "`" + `{"schema":1,"campaign":"end"}` + "`" + `)
}
`,
}

func writeFakeModule(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range fakeModule {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func goCommand(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a module: not in -short")
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	return p
}

func findMutant(t *testing.T, ms []Mutant, op Operator, before string) Mutant {
	t.Helper()
	for _, m := range ms {
		if m.Operator == op && m.Before == before {
			return m
		}
	}
	t.Fatalf("no %s mutant of %q", op, before)
	return Mutant{}
}

// The runner, end to end on a module of its own: the baseline passes, and
// each mutant gets the verdicts its change earns from both oracles, the
// tree untouched.
func TestRunnerJudgesMutants(t *testing.T) {
	goCmd := goCommand(t)
	root := writeFakeModule(t)
	src, err := Load(goCmd, root, "./lib/...")
	if err != nil {
		t.Fatal(err)
	}
	keep, _ := PackageFilter("")
	census, err := Enumerate(src, keep, nil)
	if err != nil {
		t.Fatal(err)
	}
	ms := census.Mutants
	pick := []Mutant{
		findMutant(t, ms, Negation, "if a > b {"),   // 0: both kill: a named violation
		findMutant(t, ms, Relational, "if a > b {"), // 1: equivalent: neither
		findMutant(t, ms, DropAssign, "c++"),        // 2: a loop without end: timeouts
		findMutant(t, ms, DropReturn, "return 0"),   // 3: runaway recursion: a crash; the unit tests do not call it
		findMutant(t, ms, ConstantUp, "return x * 3"),
		findMutant(t, ms, Negation, "for c < n {"), // 5: Count returns 0: a stall; unit kill
	}
	var heard []string
	cfg := Config{Go: goCmd, Target: "./cmd/fake", FirstSeed: 1, Seeds: 5, Parallel: 2,
		VOPRTimeout: 5 * time.Second, UnitTimeout: 5 * time.Second, WorkDir: t.TempDir(),
		Done: func(r *Record) { heard = append(heard, r.ID) }}
	r, err := NewRunner(context.Background(), src, cfg, []string{"lib"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs, err := r.Run(context.Background(), pick)
	if err != nil {
		t.Fatal(err)
	}
	if len(heard) != len(pick) {
		t.Errorf("Done heard %d mutants, want %d", len(heard), len(pick))
	}
	type want struct{ vopr, class, violation, seed, unit string }
	for i, w := range []want{
		{Killed, ClassNamed, "wrong max", "1", Killed},
		{Survived, "", "", "", Survived},
		{Timeout, ClassTimeout, "", "", Timeout},
		{Killed, ClassCrash, "runtime: goroutine stack exceeds 1048576-byte limit", "", Survived},
		{Survived, "", "", "", Survived},
		{Killed, ClassStall, "the core did not converge", "1", Killed},
	} {
		got := recs[i]
		if got.Build != "ok" || got.VOPR.Verdict != w.vopr || got.VOPR.Class != w.class || got.VOPR.Violation != w.violation ||
			got.VOPR.Seed != w.seed || got.Unit.Verdict != w.unit {
			t.Errorf("%s: build %s, vopr %+v, unit %+v; want vopr %s %s %q at seed %q, unit %s",
				got.ID, got.Build, got.VOPR, got.Unit, w.vopr, w.class, w.violation, w.seed, w.unit)
		}
		if got.Seconds <= 0 {
			t.Errorf("%s: no time taken", got.ID)
		}
	}
	if recs[1].VOPR.Seeds != 5 {
		t.Errorf("a survivor ran %d seeds, want 5", recs[1].VOPR.Seeds)
	}
	b, _ := os.ReadFile(filepath.Join(root, "lib", "lib.go"))
	if string(b) != fakeModule["lib/lib.go"] {
		t.Error("the tree was touched")
	}
	tally := TallyOf(recs)
	if c := tally.All; c.Both != 3 || c.Unit != 3 || c.VOPROnly != 1 || c.Neither != 2 || c.Named != 1 || c.Stall != 1 || c.Timeout != 1 || c.Crash != 1 {
		t.Errorf("tally %+v", c)
	}
	if share, ok := tally.All.Recall(); !ok || share != 1 {
		t.Errorf("recall %v %v, want 100%%", share, ok)
	}
	var table strings.Builder
	tally.WriteTable(&table, recs)
	for _, want := range []string{"VOPR recall: 100.0% (3 of the 3", "named kills: 25.0% (1 of 4", "neither kills: 2", "lib/lib.go:5 relational Max: if a > b {  ->  if a >= b {"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, table.String())
		}
	}
}

// A mutant that does not build is counted, not judged; a campaign flag
// reaches the campaign (-panic makes Stamp's mutant a replica panic).
func TestRunnerBuildFailuresAndFlags(t *testing.T) {
	goCmd := goCommand(t)
	root := writeFakeModule(t)
	src, err := Load(goCmd, root, "./lib")
	if err != nil {
		t.Fatal(err)
	}
	keep, _ := PackageFilter("")
	census, _ := Enumerate(src, keep, nil)
	stamp := findMutant(t, census.Mutants, ConstantUp, "return x * 3")
	broken := stamp
	broken.ID, broken.Replacement = "broken", "undefined_name"
	cfg := Config{Go: goCmd, Target: "./cmd/fake", FirstSeed: 1, Seeds: 3, Flags: []string{"-panic"}, Parallel: 1, WorkDir: t.TempDir()}
	r, err := NewRunner(context.Background(), src, cfg, []string{"lib"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs, err := r.Run(context.Background(), []Mutant{broken, stamp})
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Build != "failed" || !strings.Contains(recs[0].BuildError, "undefined") || recs[0].VOPR.Verdict != NotRun {
		t.Errorf("the broken mutant: %+v", recs[0])
	}
	if v := recs[1].VOPR; v.Verdict != Killed || v.Class != ClassPanic {
		t.Errorf("Stamp's mutant with -panic: %+v, want a replica panic", v)
	}
	if c := TallyOf(recs).All; c.NotBuilding != 1 || c.Panic != 1 || c.VOPROnly != 1 {
		t.Errorf("tally %+v", c)
	}
}

// The baseline must pass: a tree whose campaign fails judges nothing.
func TestRunnerRefusesAFailingBaseline(t *testing.T) {
	goCmd := goCommand(t)
	root := writeFakeModule(t)
	lib := filepath.Join(root, "lib", "lib.go")
	b, _ := os.ReadFile(lib)
	os.WriteFile(lib, []byte(strings.Replace(string(b), "return a\n", "return b\n", 1)), 0o644)
	src, err := Load(goCmd, root, "./lib")
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewRunner(context.Background(), src, Config{Go: goCmd, Target: "./cmd/fake", FirstSeed: 1, Seeds: 5, WorkDir: t.TempDir()}, []string{"lib"})
	if !errors.Is(err, ErrBaseline) || !strings.Contains(err.Error(), "wrong max") {
		t.Fatalf("err %v, want ErrBaseline naming the failure", err)
	}
}
