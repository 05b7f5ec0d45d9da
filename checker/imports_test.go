package checker_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckerSharesNoCodeWithTheReplicasLogic: the checker's verdicts never
// come from the replica's state machine, client table or journal rules
// (issue 12 item 1): no non-test file of the checker (or of its
// subpackages) imports replica/metadata, replica/clients or replica/journal.
func TestCheckerSharesNoCodeWithTheReplicasLogic(t *testing.T) {
	banned := []string{"/replica/metadata", "/replica/clients", "/replica/journal"}
	files := 0
	err := filepath.Walk(".", func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			for _, b := range banned {
				if strings.HasSuffix(strings.Trim(imp.Path.Value, `"`), b) {
					t.Errorf("%s imports %s", path, imp.Path.Value)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 5 {
		t.Fatalf("read %d files: the walk is broken", files)
	}
}
