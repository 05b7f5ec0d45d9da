package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/sim/plan"
)

// withPlan is parseArgs for a command line with -plan FILE: it reads the
// plan and parses the command line again after the plan's own flags (and
// its seed, unless -seed is given, which must then be the plan's), so
// that the run is the recorded run's world and the flags given win.
func withPlan(cfg *config, args []string, given map[string]bool, stderr io.Writer) (*config, bool, error) {
	switch {
	case cfg.campaign():
		return nil, false, &usageError{fmt.Sprintf("-plan %s replays one run: -seeds and -duration do not combine with it", cfg.plan)}
	case cfg.performance:
		return nil, false, &usageError{"-plan does not combine with -performance"}
	}
	p, err := readPlan(cfg.plan)
	if err != nil {
		return nil, false, &usageError{fmt.Sprintf("-plan %s: %v", cfg.plan, err)}
	}
	if given["seed"] && cfg.seed.value != p.Seed {
		return nil, false, &usageError{fmt.Sprintf("-plan %s is a plan of seed %d, not of -seed %d", cfg.plan, p.Seed, cfg.seed.value)}
	}
	for _, f := range p.Flags {
		if name := flagName(f); name == "plan" || name == "write-plan" || name == "seed" || name == "seeds" || name == "duration" {
			return nil, false, &usageError{fmt.Sprintf("-plan %s: its flags may not hold %s", cfg.plan, f)}
		}
	}
	again := append(slices.Clone(p.Flags), "-seed", strconv.FormatUint(p.Seed, 10))
	again = append(again, args...)
	// The replay set in the new config tells parseArgsInto not to read the
	// plan again.
	return parseArgsInto(&config{parallel: 1, replay: &p}, again, stderr)
}

// flagName is the name of a flag argument ("-long", "--replicas=3").
func flagName(arg string) string {
	for len(arg) > 0 && arg[0] == '-' {
		arg = arg[1:]
	}
	for i := range len(arg) {
		if arg[i] == '=' {
			return arg[:i]
		}
	}
	return arg
}

func readPlan(path string) (plan.Plan, error) {
	f, err := os.Open(path)
	if err != nil {
		return plan.Plan{}, err
	}
	defer f.Close()
	return plan.Read(f)
}

// planPath is where seed's -write-plan file goes, named as its trace is.
func (c *config) planPath(seed uint64) string { return c.perSeed(c.writePlan, seed) }

// planGate is the fault-plan gate of a seed's run: a replayer of -plan, a
// recorder for -write-plan (a replay that writes a plan writes what it
// fired), nil for neither.
func (c *config) planGate() *plan.Gate {
	switch {
	case c.replay != nil:
		return plan.Replayer(*c.replay, kernel.TickNs)
	case c.writePlan != "":
		return plan.Recorder()
	}
	return nil
}

// writeSeedPlan writes the firings the gate noted as seed's plan file.
func (c *config) writeSeedPlan(seed uint64, gate *plan.Gate) error {
	if c.writePlan == "" || gate == nil {
		return nil
	}
	f, err := openTrace(c.planPath(seed))
	if err != nil {
		return err
	}
	flags := c.runFlags()
	if c.branch.b != nil {
		// A branch's plan replays that branch: its firings up to the
		// branch, then the same reseeded draws.
		flags = append(flags, "-branch", c.branch.String())
	}
	p := plan.Plan{Seed: seed, Flags: flags, Firings: gate.Firings()}
	if err := p.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
