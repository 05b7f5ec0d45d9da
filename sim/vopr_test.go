package sim

import (
	"flag"
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
)

var voprSeeds = flag.Int("vopr.seeds", 0, "how many swarm seeds TestVOPRCampaign runs (0: the default)")

// TestVOPRCampaign runs a short campaign of swarm seeds through Run: every
// seed must pass (converged or explained).
func TestVOPRCampaign(t *testing.T) {
	seeds := 20
	if *voprSeeds > 0 {
		seeds = *voprSeeds
	}
	regressions, err := kernel.ReadSeeds("../seeds", "vopr")
	if err != nil {
		t.Fatal(err)
	}
	for _, reg := range regressions {
		if len(reg.Flags) > 0 {
			continue // replayed with its flags by cmd/vopr's tests
		}
		if r := Run(Swarm(reg.Seed), nil); r.Outcome != Pass {
			t.Errorf("regression %s (seed %d): %s: %s", reg.File, reg.Seed, r.Outcome, r.Violation)
		}
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
