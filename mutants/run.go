package mutants

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config says how to judge mutants.
type Config struct {
	Go     string // the go command
	Target string // the package the VOPR is built from, relative to the root (./cmd/vopr)
	// Campaign: the VOPR binary runs -seed FirstSeed -seeds Seeds
	// -parallel 1 -json, and Flags after them (knob flags).
	FirstSeed uint64
	Seeds     int
	Flags     []string
	Parallel  int    // mutants judged at once (each campaign runs one seed at a time)
	WorkDir   string // where each mutant's overlay, file and binary go (a fresh temporary directory by default)
	// VOPRTimeout and UnitTimeout bound one mutant's campaign and its unit
	// tests in wall time; zero takes them from the unmutated baseline.
	VOPRTimeout, UnitTimeout time.Duration
	// MemoryLimitKB caps each oracle's address space (ulimit -v), so a
	// mutant that allocates without end dies alone (0: 8 GiB).
	MemoryLimitKB int
	// Done, when non-nil, hears each mutant as it finishes (in the order
	// they finish, one call at a time).
	Done func(r *Record)
}

// Baseline is what the unmutated tree did: the budget every mutant's
// oracles get is a multiple of it.
type Baseline struct {
	VOPRSeconds float64            // the campaign's wall time
	UnitSeconds map[string]float64 // each package's unit tests, by package directory
}

// ErrBaseline: the unmutated tree fails an oracle, so no mutant can be judged.
var ErrBaseline = errors.New("the unmutated tree fails")

// Runner judges mutants of one source.
type Runner struct {
	src      *Source
	cfg      Config
	base     Baseline
	workDir  string
	ownsWork bool
}

// NewRunner checks the baseline: the unmutated VOPR binary builds and
// passes the campaign, and the unit tests of each package in pkgs pass.
func NewRunner(ctx context.Context, src *Source, cfg Config, pkgs []string) (*Runner, error) {
	if cfg.Go == "" {
		cfg.Go = "go"
	}
	if cfg.Parallel < 1 {
		cfg.Parallel = 1
	}
	if cfg.MemoryLimitKB == 0 {
		cfg.MemoryLimitKB = 8 << 20
	}
	r := &Runner{src: src, cfg: cfg, base: Baseline{UnitSeconds: map[string]float64{}}}
	r.workDir = cfg.WorkDir
	if r.workDir == "" {
		d, err := os.MkdirTemp("", "vopr-mutants-")
		if err != nil {
			return nil, err
		}
		r.workDir, r.ownsWork = d, true
	} else if err := os.MkdirAll(r.workDir, 0o755); err != nil {
		return nil, err
	}
	dir := filepath.Join(r.workDir, "baseline")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "vopr")
	if msg, err := r.build(ctx, "", bin); err != nil {
		r.Close()
		return nil, fmt.Errorf("%w: go build %s: %s", ErrBaseline, cfg.Target, msg)
	}
	start := time.Now()
	v := r.campaign(ctx, bin, 0)
	r.base.VOPRSeconds = time.Since(start).Seconds()
	if v.Verdict != Survived {
		r.Close()
		return nil, fmt.Errorf("%w: the campaign: %s at seed %s: %s", ErrBaseline, v.Verdict, v.Seed, v.Detail)
	}
	for _, p := range pkgs {
		start := time.Now()
		u := r.unit(ctx, "", p, 0)
		r.base.UnitSeconds[p] = time.Since(start).Seconds()
		if u.Verdict != Survived {
			r.Close()
			return nil, fmt.Errorf("%w: go test ./%s: %s %s", ErrBaseline, p, u.Verdict, u.Test)
		}
	}
	return r, nil
}

// Baseline is what the unmutated tree took.
func (r *Runner) Baseline() Baseline { return r.base }

// Close removes the working directory if the runner made it.
func (r *Runner) Close() {
	if r.ownsWork {
		os.RemoveAll(r.workDir)
	}
}

// budget is an oracle's wall budget: ten times the baseline, and at least
// a minute (a mutant may slow every seed without failing one).
func budget(set time.Duration, baseSeconds float64) time.Duration {
	if set > 0 {
		return set
	}
	return max(time.Minute, time.Duration(10*baseSeconds*float64(time.Second)))
}

// Run judges every mutant, Parallel at once, and returns their records in
// the mutants' order. A cancelled ctx stops it: what had not finished is
// NotRun, and the error is ctx's.
func (r *Runner) Run(ctx context.Context, ms []Mutant) ([]Record, error) {
	out := make([]Record, len(ms))
	for i := range ms {
		out[i] = recordOf(&ms[i])
	}
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := 0; w < r.cfg.Parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				rec := r.judge(ctx, i, &ms[i])
				mu.Lock()
				out[i] = rec
				if r.cfg.Done != nil && ctx.Err() == nil {
					r.cfg.Done(&out[i])
				}
				mu.Unlock()
			}
		}()
	}
	for i := range ms {
		select {
		case work <- i:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		for i := range out {
			if out[i].Seconds == 0 {
				out[i] = recordOf(&ms[i])
			}
		}
		return out, err
	}
	return out, nil
}

