package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-vopr/vopr/mutants"
)

const mutantsUsage = `usage: vopr mutants [-seed N] [-n N] [-seeds K] [-parallel P] [-pkg LIST] [-o FILE] [flags]

Measures the VOPR's power on mutants of the replica (issue 26). It generates
one-operator mutants of the non-test code of the replica's packages with
Go's parser (a relational bound moved, a comparison negated, && and ||
swapped, an integer constant off by one, a call, an assignment or an early
return dropped, an if's condition negated), draws a sample of them, builds
each with go build -overlay (the tree is never touched), and runs each
against a VOPR campaign of K seeds and the mutated package's unit tests.
It prints a line per mutant, in the sample's order, then the table: by
package and by operator, the mutants, those that do not build (skipped,
counted), killed by the VOPR, by the unit tests, by both, by one only, by
neither; the VOPR's recall (the share of the unit-killed mutants it kills)
and the share of its kills a named checker violation made (not a replica
panic, a stall, a timeout or a crash); then every mutant the VOPR misses.
It needs the vopr source tree (the go.mod at or above the current
directory, or -dir) and the go command ($GO, or go).

  -seed N         which sample (random when absent, always printed first):
                  the same seed and tree draw the same mutants
  -n N            mutants to draw (default 100; 0: every one), spread over the
                  packages in proportion to their sites, at least one each
  -seeds K        VOPR seeds per mutant (default 100); the first failing seed
                  kills it, so a killed mutant runs fewer
  -first-seed F   the campaign's first seed (default 1): seeds F..F+K-1
  -vopr-flags S   more flags for every campaign (knob flags: "-replicas 3")
  -parallel P     mutants judged at once (default: the CPUs); each campaign runs
                  one seed at a time
  -pkg LIST       the packages, comma-separated directories of the module
                  (replica/vsr), a trailing /... for a subtree (default
                  replica/...)
  -exclude FILE   the exclusion file (default mutants/exclusions.txt in the
                  tree; -exclude= for none): sites that cannot change what a
                  user sees, each with its reason
  -o FILE         write one JSON line per mutant: id, site, operator, the line
                  before and after, both verdicts (the VOPR's with its first
                  failing seed, class and violation), seconds
  -list           print the census and the sample (id, function, the change)
                  and run nothing
  -mutant IDS     judge these mutants only (comma-separated ids, as -list and
                  -o print them), not a sample
  -write DIR      with -mutant ID (one): write the mutated file and its overlay
                  to DIR and print the command that builds that VOPR; run nothing
  -timeout D      one mutant's campaign wall budget (default: ten times the
                  unmutated campaign's, at least 1m); a campaign that runs out
                  is a kill of class timeout
  -dir DIR        the vopr source tree

Exit status: 0 when the mutants were judged (whatever the figures), 1 when the
unmutated tree fails an oracle or a file cannot be written, 2 for bad flags,
130 when interrupted (the table then covers what finished).
`

type mutantsConfig struct {
	seed       uint64
	seedSet    bool
	n, seeds   int
	firstSeed  uint64
	voprFlags  []string
	parallel   int
	pkg        string
	exclude    string
	out        string
	list       bool
	ids        []string
	write      string
	timeout    time.Duration
	dir        string
	excludeSet bool
}

