package canary

import (
	"os"
	"strings"
	"testing"
)

// TestRunScriptMatchesSuite keeps run.sh's table (what `make canary` runs)
// and Suite (what the Go driver runs) in step: the same tags in the same
// order, with the same exit status and expected violations. It also checks
// that every canary has its tag file (gentags.sh).
func TestRunScriptMatchesSuite(t *testing.T) {
	b, err := os.ReadFile("run.sh")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "CANARIES='\n")
	if start < 0 {
		t.Fatal("run.sh has no CANARIES table")
	}
	s = s[start+len("CANARIES='\n"):]
	s = s[:strings.Index(s, "'")]
	var rows [][]string
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	suite := Suite()
	if len(rows) != len(suite) {
		t.Fatalf("run.sh lists %d canaries, Suite %d", len(rows), len(suite))
	}
	for i, c := range suite {
		f := rows[i]
		if len(f) < 3 {
			t.Errorf("run.sh row %d: %q", i, f)
			continue
		}
		expect := strings.Join(f[2:], " ")
		if f[0] != c.Tag || f[1] != c.Exits() || expect != c.Expected() {
			t.Errorf("run.sh row %d is %s %s %q; Suite has %s %s %q", i, f[0], f[1], expect, c.Tag, c.Exits(), c.Expected())
		}
		if _, err := os.Stat("tag_" + strings.TrimPrefix(c.Tag, "canary_") + ".go"); err != nil {
			t.Errorf("%s has no tag file: run gentags.sh", c.Tag)
		}
		if c.Site == "" || c.Breaks == "" || len(c.Expect) == 0 {
			t.Errorf("%s: site, what it breaks and the expected violations must be filled in", c.Tag)
		}
	}
}

// TestEverySwitchIsGenerated keeps bug/bugs.txt, the generated switches
// and the suite in step: every canary of the suite has a switch, and every
// switch both of its files (gentags.sh).
func TestEverySwitchIsGenerated(t *testing.T) {
	b, err := os.ReadFile("bug/bugs.txt")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 || !strings.HasPrefix(f[0], "canary_") {
			t.Fatalf("bugs.txt line %q: want a tag and a switch name", line)
		}
		listed[f[0]] = true
		for _, side := range []string{"on", "off"} {
			name := "bug/switch_" + strings.TrimPrefix(f[0], "canary_") + "_" + side + ".go"
			src, err := os.ReadFile(name)
			if err != nil || !strings.Contains(string(src), "const "+f[1]+" = ") {
				t.Fatalf("%s does not declare %s (run ./gentags.sh): %v", name, f[1], err)
			}
		}
	}
	for _, c := range Suite() {
		if !listed[c.Tag] {
			t.Fatalf("canary %s has no switch in bug/bugs.txt", c.Tag)
		}
	}
}
