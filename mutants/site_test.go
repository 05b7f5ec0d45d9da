package mutants

import (
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

const siteSrc = `package p

import "example.com/m/canary/bug"

const depth = 8

func Pick(a, b int, ok bool) int {
	if a < b && ok {
		return a
	}
	if a == b {
		panic("p: equal")
	}
	if bug.Flip {
		a = b
	}
	if !bug.Keep {
		b++
	}
	var buf [16]byte
	_ = buf
	note(a)
	panic("never")
}

func note(x int) {
	if x > depth || x != 3 {
		return
	}
	total = x
}

var total int
`

// Each operator fires where it applies and nowhere else, and the rules
// keep canaries, assertions, array lengths and terminal returns out.
func TestGenerateTheOperators(t *testing.T) {
	ms, skipped, err := Generate("p", "p/p.go", []byte(siteSrc))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, string(m.Operator)+" "+m.Func+" | "+m.Before+" -> "+m.After)
	}
	want := []string{
		"constant+1  | const depth = 8 -> const depth = 9",
		"constant-1  | const depth = 8 -> const depth = 7",
		"negate-branch Pick | if a < b && ok { -> if !(a < b && ok) {",
		"relational Pick | if a < b && ok { -> if a <= b && ok {",
		"negation Pick | if a < b && ok { -> if a >= b && ok {",
		"logical Pick | if a < b && ok { -> if a < b || ok {",
		"drop-return Pick | return a -> ",
		"drop-assign Pick | b++ -> ",
		"drop-assign Pick | _ = buf -> ",
		"drop-call Pick | note(a) -> ",
		"negate-branch note | if x > depth || x != 3 { -> if !(x > depth || x != 3) {",
		"relational note | if x > depth || x != 3 { -> if x >= depth || x != 3 {",
		"negation note | if x > depth || x != 3 { -> if x <= depth || x != 3 {",
		"logical note | if x > depth || x != 3 { -> if x > depth && x != 3 {",
		"negation note | if x > depth || x != 3 { -> if x > depth || x == 3 {",
		"constant+1 note | if x > depth || x != 3 { -> if x > depth || x != 4 {",
		"constant-1 note | if x > depth || x != 3 { -> if x > depth || x != 2 {",
		"drop-return note | return -> ",
		"drop-assign note | total = x -> ",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The canary's if, its body (a = b) and !bug.Keep; the assertion's
	// comparison (relational... none for ==: negation), its negated
	// branch and its panic, and the last panic call.
	if skipped[RuleCanary] != 3 {
		t.Errorf("canary sites skipped: %d, want 3 (if bug.Flip, its a = b, if !bug.Keep)", skipped[RuleCanary])
	}
	if skipped[RuleAssertion] != 4 {
		t.Errorf("assertion sites skipped: %d, want 4 (a == b negated, the branch, its panic, panic(\"never\"))", skipped[RuleAssertion])
	}
}

// Every mutant of a file is a file that still parses, differs from the
// original at its span only, and keeps every line where it was.
func TestMutantsParseAndKeepLines(t *testing.T) {
	ms, _, err := Generate("p", "p/p.go", []byte(siteSrc))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		out := m.Apply([]byte(siteSrc))
		if _, err := parser.ParseFile(token.NewFileSet(), "p.go", out, 0); err != nil {
			t.Errorf("%s: the mutant does not parse: %v", m.ID, err)
		}
		if strings.Count(string(out), "\n") != strings.Count(siteSrc, "\n") {
			t.Errorf("%s: the mutant moved lines", m.ID)
		}
		if string(out) == siteSrc {
			t.Errorf("%s: the mutant changes nothing", m.ID)
		}
	}
}

func TestIDsAreUnique(t *testing.T) {
	ms, _, _ := Generate("p", "p/p.go", []byte(siteSrc))
	seen := map[string]bool{}
	for _, m := range ms {
		if seen[m.ID] {
			t.Errorf("id %s twice", m.ID)
		}
		seen[m.ID] = true
		if !strings.HasPrefix(m.ID, m.Site()+":") {
			t.Errorf("id %s does not start with its site %s", m.ID, m.Site())
		}
	}
}

// A return that ends its function is never dropped, down through the
// branches of a final if-else and a final switch.
func TestTerminalReturnsAreNotDropped(t *testing.T) {
	src := `package p

func f(x int) int {
	if x > 0 {
		return 1
	} else {
		return 2
	}
}

func g(x int) int {
	switch x {
	case 1:
		return 1
	default:
		return 3
	}
}

func h(x int) int {
	for x > 10 {
		return 9
	}
	return 0
}
`
	ms, _, err := Generate("p", "p/p.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var drops []string
	for _, m := range ms {
		if m.Operator == DropReturn {
			drops = append(drops, m.Site())
		}
	}
	if !slices.Equal(drops, []string{"p/p.go:22"}) {
		t.Errorf("returns dropped at %v, want only the early one at p/p.go:22", drops)
	}
}

func TestApplyRefusesAForeignSpan(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Apply of a span outside the file did not panic")
		}
	}()
	m := Mutant{ID: "x", Start: 5, End: 50}
	m.Apply([]byte("short"))
}
