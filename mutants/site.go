package mutants

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strconv"
	"strings"
)

// Operator names one kind of one-operator change.
type Operator string

// The operators. Each mutant applies one of them at one site.
const (
	Relational   Operator = "relational"    // a bound moved: < for <=, <= for <, > for >=, >= for >
	Negation     Operator = "negation"      // a comparison negated: == for !=, < for >=, > for <=, and back
	Logical      Operator = "logical"       // && for ||, || for &&
	ConstantUp   Operator = "constant+1"    // an integer literal one more
	ConstantDown Operator = "constant-1"    // a nonzero integer literal one less
	DropCall     Operator = "drop-call"     // a call statement dropped
	DropAssign   Operator = "drop-assign"   // an assignment (=, op=, ++, --) dropped
	DropReturn   Operator = "drop-return"   // an early return dropped: control falls through
	NegateBranch Operator = "negate-branch" // an if's condition negated
)

// Operators lists every operator, in the order tables print them.
var Operators = []Operator{Relational, Negation, Logical, ConstantUp, ConstantDown, DropCall, DropAssign, DropReturn, NegateBranch}

// Mutant is one change at one site of one file: the bytes [Start, End) of
// the file replaced by Replacement.
type Mutant struct {
	ID          string   // File:Line:Col:Operator, unique in a generation
	Pkg         string   // the package's directory in the module (replica/vsr)
	File        string   // the file's path in the module (replica/vsr/normal.go)
	Line, Col   int      // where the changed span begins (1-based)
	Func        string   // the enclosing function: name, (T).name or (*T).name; "" at package level
	Operator    Operator //
	Start, End  int      // the byte span replaced
	Replacement string   //
	Before      string   // the site's first line, trimmed
	After       string   // that line as the mutant has it, trimmed ("" when it is gone)
}

// Site is where the mutant is, as people cite it: file:line.
func (m *Mutant) Site() string { return fmt.Sprintf("%s:%d", m.File, m.Line) }

// Apply returns src with the mutant's change made. It panics if the span
// is not in src: a mutant belongs to the bytes it was generated from.
func (m *Mutant) Apply(src []byte) []byte {
	if m.Start < 0 || m.End < m.Start || m.End > len(src) {
		panic(fmt.Sprintf("mutants: %s: span [%d, %d) outside a file of %d bytes", m.ID, m.Start, m.End, len(src)))
	}
	out := make([]byte, 0, len(src)-(m.End-m.Start)+len(m.Replacement))
	out = append(out, src[:m.Start]...)
	out = append(out, m.Replacement...)
	return append(out, src[m.End:]...)
}

// Skipped counts the sites Generate did not draw, by rule.
type Skipped map[string]int

// Rules of Generate, as Skipped names them.
const (
	RuleCanary    = "canary switch or canary-only code"
	RuleAssertion = "assertion (a condition whose branch only panics, or a panic call)"
)

// Generate returns the mutants of one Go source file, in the order of
// their spans, and the sites it skipped by rule. file is the path the
// mutants name (relative to the module), pkg the package's directory.
func Generate(pkg, file string, src []byte) ([]Mutant, Skipped, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil, fmt.Errorf("mutants: parsing %s: %w", file, err)
	}
	g := &generator{pkg: pkg, file: file, src: src, fset: fset, tf: fset.File(f.Pos()), skipped: Skipped{}}
	g.bugPkg = canaryImportName(f)
	g.terminal = terminalReturns(f)
	for _, d := range f.Decls {
		fn, _ := d.(*ast.FuncDecl)
		g.fn = ""
		if fn != nil {
			g.fn = funcName(fn)
		}
		g.walk(d)
	}
	sort.SliceStable(g.out, func(i, j int) bool {
		if g.out[i].Start != g.out[j].Start {
			return g.out[i].Start < g.out[j].Start
		}
		return operatorRank(g.out[i].Operator) < operatorRank(g.out[j].Operator)
	})
	return g.out, g.skipped, nil
}

func operatorRank(op Operator) int {
	for i, o := range Operators {
		if o == op {
			return i
		}
	}
	return len(Operators)
}

