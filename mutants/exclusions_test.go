package mutants

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The tree's exclusion file parses, gives every line a reason, and every
// line still excuses some mutant: a line the code moved away from is
// stale, and must go or be redone.
func TestTheTreesExclusionsAreLive(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	root, err := FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "mutants", "exclusions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := ParseExclusions("exclusions.txt", data)
	if err != nil {
		t.Fatal(err)
	}
	src, err := Load(goCmd, root, "./replica/...")
	if err != nil {
		t.Fatal(err)
	}
	keep, _ := PackageFilter("replica/...")
	c, err := Enumerate(src, keep, ex)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Stale {
		t.Errorf("exclusions.txt:%d matches no mutant: %s", s.LineNo, s)
	}
	if len(c.Mutants) < 5000 {
		t.Errorf("only %d mutants left: an exclusion line excuses far too much", len(c.Mutants))
	}
}
