package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/iggy-vopr/vopr/shrink"
	"github.com/iggy-vopr/vopr/sim"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/sim/plan"
	"github.com/iggy-vopr/vopr/timeline"
)

const branchUsage = `usage: vopr branch [-at T [-salt S]] [-sweep] [-branches M] [-points K] [-refine R] [-parallel P] [-o FILE] [run flags]

Runs the run the run flags describe (-seed N, knob flags, -long, -plan FILE:
as for a run), then replays it to virtual time T and from there reseeds its
fault streams (the network's delays and faults, the disks' latencies and
faults, the process faults, the nemeses; the workload and the replicas draw
on as before) to run M branches, salts 1 to M: M other futures of one past.
It prints each branch's outcome, how many fail, and how many fail as the run
itself does (its outcome and violation name: the text before the first
": "), with the command that reproduces each failing branch: vopr -seed N
... -branch T/S, a run flag that vopr timeline, -trace and -write-plan take
as well (a plan written from a branch replays it).

  -at T         where to branch: virtual time (250ms, 1.5s) or a share of the
                run's length (40%); the branch happens at the first tick that
                starts at or after T
  -salt S       run branch S alone, with a run's whole output (the same as
                vopr -branch T/S)
  -branches M   branches per point (default 16)
  -sweep        branch at K points spread evenly through the run (0, 1/K, ...
                of its length), then bisect R times between the last point
                where a branch escapes the run's failure and the first from
                which every branch fails as it does: the moment the failure
                became inevitable. A branch at the run's end is the run.
  -points K     sweep points (default 10)
  -refine R     bisection steps after the sweep (default 5)
  -parallel P   runs at once (default: the CPUs)
  -o FILE       write the points as sweep JSON (vopr timeline -likelihood
                plots it)

Exit status: 0 when the branches ran, 1 when a branch hit a simulator error
or a file cannot be written, 2 for bad flags; with -salt, the branch's own
status (0 pass, 128 liveness, 129 correctness).
`

// Defaults and bounds of the branch flags: a sweep runs points*branches +
// refine*branches simulations, so each is bounded.
const (
	branchesDefault = 16
	branchesMax     = 4096
	pointsDefault   = 10
	pointsMax       = 1000
	refineDefault   = 5
	refineMax       = 64
)

// atFlag is -at: a virtual time, or a share of the run's length.
type atFlag struct {
	set     bool
	share   bool
	percent float64 // share: 0 to 100
	ns      int64   // otherwise
}

func (a *atFlag) String() string {
	switch {
	case !a.set:
		return ""
	case a.share:
		return strconv.FormatFloat(a.percent, 'g', -1, 64) + "%"
	}
	return time.Duration(a.ns).String()
}

func (a *atFlag) Set(s string) error {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v >= 0 && v <= 100) {
			return errors.New("want a share of the run from 0% to 100%, or a virtual time (1.5s)")
		}
		*a = atFlag{set: true, share: true, percent: v}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return errors.New("want a virtual time (250ms, 1.5s) or a share of the run (40%)")
	}
	*a = atFlag{set: true, ns: int64(d)}
	return nil
}

// resolve is the branch time for a run of endNs: a share of it, or the
// time given, either rounded up to a tick (the branch happens at a tick's
// start).
func (a *atFlag) resolve(endNs int64) int64 {
	ns := a.ns
	if a.share {
		ns = int64(math.Round(float64(endNs) * a.percent / 100))
	}
	return tickCeil(ns)
}

func tickCeil(ns int64) int64 { return (ns + kernel.TickNs - 1) / kernel.TickNs * kernel.TickNs }

// brancher runs one branch command.
type brancher struct {
	rn       *runner
	cfg      *config
	o        sim.Options
	branches int
	parallel int

	base     sim.Result // the run itself
	baseName string     // its violation name ("" when it passes)
	endNs    int64      // its length: a branch at or past it is the run
}

// branchPoint is what the branches at one moment did (a sweep file holds
// it as a timeline.SweepPoint).
type branchPoint struct {
	AtNs     int64
	Branches int
	Failed   int // failed at all
	Same     int // failed as the run does
	Errors   int // simulator errors among Failed
}

