// Package shrink searches for a smaller run that fails as a given failing
// run does (vopr shrink, issue 14): fewer replicas, clients and requests,
// fault knobs and nemeses turned off, a shorter tick budget, and fault
// firings removed from the run's fault plan by delta debugging. Every
// candidate replays the current fault plan (sim/plan), so a change to the
// options keeps the faults that still have a site; an accepted candidate's
// plan becomes what it really fired, which drops the firings whose sites
// are gone. A candidate is accepted when it fails with the same outcome and
// the same violation name (the violation's text before its first ": ").
//
// The search is deterministic for a given budget reached: candidates of a
// step run in batches side by side, and the first in order that fails the
// same way wins whatever finished first. The wall-clock budget only decides
// how far it gets.
package shrink

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/sim"
	"github.com/iggy-vopr/vopr/sim/plan"
)

// Runner runs o replaying p (nil: recording) and returns the result and
// the plan of what fired.
type Runner func(o sim.Options, p *plan.Plan) (sim.Result, plan.Plan)

// Config bounds the search.
type Config struct {
	Budget   time.Duration    // wall time for the whole search
	Parallel int              // candidates run at once (at least 1)
	Now      func() time.Time // the wall clock (injected for tests)
	// Progress, when non-nil, hears each accepted step.
	Progress func(step string, s Size)
}

// Size is how big a run is.
type Size struct {
	Replicas, Clients, Requests int
	Firings                     int
	Events, Ticks               uint64
}

func (s Size) String() string {
	return fmt.Sprintf("replicas=%d clients=%d requests=%d firings=%d events=%d ticks=%d",
		s.Replicas, s.Clients, s.Requests, s.Firings, s.Events, s.Ticks)
}

// Outcome is what the search found.
type Outcome struct {
	Outcome   sim.Outcome
	Name      string // the violation's name both runs fail with
	Original  Size
	Minimal   Size
	Options   sim.Options // the minimal run's options
	Plan      plan.Plan   // its fault plan
	Result    sim.Result  // its result
	Steps     []string    // the accepted steps, in order
	Runs      int         // candidates run
	OutOfTime bool        // the budget ended the search
}

// Name is a violation's name: its text before the first ": ".
func Name(violation string) string {
	name, _, _ := strings.Cut(violation, ": ")
	return name
}

// ErrPasses is returned for a starting run that does not fail.
var ErrPasses = fmt.Errorf("shrink: the run passes: nothing to shrink")

// search is one shrink in progress.
type search struct {
	run      Runner
	cfg      Config
	deadline time.Time
	want     sim.Outcome
	name     string
	cur      sim.Options
	plan     plan.Plan
	res      sim.Result
	out      *Outcome
}

// Shrink shrinks the failing run of o (replaying p if non-nil).
func Shrink(o sim.Options, p *plan.Plan, run Runner, cfg Config) (Outcome, error) {
	if cfg.Parallel < 1 {
		cfg.Parallel = 1
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	res, fired := run(o, p)
	if res.Outcome == sim.Pass {
		return Outcome{}, ErrPasses
	}
	s := &search{run: run, cfg: cfg, deadline: cfg.Now().Add(cfg.Budget), want: res.Outcome, name: Name(res.Violation),
		cur: o, plan: fired, res: res}
	s.out = &Outcome{Outcome: res.Outcome, Name: s.name, Original: sizeOf(o, fired, res), Runs: 1}
	s.shrinkOptions()
	s.shrinkPlan()
	s.shrinkOptions() // fewer firings may let more knobs go
	s.out.Options, s.out.Plan, s.out.Result = s.cur, s.plan, s.res
	s.out.Minimal = sizeOf(s.cur, s.plan, s.res)
	return *s.out, nil
}

func sizeOf(o sim.Options, p plan.Plan, r sim.Result) Size {
	return Size{Replicas: o.Replicas, Clients: o.Clients, Requests: o.Requests, Firings: len(p.Firings),
		Events: r.Events, Ticks: r.Ticks}
}

func (s *search) outOfTime() bool {
	if s.cfg.Now().After(s.deadline) {
		s.out.OutOfTime = true
		return true
	}
	return false
}

// candidate is one run to try: options and the plan to replay.
type candidate struct {
	step string
	o    sim.Options
	p    plan.Plan
}

// tryFirst runs the candidates in batches of cfg.Parallel and accepts the
// first in order that fails as the start did; it reports whether one did.
func (s *search) tryFirst(cands []candidate) bool {
	for at := 0; at < len(cands); at += s.cfg.Parallel {
		if s.outOfTime() {
			return false
		}
		batch := cands[at:min(at+s.cfg.Parallel, len(cands))]
		results := make([]sim.Result, len(batch))
		fired := make([]plan.Plan, len(batch))
		var wg sync.WaitGroup
		for i := range batch {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				p := batch[i].p
				results[i], fired[i] = s.run(batch[i].o, &p)
			}(i)
		}
		wg.Wait()
		s.out.Runs += len(batch)
		for i := range batch {
			if results[i].Outcome == s.want && Name(results[i].Violation) == s.name && smaller(batch[i].o, fired[i], results[i], s) {
				s.cur, s.plan, s.res = batch[i].o, fired[i], results[i]
				s.out.Steps = append(s.out.Steps, batch[i].step)
				if s.cfg.Progress != nil {
					s.cfg.Progress(batch[i].step, sizeOf(s.cur, s.plan, s.res))
				}
				return true
			}
		}
	}
	return false
}