type generator struct {
	pkg, file string
	src       []byte
	fset      *token.FileSet
	tf        *token.File
	bugPkg    string // the local name of package canary/bug ("" when not imported)
	fn        string
	terminal  map[*ast.ReturnStmt]bool // returns on a path that ends a function (terminalReturns)
	out       []Mutant
	skipped   Skipped
}

// canaryImportName is the name the file imports package canary/bug as.
func canaryImportName(f *ast.File) string {
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil || !strings.HasSuffix(p, "/canary/bug") {
			continue
		}
		if im.Name != nil {
			return im.Name.Name
		}
		return "bug"
	}
	return ""
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	star := ""
	if s, ok := t.(*ast.StarExpr); ok {
		star, t = "*", s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	name := "?"
	if id, ok := t.(*ast.Ident); ok {
		name = id.Name
	}
	return fmt.Sprintf("(%s%s).%s", star, name, fn.Name.Name)
}

// mentionsCanary reports whether n refers to a canary switch (bug.X).
func (g *generator) mentionsCanary(n ast.Node) bool {
	if g.bugPkg == "" || n == nil {
		return false
	}
	found := false
	ast.Inspect(n, func(m ast.Node) bool {
		if sel, ok := m.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == g.bugPkg {
				found = true
			}
		}
		return !found
	})
	return found
}

// canaryOnly reports whether an if's body runs only in a canary build: its
// condition is a canary switch, or a conjunction whose first term is one.
func (g *generator) canaryOnly(cond ast.Expr) bool {
	for {
		switch x := cond.(type) {
		case *ast.ParenExpr:
			cond = x.X
			continue
		case *ast.BinaryExpr:
			if x.Op == token.LAND {
				cond = x.X
				continue
			}
			return false
		case *ast.SelectorExpr:
			id, ok := x.X.(*ast.Ident)
			return ok && g.bugPkg != "" && id.Name == g.bugPkg
		}
		return false
	}
}