func runBranch(args []string, stdout *checkedWriter, stderr io.Writer, e env) int {
	var at atFlag
	fs := flag.NewFlagSet("vopr branch", flag.ContinueOnError)
	fs.Var(&at, "at", "")
	salt := fs.Uint64("salt", 0, "")
	branches := fs.Int("branches", branchesDefault, "")
	sweep := fs.Bool("sweep", false, "")
	points := fs.Int("points", pointsDefault, "")
	refine := fs.Int("refine", refineDefault, "")
	parallel := fs.Int("parallel", max(e.cpus, 1), "")
	outPath := fs.String("o", "", "")
	fail := func(msg string) int {
		fmt.Fprintf(stderr, "vopr branch: %s\n", msg)
		io.WriteString(stderr, branchUsage)
		return 2
	}
	rest, err := splitFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(stdout, branchUsage)
		return 0
	}
	if err != nil {
		return fail(err.Error())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case !at.set && !*sweep:
		return fail("give -at T (where to branch) or -sweep")
	case at.set && *sweep:
		return fail("-at and -sweep: a sweep chooses its own moments")
	case given["salt"] && (*salt == 0 || *sweep):
		return fail("-salt S runs one branch at -at T: S from 1")
	case *branches < 1 || *branches > branchesMax:
		return fail(fmt.Sprintf("-branches %d: from 1 to %d", *branches, branchesMax))
	case *points < 1 || *points > pointsMax:
		return fail(fmt.Sprintf("-points %d: from 1 to %d", *points, pointsMax))
	case *refine < 0 || *refine > refineMax:
		return fail(fmt.Sprintf("-refine %d: from 0 to %d", *refine, refineMax))
	case *parallel < 1:
		return fail(fmt.Sprintf("-parallel %d: at least 1", *parallel))
	case given["salt"] && given["o"]:
		return fail("-o writes a sweep's points; -salt runs one branch")
	}
	cfg, err := parseOneRun("branch", rest, stderr)
	if err != nil {
		return fail(err.Error())
	}
	switch {
	case cfg.writePlan != "" || cfg.checkDeterminism:
		return fail("-write-plan and -check-determinism are for runs, not branches (vopr -branch T/S runs one with them)")
	case cfg.branch.b != nil:
		return fail(fmt.Sprintf("-branch %s is a branch already: branch its seed with -at", &cfg.branch))
	case (cfg.trace != "" || cfg.capture != "") && !given["salt"]:
		return fail("-trace and -capture record one run: give -salt S for a branch's")
	}
	o, off, err := cfg.options(cfg.seed.value)
	if err != nil {
		return fail(err.Error())
	}
	rn := newRunner(cfg, stdout, stderr, e)
	b := &brancher{rn: rn, cfg: cfg, o: o, branches: *branches, parallel: min(*parallel, max(e.cpus, 1))}
	if e.cpus == 0 {
		b.parallel = *parallel
	}
	var note string
	b.base, note = rn.safeRun(o, sim.Outputs{Plan: cfg.planGate()})
	if note != "" {
		fmt.Fprintln(stderr, note)
	}
	if b.base.Outcome == sim.SimError {
		fmt.Fprintf(stderr, "vopr branch: the run itself hit a simulator error: %s\n", b.base.Violation)
		return 1
	}
	if b.base.Outcome != sim.Pass {
		b.baseName = shrink.Name(b.base.Violation)
	}
	b.endNs = int64(b.base.Ticks) * kernel.TickNs
	if given["salt"] {
		return b.one(at.resolve(b.endNs), *salt, off)
	}
	fmt.Fprintf(stdout, "branch: seed %d: %s\n", o.Seed, b.describeBase())
	if !*sweep {
		return b.at(at.resolve(b.endNs))
	}
	return b.sweep(*points, *refine, *outPath)
}

func (b *brancher) describeBase() string {
	r := &b.base
	if r.Outcome == sim.Pass {
		return fmt.Sprintf("the run passes in %d ticks (%v of virtual time); a branch that fails found another failure", r.Ticks, time.Duration(b.endNs))
	}
	return fmt.Sprintf("the run fails %s (%s) at tick %d (%v of virtual time)", r.Outcome, b.baseName, r.Ticks, time.Duration(b.endNs))
}

// one is -salt: the one branch, with a run's whole output.
func (b *brancher) one(atNs int64, salt uint64, off []disabled) int {
	b.cfg.branch.b = &sim.Branch{AtNs: atNs, Salt: salt}
	rn := b.rn
	var h bytes.Buffer
	fmt.Fprintf(&h, "seed=%d\n", b.o.Seed)
	fmt.Fprintf(&h, "branch: at %v (tick %d), salt %d, of a run that %s\n", time.Duration(atNs), atNs/kernel.TickNs, salt,
		strings.TrimPrefix(b.describeBase(), "the run "))
	writeBuild(&h, &rn.build)
	writeOptions(&h, &b.o, off)
	if !b.cfg.json {
		rn.stdout.Write(h.Bytes())
	}
	sr := rn.runOne(b.o, off, false)
	rn.stdout.Write(sr.out)
	if sr.note != "" {
		fmt.Fprintln(rn.stderr, sr.note)
	}
	return sr.result.Outcome.ExitCode()
}

