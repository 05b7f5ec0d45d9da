package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// digestOf is the digest on a run's summary line.
func digestOf(t *testing.T, stdout string) string {
	t.Helper()
	m := regexp.MustCompile(`digest=([0-9a-f]+)`).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("no digest in:\n%s", stdout)
	}
	return m[1]
}

// -write-plan records a run's fault plan with its seed and flags; -plan
// replays it (seed and flags from the plan) to the same digest; the same
// plan with its crashes removed replays twice alike, without crashes.
func TestWritePlanThenReplayIt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.plan")
	args := []string{"-seed", "3", "-rollback=false", "-stale-answers=false", "-view-change-faults=false", "-crash=0.002"}
	out, errOut, code := vopr(t, nil, append(args, "-write-plan", path)...)
	if code != 0 {
		t.Fatalf("recording: exit %d\n%s%s", code, out, errOut)
	}
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(text), "vopr-plan 1\n") || !strings.Contains(string(text), "\nseed 3\n") ||
		!strings.Contains(string(text), "-crash=0.002") || !strings.Contains(string(text), " crash ") {
		t.Fatalf("the plan lacks its header, seed, flags or a crash:\n%.600s", text)
	}
	replayed, errOut, code := vopr(t, nil, "-plan", path)
	if code != 0 || digestOf(t, replayed) != digestOf(t, out) || !strings.Contains(replayed, "plan: firings=") ||
		!strings.Contains(replayed, "suppressed=0 missed=0") {
		t.Fatalf("replay: exit %d, digest %s (recorded %s)\n%s%s", code, digestOf(t, replayed), digestOf(t, out), replayed, errOut)
	}

	var kept []string
	for _, l := range strings.Split(string(text), "\n") {
		if !strings.Contains(l, " crash ") {
			kept = append(kept, l)
		}
	}
	cut := filepath.Join(dir, "cut.plan")
	if err := os.WriteFile(cut, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	a, _, codeA := vopr(t, nil, "-plan", cut)
	b, _, codeB := vopr(t, nil, "-seed", "3", "-plan", cut)
	if codeA != codeB || digestOf(t, a) != digestOf(t, b) || !strings.Contains(a, " crashes=0 ") {
		t.Fatalf("the cut plan: exits %d, %d; digests %s, %s; want equal and no crashes\n%s", codeA, codeB, digestOf(t, a), digestOf(t, b), a)
	}
}

func TestBadPlanUsage(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.plan")
	if err := os.WriteFile(good, []byte("vopr-plan 1\nseed 5\nflags -replicas=3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.plan")
	if err := os.WriteFile(bad, []byte("vopr-plan 1\nseed 5\n10 explode 1 -1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(dir, "nested.plan")
	if err := os.WriteFile(nested, []byte("vopr-plan 1\nseed 5\nflags -plan=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-plan", filepath.Join(dir, "missing.plan")}, "no such file"},
		{[]string{"-plan", bad}, "unknown kind"},
		{[]string{"-plan", good, "-seed", "6"}, "a plan of seed 5, not of -seed 6"},
		{[]string{"-plan", good, "-seeds", "3"}, "replays one run"},
		{[]string{"-plan", nested}, "its flags may not hold"},
	} {
		_, errOut, code := vopr(t, nil, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("vopr %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
