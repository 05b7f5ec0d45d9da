package plan

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestPlanRoundTrips(t *testing.T) {
	p := Plan{Seed: 42, Flags: []string{"-long", "-replicas=3"}, Firings: []Firing{
		{AtNs: 10_000_000, Site: Site{Kind: Crash, A: 2, B: -1}, Args: "222"},
		{AtNs: 10_000_000, Chance: 3, Site: Site{Kind: Reset, A: 1, B: 4}},
		{AtNs: 20_000_000, Site: Site{Kind: Partition, A: -1, B: -1}, Args: "010"},
	}}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Seed != p.Seed || strings.Join(got.Flags, " ") != strings.Join(p.Flags, " ") || len(got.Firings) != len(p.Firings) {
		t.Fatalf("read back %+v, want %+v", got, p)
	}
	for i := range p.Firings {
		if got.Firings[i] != p.Firings[i] {
			t.Errorf("firing %d: read back %+v, want %+v", i, got.Firings[i], p.Firings[i])
		}
	}
}

func TestReadRejectsWithTheRuleBroken(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"no header", "seed 1\n", "header"},
		{"no seed", "vopr-plan 1\n", "seed"},
		{"bad seed", "vopr-plan 1\nseed x\n", "seed"},
		{"unknown kind", "vopr-plan 1\nseed 1\n5 explode 1 -1\n", "unknown kind"},
		{"short firing", "vopr-plan 1\nseed 1\n5 crash 1\n", "fields"},
		{"bad time", "vopr-plan 1\nseed 1\n-5 crash 1 -1\n", "not a time"},
		{"bad chance", "vopr-plan 1\nseed 1\n5+x crash 1 -1\n", "chance"},
		{"bad node", "vopr-plan 1\nseed 1\n5 crash one -1\n", "integers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.text))
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Read = %v, want an ErrFormat naming %q", err, tc.want)
			}
		})
	}
}

// A replaying gate fires what the plan holds at the site's chance of its
// instant (or its first chance after, within the window), once; it
// suppresses drawn firings the plan lacks and counts the firings that found
// no chance.
func TestReplayerFiresThePlanAndOnlyThePlan(t *testing.T) {
	site := Site{Kind: Reset, A: 1, B: 2}
	other := Site{Kind: Reset, A: 2, B: 1}
	g := Replayer(Plan{Firings: []Firing{
		{AtNs: 100, Chance: 1, Site: site},
		{AtNs: 200, Site: site, Args: "x"},
		{AtNs: 300, Site: site},
	}}, 50)
	steps := []struct {
		atNs  int64
		site  Site
		drawn bool
		fire  bool
	}{
		{100, site, true, false},   // chance 0 of 100: the plan's is chance 1
		{100, other, false, false}, // another site's chance does not count
		{100, site, false, true},   // chance 1: fires though not drawn
		{100, site, false, false},  // consumed
		{230, site, false, true},   // the 200 firing, first chance within its window
		{400, site, false, false},  // the 300 firing's window passed: missed
		{401, site, true, false},   // drawn, not in the plan: suppressed
	}
	for i, s := range steps {
		if _, fire := g.Fire(s.atNs, s.site, s.drawn); fire != s.fire {
			t.Fatalf("step %d (%+v): fire %v, want %v", i, s, fire, s.fire)
		}
	}
	if _, suppressed, missed := g.Stats(); suppressed != 2 || missed != 1 {
		t.Fatalf("suppressed %d, missed %d; want 2 and 1", suppressed, missed)
	}
	var none *Gate
	if _, fire := none.Fire(1, site, true); !fire || none.Replaying() {
		t.Fatal("a nil gate must let the draw decide")
	}
}

func TestDueReturnsScheduledFiringsOnce(t *testing.T) {
	g := Replayer(Plan{Firings: []Firing{
		{AtNs: 20, Site: Site{Kind: Clog, A: 1, B: 2}, Args: "5"},
		{AtNs: 10, Site: Site{Kind: Clog, A: 2, B: 1}, Args: "5"},
		{AtNs: 10, Site: Site{Kind: Crash, A: 1, B: -1}},
	}}, 10)
	if got := g.Due(5, Clog); len(got) != 0 {
		t.Fatalf("due at 5: %v", got)
	}
	if got := g.Due(15, Clog); len(got) != 1 || got[0].Site.A != 2 {
		t.Fatalf("due at 15: %v, want the clog of 2>1", got)
	}
	if got := g.Due(30, Clog); len(got) != 1 || got[0].Site.A != 1 {
		t.Fatalf("due at 30: %v, want the clog of 1>2 alone", got)
	}
	if got := g.Due(40, Clog); len(got) != 0 {
		t.Fatalf("due at 40: %v, want none left", got)
	}
}
