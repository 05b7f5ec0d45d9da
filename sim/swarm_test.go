package sim

import (
	"math"
	"testing"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica"
)

// swarmSeeds is how many draws the swarm tests look at: enough that a value
// a quarter of the seeds take, or a 5% tail of a range, shows up thousands of
// times over, and Swarm is cheap (no run).
const swarmSeeds = 4000

func swarmDraws(t *testing.T) []Options {
	t.Helper()
	draws := make([]Options, swarmSeeds)
	for s := range draws {
		o := Swarm(uint64(s))
		if err := o.Check(); err != nil {
			t.Fatalf("Swarm(%d) draws options Check refuses: %v", s, err)
		}
		if o.Seed != uint64(s) || o != Swarm(uint64(s)) {
			t.Fatalf("Swarm(%d) is not a function of its seed", s)
		}
		draws[s] = o
	}
	return draws
}

// Every ranged knob stays inside the range Swarm documents for it and spans
// it: over many seeds its draws come within 5% of both ends. A draw that
// collapsed (a knob stuck at one value, a range cut short by a refactoring)
// would leave part of the world unexplored, silently.
func TestSwarmSpansEveryRange(t *testing.T) {
	draws := swarmDraws(t)
	cases := []struct {
		name   string
		lo, hi float64 // the documented range, [lo, hi]
		get    func(o *Options) float64
	}{
		{"replicas", 1, 6, func(o *Options) float64 { return float64(o.Replicas) }},
		{"clients", 1, 12, func(o *Options) float64 { return float64(o.Clients) }},
		{"requests", 20, 199, func(o *Options) float64 { return float64(o.Requests) }},
		{"delay-min-ns", 0, 2_000_000, func(o *Options) float64 { return float64(o.DelayMinNs) }},
		{"delay-mean-ns", 100_000, 10_100_000, func(o *Options) float64 { return float64(o.DelayMeanNs) }},
		{"unpartition", 0.005, 0.055, func(o *Options) float64 { return o.UnpartitionProbability }},
		{"clog-mean-ns", 100_000_000, 5_000_000_000, func(o *Options) float64 { return float64(o.ClogDurationMeanNs) }},
		{"read-latency-ns", 10_000, 510_000, func(o *Options) float64 { return float64(o.ReadLatencyMeanNs) }},
		{"write-latency-ns", 10_000, 1_010_000, func(o *Options) float64 { return float64(o.WriteLatencyMeanNs) }},
		{"sync-latency-ns", 100_000, 5_100_000, func(o *Options) float64 { return float64(o.SyncLatencyMeanNs) }},
		{"crash-torn", 0.2, 0.8, func(o *Options) float64 { return o.CrashTornProbability }},
		// crash-lost is drawn within what crash-torn leaves: its share of
		// that remainder spans [0, 1].
		{"crash-lost share", 0, 1, func(o *Options) float64 { return o.CrashLostProbability / (1 - o.CrashTornProbability) }},
		{"restart-ticks", 10, 1009, func(o *Options) float64 { return float64(o.RestartDelayMeanTicks) }},
		{"pause-ticks", 10, 309, func(o *Options) float64 { return float64(o.PauseMeanTicks) }},
		{"clock-offset-ns", 0, 5_000_000_000, func(o *Options) float64 { return float64(o.ClockOffsetMaxNs) }},
		{"clock-drift-ppb", 0, 200_000, func(o *Options) float64 { return float64(o.ClockDriftMaxPPB) }},
		// Log-uniform over [10, 1000]: its logarithm spans [1, 3].
		{"log10 crash-io-factor", 1, 3, func(o *Options) float64 { return math.Log10(o.CrashIOFactor) }},
	}
	for _, tc := range cases {
		low, high := math.Inf(1), math.Inf(-1)
		for i := range draws {
			v := tc.get(&draws[i])
			if v < tc.lo || v > tc.hi {
				t.Errorf("%s: seed %d draws %v, outside [%v, %v]", tc.name, i, v, tc.lo, tc.hi)
				break
			}
			low, high = min(low, v), max(high, v)
		}
		if tail := (tc.hi - tc.lo) / 20; low > tc.lo+tail || high < tc.hi-tail {
			t.Errorf("%s: draws span [%v, %v] of [%v, %v]", tc.name, low, high, tc.lo, tc.hi)
		}
	}
}

