package sim

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/bus"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// panicAfterCrash is a loop event that fires every tick until a replica has
// crashed and another is up, unpaused and holds a peer connection; then it
// makes that replica panic in the way the case says. Waiting for a crash
// puts the crash in the failure's evidence (checker.Crashed notes it).
type panicAfterCrash struct {
	c      *Cluster
	strike func(c *Cluster, n *ReplicaNode, conn bus.ConnID)
	fired  bool
}

func (p *panicAfterCrash) Fire(int64, uint64) (string, int32, uint64) {
	p.c.Loop.After(kernel.TickNs, p, 0)
	if p.fired || p.c.Crashes == 0 {
		return "", 0, 0
	}
	for _, n := range p.c.Replicas {
		if n.Replica() == nil || n.Paused() {
			continue
		}
		// The lowest peer connection id: n.conns is a map, read in order.
		var ids []int
		for id, kind := range n.conns {
			if kind == connPeer {
				ids = append(ids, int(id))
			}
		}
		if len(ids) == 0 {
			continue
		}
		sort.Ints(ids)
		p.fired = true
		p.strike(p.c, n, bus.ConnID(ids[0]))
		return "test.strike", int32(n.ID()), 0
	}
	return "", 0, 0
}

// A panic raised inside replica code is a correctness failure of that seed
// (exit 129), named "replica panic" with the panic and the function it came
// from, with the evidence that led to it; a panic raised by the harness
// itself (here a hook in the replica's event sink) is a simulator error.
// recovered tells them apart by the function below the panic, so each case
// pins one side of that line.
func TestPanicsAreClassifiedByOrigin(t *testing.T) {
	cases := []struct {
		name       string
		hook       func(c *Cluster)
		outcome    Outcome
		prefix     string // the violation starts with it
		contains   []string
		crashNoted bool // the evidence shows the crash before the panic
	}{
		{
			// The bus asserts that a connection id is never reused: a
			// duplicate accept for a connection it tracks panics in
			// bus.(*Bus).track, inside the replica.
			name: "an assertion in the replica's bus",
			hook: func(c *Cluster) {
				c.Loop.After(0, &panicAfterCrash{c: c, strike: func(_ *Cluster, n *ReplicaNode, conn bus.ConnID) {
					n.Replica().PeerAccepted(conn)
				}}, 0)
			},
			outcome:    Correctness,
			prefix:     "replica panic: bus: connection id",
			contains:   []string{"reused", "iggy-vopr/vopr/replica/bus.(*Bus)"},
			crashNoted: true,
		},
		{
			// The bus forbids re-entry: a transport or handler calling back
			// into it while it handles an event. The event sink re-enters it
			// from inside the replica's own call (a commit at the primary
			// happens while the bus delivers a PrepareOk), and the bus panics
			// in its own code.
			name: "a re-entered bus, reached through the event sink",
			hook: func(c *Cluster) {
				prev := c.OnEvent
				c.OnEvent = func(e replica.Event) {
					prev(e)
					if e.Kind == replica.EventGroup && e.Group.Kind == vsr.EventCommitted && c.Crashes > 0 {
						if r := c.Replicas[e.Replica].Replica(); r != nil && r.Metadata().IsPrimary() {
							r.PeerClosed(bus.ConnID(1 << 40)) // an id no bus knows: harmless when not re-entered
						}
					}
				}
			},
			outcome:  Correctness,
			prefix:   "replica panic: bus: event method re-entered",
			contains: []string{"iggy-vopr/vopr/replica/bus.(*Bus).enter"},
		},
		{
			// A panic in the harness's own hook, though called from inside
			// replica code, is the simulator's bug, not the replica's.
			name: "a panic in the harness's event sink",
			hook: func(c *Cluster) {
				prev := c.OnEvent
				c.OnEvent = func(e replica.Event) {
					prev(e)
					if e.Kind == replica.EventGroup && e.Group.Kind == vsr.EventCommitted && e.Group.Op == 3 {
						panic("the harness's own bug")
					}
				}
			},
			outcome:  SimError,
			prefix:   "simulator panic: the harness's own bug",
			contains: []string{"iggy-vopr/vopr/sim."},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Swarm(21)
			o.NoFaults()
			o.Replicas, o.Clients, o.Requests, o.Lite = 3, 3, 60, true
			o.CrashProbability, o.CrashIOFactor, o.RestartDelayMeanTicks = 0.003, 1, 20
			r := runVOPR(o, Outputs{}, tc.hook)
			if r.Outcome != tc.outcome || r.Outcome.ExitCode() != tc.outcome.ExitCode() {
				t.Fatalf("outcome %v (exit %d), want %v: %s", r.Outcome, r.Outcome.ExitCode(), tc.outcome, r.Violation)
			}
			t.Logf("violation: %s\nevidence tail: %v", r.Violation, r.Evidence[max(0, len(r.Evidence)-4):])
			if !strings.HasPrefix(r.Violation, tc.prefix) {
				t.Errorf("violation %q, want it to start with %q", r.Violation, tc.prefix)
			}
			for _, s := range tc.contains {
				if !strings.Contains(r.Violation, s) {
					t.Errorf("violation %q does not name %q", r.Violation, s)
				}
			}
			// The failure reproduces from what the result carries: its seed
			// and its options, and the summary line starts with the seed.
			if r.Seed != o.Seed || r.Options != o || !strings.HasPrefix(r.Summary(), fmt.Sprintf("seed=%d result=%v ", o.Seed, tc.outcome)) {
				t.Errorf("seed %d, summary %q: the seed must be reported", r.Seed, r.Summary())
			}
			if len(r.Evidence) == 0 {
				t.Errorf("no evidence")
			}
			if tc.crashNoted && !strings.Contains(strings.Join(r.Evidence, "\n"), "crashed") {
				t.Errorf("the evidence does not show the crash before the panic:\n%s", strings.Join(r.Evidence, "\n"))
			}
			// A panic ends the run; the same seed panics the same way.
			if again := runVOPR(o, Outputs{}, tc.hook); again.Violation != r.Violation || again.Digest != r.Digest {
				t.Errorf("not reproducible: %q / %q", again.Violation, r.Violation)
			}
		})
	}
}

