package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/iggy-vopr/vopr/shrink"
	"github.com/iggy-vopr/vopr/sim"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/sim/plan"
)

const shrinkUsage = `usage: vopr shrink [-budget D] [-o FILE] [-parallel P] [run flags]

Runs the failing run the run flags describe (-seed N, knob flags, -long,
-plan FILE: as for a run) and searches for a smaller run that fails with the
same outcome and violation name (the violation's text before its first
": "): fewer replicas, clients and requests, nemeses and fault knobs off, a
shorter safety phase, and fault firings removed from its fault plan by
delta debugging. Every candidate replays the current plan. It prints each
step it keeps, the minimal run's size against the original's (replicas,
clients, requests, firings, events, ticks), and the command line that
reproduces it; the minimal plan goes to FILE.

  -budget D     wall time for the search (default 2m); the best run found by
                then is the answer
  -o FILE       where the minimal fault plan goes (default shrunk.plan)
  -parallel P   candidates run at once (default: the CPUs)

Exit status: 0 when a failing run was found (smaller or not), 1 when the
run passes (nothing to shrink) or a file cannot be written, 2 for bad flags.
`

// shrinkFlags splits shrink's own flags from the run flags.
func shrinkFlags(args []string) (budget time.Duration, out string, parallel int, rest []string, help bool, err error) {
	fs := flag.NewFlagSet("vopr shrink", flag.ContinueOnError)
	fs.DurationVar(&budget, "budget", 2*time.Minute, "")
	fs.StringVar(&out, "o", "shrunk.plan", "")
	fs.IntVar(&parallel, "parallel", runtime.GOMAXPROCS(0), "")
	rest, err = splitFlags(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0, "", 0, nil, true, nil
	case err != nil:
		return 0, "", 0, nil, false, err
	case budget <= 0:
		return 0, "", 0, nil, false, fmt.Errorf("-budget %v: want a positive duration (30s, 2m)", budget)
	case parallel < 1:
		return 0, "", 0, nil, false, fmt.Errorf("-parallel %d: want at least 1", parallel)
	}
	return budget, out, parallel, rest, false, nil
}

func runShrink(args []string, stdout, stderr io.Writer) int {
	budget, outPath, parallel, rest, help, err := shrinkFlags(args)
	if help {
		io.WriteString(stdout, shrinkUsage)
		return 0
	}
	fail := func(msg string) int {
		fmt.Fprintf(stderr, "vopr shrink: %s\n", msg)
		io.WriteString(stderr, shrinkUsage)
		return 2
	}
	if err != nil {
		return fail(err.Error())
	}
	cfg, err := parseOneRun("shrink", rest, stderr)
	if err != nil {
		return fail(err.Error())
	}
	if cfg.branch.b != nil {
		// Shrinking replays the fault plan, and a branch's faults after
		// its moment are reseeded draws, which a plan does not hold.
		return fail(fmt.Sprintf("-branch %s: shrink takes a seed's own run, not a branch of it", &cfg.branch))
	}
	o, _, err := cfg.options(cfg.seed.value)
	if err != nil {
		return fail(err.Error())
	}
	run := func(o sim.Options, p *plan.Plan) (sim.Result, plan.Plan) {
		g := plan.Recorder()
		if p != nil {
			g = plan.Replayer(*p, kernel.TickNs)
		}
		r := sim.RunWith(o, sim.Outputs{Plan: g})
		return r, plan.Plan{Seed: o.Seed, Firings: g.Firings()}
	}
	fmt.Fprintf(stdout, "shrink: seed %d, a budget of %v, %d at once\n", o.Seed, budget, parallel)
	res, err := shrink.Shrink(o, cfg.replay, run, shrink.Config{Budget: budget, Parallel: parallel,
		Progress: func(step string, s shrink.Size) { fmt.Fprintf(stdout, "shrink: kept %s: %s\n", step, s) }})
	if errors.Is(err, shrink.ErrPasses) {
		fmt.Fprintf(stderr, "vopr shrink: seed %d passes: nothing to shrink\n", o.Seed)
		return 1
	}
	flags := minimalFlags(cfg, res.Options)
	p := res.Plan
	p.Flags = flags
	if err := writePlanFile(outPath, p); err != nil {
		fmt.Fprintf(stderr, "vopr shrink: writing %s: %v\n", outPath, err)
		return 1
	}
	fmt.Fprintf(stdout, "shrink: fails %s: %s\n", res.Outcome, res.Name)
	fmt.Fprintf(stdout, "shrink: original %s\n", res.Original)
	fmt.Fprintf(stdout, "shrink: minimal  %s\n", res.Minimal)
	fmt.Fprintf(stdout, "shrink: %s, %d runs%s\n", ratios(res.Original, res.Minimal), res.Runs,
		map[bool]string{true: ", stopped by the budget", false: ""}[res.OutOfTime])
	fmt.Fprintf(stdout, "shrink: plan %s\n", outPath)
	fmt.Fprintf(stdout, "reproduce: vopr -seed %d %s -plan %s\n", o.Seed, strings.Join(flags, " "), outPath)
	return 0
}

// ratios says how much smaller the minimal run is.
func ratios(a, b shrink.Size) string {
	r := func(name string, x, y uint64) string {
		if y == 0 {
			return fmt.Sprintf("%s %d -> 0", name, x)
		}
		return fmt.Sprintf("%s %d -> %d (%.1fx)", name, x, y, float64(x)/float64(y))
	}
	return strings.Join([]string{r("firings", uint64(a.Firings), uint64(b.Firings)), r("events", a.Events, b.Events),
		r("ticks", a.Ticks, b.Ticks)}, ", ")
}

// minimalFlags is the command line that rebuilds o for its seed: -long
// and -faults as given, and every knob whose value differs from what
// those give, checked by building the options back from the flags (every
// knob, if that did not give o).
func minimalFlags(cfg *config, o sim.Options) []string {
	// Start from the base the presets give, add every knob the rebuilt
	// options still get wrong (a knob can move another: -clients moves the
	// long preset's requests), until they are o.
	var given []override
	for range len(knobs) {
		try := &config{long: cfg.long, faults: cfg.faults, overrides: given}
		got, _, err := try.options(o.Seed)
		if err == nil && got.String() == o.String() {
			return try.runFlags()
		}
		added := false
		for i := range knobs {
			k := &knobs[i]
			_, want := knobValue(k, &o)
			_, have := knobValue(k, &got)
			if want == have || slices.ContainsFunc(given, func(ov override) bool { return ov.knob == k }) {
				continue
			}
			if v, err := parseKnob(k, want); err == nil {
				given, added = append(given, override{k, v}), true
			}
		}
		if !added {
			break
		}
		sortOverrides(given)
	}
	var all []override
	for i := range knobs {
		_, text := knobValue(&knobs[i], &o)
		if v, err := parseKnob(&knobs[i], text); err == nil {
			all = append(all, override{&knobs[i], v})
		}
	}
	return (&config{long: cfg.long, faults: cfg.faults, overrides: all}).runFlags()
}

func writePlanFile(path string, p plan.Plan) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