// The discrete knobs take every value they document: each replica count
// 1..6, each partition mode and symmetry, auth on and off, a rotation
// window (only with auth) and none; clients sometimes more than the client
// table's slots, so evictions happen, and sometimes not; the crash
// multiplier an integer (so the printed options reproduce it).
func TestSwarmTakesEveryValue(t *testing.T) {
	draws := swarmDraws(t)
	slots := replica.SimulationProfile().ClientTableMax
	count := func(pred func(o *Options) bool) int {
		n := 0
		for i := range draws {
			if pred(&draws[i]) {
				n++
			}
		}
		return n
	}
	type value struct {
		name string
		pred func(o *Options) bool
	}
	var values []value
	for r := 1; r <= 6; r++ {
		values = append(values, value{"replicas=" + string(rune('0'+r)), func(o *Options) bool { return o.Replicas == r }})
	}
	for m := network.PartitionNone; m <= network.PartitionPrimary; m++ {
		values = append(values, value{"partition-mode=" + partitionModeName(m), func(o *Options) bool { return o.PartitionMode == m }})
	}
	for s := network.PartitionSymmetric; s <= network.PartitionOneWay; s++ {
		values = append(values, value{"partition-symmetry=" + partitionSymmetryName(s), func(o *Options) bool { return o.PartitionSymmetry == s }})
	}
	values = append(values,
		value{"clients above the client table's slots", func(o *Options) bool { return o.Clients > slots }},
		value{"clients within the client table's slots", func(o *Options) bool { return o.Clients <= slots }},
		value{"auth on", func(o *Options) bool { return o.Auth }},
		value{"auth off", func(o *Options) bool { return !o.Auth }},
		value{"auth on with a rotation window", func(o *Options) bool { return o.Auth && o.RotationWindow }},
		value{"auth on without a rotation window", func(o *Options) bool { return o.Auth && !o.RotationWindow }},
		value{"repair from any peer", func(o *Options) bool { return o.RepairAnyPeer }},
		value{"repair from the primary first", func(o *Options) bool { return !o.RepairAnyPeer }},
	)
	for r := 3; r <= 6; r++ {
		values = append(values, value{"the rollback nemesis with replicas=" + string(rune('0'+r)), func(o *Options) bool { return o.Rollback && o.Replicas == r }})
	}
	for _, v := range values {
		if n := count(v.pred); n == 0 {
			t.Errorf("%s: never drawn in %d seeds", v.name, swarmSeeds)
		}
	}
	// What must never be drawn.
	never := []value{
		{"a rotation window without auth", func(o *Options) bool { return o.RotationWindow && !o.Auth }},
		{"a crash multiplier that is not an integer", func(o *Options) bool { return o.CrashIOFactor != math.Round(o.CrashIOFactor) }},
		{"crash torn + lost above 1", func(o *Options) bool { return o.CrashTornProbability+o.CrashLostProbability > 1 }},
		{"lite (the swarm runs both phases)", func(o *Options) bool { return o.Lite }},
		{"the rollback nemesis beside random partitions", func(o *Options) bool { return o.Rollback && o.PartitionMode != network.PartitionNone }},
		{"the rollback nemesis with fewer than 3 replicas", func(o *Options) bool { return o.Rollback && o.Replicas < 3 }},
		{"budgets other than 20000 safety and 60000 liveness ticks", func(o *Options) bool {
			return o.SafetyTicksMax != 20_000 || o.LivenessTicksMax != 60_000
		}},
	}
	for _, v := range never {
		if n := count(v.pred); n > 0 {
			t.Errorf("%s: drawn in %d seeds", v.name, n)
		}
	}
}

