package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-vopr/vopr/sim"
)

// `vopr report` merges the -json output of campaigns (the shards of one
// campaign, each run with -shard i/n on its own machine) into the table a
// single campaign prints, with the same code (campaignStats), and adds the
// seeds per second the campaigns' start and end records give.

const reportUsage = `usage: vopr report [-json] FILE...
Merges the -json output of vopr campaigns (one JSON object per seed, between
the campaign's start and end records), typically the shards of one campaign
(-shard i/n), into the table one campaign prints: results by outcome,
liveness verdicts, failing seeds with their reproduction commands, probes
fired, never-fired probes, trap probes. Then the wall-time lines ("wall ..."):
each campaign's start and end and seeds per second, and the seeds of all of
them over the time from the first start to the last end. FILE "-" is stdin.
With -json, stdout gets the merged output as one campaign's -json (its start
record, the seeds' lines in seed order, its end record) and the table and
wall lines go to stderr. A seed given twice is an error (exit 1), as is a
missing shard of a sharded campaign (the table still prints). Exit status:
that of the merged campaign (129 > 128 > 1 > 0, 130 if one was interrupted
without a failure), 1 for unreadable input, 2 for usage.
`

// reportLine is what report reads of one JSON line: a seed's keys (of
// writeSeedJSON) or a campaign record's (writeCampaignRecord).
type reportLine struct {
	Schema      *int           `json:"schema"`
	Seed        *string        `json:"seed"`
	Campaign    string         `json:"campaign"`
	Result      string         `json:"result"`
	Liveness    string         `json:"liveness"`
	Options     map[string]any `json:"options"`
	Probes      map[string]int `json:"probes"`
	Violation   string         `json:"violation"`
	Reproduce   string         `json:"reproduce"`
	Determinism string         `json:"determinism"`

	First       string          `json:"first"`
	Shard       string          `json:"shard"`
	Seeds       int             `json:"seeds"`
	Interrupted bool            `json:"interrupted"`
	StartedAt   string          `json:"started_at"`
	EndedAt     string          `json:"ended_at"`
	Build       json.RawMessage `json:"build"`
}

// reportSeed is one seed read: its summary, its line as given (for
// -json), and where it was.
type reportSeed struct {
	summary seedSummary
	line    []byte
	at      string // FILE:LINE
}

// reportCampaign is one campaign's records: its start and, when it
// finished, its end.
type reportCampaign struct {
	file             string
	first            uint64
	index, count     uint64 // the shard
	started, ended   time.Time
	hasStart, hasEnd bool
	seeds            int // the end record's
	interrupted      bool
	build            json.RawMessage
}

// runReport implements `vopr report`.
func runReport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "")
	usageTo := func(w io.Writer) { io.WriteString(w, reportUsage) }
	fs.Usage = func() {} // printed below, to stdout for -h
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usageTo(stdout)
			return 0
		}
		usageTo(stderr)
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "vopr report: give at least one FILE (the -json output of a campaign)")
		usageTo(stderr)
		return 2
	}
	var seeds []reportSeed
	var campaigns []*reportCampaign
	for _, name := range fs.Args() {
		s, c, err := readReportFile(name, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "vopr report: %v\n", err)
			return 1
		}
		seeds = append(seeds, s...)
		campaigns = append(campaigns, c...)
	}
	// Seed order, as a campaign prints them; the same seed twice would be
	// counted twice, so it is refused (a file given twice, two stages'
	// output, two campaigns from the same seed).
	slices.SortStableFunc(seeds, func(a, b reportSeed) int {
		switch {
		case a.summary.seed < b.summary.seed:
			return -1
		case a.summary.seed > b.summary.seed:
			return 1
		}
		return 0
	})
	for i := 1; i < len(seeds); i++ {
		if seeds[i].summary.seed == seeds[i-1].summary.seed {
			fmt.Fprintf(stderr, "vopr report: seed %d is in %s and in %s: give each campaign's output once (and one stage's at a time)\n",
				seeds[i].summary.seed, seeds[i-1].at, seeds[i].at)
			return 1
		}
	}
	code := 0
	for _, problem := range shardProblems(campaigns) {
		fmt.Fprintf(stderr, "vopr report: %s\n", problem)
		code = 1
	}

	stats := newCampaignStats()
	for _, s := range seeds {
		stats.add(s.summary)
	}
	interrupted := false
	var first uint64
	var started, ended time.Time
	var build json.RawMessage
	for i, c := range campaigns {
		if c.interrupted || !c.hasEnd {
			interrupted = true
		}
		if i == 0 || c.first < first {
			first = c.first
		}
		if i == 0 || c.started.Before(started) {
			started = c.started
		}
		if c.hasEnd && c.ended.After(ended) {
			ended = c.ended
		}
		if build == nil && c.build != nil {
			build = c.build
		}
	}

	var table bytes.Buffer
	stats.writeTable(&table, first, interrupted)
	writeWallLines(&table, campaigns, stats.seeds, started, ended)
	if *asJSON {
		var b bytes.Buffer
		if len(campaigns) > 0 {
			if build == nil {
				build = []byte("{}")
			}
			writeCampaignRecord(&b, &campaignRecord{kind: "start", first: first, started: started, build: build})
		}
		for _, s := range seeds {
			b.Write(s.line)
			b.WriteByte('\n')
		}
		if len(campaigns) > 0 {
			writeCampaignRecord(&b, &campaignRecord{kind: "end", first: first, seeds: stats.seeds,
				interrupted: interrupted, started: started, ended: ended})
		}
		stdout.Write(b.Bytes())
		stderr.Write(table.Bytes())
	} else {
		stdout.Write(table.Bytes())
	}
	if len(campaigns) == 0 {
		fmt.Fprintln(stderr, "vopr report: no campaign records (start, end) in the input: no seeds per second")
	}
	status := stats.worst.ExitCode()
	if interrupted && stats.worst == sim.Pass {
		status = exitInterrupted
	}
	return exitWorse(status, code)
}

