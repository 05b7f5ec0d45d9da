package mutants

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// Counts tallies the verdicts of a set of mutants.
type Counts struct {
	Mutants     int // drawn
	NotBuilding int // did not build (skipped, counted)
	NotRun      int // built but not judged (interrupted)
	VOPR        int // killed by the VOPR (a timeout counts)
	Unit        int // killed by the unit tests (a timeout counts)
	Both        int
	VOPROnly    int
	UnitOnly    int
	Neither     int
	UnitErrors  int // the unit tests did not build with the mutant: not judged by them
	// The VOPR's kills by class.
	Named, Panic, Stall, Error, Timeout, Crash int
}

func (c *Counts) add(r *Record) {
	c.Mutants++
	if r.Build != "ok" {
		c.NotBuilding++
		return
	}
	if r.VOPR.Verdict == NotRun || r.Unit.Verdict == NotRun {
		c.NotRun++
		return
	}
	v, u := r.VOPR.killed(), r.Unit.killed()
	if r.Unit.Verdict == Errored {
		c.UnitErrors++
	}
	switch {
	case v && u:
		c.Both++
	case v:
		c.VOPROnly++
	case u:
		c.UnitOnly++
	default:
		c.Neither++
	}
	if v {
		c.VOPR++
		switch r.VOPR.Class {
		case ClassNamed:
			c.Named++
		case ClassPanic:
			c.Panic++
		case ClassStall:
			c.Stall++
		case ClassTimeout:
			c.Timeout++
		case ClassCrash:
			c.Crash++
		default:
			c.Error++
		}
	}
	if u {
		c.Unit++
	}
}

// Recall is the share of the unit-killed mutants the VOPR kills too
// (NaN-free: 0 of 0 is 0, and ok says whether there was any).
func (c *Counts) Recall() (share float64, ok bool) { return ratio(c.Both, c.Unit) }

// NamedShare is the share of the VOPR's kills a named violation made.
func (c *Counts) NamedShare() (share float64, ok bool) { return ratio(c.Named, c.VOPR) }

func ratio(a, b int) (float64, bool) {
	if b == 0 {
		return 0, false
	}
	return float64(a) / float64(b), true
}

func percent(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// Tally is the counts of a run: all of them, by package and by operator.
type Tally struct {
	All        Counts
	ByPkg      map[string]*Counts
	ByOperator map[Operator]*Counts
}

// TallyOf counts the records.
func TallyOf(rs []Record) *Tally {
	t := &Tally{ByPkg: map[string]*Counts{}, ByOperator: map[Operator]*Counts{}}
	for i := range rs {
		r := &rs[i]
		t.All.add(r)
		if t.ByPkg[r.Pkg] == nil {
			t.ByPkg[r.Pkg] = &Counts{}
		}
		t.ByPkg[r.Pkg].add(r)
		if t.ByOperator[r.Operator] == nil {
			t.ByOperator[r.Operator] = &Counts{}
		}
		t.ByOperator[r.Operator].add(r)
	}
	return t
}

// WriteTable prints the tally: a row per package and per operator, the
// headline figures, and every mutant neither oracle killed and every one
// only the unit tests killed (what the VOPR misses), each with its site
// and change.
func (t *Tally) WriteTable(w io.Writer, rs []Record) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "\tmutants\tnot building\tvopr\tunit\tboth\tvopr only\tunit only\tneither\trecall\tnamed\tpanic\tstall\ttimeout\tcrash\terror\t"
	row := func(name string, c *Counts) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t\n", name, c.Mutants, c.NotBuilding,
			c.VOPR, c.Unit, c.Both, c.VOPROnly, c.UnitOnly, c.Neither, percent(c.Both, c.Unit), percent(c.Named, c.VOPR),
			c.Panic, c.Stall, c.Timeout, c.Crash, c.Error)
	}
	fmt.Fprintln(tw, "package"+header)
	for _, p := range sortedKeys(t.ByPkg) {
		row(p, t.ByPkg[p])
	}
	row("all", &t.All)
	fmt.Fprintln(tw, "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t")
	fmt.Fprintln(tw, "operator"+header)
	for _, o := range Operators {
		if c := t.ByOperator[o]; c != nil {
			row(string(o), c)
		}
	}
	tw.Flush()
	c := &t.All
	fmt.Fprintf(w, "\nVOPR recall: %s (%d of the %d mutants the unit tests kill)\n", percent(c.Both, c.Unit), c.Both, c.Unit)
	fmt.Fprintf(w, "named kills: %s (%d of %d VOPR kills; %d replica panics, %d stalls, %d timeouts, %d crashes, %d simulator errors)\n",
		percent(c.Named, c.VOPR), c.Named, c.VOPR, c.Panic, c.Stall, c.Timeout, c.Crash, c.Error)
	fmt.Fprintf(w, "VOPR kills %s of the %d mutants that build (the unit tests %s); %d not building, %d with unit tests that do not build, %d not run\n",
		percent(c.VOPR, c.Mutants-c.NotBuilding-c.NotRun), c.Mutants-c.NotBuilding-c.NotRun,
		percent(c.Unit, c.Mutants-c.NotBuilding-c.NotRun), c.NotBuilding, c.UnitErrors, c.NotRun)
	writeList := func(title string, keep func(r *Record) bool) {
		var n int
		for i := range rs {
			if keep(&rs[i]) {
				n++
			}
		}
		if n == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s: %d\n", title, n)
		for i := range rs {
			r := &rs[i]
			if !keep(r) {
				continue
			}
			fmt.Fprintf(w, "  %s %s %s: %s  ->  %s", r.Site, r.Operator, orDash(r.Func), r.Before, orDash(r.After))
			if r.Unit.Test != "" {
				fmt.Fprintf(w, "  [unit: %s]", r.Unit.Test)
			}
			fmt.Fprintln(w)
		}
	}
	judged := func(r *Record) bool { return r.Build == "ok" && r.VOPR.Verdict != NotRun && r.Unit.Verdict != NotRun }
	writeList("the VOPR misses, the unit tests kill", func(r *Record) bool { return judged(r) && !r.VOPR.killed() && r.Unit.killed() })
	writeList("neither kills", func(r *Record) bool { return judged(r) && !r.VOPR.killed() && !r.Unit.killed() })
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// KillsByViolation counts the VOPR's kills by violation name, most first.
func KillsByViolation(rs []Record) []string {
	n := map[string]int{}
	for i := range rs {
		if rs[i].VOPR.killed() {
			key := rs[i].VOPR.Class + ": " + rs[i].VOPR.Violation
			switch rs[i].VOPR.Class {
			case ClassTimeout:
				key = ClassTimeout
			case ClassPanic, ClassError:
				key = rs[i].VOPR.Class + ": " + panicMessage(rs[i].VOPR.Detail)
			}
			n[key]++
		}
	}
	keys := sortedKeys(n)
	sort.SliceStable(keys, func(i, j int) bool { return n[keys[i]] > n[keys[j]] })
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%4d  %s", n[k], strings.TrimSuffix(k, ": "))
	}
	return out
}

// panicMessage is a panic's message without where it was caught: "replica
// panic: vsr: commit above op (in ...)" is "vsr: commit above op".
func panicMessage(detail string) string {
	_, msg, ok := strings.Cut(detail, ": ")
	if !ok {
		return detail
	}
	if i := strings.LastIndex(msg, " (in "); i >= 0 {
		msg = msg[:i]
	}
	return bounded(msg, 100)
}
