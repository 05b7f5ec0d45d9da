package main

import (
	"bytes"
	"flag"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
)

// These tests run the real simulator (sim.Run) through the command.

// TestRealSeedDeterministic: `vopr -seed 1` twice prints the same bytes.
func TestRealSeedDeterministic(t *testing.T) {
	first, stderr, code := vopr(t, nil, "-seed", "1")
	if code == 2 {
		t.Fatalf("usage error: %s", stderr)
	}
	second, _, code2 := vopr(t, nil, "-seed", "1")
	if first != second || code != code2 {
		t.Fatalf("two runs of seed 1 differ (exit %d, %d):\n%s\n%s", code, code2, first, second)
	}
	ls := lines(first)
	if ls[0] != "seed=1" || !strings.HasPrefix(ls[len(ls)-1], "seed=1 result=") || !strings.Contains(ls[len(ls)-1], " digest=") {
		t.Errorf("output\n%s", first)
	}
}

// TestRealCampaignParallel: a campaign prints the same per-seed summary
// lines (indeed the same bytes) on one goroutine as on two.
func TestRealCampaignParallel(t *testing.T) {
	serial, _, code1 := vopr(t, nil, "-seed", "1", "-seeds", "3", "-parallel", "1", "-keep-going")
	parallel, _, code2 := vopr(t, nil, "-seed", "1", "-seeds", "3", "-parallel", "2", "-keep-going")
	if code1 != code2 || serial != parallel {
		t.Fatalf("-parallel 1 (exit %d)\n%s\n-parallel 2 (exit %d)\n%s", code1, serial, code2, parallel)
	}
	var summaries []string
	for _, l := range lines(serial) {
		if strings.Contains(l, " result=") && strings.HasPrefix(l, "seed=") {
			summaries = append(summaries, l)
		}
	}
	if len(summaries) != 3 || !strings.HasPrefix(summaries[0], "seed=1 ") || !strings.HasPrefix(summaries[2], "seed=3 ") {
		t.Errorf("summaries\n%s", strings.Join(summaries, "\n"))
	}
	// The campaign's summary line of seed 1 is that of the single run.
	single, _, _ := vopr(t, nil, "-seed", "1")
	if sl := lines(single); !slices.Contains(summaries, sl[len(sl)-1]) {
		t.Errorf("single run's summary %q not among the campaign's", sl[len(sl)-1])
	}
	// -json: one valid object per seed.
	js, _, _ := vopr(t, nil, "-seed", "1", "-seeds", "3", "-parallel", "2", "-keep-going", "-json")
	seedLines, records := splitJSON(lines(js))
	if len(records) != 2 {
		t.Errorf("campaign records %q", records)
	}
	for _, l := range seedLines {
		keys, _ := jsonKeyOrder(t, []byte(l), "")
		if !slices.Equal(keys, jsonKeys) {
			t.Errorf("keys %v", keys)
		}
	}
	if n := bytes.Count([]byte(js), []byte("\n")); n != 5 {
		t.Errorf("%d JSON lines", n)
	}
}

// TestRegressionSeedsWithFlags replays every VOPR regression seed that
// needs knob flags through the command, exactly as its file says
// (sim's TestVOPRCampaign replays those without flags).
func TestRegressionSeedsWithFlags(t *testing.T) {
	regressions, err := kernel.ReadSeeds("../../seeds", "vopr")
	if err != nil {
		t.Fatal(err)
	}
	replayed := 0
	for _, reg := range regressions {
		if len(reg.Flags) == 0 {
			continue
		}
		args := append([]string{"-seed", strconv.FormatUint(reg.Seed, 10)}, reg.Flags...)
		out, stderr, code := vopr(t, nil, args...)
		if code != 0 {
			t.Errorf("regression %s: vopr %s: exit %d\n%s%s", reg.File, strings.Join(args, " "), code, out, stderr)
		}
		replayed++
	}
	if replayed == 0 {
		t.Fatal("no regression seed with flags: this test replays nothing")
	}
}

var longSeeds = flag.Bool("vopr.long", false, "replay the long-run regression seeds (seeds/*.seed with test: vopr-long; minutes of CPU each)")

// TestLongRegressionSeeds replays every long-run regression seed through
// the command, as its file says; each must pass. They take minutes, so
// plain go test skips them: the nightly job replays them, and
// go test ./cmd/vopr -run TestLongRegressionSeeds -vopr.long does too.
func TestLongRegressionSeeds(t *testing.T) {
	regressions, err := kernel.ReadSeeds("../../seeds", "vopr-long")
	if err != nil {
		t.Fatal(err)
	}
	if len(regressions) == 0 {
		t.Fatal("no long-run regression seed: this test replays nothing")
	}
	if !*longSeeds {
		t.Skipf("%d long-run seeds: replayed with -vopr.long", len(regressions))
	}
	for _, reg := range regressions {
		args := append([]string{"-seed", strconv.FormatUint(reg.Seed, 10)}, reg.Flags...)
		out, stderr, code := vopr(t, nil, args...)
		if code != 0 {
			t.Errorf("regression %s: vopr %s: exit %d\n%s%s", reg.File, strings.Join(args, " "), code, out, stderr)
		}
	}
}
