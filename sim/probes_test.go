package sim

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// probeSites returns every probe name a call site in the replica and the
// harness reports: the literal of each probe("...") call and each
// Probes["..."] count, and the rollback nemesis's names.
func probeSites(t *testing.T) map[string]bool {
	t.Helper()
	call := regexp.MustCompile(`(?:\bprobe\(|Probes\[)"((?:[^"\\]|\\.)*)"`)
	rollback := regexp.MustCompile(`return "(rollback: (?:[^"\\]|\\.)*)"`)
	sites := map[string]bool{}
	for _, root := range []string{"../replica", "."} {
		err := filepath.Walk(root, func(path string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range call.FindAllStringSubmatch(string(b), -1) {
				sites[m[1]] = true
			}
			if filepath.Base(path) == "rollback.go" {
				for _, m := range rollback.FindAllStringSubmatch(string(b), -1) {
					sites[m[1]] = true
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return sites
}

// TestProbeCatalogueMatchesTheCallSites: every probe a call site reports
// is declared once in the catalogue (canary probes aside), and every
// declaration has a call site.
func TestProbeCatalogueMatchesTheCallSites(t *testing.T) {
	sites := probeSites(t)
	if len(sites) < 50 {
		t.Fatalf("found only %d probe call sites: the scan is broken", len(sites))
	}
	catalogue := ProbeCatalogue()
	seen := map[string]bool{}
	for _, d := range catalogue {
		if seen[d.Name] {
			t.Errorf("probe %q declared twice", d.Name)
		}
		seen[d.Name] = true
		if d.Meaning == "" || d.Scenario == "" {
			t.Errorf("probe %q has no meaning or scenario", d.Name)
		}
	}
	used := map[string]bool{}
	for name := range sites {
		if strings.HasPrefix(name, "canary: ") {
			continue
		}
		d, ok := declaredProbe(catalogue, name)
		if !ok {
			t.Errorf("probe %q is reported but not declared in ProbeCatalogue", name)
			continue
		}
		used[d.Name] = true
	}
	for _, d := range catalogue {
		if !used[d.Name] && d.Name != "fault: " {
			t.Errorf("probe %q is declared but no call site reports it", d.Name)
		}
	}
}

// TestNeverFired: the declared probes no fired name counts for, a
// partition group's consensus probe counting for its declaration.
func TestNeverFired(t *testing.T) {
	all := len(ProbeCatalogue())
	if got := len(NeverFired(nil)); got != all {
		t.Fatalf("nothing fired: %d never fired, want all %d", got, all)
	}
	fired := map[string]int{"partition plane: prepare gap": 2, "forwarded register not accepted: Canceled": 1, "fault: crash": 3}
	never := NeverFired(fired)
	if len(never) != all-3 {
		t.Fatalf("three fired: %d never fired, want %d", len(never), all-3)
	}
	for _, d := range never {
		if d.Name == "prepare gap" || d.Name == "fault: " {
			t.Fatalf("%q counted as never fired", d.Name)
		}
	}
}
