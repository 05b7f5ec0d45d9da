package sim

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/network"
)

// faultyTraceOptions is a short seed with every fault turned up, so that one
// run shows every kind of trace line: three replicas (partitions need two
// sides), ten clients for the eight client-table slots (evictions), a short
// safety phase, then the liveness phase.
func faultyTraceOptions(seed uint64) Options {
	o := Swarm(seed)
	o.Replicas, o.Clients, o.Requests = 3, 10, 40
	o.SafetyTicksMax = 4000
	o.CrashProbability, o.CrashIOFactor, o.RestartDelayMeanTicks = 0.002, 10, 50
	o.PauseProbability, o.PauseMeanTicks = 0.002, 30
	o.PartitionMode, o.PartitionSymmetry = network.PartitionUniformSize, network.PartitionSymmetric
	o.Rollback = false // random partitions, not the nemesis's (TestTraceOfTheRollbackNemesis)
	o.PartitionProbability, o.UnpartitionProbability = 0.01, 0.02
	o.ClogProbability, o.CorruptProbability, o.ResetProbability = 0.001, 0.02, 0.002
	o.LatentProbability, o.CorruptSectorProbability, o.MisdirectProbability = 0.01, 0.01, 0.005
	return o
}

const faultyTraceSeed = 8

// The trace carries every event of a run, not only the replicas': each
// kind below must appear in a short faulty seed, with the fields that say
// what happened. A kind that stops being traced (a hook lost in a
// refactoring) fails here.
func TestTraceCarriesEveryKind(t *testing.T) {
	o := faultyTraceOptions(faultyTraceSeed)
	var trace bytes.Buffer
	r := Run(o, &trace)
	if r.Outcome != Pass {
		t.Fatalf("the seed must pass to be a fixture: %s: %s", r.Summary(), r.Violation)
	}
	lines := parseTrace(t, trace.Bytes())
	byKind := map[string][]map[string]any{}
	for _, l := range lines {
		k := l["kind"].(string)
		byKind[k] = append(byKind[k], l)
	}
	cases := []struct {
		kind   string
		fields []string // every line of the kind carries these
	}{
		// Replica events, as before.
		{"committed", []string{"replica", "op", "identity"}},
		// Process faults: which replica, and for a pause how long.
		{"crash", []string{"replica"}},
		{"restart", []string{"replica"}},
		{"pause", []string{"replica", "ticks"}},
		{"resume", []string{"replica"}},
		// Network faults: a partition names its mode, symmetry and the cut
		// paths; a reset its cause; a corrupted frame its path.
		{"partition", []string{"mode", "symmetry", "cut"}},
		{"partition_heal", nil},
		{"connection_reset", []string{"cause", "count"}},
		{"clog", []string{"count"}},
		{"frame_corrupted", []string{"count"}},
		// Disk faults: which replica, which fault.
		{"storage_fault", []string{"replica", "fault", "count"}},
		// The clients' history: who, which request, how it ended.
		{"client_invoke", []string{"client_index", "client", "operation"}},
		{"client_timeout", []string{"client_index", "client", "attempts", "target"}},
		{"client_complete", []string{"client_index", "client", "outcome", "attempts"}},
		// The liveness phase: its core.
		{"phase", []string{"phase", "core"}},
	}
	for _, tc := range cases {
		ls := byKind[tc.kind]
		if len(ls) == 0 {
			t.Errorf("no %q line in the trace of seed %d", tc.kind, faultyTraceSeed)
			continue
		}
		for _, l := range ls {
			for _, f := range tc.fields {
				if _, ok := l[f]; !ok {
					t.Errorf("%q line without %q: %v", tc.kind, f, l)
					break
				}
			}
		}
	}
	// Evictions happen (more clients than slots) and show as indefinite
	// completions with their reason; partitions carry the options' mode.
	indefinite := 0
	for _, l := range byKind["client_complete"] {
		if l["outcome"] == "indefinite" {
			indefinite++
			if l["reason"] == nil {
				t.Errorf("indefinite completion without its eviction reason: %v", l)
			}
		}
	}
	if indefinite == 0 || uint64(indefinite) != r.Indefinite {
		t.Errorf("%d indefinite completions traced, the result counts %d; both must be the same, and nonzero", indefinite, r.Indefinite)
	}
	for _, l := range byKind["partition"] {
		if l["mode"] != "uniform-size" || l["symmetry"] != "symmetric" {
			t.Errorf("partition line %v, want mode uniform-size, symmetric", l)
		}
	}
	// The counters the trace reads agree with the result's.
	if got := len(byKind["crash"]); uint64(got) != r.Crashes {
		t.Errorf("%d crash lines, %d crashes", got, r.Crashes)
	}
	if got := len(byKind["partition"]); uint64(got) != r.Partitions {
		t.Errorf("%d partition lines, %d partitions", got, r.Partitions)
	}
	if got := len(byKind["client_invoke"]); uint64(got) != r.Requests {
		t.Errorf("%d client_invoke lines, %d requests", got, r.Requests)
	}
}

