package sim

import (
	"flag"
	"testing"
)

var voprSeeds = flag.Int("vopr.seeds", 0, "how many swarm seeds TestVOPRCampaign runs (0: the default)")

// TestVOPRCampaign runs a short campaign of swarm seeds through Run: every
// seed must pass (converged or explained).
func TestVOPRCampaign(t *testing.T) {
	seeds := 20
	if *voprSeeds > 0 {
		seeds = *voprSeeds
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		o := Swarm(seed)
		r := Run(o, nil)
		t.Logf("%s", r.Summary())
		if r.Outcome != Pass {
			t.Errorf("seed %d: %s: %s\n%s", seed, r.Outcome, r.Violation, joinLines(r.Evidence))
		}
	}
}

func joinLines(lines []string) string {
	s := ""
	for _, l := range lines {
		s += "  " + l + "\n"
	}
	return s
}