func mutantsFlags(args []string, cpus int) (*mutantsConfig, bool, error) {
	c := &mutantsConfig{}
	fs := flag.NewFlagSet("vopr mutants", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	seed := fs.String("seed", "", "")
	fs.IntVar(&c.n, "n", 100, "")
	fs.IntVar(&c.seeds, "seeds", 100, "")
	fs.Uint64Var(&c.firstSeed, "first-seed", 1, "")
	voprFlags := fs.String("vopr-flags", "", "")
	fs.IntVar(&c.parallel, "parallel", max(1, cpus), "")
	fs.StringVar(&c.pkg, "pkg", "replica/...", "")
	fs.StringVar(&c.exclude, "exclude", "mutants/exclusions.txt", "")
	fs.StringVar(&c.out, "o", "", "")
	fs.BoolVar(&c.list, "list", false, "")
	ids := fs.String("mutant", "", "")
	fs.StringVar(&c.write, "write", "", "")
	fs.DurationVar(&c.timeout, "timeout", 0, "")
	fs.StringVar(&c.dir, "dir", ".", "")
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, true, nil
	}
	if err != nil {
		return nil, false, err
	}
	if fs.NArg() > 0 {
		return nil, false, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "exclude" {
			c.excludeSet = true
		}
	})
	if *seed != "" {
		v, err := strconv.ParseUint(*seed, 10, 64)
		if err != nil {
			return nil, false, fmt.Errorf("-seed %q: want a decimal u64", *seed)
		}
		c.seed, c.seedSet = v, true
	}
	switch {
	case c.n < 0:
		return nil, false, fmt.Errorf("-n %d: want 0 (every mutant) or more", c.n)
	case c.seeds < 1:
		return nil, false, fmt.Errorf("-seeds %d: want at least 1", c.seeds)
	case c.parallel < 1:
		return nil, false, fmt.Errorf("-parallel %d: want at least 1", c.parallel)
	case c.timeout < 0:
		return nil, false, fmt.Errorf("-timeout %v: want a positive duration", c.timeout)
	case c.firstSeed > ^uint64(0)-uint64(c.seeds)+1:
		return nil, false, fmt.Errorf("-first-seed %d -seeds %d: the range passes the last u64", c.firstSeed, c.seeds)
	}
	c.voprFlags = strings.Fields(*voprFlags)
	for _, f := range c.voprFlags {
		switch strings.TrimLeft(strings.SplitN(f, "=", 2)[0], "-") {
		case "seed", "seeds", "duration", "parallel", "json", "keep-going", "shard":
			return nil, false, fmt.Errorf("-vopr-flags %q: %s is the campaign's own (use -first-seed, -seeds)", *voprFlags, f)
		}
	}
	for _, id := range strings.Split(*ids, ",") {
		if id = strings.TrimSpace(id); id != "" {
			c.ids = append(c.ids, id)
		}
	}
	if c.write != "" && len(c.ids) != 1 {
		return nil, false, errors.New("-write DIR needs exactly one -mutant ID")
	}
	return c, false, nil
}