// Tracing is an observer: a traced run has the digest of an untraced one
// (runTick steps the loop one event at a time only to look), and the same
// seed traces the same bytes.
func TestTraceIsDeterministicAndChangesNothing(t *testing.T) {
	for _, o := range []Options{faultyTraceOptions(faultyTraceSeed), Swarm(3), Swarm(1045)} {
		var a, b bytes.Buffer
		ra, rb, plain := Run(o, &a), Run(o, &b), Run(o, nil)
		if ra.Summary() != plain.Summary() {
			t.Errorf("seed %d: traced %s\nuntraced %s", o.Seed, ra.Summary(), plain.Summary())
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) || rb.Digest != ra.Digest {
			t.Errorf("seed %d: two traces differ from byte %d", o.Seed, firstDifference(a.Bytes(), b.Bytes()))
		}
	}
}

// parseTrace reads the trace's JSON lines; each must carry at_ns, never
// going back, and a kind.
func parseTrace(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	last := -1.0
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %d %q: %v", i+1, line, err)
		}
		at, ok := l["at_ns"].(float64)
		if !ok || at < last {
			t.Fatalf("line %d %q: at_ns missing or before %v", i+1, line, last)
		}
		last = at
		if k, ok := l["kind"].(string); !ok || k == "" {
			t.Fatalf("line %d %q: no kind", i+1, line)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		t.Fatal("empty trace")
	}
	return out
}

// Evictions show in the probe table: a seed with more clients than the
// client table's eight slots evicts sessions, some with a request in
// flight, and the probes count exactly what the result counts. A seed with
// fewer clients than slots fires neither probe.
func TestEvictionProbes(t *testing.T) {
	cases := []struct {
		name    string
		clients int
		evicts  bool
	}{
		{"twelve clients for eight slots", 12, true},
		{"four clients for eight slots", 4, false},
	}
	for _, tc := range cases {
		o := Swarm(12)
		o.NoFaults()
		o.Clients, o.Requests, o.Lite = tc.clients, 80, true
		r := Run(o, nil)
		if r.Outcome != Pass {
			t.Fatalf("%s: %s: %s", tc.name, r.Summary(), r.Violation)
		}
		evicted, indefinite := r.Probes["workload: session evicted"], r.Probes["workload: request indefinite"]
		if uint64(evicted) != r.Evictions || uint64(indefinite) != r.Indefinite {
			t.Errorf("%s: probes %d evicted, %d indefinite; result %d, %d", tc.name, evicted, indefinite, r.Evictions, r.Indefinite)
		}
		if (evicted > 0) != tc.evicts || (indefinite > 0) != tc.evicts {
			t.Errorf("%s: %d evictions, %d indefinite; want them to happen: %v", tc.name, evicted, indefinite, tc.evicts)
		}
	}
}

// TestTraceOfTheRollbackNemesis: a run with the rollback nemesis traces
// every step of its rounds as nemesis lines naming a replica and what was
// done, and its splits as partitions of mode "rollback" with their cuts.
func TestTraceOfTheRollbackNemesis(t *testing.T) {
	// How the nemesis lines of a round begin.
	rollbackSteps := []string{"old primary cut off", "bridge cut from its primary", "old primary joined", "leads the joined side", "healed"}
	steps := map[string]int{}
	partitions := 0
	complete := func() bool {
		for _, step := range rollbackSteps {
			if steps[step] == 0 {
				return false
			}
		}
		return true
	}
	// A seed's rounds may end before every step (a view change can make the
	// nemesis give a round up): the first seeds together must show them all.
	for seed := uint64(1); seed <= 8 && !complete(); seed++ {
		o := Swarm(seed)
		o.Replicas, o.Rollback, o.PartitionMode = 5, true, network.PartitionNone
		o.CrashProbability, o.PauseProbability, o.Lite = 0, 0, true
		o.StaleAnswers, o.ViewChangeFaults = false, false // this fixture is the rollback nemesis's
		var trace bytes.Buffer
		if r := Run(o, &trace); r.Outcome != Pass {
			t.Fatalf("the seed must pass to be a fixture: %s: %s", r.Summary(), r.Violation)
		}
		for _, l := range parseTrace(t, trace.Bytes()) {
			switch l["kind"] {
			case "nemesis":
				reason, _ := l["reason"].(string)
				if l["replica"] == nil || !strings.HasPrefix(reason, "rollback: ") {
					t.Fatalf("nemesis line without its replica or reason: %v", l)
				}
				for _, step := range rollbackSteps {
					if strings.HasPrefix(reason, "rollback: "+step) {
						steps[step]++
					}
				}
			case "partition":
				partitions++
				if l["mode"] != "rollback" || l["cut"] == nil {
					t.Fatalf("a partition with the nemesis on is not its split: %v", l)
				}
			}
		}
	}
	for _, step := range rollbackSteps {
		if steps[step] == 0 {
			t.Errorf("no nemesis step %q in the trace (steps: %v)", step, steps)
		}
	}
	if partitions == 0 {
		t.Error("no partition line in the trace")
	}
}