// writeWallLines writes the wall-time lines: one per campaign (its shard,
// seeds, start, end, seeds per second, file), then the merge's: every
// seed over the time from the first start to the last end (the shards ran
// side by side, so that is the campaign's rate).
func writeWallLines(b *bytes.Buffer, campaigns []*reportCampaign, seeds int, started, ended time.Time) {
	for _, c := range campaigns {
		fmt.Fprintf(b, "wall shard=%d/%d first=%d", c.index, c.count, c.first)
		if !c.hasEnd {
			fmt.Fprintf(b, " started_at=%s ended_at=none (no end record: the campaign did not finish) file=%s\n", wallTime(c.started), c.file)
			continue
		}
		wall := c.ended.Sub(c.started)
		fmt.Fprintf(b, " seeds=%d started_at=%s ended_at=%s seconds=%.3f seeds_per_second=%.2f file=%s\n",
			c.seeds, wallTime(c.started), wallTime(c.ended), wall.Seconds(), seedsPerSecond(c.seeds, wall), c.file)
	}
	if len(campaigns) == 0 || ended.IsZero() {
		return
	}
	wall := ended.Sub(started)
	fmt.Fprintf(b, "wall campaigns=%d seeds=%d started_at=%s ended_at=%s seconds=%.3f seeds_per_second=%.2f\n",
		len(campaigns), seeds, wallTime(started), wallTime(ended), wall.Seconds(), seedsPerSecond(seeds, wall))
}

// shardProblems lists what is missing from the sharded campaigns read: for
// each first seed and shard count n > 1, the shards of 0..n-1 absent, or
// present twice.
func shardProblems(campaigns []*reportCampaign) []string {
	type key struct{ first, count uint64 }
	seen := map[key]map[uint64]int{}
	var keys []key
	for _, c := range campaigns {
		if c.count <= 1 {
			continue
		}
		k := key{c.first, c.count}
		if seen[k] == nil {
			seen[k] = map[uint64]int{}
			keys = append(keys, k)
		}
		seen[k][c.index]++
	}
	var problems []string
	for _, k := range keys {
		var missing, twice []string
		for i := range k.count {
			switch seen[k][i] {
			case 0:
				missing = append(missing, fmt.Sprintf("%d/%d", i, k.count))
			case 1:
			default:
				twice = append(twice, fmt.Sprintf("%d/%d", i, k.count))
			}
		}
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("the campaign from seed %d lacks shards %s: the table covers %d of its %d shards",
				k.first, strings.Join(missing, " "), int(k.count)-len(missing), k.count))
		}
		if len(twice) > 0 {
			problems = append(problems, fmt.Sprintf("the campaign from seed %d has shards %s more than once", k.first, strings.Join(twice, " ")))
		}
	}
	return problems
}