// smaller: a candidate is kept only if it is no bigger than the current
// run on every measure and the search moves (it is smaller on one, or
// its options are simpler: a knob off).
func smaller(o sim.Options, p plan.Plan, r sim.Result, s *search) bool {
	return len(p.Firings) <= len(s.plan.Firings) && o.Replicas <= s.cur.Replicas && o.Clients <= s.cur.Clients &&
		o.Requests <= s.cur.Requests && r.Events <= s.res.Events+s.res.Events/2
}

// shrinkOptions tries the option steps in turn, each until it no longer
// helps: fewer replicas, clients and requests; the nemeses and each fault
// knob off; a shorter safety phase; the safety phase alone.
func (s *search) shrinkOptions() {
	for _, step := range optionSteps {
		for range 64 { // a step that keeps helping halves at most 64 times
			if s.outOfTime() {
				return
			}
			var cands []candidate
			for _, c := range step(s.cur, s.res) {
				cands = append(cands, candidate{step: c.step, o: c.o, p: s.plan})
			}
			if len(cands) == 0 || !s.tryFirst(cands) {
				break
			}
		}
	}
}

// optionChange is one option step's candidate.
type optionChange struct {
	step string
	o    sim.Options
}

var optionSteps = []func(o sim.Options, r sim.Result) []optionChange{
	func(o sim.Options, _ sim.Result) (out []optionChange) {
		for n := 1; n < o.Replicas; n++ {
			c := o
			c.Replicas = n
			fewerReplicas(&c)
			out = append(out, optionChange{fmt.Sprintf("replicas %d -> %d", o.Replicas, n), c})
		}
		return out
	},
	func(o sim.Options, _ sim.Result) (out []optionChange) {
		for _, n := range []int{1, o.Clients / 2} {
			if n >= 1 && n < o.Clients {
				c := o
				c.Clients = n
				out = append(out, optionChange{fmt.Sprintf("clients %d -> %d", o.Clients, n), c})
			}
		}
		return out
	},
	func(o sim.Options, r sim.Result) (out []optionChange) {
		for _, n := range []int{int(r.Requests) * 3 / 4, o.Requests / 2} {
			if n >= 1 && n < o.Requests {
				c := o
				c.Requests = n
				out = append(out, optionChange{fmt.Sprintf("requests %d -> %d", o.Requests, n), c})
			}
		}
		return out
	},
	func(o sim.Options, _ sim.Result) []optionChange { return knobsOff(o) },
	func(o sim.Options, r sim.Result) (out []optionChange) {
		if n := int(r.Ticks) * 3 / 4; n >= 1 && n < o.SafetyTicksMax {
			c := o
			c.SafetyTicksMax = n
			out = append(out, optionChange{fmt.Sprintf("safety-ticks %d -> %d", o.SafetyTicksMax, n), c})
		}
		if !o.Lite && r.Outcome == sim.Correctness {
			c := o
			c.Lite = true
			out = append(out, optionChange{"lite: the safety phase only", c})
		}
		return out
	},
}

