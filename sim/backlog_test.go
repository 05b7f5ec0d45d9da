package sim

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/vsr"
)

// A safety phase that ends with most requests unanswered leaves them to the
// liveness phase, whose budget grows by throughputCollapseTicks for each:
// here a fault-free core gets through 400 requests in far more ticks than
// the configured 500 (which alone would fail it, "the core did not
// converge"), and well within its allowance.
func TestLivenessBudgetGrowsWithTheRequestsLeft(t *testing.T) {
	o := Swarm(7)
	o.NoFaults()
	o.Replicas, o.Clients, o.Requests = 3, 1, 400
	o.SafetyTicksMax, o.LivenessTicksMax = 100, 500
	r := Run(o, nil)
	if r.Outcome != Pass || r.Liveness != LivenessConverged {
		t.Fatalf("%s: %s %s: %s", r.Summary(), r.Outcome, r.Liveness, r.Violation)
	}
	left := r.Probes["liveness: requests left to the phase"]
	if left < 300 {
		t.Fatalf("%d requests left to the liveness phase, want most of the 400 (the test's premise)", left)
	}
	if livenessTicks := int(r.Ticks) - o.SafetyTicksMax; livenessTicks <= o.LivenessTicksMax+settleTicksFor(o) {
		t.Fatalf("the liveness phase took %d ticks: within the configured %d, so the allowance was not needed (the test's premise)",
			livenessTicks, o.LivenessTicksMax)
	}
}

// settleTicksFor is the settled stretch after convergence (vopr.settleTicks).
func settleTicksFor(Options) int {
	t := vsr.DefaultTimeouts().NormalHeartbeatTicks
	return 3 * (t + t/2)
}