// judge builds one mutant and runs both oracles on it.
func (r *Runner) judge(ctx context.Context, i int, m *Mutant) (rec Record) {
	start := time.Now()
	rec = recordOf(m)
	defer func() { rec.Seconds = max(time.Since(start).Seconds(), 1e-3) }()
	dir := filepath.Join(r.workDir, fmt.Sprintf("m%05d", i))
	defer os.RemoveAll(dir)
	overlay, err := WriteOverlay(r.src, m, dir)
	if err != nil {
		rec.Build, rec.BuildError = "failed", "writing the overlay: "+err.Error()
		return rec
	}
	bin := filepath.Join(dir, "vopr")
	if msg, err := r.build(ctx, overlay, bin); err != nil {
		rec.Build, rec.BuildError = "failed", bounded(msg, 300)
		return rec
	}
	rec.Build = "ok"
	rec.Unit = r.unit(ctx, overlay, m.Pkg, budget(r.cfg.UnitTimeout, r.base.UnitSeconds[m.Pkg]))
	rec.VOPR = r.campaign(ctx, bin, budget(r.cfg.VOPRTimeout, r.base.VOPRSeconds))
	os.Remove(bin)
	return rec
}

// WriteOverlay writes the mutated file into dir and the overlay that puts
// it in place of the original (for go build -overlay), and returns the
// overlay's path.
func WriteOverlay(src *Source, m *Mutant, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	orig, ok := src.Files[m.File]
	if !ok {
		return "", fmt.Errorf("%s is not in the source", m.File)
	}
	mutated := filepath.Join(dir, filepath.Base(m.File))
	if err := os.WriteFile(mutated, m.Apply(orig), 0o644); err != nil {
		return "", err
	}
	ov, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(src.Root, filepath.FromSlash(m.File)): mutated}})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "overlay.json")
	return path, os.WriteFile(path, ov, 0o644)
}

// command runs name with args under the memory limit, in the source's
// root, killed when ctx ends or after limit (0: no limit of its own).
func (r *Runner) command(ctx context.Context, limit time.Duration, name string, args ...string) (stdout, stderr []byte, code int, timedOut bool, err error) {
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	shArgs := append([]string{"-c", fmt.Sprintf("ulimit -v %d && exec \"$0\" \"$@\"", r.cfg.MemoryLimitKB), name}, args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", shArgs...)
	cmd.Dir = r.src.Root
	// No VCS stamp: a mutant is not the revision it was built in.
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -buildvcs=false"))
	cmd.WaitDelay = 5 * time.Second
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err = cmd.Run()
	code = cmd.ProcessState.ExitCode()
	timedOut = ctx.Err() != nil
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		err = nil // an exit status is a verdict, not a failure to run
	}
	return so.Bytes(), se.Bytes(), code, timedOut, err
}

// build builds the VOPR binary, with overlay when not "".
func (r *Runner) build(ctx context.Context, overlay, bin string) (string, error) {
	args := []string{"build", "-o", bin}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	args = append(args, r.cfg.Target)
	_, stderr, code, _, err := r.command(ctx, 0, r.cfg.Go, args...)
	if err != nil {
		return err.Error(), err
	}
	if code != 0 {
		msg := strings.TrimSpace(string(stderr))
		// The first line is "# package"; the compiler's complaint follows.
		lines := strings.Split(msg, "\n")
		if len(lines) > 1 && strings.HasPrefix(lines[0], "# ") {
			msg = lines[1]
		}
		return msg, fmt.Errorf("exit %d", code)
	}
	return "", nil
}