// isPanic reports whether s is a call of the builtin panic.
func isPanic(s ast.Stmt) bool {
	es, ok := s.(*ast.ExprStmt)
	if !ok {
		return false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := call.Fun.(*ast.Ident)
	return ok && id.Name == "panic"
}

// assertionBody reports whether a branch only panics: it ends in a panic
// call, and anything before it only builds the message.
func assertionBody(list []ast.Stmt) bool {
	if len(list) == 0 || !isPanic(list[len(list)-1]) {
		return false
	}
	for _, s := range list[:len(list)-1] {
		if as, ok := s.(*ast.AssignStmt); !ok || as.Tok != token.DEFINE {
			return false
		}
	}
	return true
}

// count adds the sites a skipped subtree holds to the rule's count.
func (g *generator) count(rule string, n ast.Node) {
	if n == nil {
		return
	}
	saved := g.out
	g.out = nil
	g.walk(n)
	g.skipped[rule] += len(g.out)
	g.out = saved
}

// walk collects the mutants of n.
func (g *generator) walk(n ast.Node) {
	ast.Inspect(n, func(m ast.Node) bool {
		switch x := m.(type) {
		case nil:
			return false
		case *ast.IfStmt:
			g.ifStmt(x)
			return false
		case *ast.CaseClause:
			if assertionBody(x.Body) && len(x.List) > 0 {
				for _, e := range x.List {
					g.count(RuleAssertion, e)
				}
				g.skipped[RuleAssertion]++ // the panic itself
				return false
			}
			for _, e := range x.List {
				g.walk(e)
			}
			g.block(x.Body)
			return false
		case *ast.CommClause:
			if x.Comm != nil {
				g.walk(x.Comm)
			}
			g.block(x.Body)
			return false
		case *ast.BlockStmt:
			g.block(x.List)
			return false
		case *ast.ArrayType:
			// An array's length is part of its type: changing it breaks
			// the build far more often than behaviour.
			if x.Len != nil {
				g.walkExprsOnly(x.Elt)
				return false
			}
			return true
		case *ast.BinaryExpr:
			if g.mentionsCanary(x) {
				g.skipped[RuleCanary]++
				// its operands may still hold sites of their own
				if !g.mentionsCanary(x.X) {
					g.walk(x.X)
				}
				if !g.mentionsCanary(x.Y) {
					g.walk(x.Y)
				}
				return false
			}
			g.binary(x)
			return true
		case *ast.BasicLit:
			g.constant(x)
			return false
		case *ast.FuncLit:
			g.block(x.Body.List)
			return false
		}
		return true
	})
}

// walkExprsOnly walks n for its expression sites (used for what a type
// holds, where there are none to speak of).
func (g *generator) walkExprsOnly(n ast.Node) {
	if n != nil {
		g.walk(n)
	}
}

func (g *generator) ifStmt(x *ast.IfStmt) {
	if x.Init != nil {
		g.walk(x.Init)
	}
	switch {
	case g.canaryOnly(x.Cond):
		g.skipped[RuleCanary]++
		g.count(RuleCanary, x.Body)
		if x.Else != nil {
			g.walk(x.Else)
		}
		return
	case g.mentionsCanary(x.Cond):
		g.skipped[RuleCanary]++
		g.walk(x.Body)
		if x.Else != nil {
			g.walk(x.Else)
		}
		return
	case assertionBody(x.Body.List):
		g.count(RuleAssertion, x.Cond)
		g.skipped[RuleAssertion] += 2 // the negated branch and the panic
		if x.Else != nil {
			g.walk(x.Else)
		}
		return
	}
	g.walk(x.Cond)
	if !isComparison(x.Cond) {
		g.add(x.Cond.Pos(), x.Cond.End(), NegateBranch, "!("+string(g.src[g.off(x.Cond.Pos()):g.off(x.Cond.End())])+")")
	}
	g.walk(x.Body)
	if x.Else != nil {
		g.walk(x.Else)
	}
}

// isComparison: negating the whole condition would be the same mutant as
// the Negation operator on its comparison.
func isComparison(e ast.Expr) bool {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			break
		}
		e = p.X
	}
	b, ok := e.(*ast.BinaryExpr)
	if !ok {
		return false
	}
	_, neg := negations[b.Op]
	return neg
}

// block collects a statement list's mutants: its statements dropped, and
// what each statement holds.
func (g *generator) block(list []ast.Stmt) {
	for _, s := range list {
		g.stmt(s)
	}
}

// stmt collects the mutants of one statement of a block.
func (g *generator) stmt(s ast.Stmt) {
	switch x := s.(type) {
	case *ast.ExprStmt:
		if call, ok := x.X.(*ast.CallExpr); ok {
			switch {
			case isPanic(x):
				g.skipped[RuleAssertion]++
			case g.mentionsCanary(call):
				g.skipped[RuleCanary]++
			default:
				g.drop(s, DropCall)
			}
		}
	case *ast.AssignStmt:
		if x.Tok != token.DEFINE && !g.mentionsCanary(x) {
			g.drop(s, DropAssign)
		}
	case *ast.IncDecStmt:
		g.drop(s, DropAssign)
	case *ast.ReturnStmt:
		if !g.terminal[x] {
			g.drop(s, DropReturn)
		}
	}
	g.walk(s)
}

// terminalReturns finds the returns that end their function: the last
// statement of a function's body, and, where that is an if with an else, a
// switch, a select or a block, the last statements of its branches, and so
// on down. Dropping one does not build (the function lacks its terminating
// statement) or changes nothing (control reaches the end anyway): neither
// is an early return.
func terminalReturns(f *ast.File) map[*ast.ReturnStmt]bool {
	out := map[*ast.ReturnStmt]bool{}
	var last func(list []ast.Stmt)
	last = func(list []ast.Stmt) {
		if len(list) == 0 {
			return
		}
		switch x := list[len(list)-1].(type) {
		case *ast.ReturnStmt:
			out[x] = true
		case *ast.BlockStmt:
			last(x.List)
		case *ast.LabeledStmt:
			last([]ast.Stmt{x.Stmt})
		case *ast.IfStmt:
			last(x.Body.List)
			if x.Else != nil {
				last([]ast.Stmt{x.Else})
			}
		case *ast.SwitchStmt:
			for _, c := range x.Body.List {
				last(c.(*ast.CaseClause).Body)
			}
		case *ast.TypeSwitchStmt:
			for _, c := range x.Body.List {
				last(c.(*ast.CaseClause).Body)
			}
		case *ast.SelectStmt:
			for _, c := range x.Body.List {
				last(c.(*ast.CommClause).Body)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncDecl:
			if x.Body != nil {
				last(x.Body.List)
			}
		case *ast.FuncLit:
			last(x.Body.List)
		}
		return true
	})
	return out
}