// panicOrigin names the function that panicked, without the argument words
// of its frame (pointers, which change from run to run and would make a
// failure's printed violation differ between two runs of one seed).
func TestPanicOrigin(t *testing.T) {
	cases := []struct{ name, stack, want string }{
		{"a method: receiver kept, pointers dropped",
			"goroutine 1 [running]:\nruntime/debug.Stack()\n\t/go/debug/stack.go:26 +0x5e\npanic({0x799840?, 0x28d23b740078?})\n\t/go/runtime/panic.go:860 +0x13a\n" +
				"github.com/iggy-vopr/vopr/replica/bus.(*Bus).track(0xcf3f66c2308, 0xcf3f6f96a20)\n\t/work/replica/bus/bus.go:291 +0x1b\n",
			"github.com/iggy-vopr/vopr/replica/bus.(*Bus).track"},
		{"an inlined function",
			"panic({0x1, 0x2})\n\t/go/runtime/panic.go:860\ngithub.com/iggy-vopr/vopr/replica/wire.HeaderOf(...)\n\t/work/replica/wire/header.go:30\n",
			"github.com/iggy-vopr/vopr/replica/wire.HeaderOf"},
		{"a closure", "panic({0x1, 0x2})\n\t/go/runtime/panic.go:860\ngithub.com/iggy-vopr/vopr/sim.TestX.func1.2()\n\t/work/sim/x_test.go:1\n",
			"github.com/iggy-vopr/vopr/sim.TestX.func1.2"},
		{"no panic frame", "goroutine 1 [running]:\nmain.main()\n", "unknown"},
	}
	for _, tc := range cases {
		if got := panicOrigin(tc.stack); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