// at runs the branches at one moment and prints each.
func (b *brancher) at(atNs int64) int {
	out := b.rn.stdout
	results := b.runAll(b.jobs(atNs))
	p := b.tally(atNs, results)
	for i, r := range results {
		salt := uint64(i + 1)
		fmt.Fprintf(out, "branch salt=%d result=%s ticks=%d crashes=%d partitions=%d digest=%016x", salt, r.Outcome, r.Ticks, r.Crashes, r.Partitions, r.Digest)
		if r.Outcome != sim.Pass {
			fmt.Fprintf(out, " %s%s\n", shrink.Name(r.Violation), map[bool]string{true: " (as the run)", false: ""}[b.same(r)])
			fmt.Fprintf(out, "  reproduce: %s\n", b.reproduce(atNs, salt))
		} else {
			fmt.Fprintln(out)
		}
	}
	fmt.Fprintf(out, "branch: at %v (tick %d, %s of the run): %s\n", time.Duration(atNs), atNs/kernel.TickNs, b.share(atNs), p.words(b.baseName))
	if p.Errors > 0 {
		return 1
	}
	return 0
}

// sweep branches at points moments through the run, then bisects toward
// the moment the run's failure became inevitable.
func (b *brancher) sweep(points, refine int, outPath string) int {
	out := b.rn.stdout
	var jobs []branchJob
	for i := range points {
		jobs = append(jobs, b.jobs(tickCeil(b.endNs*int64(i)/int64(points)))...)
	}
	results := b.runAll(jobs)
	var ps []branchPoint
	for i := 0; i < len(results); i += b.branches {
		ps = append(ps, b.tally(jobs[i].atNs, results[i:i+b.branches]))
	}
	ps = mergePoints(ps)
	lo, hi := int64(-1), int64(-1)
	if b.baseName != "" {
		// hi: the first moment from which every point fails as the run
		// does; the run's end always does (a branch there is the run).
		hi = b.endNs
		for k := len(ps) - 1; k >= 0 && ps[k].Same == ps[k].Branches; k-- {
			hi = ps[k].AtNs
		}
		lo = -1
		for _, p := range ps {
			if p.AtNs < hi {
				lo = p.AtNs
			}
		}
		for step := 0; step < refine && lo >= 0; step++ {
			mid := tickCeil(lo + (hi-lo)/2)
			if mid <= lo || mid >= hi {
				break
			}
			p := b.tally(mid, b.runAll(b.jobs(mid)))
			ps = mergePoints(append(ps, p))
			if p.Same == p.Branches {
				hi = mid
			} else {
				lo = mid
			}
		}
	}
	errs := 0
	for _, p := range ps {
		errs += p.Errors
		fmt.Fprintf(out, "sweep: at %-12v tick %-8d %5s  %s  %s\n", time.Duration(p.AtNs), p.AtNs/kernel.TickNs, b.share(p.AtNs), bar(p, b.baseName != ""), p.words(b.baseName))
	}
	switch {
	case b.baseName == "":
		fmt.Fprintf(out, "sweep: the run passes: the points count branches that fail at all\n")
	case lo < 0:
		fmt.Fprintf(out, "sweep: inevitable from the start: every branch at every point fails as the run does (%s)\n", b.baseName)
	default:
		at := ps[slices.IndexFunc(ps, func(p branchPoint) bool { return p.AtNs == lo })]
		fmt.Fprintf(out, "sweep: inevitable from %v (tick %d, %s of the run): every branch from there fails as the run does (%s); at %v (tick %d) %d of %d escaped\n",
			time.Duration(hi), hi/kernel.TickNs, b.share(hi), b.baseName, time.Duration(lo), lo/kernel.TickNs, at.Branches-at.Same, at.Branches)
		fmt.Fprintf(out, "  reproduce: vopr branch -at %v -branches %d%s\n", time.Duration(lo), b.branches, strings.TrimPrefix(b.cfg.reproduce(b.o.Seed), "vopr"))
	}
	if outPath != "" {
		f := timeline.Sweep{Schema: timeline.SweepSchema, Seed: b.o.Seed, Flags: b.flags(), Outcome: b.base.Outcome.String(),
			Violation: b.baseName, Branches: b.branches, EndNs: b.endNs, InevitableNs: &hi}
		if b.baseName == "" {
			none := int64(-1)
			f.InevitableNs = &none
		}
		for _, p := range ps {
			f.Points = append(f.Points, timeline.SweepPoint{AtNs: p.AtNs, Branches: p.Branches, Failed: p.Failed, Same: p.Same})
		}
		if err := writeSweep(outPath, &f); err != nil {
			fmt.Fprintf(b.rn.stderr, "vopr branch: writing %s: %v\n", outPath, err)
			return 1
		}
		fmt.Fprintf(out, "sweep: points %s\n", outPath)
	}
	if errs > 0 {
		fmt.Fprintf(b.rn.stderr, "vopr branch: %d branches hit a simulator error\n", errs)
		return 1
	}
	return 0
}

