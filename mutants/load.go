package mutants

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Source is the code mutants are drawn from: the module's root, and each
// file's bytes by its path in the module.
type Source struct {
	Root  string            // the module's directory, absolute
	Files map[string][]byte // module-relative path -> contents
	Pkgs  []Package         // in path order
}

// Package is one package of the source: its directory in the module, its
// import path and its non-test Go files (module-relative, sorted).
type Package struct {
	Dir        string
	ImportPath string
	Files      []string
}

// FindRoot returns the directory of the go.mod at or above dir.
func FindRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod at or above %s: run vopr mutants in the vopr source tree (or give -dir)", abs)
		}
	}
}

// Load lists the packages pattern matches under root (go list, so build
// constraints are the default build's) and reads their non-test files.
func Load(goCmd, root, pattern string) (*Source, error) {
	cmd := exec.Command(goCmd, "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", pattern)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s: %v: %s", pattern, err, strings.TrimSpace(stderr.String()))
	}
	src := &Source{Root: root, Files: map[string][]byte{}}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("go list: unexpected line %q", line)
		}
		rel, err := filepath.Rel(root, f[1])
		if err != nil || strings.HasPrefix(rel, "..") {
			return nil, fmt.Errorf("package %s at %s is outside the module at %s", f[0], f[1], root)
		}
		p := Package{Dir: filepath.ToSlash(rel), ImportPath: f[0]}
		for _, name := range strings.Fields(f[2]) {
			file := path.Join(p.Dir, name)
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
			if err != nil {
				return nil, err
			}
			src.Files[file] = b
			p.Files = append(p.Files, file)
		}
		sort.Strings(p.Files)
		src.Pkgs = append(src.Pkgs, p)
	}
	if len(src.Pkgs) == 0 {
		return nil, errors.New("go list " + pattern + ": no packages")
	}
	sort.Slice(src.Pkgs, func(i, j int) bool { return src.Pkgs[i].Dir < src.Pkgs[j].Dir })
	return src, nil
}

// Census is every mutant of a source, and what was not drawn.
type Census struct {
	Mutants  []Mutant       // in package, file and span order
	Skipped  Skipped        // sites skipped by Generate's rules
	Excluded map[string]int // mutants an exclusion line matched, by reason
	// Stale lists the exclusion lines that matched no mutant: the code
	// they excuse changed, and the line should go or be redone.
	Stale []Exclusion
}

// canaryHelper reports whether a file holds only what canaries run: the
// replica's canary.go helpers.
func canaryHelper(file string) bool { return path.Base(file) == "canary.go" }

// Enumerate generates every mutant of the packages keep accepts, less
// those ex excludes.
func Enumerate(src *Source, keep func(pkgDir string) bool, ex []Exclusion) (*Census, error) {
	c := &Census{Skipped: Skipped{}, Excluded: map[string]int{}}
	used := make([]bool, len(ex))
	for _, p := range src.Pkgs {
		if !keep(p.Dir) {
			continue
		}
		for _, file := range p.Files {
			if canaryHelper(file) {
				c.Skipped[RuleCanary]++
				continue
			}
			ms, skipped, err := Generate(p.Dir, file, src.Files[file])
			if err != nil {
				return nil, err
			}
			for rule, n := range skipped {
				c.Skipped[rule] += n
			}
			for _, m := range ms {
				if i := matchExclusion(ex, &m); i >= 0 {
					used[i] = true
					c.Excluded[ex[i].Reason]++
					continue
				}
				c.Mutants = append(c.Mutants, m)
			}
		}
	}
	for i, u := range used {
		if !u && keep(exclusionPkg(ex[i].File)) {
			c.Stale = append(c.Stale, ex[i])
		}
	}
	return c, nil
}

func exclusionPkg(file string) string {
	if strings.HasSuffix(file, "/*") || strings.HasSuffix(file, "/...") {
		return strings.TrimSuffix(strings.TrimSuffix(file, "/*"), "/...")
	}
	return path.Dir(file)
}

// PackageFilter turns a -pkg value into a filter on package directories:
// comma-separated directories (replica/vsr), each matching itself, or
// ending in /... and matching every package below it. Empty keeps all.
func PackageFilter(spec string) (func(string) bool, error) {
	if strings.TrimSpace(spec) == "" {
		return func(string) bool { return true }, nil
	}
	var exact, prefixes []string
	for _, s := range strings.Split(spec, ",") {
		s = strings.Trim(strings.TrimSpace(s), "/")
		s = strings.TrimPrefix(s, "./")
		switch {
		case s == "":
			return nil, fmt.Errorf("-pkg %q: an empty package in the list", spec)
		case s == "...":
			return func(string) bool { return true }, nil
		case strings.HasSuffix(s, "/..."):
			prefixes = append(prefixes, strings.TrimSuffix(s, "/..."))
		default:
			exact = append(exact, s)
		}
	}
	return func(dir string) bool {
		for _, e := range exact {
			if dir == e {
				return true
			}
		}
		for _, p := range prefixes {
			if dir == p || strings.HasPrefix(dir, p+"/") {
				return true
			}
		}
		return false
	}, nil
}