func runMutants(args []string, stdout *checkedWriter, stderr io.Writer, e env) int {
	c, help, err := mutantsFlags(args, e.cpus)
	if help {
		io.WriteString(stdout, mutantsUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "vopr mutants: %v\n", err)
		io.WriteString(stderr, mutantsUsage)
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "vopr mutants: "+format+"\n", a...)
		return 1
	}
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	root, err := mutants.FindRoot(c.dir)
	if err != nil {
		return fail("%v", err)
	}
	keep, err := mutants.PackageFilter(c.pkg)
	if err != nil {
		fmt.Fprintf(stderr, "vopr mutants: %v\n", err)
		return 2
	}
	src, err := mutants.Load(goCmd, root, "./replica/...")
	if err != nil {
		return fail("%v", err)
	}
	var ex []mutants.Exclusion
	if c.exclude != "" {
		path := c.exclude
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		data, err := os.ReadFile(path)
		switch {
		case err != nil && (c.excludeSet || !errors.Is(err, os.ErrNotExist)):
			return fail("reading the exclusion file: %v", err)
		case err == nil:
			if ex, err = mutants.ParseExclusions(c.exclude, data); err != nil {
				fmt.Fprintf(stderr, "vopr mutants: %v\n", err)
				return 2
			}
		}
	}
	census, err := mutants.Enumerate(src, keep, ex)
	if err != nil {
		return fail("%v", err)
	}
	if len(census.Mutants) == 0 {
		fmt.Fprintf(stderr, "vopr mutants: -pkg %s: no mutants in those packages\n", c.pkg)
		return 2
	}
	var sample []mutants.Mutant
	if len(c.ids) > 0 {
		byID := map[string]*mutants.Mutant{}
		for i := range census.Mutants {
			byID[census.Mutants[i].ID] = &census.Mutants[i]
		}
		missing := 0
		for _, id := range c.ids {
			m := byID[id]
			if m == nil {
				// An id from an older tree: say so, judge the rest.
				fmt.Fprintf(stderr, "vopr mutants: -mutant %s: no such mutant in -pkg %s (excluded, or the code changed; -list prints the ids)\n", id, c.pkg)
				missing++
				continue
			}
			sample = append(sample, *m)
		}
		if len(sample) == 0 {
			return 2
		}
		if missing > 0 {
			fmt.Fprintf(stdout, "%d of the %d ids given are not mutants of this tree: skipped\n", missing, len(c.ids))
		}
	} else {
		if !c.seedSet {
			c.seed = e.random()
		}
		fmt.Fprintf(stdout, "seed=%d\n", c.seed)
		sample = mutants.Sample(census.Mutants, c.n, c.seed)
	}
	writeCensus(stdout, c, census, len(sample))
	if c.write != "" {
		return writeMutant(stdout, stderr, src, &sample[0], c)
	}
	if c.list {
		for i := range sample {
			m := &sample[i]
			fmt.Fprintf(stdout, "%s %s: %s  ->  %s\n", m.ID, orDashed(m.Func), m.Before, orDashed(m.After))
		}
		return 0
	}
	var jsonOut *os.File
	if c.out != "" {
		if jsonOut, err = os.Create(c.out); err != nil {
			return fail("%v", err)
		}
		defer jsonOut.Close()
	}
	interrupts, release := e.interrupts()
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-interrupts:
			cancel()
		case <-ctx.Done():
		}
	}()
	pkgs := map[string]bool{}
	var pkgList []string
	for i := range sample {
		if !pkgs[sample[i].Pkg] {
			pkgs[sample[i].Pkg] = true
			pkgList = append(pkgList, sample[i].Pkg)
		}
	}
	index := map[string]int{}
	for i := range sample {
		index[sample[i].ID] = i
	}
	done := make([]*mutants.Record, len(sample))
	next := 0
	var writeErr error
	cfg := mutants.Config{Go: goCmd, Target: "./cmd/vopr", FirstSeed: c.firstSeed, Seeds: c.seeds, Flags: c.voprFlags,
		Parallel: c.parallel, VOPRTimeout: c.timeout,
		Done: func(r *mutants.Record) {
			done[index[r.ID]] = r
			for next < len(done) && done[next] != nil {
				writeMutantLine(stdout, next+1, len(done), done[next])
				if jsonOut != nil && writeErr == nil {
					writeErr = writeRecord(jsonOut, done[next])
				}
				next++
			}
		}}
	start := e.now()
	fmt.Fprintf(stdout, "baseline: building the unmutated VOPR, running its campaign (seeds %d..%d) and the unit tests of %d packages\n",
		c.firstSeed, c.firstSeed+uint64(c.seeds)-1, len(pkgList))
	runner, err := mutants.NewRunner(ctx, src, cfg, pkgList)
	if err != nil {
		return fail("%v", err)
	}
	defer runner.Close()
	b := runner.Baseline()
	fmt.Fprintf(stdout, "baseline: campaign %.1f s, unit tests %s\n", b.VOPRSeconds, unitTimes(b, pkgList))
	records, runErr := runner.Run(ctx, sample)
	wall := e.now().Sub(start)
	if writeErr != nil {
		return fail("writing %s: %v", c.out, writeErr)
	}
	fmt.Fprintln(stdout)
	mutants.TallyOf(records).WriteTable(stdout, records)
	fmt.Fprintln(stdout, "\nVOPR kills by violation:")
	for _, l := range mutants.KillsByViolation(records) {
		fmt.Fprintln(stdout, l)
	}
	fmt.Fprintf(stdout, "\n%d mutants, %d VOPR seeds each from seed %d, %d at once, in %s\n", len(sample), c.seeds, c.firstSeed, c.parallel, wall.Round(time.Second))
	if runErr != nil {
		fmt.Fprintf(stderr, "vopr mutants: interrupted: the table covers the mutants that finished\n")
		return exitInterrupted
	}
	return 0
}