// mergePoints sorts points by time, one per moment (two sweep points
// that round to one tick are one).
func mergePoints(ps []branchPoint) []branchPoint {
	slices.SortStableFunc(ps, func(a, b branchPoint) int { return int(min(max(a.AtNs-b.AtNs, -1), 1)) })
	return slices.CompactFunc(ps, func(a, b branchPoint) bool { return a.AtNs == b.AtNs })
}

// branchJob is one branch to run.
type branchJob struct {
	atNs int64
	salt uint64
}

func (b *brancher) jobs(atNs int64) []branchJob {
	js := make([]branchJob, b.branches)
	for i := range js {
		js[i] = branchJob{atNs: atNs, salt: uint64(i + 1)}
	}
	return js
}

// runAll runs the jobs, parallel at once, and returns their results in
// the jobs' order. Each simulation is single-threaded on its own
// goroutine; a replayed plan gets a gate of its own per run.
func (b *brancher) runAll(jobs []branchJob) []sim.Result {
	results := make([]sim.Result, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(b.parallel, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var g *plan.Gate
				if b.cfg.replay != nil {
					g = plan.Replayer(*b.cfg.replay, kernel.TickNs)
				}
				results[i], _ = b.rn.safeRun(b.o, sim.Outputs{Plan: g, Branch: &sim.Branch{AtNs: jobs[i].atNs, Salt: jobs[i].salt}})
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// same reports whether r fails as the run does.
func (b *brancher) same(r sim.Result) bool {
	return b.baseName != "" && r.Outcome == b.base.Outcome && shrink.Name(r.Violation) == b.baseName
}

func (b *brancher) tally(atNs int64, results []sim.Result) branchPoint {
	p := branchPoint{AtNs: atNs, Branches: len(results)}
	for _, r := range results {
		if r.Outcome != sim.Pass {
			p.Failed++
		}
		if r.Outcome == sim.SimError {
			p.Errors++
		}
		if b.same(r) {
			p.Same++
		}
	}
	return p
}

// words says what a point's branches did.
func (p branchPoint) words(name string) string {
	s := fmt.Sprintf("%d of %d fail", p.Failed, p.Branches)
	if name != "" {
		s += fmt.Sprintf(", %d as the run (%s)", p.Same, name)
	}
	if p.Errors > 0 {
		s += fmt.Sprintf(", %d simulator errors", p.Errors)
	}
	return s
}

// bar draws a point's likelihood of failing as the run does (of failing
// at all, for a run that passes) in 20 characters.
func bar(p branchPoint, same bool) string {
	n := p.Failed
	if same {
		n = p.Same
	}
	full := (n*20 + p.Branches/2) / p.Branches
	return "[" + strings.Repeat("#", full) + strings.Repeat(".", 20-full) + "]"
}

// share is atNs as a share of the run's length.
func (b *brancher) share(atNs int64) string {
	if b.endNs == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(atNs)/float64(b.endNs))
}

// reproduce is the command that runs one branch alone: vopr -branch,
// which every run flag and subcommand that takes one run understands
// (vopr timeline draws it, -trace records it).
func (b *brancher) reproduce(atNs int64, salt uint64) string {
	return fmt.Sprintf("%s -branch %v/%d", b.cfg.reproduce(b.o.Seed), time.Duration(atNs), salt)
}

// flags are the run flags of the sweep's run, -seed first.
func (b *brancher) flags() []string {
	return strings.Fields(strings.TrimPrefix(b.cfg.reproduce(b.o.Seed), "vopr"))
}

// writeSweep writes a sweep file: the schema vopr timeline -likelihood
// reads (timeline.Sweep).
func writeSweep(path string, f *timeline.Sweep) error {
	data, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
