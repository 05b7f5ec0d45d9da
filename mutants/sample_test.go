package mutants

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeCensus has 60 mutants in a, 30 in b, 9 in c and 1 in d.
func fakeCensus() []Mutant {
	var ms []Mutant
	for _, p := range []struct {
		pkg string
		n   int
	}{{"a", 60}, {"b", 30}, {"c", 9}, {"d", 1}} {
		for i := 0; i < p.n; i++ {
			ms = append(ms, Mutant{ID: fmt.Sprintf("%s/f.go:%d:1:relational", p.pkg, i+1), Pkg: p.pkg})
		}
	}
	return ms
}

func ids(ms []Mutant) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestSampleIsDeterministicAndSpread(t *testing.T) {
	all := fakeCensus()
	one, two := Sample(all, 20, 7), Sample(all, 20, 7)
	if !slices.Equal(ids(one), ids(two)) {
		t.Fatal("the same seed drew two samples")
	}
	if len(one) != 20 {
		t.Fatalf("drew %d, want 20", len(one))
	}
	per := map[string]int{}
	seen := map[string]bool{}
	for _, m := range one {
		per[m.Pkg]++
		if seen[m.ID] {
			t.Errorf("%s drawn twice", m.ID)
		}
		seen[m.ID] = true
	}
	// One each first, then the 16 left by share: a 60/100, b 30/100,
	// c 9/100 of 20 -> 12, 6, 1.8 wholes 12, 6, 1 (less the one each has).
	if per["a"] < 11 || per["b"] < 5 || per["c"] < 1 || per["d"] != 1 {
		t.Errorf("per package %v: not spread in proportion with one each", per)
	}
	if per["a"]+per["b"]+per["c"]+per["d"] != 20 {
		t.Errorf("per package %v does not add up to 20", per)
	}
	if !slices.IsSortedFunc(one, func(x, y Mutant) int { return indexOf(all, x.ID) - indexOf(all, y.ID) }) {
		t.Error("the sample is not in the census's order")
	}
	other := Sample(all, 20, 8)
	if slices.Equal(ids(one), ids(other)) {
		t.Error("seeds 7 and 8 drew the same sample")
	}
}

func indexOf(ms []Mutant, id string) int {
	return slices.IndexFunc(ms, func(m Mutant) bool { return m.ID == id })
}

// A package's draw depends on the seed and its own mutants, not on the
// other packages': one that grows leaves the others' picks alone when
// their quotas stay the same.
func TestSampleOfAPackageIgnoresTheOthers(t *testing.T) {
	all := fakeCensus()
	grown := append([]Mutant(nil), all...)
	grown = append(grown, Mutant{ID: "d/f.go:99:1:relational", Pkg: "d"})
	pick := func(ms []Mutant, pkg string) []string {
		var out []string
		for _, m := range ms {
			if m.Pkg == pkg {
				out = append(out, m.ID)
			}
		}
		return out
	}
	a, b := Sample(all, 20, 3), Sample(grown, 20, 3)
	if !slices.Equal(pick(a, "b"), pick(b, "b")) {
		t.Errorf("package b's picks moved when d grew: %v vs %v", pick(a, "b"), pick(b, "b"))
	}
}

func TestSampleOfAllOrMore(t *testing.T) {
	all := fakeCensus()
	for _, n := range []int{0, 100, 500} {
		if got := Sample(all, n, 1); len(got) != len(all) {
			t.Errorf("n=%d: drew %d, want all %d", n, len(got), len(all))
		}
	}
	if got := Sample(all, 2, 1); len(got) != 2 || got[0].Pkg != "a" || got[1].Pkg != "b" {
		t.Errorf("n=2: %v, want one of a and one of b (the first packages)", ids(got))
	}
}

func TestPackageFilter(t *testing.T) {
	keep, err := PackageFilter("replica/vsr, replica/wire/...")
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{"replica/vsr": true, "replica/vsr/x": false, "replica/wire": true,
		"replica/wire/wiresample": true, "replica": false, "replica/wirex": false} {
		if keep(dir) != want {
			t.Errorf("keep(%q) = %v, want %v", dir, !want, want)
		}
	}
	if _, err := PackageFilter("replica/vsr,,x"); err == nil {
		t.Error("an empty package in the list was accepted")
	}
}

func TestExclusions(t *testing.T) {
	file := `# comment
replica/vsr/normal.go (*Group).pending relational,negation "if len(g.pipeline) == 0 || op < g.pipeline[0].op*" a bound both ways
replica/wire/* * * "*" the codec's sample, for tests only

replica/x.go "" constant+1 "const limit = 5" a limit no seed reaches
`
	ex, err := ParseExclusions("ex.txt", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 3 || ex[0].LineNo != 2 || ex[2].Func != "" || ex[1].Operators != nil {
		t.Fatalf("parsed %+v", ex)
	}
	m := Mutant{File: "replica/vsr/normal.go", Func: "(*Group).pending", Operator: Negation,
		Before: "if len(g.pipeline) == 0 || op < g.pipeline[0].op || op > g.pipeline[len(g.pipeline)-1].op {"}
	if matchExclusion(ex, &m) != 0 {
		t.Error("the first line does not excuse its site")
	}
	m.Operator = Logical
	if matchExclusion(ex, &m) != -1 {
		t.Error("an operator the line does not list was excused")
	}
	if matchExclusion(ex, &Mutant{File: "replica/wire/sample.go", Func: "F", Operator: DropCall, Before: "f()"}) != 1 {
		t.Error("the wildcard line does not excuse a site in its directory")
	}
	if matchExclusion(ex, &Mutant{File: "replica/x.go", Operator: ConstantUp, Before: "const limit = 5"}) != 2 {
		t.Error("a package-level site (no function) is not excused")
	}
	for _, bad := range []struct{ line, want string }{
		{`replica/x.go f drop-call "x()"`, "needs its reason"},
		{`replica/x.go f flip "x()" why`, "unknown operator"},
		{`replica/x.go f drop-call x() why`, "quoted Go string"},
		{`replica/x.go f`, "want FILE FUNC OPERATORS"},
	} {
		_, err := ParseExclusions("ex.txt", []byte("\n"+bad.line+"\n"))
		if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.HasPrefix(err.Error(), "ex.txt:2: ") {
			t.Errorf("%q: error %v, want ex.txt:2: ... %s", bad.line, err, bad.want)
		}
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"abc", "abc", true}, {"abc", "abd", false}, {"*", "", true}, {"a*", "abc", true},
		{"*c", "abc", true}, {"a*c", "ac", true}, {"a*a", "a", false}, {"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxcyyb", false}, {"x[0]*", "x[0] = 1", true},
	} {
		if got := glob(tc.pattern, tc.s); got != tc.want {
			t.Errorf("glob(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}
