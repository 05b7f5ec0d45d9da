package shrink

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/iggy-vopr/vopr/sim"
	"github.com/iggy-vopr/vopr/sim/plan"
)

// fakeWorld fails a run "committed op replaced" iff it has at least two
// replicas, sends on, and the firings at 30 and 70 ns both fire; its
// recording fires 100 firings, one a nanosecond; a replay fires what its
// plan holds.
func fakeWorld(o sim.Options, p *plan.Plan) (sim.Result, plan.Plan) {
	var fired plan.Plan
	if p == nil {
		for at := range int64(100) {
			fired.Firings = append(fired.Firings, plan.Firing{AtNs: at, Site: plan.Site{Kind: plan.Crash, A: int32(at % 3), B: -1}})
		}
	} else {
		fired.Firings = slices.Clone(p.Firings)
	}
	has := func(at int64) bool {
		return slices.ContainsFunc(fired.Firings, func(f plan.Firing) bool { return f.AtNs == at })
	}
	r := sim.Result{Outcome: sim.Pass, Events: uint64(10 * len(fired.Firings)), Ticks: 100, Requests: uint64(o.Requests)}
	if o.Replicas >= 2 && o.Sends && has(30) && has(70) {
		r.Outcome, r.Violation = sim.Correctness, "committed op replaced: op 3"
	}
	return r, fired
}

func fixedClock() func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time { return t }
}

func TestShrinkFindsTheFiringsAndOptionsTheFailureNeeds(t *testing.T) {
	o := sim.Swarm(1)
	o.Replicas, o.Clients, o.Requests, o.Sends, o.MemoryLossBounded = 5, 8, 100, true, true
	for _, parallel := range []int{1, 3} {
		out, err := Shrink(o, nil, fakeWorld, Config{Budget: time.Hour, Parallel: parallel, Now: fixedClock()})
		if err != nil {
			t.Fatal(err)
		}
		var at []int64
		for _, f := range out.Plan.Firings {
			at = append(at, f.AtNs)
		}
		if !slices.Equal(at, []int64{30, 70}) || out.Options.Replicas != 2 || out.Options.Clients != 1 || !out.Options.Sends {
			t.Fatalf("parallel %d: minimal run: firings at %v, %d replicas, %d clients, sends %v; want [30 70], 2, 1, true",
				parallel, at, out.Options.Replicas, out.Options.Clients, out.Options.Sends)
		}
		if out.Name != "committed op replaced" || out.Original.Firings != 100 || out.Minimal.Firings != 2 || out.OutOfTime {
			t.Fatalf("parallel %d: outcome %+v", parallel, out)
		}
	}
}

func TestShrinkStopsAtItsBudget(t *testing.T) {
	now := time.Unix(0, 0)
	clock := func() time.Time {
		now = now.Add(time.Second)
		return now
	}
	o := sim.Swarm(1)
	o.Replicas, o.Sends, o.MemoryLossBounded = 3, true, true
	out, err := Shrink(o, nil, fakeWorld, Config{Budget: 5 * time.Second, Parallel: 1, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	if !out.OutOfTime || out.Runs > 8 {
		t.Fatalf("out of time %v after %d runs; want the budget to stop it within a few", out.OutOfTime, out.Runs)
	}
	if out.Minimal.Firings > out.Original.Firings || out.Result.Outcome != sim.Correctness {
		t.Fatalf("the answer %+v is not a failing run no bigger than the start", out.Minimal)
	}
}

func TestShrinkRefusesAPassingRun(t *testing.T) {
	o := sim.Swarm(1)
	o.Replicas = 1
	if _, err := Shrink(o, nil, fakeWorld, Config{Budget: time.Hour, Now: fixedClock()}); !errors.Is(err, ErrPasses) {
		t.Fatalf("err = %v, want ErrPasses", err)
	}
}

func TestName(t *testing.T) {
	for in, want := range map[string]string{
		"committed op replaced: op 3 of group 5": "committed op replaced",
		"the core did not converge":              "the core did not converge",
	} {
		if got := Name(in); got != want {
			t.Errorf("Name(%q) = %q, want %q", in, got, want)
		}
	}
}