func orDashed(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeCensus(w io.Writer, c *mutantsConfig, census *mutants.Census, drawn int) {
	skipped, excluded := 0, 0
	for _, n := range census.Skipped {
		skipped += n
	}
	for _, n := range census.Excluded {
		excluded += n
	}
	fmt.Fprintf(w, "census: %d mutants in %s (%d sites skipped by rule, %d mutants excluded by %s); %d drawn\n",
		len(census.Mutants), c.pkg, skipped, excluded, orNone(c.exclude), drawn)
	for _, rule := range sortedStrings(census.Skipped) {
		fmt.Fprintf(w, "  skipped %5d  %s\n", census.Skipped[rule], rule)
	}
	for _, reason := range sortedStrings(census.Excluded) {
		fmt.Fprintf(w, "  excluded %4d  %s\n", census.Excluded[reason], reason)
	}
	for _, s := range census.Stale {
		fmt.Fprintf(w, "  stale exclusion (line %d matches no mutant): %s\n", s.LineNo, s)
	}
}

func orNone(s string) string {
	if s == "" {
		return "no exclusion file"
	}
	return s
}

func sortedStrings(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func unitTimes(b mutants.Baseline, pkgs []string) string {
	var parts []string
	for _, p := range pkgs {
		parts = append(parts, fmt.Sprintf("%s %.1f s", p, b.UnitSeconds[p]))
	}
	return strings.Join(parts, ", ")
}

// writeMutantLine prints one judged mutant: its id, both verdicts, time.
func writeMutantLine(w io.Writer, i, n int, r *mutants.Record) {
	v := r.VOPR.Verdict
	switch {
	case r.Build != "ok":
		fmt.Fprintf(w, "[%d/%d] %s: does not build: %s\n", i, n, r.ID, r.BuildError)
		return
	case r.VOPR.Verdict == mutants.Killed && r.VOPR.Seed != "":
		v = fmt.Sprintf("killed at seed %s (%s: %s)", r.VOPR.Seed, r.VOPR.Class, r.VOPR.Violation)
	case r.VOPR.Verdict == mutants.Killed || r.VOPR.Verdict == mutants.Timeout:
		v = fmt.Sprintf("%s (%s: %s)", r.VOPR.Verdict, r.VOPR.Class, r.VOPR.Detail)
	case r.VOPR.Verdict == mutants.Survived:
		v = fmt.Sprintf("survived %d seeds", r.VOPR.Seeds)
	}
	u := r.Unit.Verdict
	if r.Unit.Test != "" {
		u += " (" + r.Unit.Test + ")"
	}
	fmt.Fprintf(w, "[%d/%d] %s: vopr %s; unit %s; %.1f s\n", i, n, r.ID, v, u, r.Seconds)
}

func writeRecord(f *os.File, r *mutants.Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	return err
}

// writeMutant writes one mutant's file and overlay to c.write and prints
// how to build and run that VOPR.
func writeMutant(stdout *checkedWriter, stderr io.Writer, src *mutants.Source, m *mutants.Mutant, c *mutantsConfig) int {
	dir, err := filepath.Abs(c.write)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	var overlay string
	if err == nil {
		overlay, err = mutants.WriteOverlay(src, m, dir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "vopr mutants: -write %s: %v\n", c.write, err)
		return 1
	}
	fmt.Fprintf(stdout, "%s %s: %s  ->  %s\n", m.ID, orDashed(m.Func), m.Before, orDashed(m.After))
	fmt.Fprintf(stdout, "overlay: %s\n", overlay)
	fmt.Fprintf(stdout, "build:   go build -overlay %s -o %s ./cmd/vopr\n", overlay, filepath.Join(dir, "vopr"))
	fmt.Fprintf(stdout, "run:     %s -seed %d -seeds %d %s\n", filepath.Join(dir, "vopr"), c.firstSeed, c.seeds, strings.Join(c.voprFlags, " "))
	fmt.Fprintf(stdout, "test:    go test -overlay %s ./%s\n", overlay, m.Pkg)
	return 0
}