// readReportFile reads one file (or stdin for "-") of JSON lines.
func readReportFile(name string, stdin io.Reader) ([]reportSeed, []*reportCampaign, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		r = f
	} else if stdin == nil {
		return nil, nil, errors.New("-: no stdin")
	}
	var seeds []reportSeed
	var campaigns []*reportCampaign
	var open *reportCampaign // the last start record without its end
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<28) // a seed's evidence can make a long line
	for n := 1; sc.Scan(); n++ {
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		at := fmt.Sprintf("%s:%d", name, n)
		var l reportLine
		d := json.NewDecoder(bytes.NewReader(text))
		d.UseNumber() // option values parse back exactly, as the flags would
		if err := d.Decode(&l); err != nil || d.More() {
			return nil, nil, fmt.Errorf("%s: not one JSON object: %s", at, clip(text))
		}
		if l.Schema == nil || *l.Schema != jsonSchema {
			return nil, nil, fmt.Errorf("%s: not a vopr -json line of schema %d: %s", at, jsonSchema, clip(text))
		}
		switch {
		case l.Seed != nil:
			s, err := seedOfLine(&l)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %v", at, err)
			}
			seeds = append(seeds, reportSeed{summary: s, line: slices.Clone(text), at: at})
		case l.Campaign == "start" || l.Campaign == "end":
			c, err := campaignOfLine(&l, name)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %v", at, err)
			}
			if l.Campaign == "start" {
				campaigns = append(campaigns, c)
				open = c
				continue
			}
			if open != nil && open.first == c.first && open.index == c.index && open.count == c.count {
				open.hasEnd, open.ended, open.seeds, open.interrupted = true, c.ended, c.seeds, c.interrupted
			} else {
				campaigns = append(campaigns, c) // an end whose start was cut off: it names its start
			}
			open = nil
		default:
			return nil, nil, fmt.Errorf("%s: neither a seed's line nor a campaign record: %s", at, clip(text))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", name, err)
	}
	return seeds, campaigns, nil
}

// clip shortens a line for an error message.
func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// seedOfLine is the summary of a seed's line.
func seedOfLine(l *reportLine) (seedSummary, error) {
	seed, err := strconv.ParseUint(*l.Seed, 10, 64)
	if err != nil {
		return seedSummary{}, fmt.Errorf("seed %q: %v", *l.Seed, err)
	}
	s := seedSummary{seed: seed, violation: l.Violation, reproduce: l.Reproduce, probes: l.Probes, determinism: l.Determinism}
	if s.determinism == "" {
		s.determinism = determinismOff // written before -check-determinism existed
	}
	var ok bool
	if s.outcome, ok = parseOutcome(l.Result); !ok {
		return s, fmt.Errorf("seed %d: result %q", seed, l.Result)
	}
	if s.liveness, ok = parseLiveness(l.Liveness); !ok {
		return s, fmt.Errorf("seed %d: liveness %q", seed, l.Liveness)
	}
	if l.Options == nil {
		return s, fmt.Errorf("seed %d: no options", seed)
	}
	if s.options, err = optionsOfJSON(seed, l.Options); err != nil {
		return s, fmt.Errorf("seed %d: %v", seed, err)
	}
	return s, nil
}

// optionsOfJSON rebuilds the options a seed ran with from its "options"
// object (every knob by its flag name), as the knob flags would read the
// values: the table's trap families are functions of them. A knob the line
// lacks (one added after it was written) keeps its zero value.
func optionsOfJSON(seed uint64, m map[string]any) (sim.Options, error) {
	o := sim.Options{Seed: seed}
	for i := range knobs {
		k := &knobs[i]
		v, ok := m[k.name]
		if !ok {
			continue
		}
		var text string
		switch x := v.(type) {
		case json.Number:
			text = x.String()
		case bool:
			text = strconv.FormatBool(x)
		case string:
			text = x
		default:
			return o, fmt.Errorf("option %s: %v", k.name, v)
		}
		val, err := parseKnob(k, text)
		if err != nil {
			return o, fmt.Errorf("option %s=%s: %v", k.name, text, err)
		}
		setKnob(k, &o, val)
	}
	return o, nil
}

// parseOutcome reads a "result" value.
func parseOutcome(s string) (sim.Outcome, bool) {
	for _, o := range []sim.Outcome{sim.Pass, sim.Correctness, sim.Liveness, sim.SimError} {
		if o.String() == s {
			return o, true
		}
	}
	return 0, false
}

// parseLiveness reads a "liveness" value.
func parseLiveness(s string) (sim.LivenessVerdict, bool) {
	for _, v := range []sim.LivenessVerdict{sim.LivenessConverged, sim.LivenessExplained, sim.LivenessSkipped, sim.LivenessFailed} {
		if v.String() == s {
			return v, true
		}
	}
	return 0, false
}

// campaignOfLine is a campaign record.
func campaignOfLine(l *reportLine, file string) (*reportCampaign, error) {
	first, err := strconv.ParseUint(l.First, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("campaign record: first %q", l.First)
	}
	i, n, err := parseShard(l.Shard)
	if err != nil {
		return nil, fmt.Errorf("campaign record: shard %q: %v", l.Shard, err)
	}
	c := &reportCampaign{file: file, first: first, index: i, count: n, hasStart: l.Campaign == "start",
		seeds: l.Seeds, interrupted: l.Interrupted, build: l.Build}
	if c.started, err = time.Parse(time.RFC3339Nano, l.StartedAt); err != nil {
		return nil, fmt.Errorf("campaign record: started_at %q", l.StartedAt)
	}
	if l.Campaign == "end" {
		c.hasEnd = true
		if c.ended, err = time.Parse(time.RFC3339Nano, l.EndedAt); err != nil {
			return nil, fmt.Errorf("campaign record: ended_at %q", l.EndedAt)
		}
	}
	return c, nil
}
