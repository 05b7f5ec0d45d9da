package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMutantsUsage(t *testing.T) {
	out, _, code := vopr(t, nil, "mutants", "-h")
	if code != 0 || !strings.HasPrefix(out, "usage: vopr mutants") {
		t.Fatalf("mutants -h: exit %d, stdout %q", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"mutants", "-n", "-1"}, "-n -1"},
		{[]string{"mutants", "-seeds", "0"}, "-seeds 0"},
		{[]string{"mutants", "-parallel", "0"}, "-parallel 0"},
		{[]string{"mutants", "-seed", "x"}, "-seed \"x\""},
		{[]string{"mutants", "-vopr-flags", "-seeds 4"}, "the campaign's own"},
		{[]string{"mutants", "-write", "d"}, "exactly one -mutant"},
		{[]string{"mutants", "-first-seed", "18446744073709551615", "-seeds", "2"}, "passes the last u64"},
		{[]string{"mutants", "stray"}, "unexpected argument"},
		{[]string{"mutants", "-pkg", "replica/nope", "-list"}, "no mutants"},
		{[]string{"mutants", "-mutant", "replica/x.go:1:1:logical", "-list"}, "no such mutant"},
		{[]string{"mutants", "-bogus"}, "-bogus"},
	} {
		_, errOut, code := vopr(t, nil, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("vopr %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// -list draws the same sample from the same seed, spread over the
// packages asked for, and runs nothing.
func TestMutantsListIsTheSample(t *testing.T) {
	args := []string{"mutants", "-seed", "5", "-n", "12", "-pkg", "replica/vsr,replica/clients", "-list"}
	one, errOut, code := vopr(t, nil, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	two, _, _ := vopr(t, nil, args...)
	if one != two {
		t.Fatal("one seed listed two samples")
	}
	lines := strings.Split(strings.TrimSpace(one), "\n")
	var listed []string
	for _, l := range lines {
		if strings.HasPrefix(l, "replica/") {
			listed = append(listed, l)
		}
	}
	if len(listed) != 12 || !strings.HasPrefix(lines[0], "seed=5") || !strings.Contains(one, "census: ") {
		t.Fatalf("listed %d mutants, want 12 after the seed and census:\n%s", len(listed), one)
	}
	vsr, clients := 0, 0
	for _, l := range listed {
		switch {
		case strings.HasPrefix(l, "replica/vsr/"):
			vsr++
		case strings.HasPrefix(l, "replica/clients/"):
			clients++
		default:
			t.Errorf("a mutant outside -pkg: %s", l)
		}
	}
	if vsr == 0 || clients == 0 || vsr < clients {
		t.Errorf("vsr %d, clients %d: want both, vsr (the larger) more", vsr, clients)
	}
	other, _, _ := vopr(t, nil, "mutants", "-seed", "6", "-n", "12", "-pkg", "replica/vsr,replica/clients", "-list")
	if other == one {
		t.Error("seeds 5 and 6 listed the same sample")
	}
}

// -write puts one mutant's file and overlay where asked and says how to
// build and run that VOPR.
func TestMutantsWrite(t *testing.T) {
	list, _, _ := vopr(t, nil, "mutants", "-seed", "1", "-n", "1", "-pkg", "replica/clients", "-list")
	var id string
	for _, l := range strings.Split(list, "\n") {
		if strings.HasPrefix(l, "replica/clients/") {
			id = strings.Fields(l)[0]
		}
	}
	if id == "" {
		t.Fatalf("no mutant listed:\n%s", list)
	}
	dir := t.TempDir()
	out, errOut, code := vopr(t, nil, "mutants", "-mutant", id, "-write", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	overlay := filepath.Join(dir, "overlay.json")
	if !strings.Contains(out, "go build -overlay "+overlay) || !strings.Contains(out, "go test -overlay "+overlay+" ./replica/clients") {
		t.Fatalf("no build and test commands:\n%s", out)
	}
	b, err := os.ReadFile(overlay)
	if err != nil || !strings.Contains(string(b), "replica/clients/") {
		t.Fatalf("overlay %s: %v %s", overlay, err, b)
	}
}
