package main

import (
	"strings"
	"testing"
)

func TestShrinkUsage(t *testing.T) {
	out, _, code := vopr(t, nil, "shrink", "-h")
	if code != 0 || !strings.HasPrefix(out, "usage: vopr shrink") {
		t.Fatalf("shrink -h: exit %d, stdout %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"shrink", "-seed", "1", "-budget", "soon"}, "-budget"},
		{[]string{"shrink", "-seed", "1", "-parallel", "0"}, "-parallel"},
		{[]string{"shrink", "-seed", "1", "-seeds", "4"}, "one run"},
		{[]string{"shrink"}, "-seed N"},
		{[]string{"shrink", "-seed", "1", "-budget"}, "needs an argument"},
	} {
		_, errOut, code := vopr(t, nil, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "usage: vopr shrink") {
			t.Errorf("vopr %v: exit %d, stderr %q; want 2, %q and the usage", tc.args, code, errOut, tc.want)
		}
	}
}

// A run that passes has nothing to shrink: exit 1, said so.
func TestShrinkOfAPassingRun(t *testing.T) {
	_, errOut, code := vopr(t, nil, "shrink", "-seed", "1", "-replicas=1", "-requests=10", "-faults=none", "-budget", "10s")
	if code != 1 || !strings.Contains(errOut, "passes: nothing to shrink") {
		t.Fatalf("exit %d, stderr %q; want 1 and \"passes: nothing to shrink\"", code, errOut)
	}
}

// minimalFlags gives back the options it was asked for.
func TestMinimalFlagsRebuildTheOptions(t *testing.T) {
	cfg, _, err := parseArgs([]string{"-seed", "9", "-long"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, _, err := cfg.options(9)
	if err != nil {
		t.Fatal(err)
	}
	o.Replicas, o.Clients, o.CrashProbability, o.Lite = 2, 1, 0, true
	flags := minimalFlags(cfg, o)
	again, _, err := parseArgs(append([]string{"-seed", "9"}, flags...), nil)
	if err != nil {
		t.Fatalf("the flags %v do not parse: %v", flags, err)
	}
	got, _, err := again.options(9)
	if err != nil || got.String() != o.String() {
		t.Fatalf("flags %v rebuild\n%s\nwant\n%s", flags, got.String(), o.String())
	}
	if len(flags) > 8 {
		t.Fatalf("flags %v: more than the knobs changed", flags)
	}
}