// Every fault rate is off (exactly 0) in about a quarter of the seeds and
// on in the rest, from near 0 up to near its maximum: fault-free and harsh
// worlds both occur, for each fault on its own.
func TestSwarmFaultRatesAreSometimesOff(t *testing.T) {
	draws := swarmDraws(t)
	cases := []struct {
		name    string
		maxRate float64
		get     func(o *Options) float64
	}{
		{"reset", 0.005, func(o *Options) float64 { return o.ResetProbability }},
		{"partition", 0.005, func(o *Options) float64 { return o.PartitionProbability }},
		{"clog", 0.0005, func(o *Options) float64 { return o.ClogProbability }},
		{"corrupt", 0.001, func(o *Options) float64 { return o.CorruptProbability }},
		{"latent", 0.01, func(o *Options) float64 { return o.LatentProbability }},
		{"corrupt-sector", 0.01, func(o *Options) float64 { return o.CorruptSectorProbability }},
		{"misdirect", 0.005, func(o *Options) float64 { return o.MisdirectProbability }},
		{"crash", 0.0005, func(o *Options) float64 { return o.CrashProbability }},
		{"pause", 0.0002, func(o *Options) float64 { return o.PauseProbability }},
		{"repartition", 0.75, func(o *Options) float64 { return o.RepartitionProbability }},
	}
	for _, tc := range cases {
		off, high := 0, 0.0
		low := math.Inf(1)
		for i := range draws {
			v := tc.get(&draws[i])
			switch {
			case v < 0 || v > tc.maxRate:
				t.Fatalf("%s: seed %d draws %v, outside [0, %v]", tc.name, i, v, tc.maxRate)
			case v == 0:
				off++
			default:
				low, high = min(low, v), max(high, v)
			}
		}
		// A quarter off: 1000 of 4000 expected, with a standard deviation
		// near 27, so [800, 1200] fails only when the draw changed.
		if off < swarmSeeds/5 || off > swarmSeeds*3/10 {
			t.Errorf("%s: off in %d of %d seeds, want about a quarter", tc.name, off, swarmSeeds)
		}
		if low > tc.maxRate/20 || high < tc.maxRate*19/20 {
			t.Errorf("%s: when on, drawn in [%v, %v], want to span (0, %v]", tc.name, low, high, tc.maxRate)
		}
	}
}

// Performance is one fixed world, not a swarm draw: the same options every
// call, every fault off, the safety phase only, so that its run shows no
// fault and no view change, and the protocol-cost figure it prints moves
// only when the protocol does.
func TestPerformanceIsFixedAndFaultFree(t *testing.T) {
	o := Performance()
	if o != Performance() {
		t.Fatal("Performance differs between calls")
	}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	faultFree := o
	faultFree.NoFaults()
	if faultFree != o || !o.Lite || o.Auth || o.PartitionMode != network.PartitionNone {
		t.Errorf("Performance is not the fault-free safety-only world: %s", o.String())
	}
	r := Run(o, nil)
	if r.Outcome != Pass || r.Crashes+r.Restarts+r.Pauses+r.Partitions+r.Resets+r.Clogs+r.Corruptions+r.StorageFaults+r.ViewChanges != 0 {
		t.Errorf("the performance run is not quiet: %s: %s", r.Summary(), r.Violation)
	}
	// Every request is answered: the metadata ones commit on the metadata
	// plane, the sends and consumer offsets on the partition planes (the
	// polls on neither), and messages commit. Beyond the requests and a
	// Register per client, the clients' read links log in where they read.
	if want := uint64(o.Requests + o.Clients); r.Requests < want || r.Replies != r.Requests || r.Indefinite != 0 || r.Commits == 0 || r.Messages == 0 || r.Polls == 0 {
		t.Errorf("%d requests (want %d, one Register per client, and one per read link), %d replies, %d commits, %d messages, %d polls, %d indefinite",
			r.Requests, want, r.Replies, r.Commits, r.Messages, r.Polls, r.Indefinite)
	}
}