// fewerReplicas turns off what o's replica count cannot carry, as vopr
// does for a drawn count (the nemeses, a partition mode that cannot
// split), so that the command line can say what ran.
func fewerReplicas(o *sim.Options) {
	if o.Replicas < 3 {
		o.Rollback = false
		if o.PartitionMode == network.PartitionBridge {
			o.PartitionMode = network.PartitionIsolateSingle
		}
	}
	if o.Replicas < 2 {
		o.StaleAnswers, o.ViewChangeFaults, o.BadFrames = false, false, false
		o.PartitionMode = network.PartitionNone
	}
}

// knobsOff is a candidate for each fault knob or nemesis still on, turned
// off.
func knobsOff(o sim.Options) (out []optionChange) {
	off := func(name string, on bool, set func(c *sim.Options)) {
		if on {
			c := o
			set(&c)
			out = append(out, optionChange{name + " off", c})
		}
	}
	off("rollback", o.Rollback, func(c *sim.Options) { c.Rollback = false })
	off("stale-answers", o.StaleAnswers, func(c *sim.Options) { c.StaleAnswers = false })
	off("view-change-faults", o.ViewChangeFaults, func(c *sim.Options) { c.ViewChangeFaults = false })
	off("bad-frames", o.BadFrames, func(c *sim.Options) { c.BadFrames = false })
	off("partition", o.PartitionProbability > 0, func(c *sim.Options) { c.PartitionProbability = 0 })
	off("clog", o.ClogProbability > 0, func(c *sim.Options) { c.ClogProbability = 0 })
	off("reset", o.ResetProbability > 0, func(c *sim.Options) { c.ResetProbability = 0 })
	off("corrupt", o.CorruptProbability > 0, func(c *sim.Options) { c.CorruptProbability = 0 })
	off("chunk-corrupt", o.ChunkCorruptProbability > 0, func(c *sim.Options) { c.ChunkCorruptProbability = 0 })
	off("latent", o.LatentProbability > 0, func(c *sim.Options) { c.LatentProbability = 0 })
	off("corrupt-sector", o.CorruptSectorProbability > 0, func(c *sim.Options) { c.CorruptSectorProbability = 0 })
	off("misdirect", o.MisdirectProbability > 0, func(c *sim.Options) { c.MisdirectProbability = 0 })
	off("pause", o.PauseProbability > 0, func(c *sim.Options) { c.PauseProbability = 0 })
	off("crash", o.CrashProbability > 0, func(c *sim.Options) { c.CrashProbability = 0 })
	off("crash-torn", o.CrashTornProbability > 0, func(c *sim.Options) { c.CrashTornProbability = 0 })
	off("crash-lost", o.CrashLostProbability > 0, func(c *sim.Options) { c.CrashLostProbability = 0 })
	off("repair-any-peer", o.RepairAnyPeer, func(c *sim.Options) { c.RepairAnyPeer = false })
	return out
}

// shrinkPlan removes firings by delta debugging (ddmin's complements):
// the plan in n chunks, each chunk's removal tried in order; a removal
// that keeps the failure is kept and the chunks coarsen, otherwise they
// halve, until single firings have been tried or the budget ends.
func (s *search) shrinkPlan() {
	n := 2
	for len(s.plan.Firings) > 0 && !s.outOfTime() {
		firings := s.plan.Firings
		if n > len(firings) {
			n = len(firings)
		}
		var cands []candidate
		for i := range n {
			from, to := i*len(firings)/n, (i+1)*len(firings)/n
			if from == to {
				continue
			}
			kept := plan.Plan{Seed: s.plan.Seed, Flags: s.plan.Flags}
			kept.Firings = append(append(kept.Firings, firings[:from]...), firings[to:]...)
			cands = append(cands, candidate{step: fmt.Sprintf("firings %d -> %d", len(firings), len(kept.Firings)), o: s.cur, p: kept})
		}
		if s.tryFirst(cands) {
			n = max(n-1, 2)
			continue
		}
		if n >= len(firings) {
			return // every single firing is needed
		}
		n = min(2*n, len(firings))
	}
}