// campaign runs the VOPR binary's campaign and reads its verdict from the
// -json lines: the first seed whose result is not pass kills the mutant.
func (r *Runner) campaign(ctx context.Context, bin string, limit time.Duration) Verdict {
	args := []string{"-seed", strconv.FormatUint(r.cfg.FirstSeed, 10), "-seeds", strconv.Itoa(r.cfg.Seeds), "-parallel", "1", "-json"}
	args = append(args, r.cfg.Flags...)
	stdout, stderr, code, timedOut, err := r.command(ctx, limit, bin, args...)
	v := Verdict{Verdict: Survived}
	type seedLine struct {
		Campaign  string `json:"campaign"`
		Seed      string `json:"seed"`
		Result    string `json:"result"`
		Violation string `json:"violation"`
	}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	for sc.Scan() {
		var l seedLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Campaign != "" || l.Seed == "" {
			continue
		}
		v.Seeds++
		if l.Result != "pass" && v.Seed == "" {
			v.Verdict, v.Seed, v.Outcome = Killed, l.Seed, l.Result
			v.Violation, v.Detail = violationName(l.Violation), bounded(l.Violation, 300)
			if l.Result == "liveness" {
				v.Violation = stallName(v.Violation)
			}
			switch {
			case l.Result == "correctness" && strings.HasPrefix(l.Violation, "replica panic"):
				v.Class = ClassPanic
			case l.Result == "correctness":
				v.Class = ClassNamed
			case l.Result == "liveness" && strings.HasPrefix(l.Violation, "the core"):
				v.Class = ClassStall // undiagnosed: what the core looked like when the budget ran out
			case l.Result == "liveness":
				v.Class = ClassNamed // a promise of the quiet cluster, named where it broke
			default:
				v.Class = ClassError
			}
		}
	}
	switch {
	case v.Seed != "":
		return v
	case ctx.Err() != nil: // interrupted, not judged
		return Verdict{Verdict: NotRun}
	case timedOut:
		v.Verdict, v.Class, v.Detail = Timeout, ClassTimeout, fmt.Sprintf("no verdict after %v (%d seeds passed)", limit, v.Seeds)
	case err != nil:
		v.Verdict, v.Class, v.Detail = Killed, ClassCrash, err.Error()
	case code != 0 || v.Seeds < r.cfg.Seeds:
		// The process died without a failing seed: a fatal runtime error.
		v.Verdict, v.Class = Killed, ClassCrash
		v.Detail = bounded(fatalLine(stderr, code), 300)
		v.Violation = v.Detail
	}
	return v
}

// stallName is a liveness failure's name without its figures: "the core
// did not stay converged in view 28" is "the core did not stay converged".
func stallName(v string) string {
	words := strings.Fields(v)
	for i, w := range words {
		if strings.ContainsAny(w, "0123456789") {
			words = words[:i]
			break
		}
	}
	for len(words) > 0 {
		switch words[len(words)-1] {
		case "in", "after", "at", "view", "for", "of":
			words = words[:len(words)-1]
			continue
		}
		break
	}
	return strings.Join(words, " ")
}

// fatalLine picks the line of a dead process's stderr that says why.
func fatalLine(stderr []byte, code int) string {
	for _, l := range strings.Split(string(stderr), "\n") {
		if strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "runtime:") || strings.HasPrefix(l, "panic:") {
			return strings.TrimSpace(l)
		}
	}
	return fmt.Sprintf("exit %d without a failing seed", code)
}

var failingTest = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

// unit runs the package's unit tests (with overlay when not "").
func (r *Runner) unit(ctx context.Context, overlay, pkg string, limit time.Duration) Verdict {
	args := []string{"test", "-count=1"}
	if overlay != "" {
		args = append(args, "-overlay", overlay)
	}
	if limit > 0 {
		args = append(args, "-timeout", limit.String())
	}
	args = append(args, "./"+pkg)
	if usesRapid(filepath.Join(r.src.Root, filepath.FromSlash(pkg))) {
		// A mutant's failing property would otherwise be saved under the
		// tree's testdata/rapid, and the tree is never touched.
		args = append(args, "-args", "-rapid.nofailfile")
	}
	stdout, stderr, code, timedOut, err := r.command(ctx, limit+time.Minute, r.cfg.Go, args...)
	out := string(stdout) + string(stderr)
	switch {
	case err != nil:
		return Verdict{Verdict: Errored, Test: err.Error()}
	case code == 0:
		return Verdict{Verdict: Survived}
	case ctx.Err() != nil:
		return Verdict{Verdict: NotRun}
	case timedOut || strings.Contains(out, "panic: test timed out"):
		return Verdict{Verdict: Timeout, Test: "timed out"}
	case strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"):
		return Verdict{Verdict: Errored, Test: bounded(firstCompileError(out), 200)}
	}
	v := Verdict{Verdict: Killed}
	if m := failingTest.FindStringSubmatch(out); m != nil {
		v.Test = m[1]
	} else if i := strings.Index(out, "panic:"); i >= 0 {
		v.Test = bounded(out[i:], 200)
	} else {
		v.Test = bounded(strings.TrimSpace(out), 200)
	}
	return v
}

// usesRapid reports whether the package in dir has tests importing rapid
// (only then does its test binary know rapid's flags).
func usesRapid(dir string) bool {
	names, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil && bytes.Contains(b, []byte(`"pgregory.net/rapid"`)) {
			return true
		}
	}
	return false
}

func firstCompileError(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, ".go:") {
			return strings.TrimSpace(l)
		}
	}
	return "the tests do not build"
}