func (g *generator) drop(s ast.Stmt, op Operator) {
	span := g.src[g.off(s.Pos()):g.off(s.End())]
	// Keep the span's newlines, so every line below keeps its number.
	g.add(s.Pos(), s.End(), op, strings.Repeat("\n", bytes.Count(span, []byte{'\n'})))
}

var boundaries = map[token.Token]token.Token{token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR}
var negations = map[token.Token]token.Token{token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.GEQ, token.GEQ: token.LSS, token.GTR: token.LEQ, token.LEQ: token.GTR}

func (g *generator) binary(x *ast.BinaryExpr) {
	opEnd := x.OpPos + token.Pos(len(x.Op.String()))
	if b, ok := boundaries[x.Op]; ok {
		g.add(x.OpPos, opEnd, Relational, b.String())
	}
	if n, ok := negations[x.Op]; ok {
		g.add(x.OpPos, opEnd, Negation, n.String())
	}
	switch x.Op {
	case token.LAND:
		g.add(x.OpPos, opEnd, Logical, "||")
	case token.LOR:
		g.add(x.OpPos, opEnd, Logical, "&&")
	}
}

func (g *generator) constant(x *ast.BasicLit) {
	if x.Kind != token.INT {
		return
	}
	v, err := strconv.ParseUint(x.Value, 0, 64)
	if err != nil {
		return // a literal past 2^64-1: no such constant in the replica
	}
	format := func(u uint64) string {
		lower := strings.ToLower(x.Value)
		switch {
		case strings.HasPrefix(lower, "0x"):
			return fmt.Sprintf("0x%x", u)
		case strings.HasPrefix(lower, "0b"):
			return fmt.Sprintf("0b%b", u)
		}
		return strconv.FormatUint(u, 10)
	}
	if v < 1<<63 {
		g.add(x.Pos(), x.End(), ConstantUp, format(v+1))
	}
	if v > 0 {
		g.add(x.Pos(), x.End(), ConstantDown, format(v-1))
	}
}

func (g *generator) off(p token.Pos) int { return g.tf.Offset(p) }

func (g *generator) add(from, to token.Pos, op Operator, replacement string) {
	start, end := g.off(from), g.off(to)
	pos := g.fset.Position(from)
	lineStart := bytes.LastIndexByte(g.src[:start], '\n') + 1
	lineEnd := bytes.IndexByte(g.src[start:], '\n')
	if lineEnd < 0 {
		lineEnd = len(g.src)
	} else {
		lineEnd += start
	}
	before := string(g.src[lineStart:lineEnd])
	afterEnd := min(end, lineEnd)
	after := before[:start-lineStart] + replacement + string(g.src[afterEnd:lineEnd])
	if op == DropCall || op == DropAssign || op == DropReturn {
		after = string(g.src[lineStart:start])
		if end <= lineEnd {
			after += string(g.src[end:lineEnd])
		}
	}
	if i := strings.IndexByte(after, '\n'); i >= 0 {
		after = after[:i]
	}
	g.out = append(g.out, Mutant{
		ID:  fmt.Sprintf("%s:%d:%d:%s", g.file, pos.Line, pos.Column, op),
		Pkg: g.pkg, File: g.file, Line: pos.Line, Col: pos.Column, Func: g.fn, Operator: op,
		Start: start, End: end, Replacement: replacement,
		Before: strings.TrimSpace(before), After: strings.TrimSpace(after),
	})
}
