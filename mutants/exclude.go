package mutants

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Exclusion excuses the mutants of one site, or of a class of sites, that
// cannot change what a user of Iggy sees, with the reason why. A line of
// an exclusion file is
//
//	FILE FUNC OPERATORS "LINE" reason...
//
// FILE is a module-relative path, FUNC the enclosing function as Mutant
// names it, OPERATORS a comma-separated list of operators, and LINE the
// site's line as Mutant.Before has it (trimmed), quoted as a Go string.
// FILE, FUNC and LINE may hold * (any run of characters), and OPERATORS
// may be * (every operator). The reason is the rest of the line, and is
// required. Blank lines and lines starting with # are comments.
type Exclusion struct {
	File, Func string
	Operators  []Operator // nil: every operator
	Line       string
	Reason     string
	LineNo     int // in the exclusion file
}

// String is the exclusion as its file line reads.
func (e Exclusion) String() string {
	ops := "*"
	if e.Operators != nil {
		var s []string
		for _, o := range e.Operators {
			s = append(s, string(o))
		}
		ops = strings.Join(s, ",")
	}
	fn := e.Func
	if fn == "" {
		fn = `""`
	}
	return fmt.Sprintf("%s %s %s %s %s", e.File, fn, ops, strconv.Quote(e.Line), e.Reason)
}

// ParseExclusions reads an exclusion file. A malformed line is an error
// that names its line and what is wrong with it.
func ParseExclusions(name string, data []byte) ([]Exclusion, error) {
	var out []Exclusion
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseExclusion(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		e.LineNo = n
		out = append(out, e)
	}
	return out, sc.Err()
}

func parseExclusion(line string) (Exclusion, error) {
	var e Exclusion
	fields := make([]string, 0, 3)
	rest := line
	for len(fields) < 3 {
		rest = strings.TrimLeft(rest, " \t")
		i := strings.IndexAny(rest, " \t")
		if i < 0 {
			return e, fmt.Errorf("want FILE FUNC OPERATORS \"LINE\" reason, got %q", line)
		}
		fields = append(fields, rest[:i])
		rest = rest[i:]
	}
	e.File, e.Func = fields[0], fields[1]
	if e.Func == `""` {
		e.Func = ""
	}
	if fields[2] != "*" {
		for _, o := range strings.Split(fields[2], ",") {
			if operatorRank(Operator(o)) == len(Operators) {
				return e, fmt.Errorf("unknown operator %q (want one of %v, or *)", o, Operators)
			}
			e.Operators = append(e.Operators, Operator(o))
		}
	}
	rest = strings.TrimLeft(rest, " \t")
	q, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return e, fmt.Errorf("the site's line must be a quoted Go string (\"*\" for any): %q", rest)
	}
	e.Line, _ = strconv.Unquote(q)
	e.Reason = strings.TrimSpace(rest[len(q):])
	if e.Reason == "" {
		return e, fmt.Errorf("an exclusion needs its reason: why the mutant cannot change what a user sees")
	}
	return e, nil
}

// matches reports whether e excuses m.
func (e *Exclusion) matches(m *Mutant) bool {
	if !glob(e.File, m.File) || !glob(e.Func, m.Func) || !glob(e.Line, m.Before) {
		return false
	}
	if e.Operators == nil {
		return true
	}
	for _, o := range e.Operators {
		if o == m.Operator {
			return true
		}
	}
	return false
}

// matchExclusion is the index of the first exclusion that excuses m, or -1.
func matchExclusion(ex []Exclusion, m *Mutant) int {
	for i := range ex {
		if ex[i].matches(m) {
			return i
		}
	}
	return -1
}

// glob matches s against pattern, where * is any run of characters and
// every other character is itself.
func glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}
