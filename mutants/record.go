package mutants

import "strings"

// Verdicts of an oracle on one mutant.
const (
	Killed   = "killed"   // the oracle failed on the mutant
	Survived = "survived" // the oracle passed
	Timeout  = "timeout"  // the oracle did not finish within its wall budget (counted as killed)
	Errored  = "error"    // the oracle could not judge (a unit test that does not build with the mutant)
	NotRun   = "not-run"  // the mutant did not build, or the run was interrupted
)

// Classes of a VOPR kill: what made the first failing seed fail.
const (
	ClassNamed   = "named"   // a checker violation, named for what broke
	ClassPanic   = "panic"   // a panic inside the replica
	ClassStall   = "stall"   // a liveness failure: the core did not converge or settle
	ClassError   = "error"   // a simulator error (the harness failed on what the replica did)
	ClassTimeout = "timeout" // the campaign did not finish within its wall budget
	ClassCrash   = "crash"   // the process died (a fatal runtime error: stack overflow, out of memory)
)

// Record is what one mutant did: the line vopr mutants -o writes.
type Record struct {
	ID       string   `json:"id"`
	Pkg      string   `json:"pkg"`
	Site     string   `json:"site"` // file:line
	Col      int      `json:"col"`
	Func     string   `json:"func"`
	Operator Operator `json:"operator"`
	Before   string   `json:"before"`
	After    string   `json:"after"`
	// Build is "ok" or "failed"; BuildError the compiler's first line.
	Build      string  `json:"build"`
	BuildError string  `json:"build_error,omitempty"`
	VOPR       Verdict `json:"vopr"`
	Unit       Verdict `json:"unit"`
	Seconds    float64 `json:"seconds"`
}

// Verdict is one oracle's judgement of a mutant.
type Verdict struct {
	Verdict string `json:"verdict"`
	// VOPR only: the class of the kill, the first failing seed, its
	// outcome, violation name and text (bounded), and the seeds run.
	Class     string `json:"class,omitempty"`
	Seed      string `json:"seed,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
	Violation string `json:"violation,omitempty"`
	Detail    string `json:"detail,omitempty"`
	Seeds     int    `json:"seeds,omitempty"`
	// Unit only: the first failing test, or what went wrong.
	Test string `json:"test,omitempty"`
}

// killed reports whether the oracle killed the mutant (a timeout counts).
func (v Verdict) killed() bool { return v.Verdict == Killed || v.Verdict == Timeout }

// recordOf is m's record before it runs.
func recordOf(m *Mutant) Record {
	return Record{ID: m.ID, Pkg: m.Pkg, Site: m.Site(), Col: m.Col, Func: m.Func, Operator: m.Operator,
		Before: m.Before, After: m.After, Build: NotRun,
		VOPR: Verdict{Verdict: NotRun}, Unit: Verdict{Verdict: NotRun}}
}

// violationName is a violation's name: its text before the first ": ".
func violationName(v string) string {
	if i := strings.Index(v, ": "); i >= 0 {
		return v[:i]
	}
	return v
}

// bounded cuts s to its first line and at most n bytes.
func bounded(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}
