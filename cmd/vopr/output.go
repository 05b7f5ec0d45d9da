package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/iggy-vopr/vopr/sim"
)

// Output of a run (text mode), deterministic: no wall time anywhere.
//
//	seed=N
//	build version=V revision=R modified=M go=G  (the build: same build, same line)
//	options replicas=3 clients=5 ...            (Options.Fields, wrapped; a knob the
//	                                             replica count cannot carry reads
//	                                             rollback=false(needs 3 replicas))
//	violation: ...                              (a correctness or liveness failure;
//	error: ...                                   a simulator error)
//	evidence:                                   (Result.Evidence, one per line)
//	  ...
//	reproduce: vopr -seed N -knob=value ...
//	explanation: ...                            (a stall the protocol cannot avoid)
//	frames_per_op command=C frames=F per_op=X   (-performance only)
//	frames_per_message command=C frames=F per_message=X
//	seed=N result=... digest=HEX                (Result.Summary, always last)
//
// In a campaign a passing seed prints only its explanation (if any) and its
// summary line; a failing seed prints the whole block but the build line,
// which the campaign prints once, after its first seed=N.

const optionsWidth = 100

// writeOptions writes the options lines: every field, `name=value`, and
// after the value of a knob the replica count turned off, why in
// parentheses (needsMet).
func writeOptions(b *bytes.Buffer, o *sim.Options, off []disabled) {
	line := "options"
	for _, f := range o.Fields() {
		word := f.Name + "=" + f.Value
		for _, d := range off {
			if d.knob == f.Name {
				word += "(" + d.why + ")"
			}
		}
		if len(line)+1+len(word) > optionsWidth && line != "options" {
			b.WriteString(line + "\n")
			line = "options"
		}
		line += " " + word
	}
	b.WriteString(line + "\n")
}

// writeSeedText writes a seed's text output after its header (and the
// header too when compact and the seed failed); reproduce is the command
// that reproduces it.
func writeSeedText(b *bytes.Buffer, sr *seedRun, cfg *config, reproduce string, compact bool) {
	r := &sr.result
	failed := r.Outcome != sim.Pass
	if compact && failed {
		fmt.Fprintf(b, "seed=%d\n", sr.seed)
		writeOptions(b, &sr.opts, sr.off)
	}
	if failed {
		label := "violation"
		if r.Outcome == sim.SimError {
			label = "error"
		}
		fmt.Fprintf(b, "%s: %s\n", label, oneLine(r.Violation))
		if len(r.Evidence) > 0 {
			b.WriteString("evidence:\n")
			for _, e := range r.Evidence {
				fmt.Fprintf(b, "  %s\n", oneLine(e))
			}
		}
		fmt.Fprintf(b, "reproduce: %s\n", reproduce)
	}
	switch {
	case sr.determinism == determinismDiverged:
		fmt.Fprintf(b, "determinism: diverged: %s\n", oneLine(sr.divergence))
	case sr.determinism == determinismOK && !compact:
		// A campaign's passing seeds print their summary alone; a single
		// run says the check ran.
		b.WriteString("determinism: ok\n")
	}
	if r.Explanation != "" {
		fmt.Fprintf(b, "explanation: %s\n", oneLine(r.Explanation))
	}
	if sr.planned && !compact {
		fmt.Fprintf(b, "plan: firings=%d suppressed=%d missed=%d\n", sr.planFired, sr.planSuppressed, sr.planMissed)
	}
	if cfg.performance {
		writeFramesPerOp(b, r)
	}
	b.WriteString(r.Summary() + "\n")
}

// oneLine keeps a message on its line (a multi-line panic value, say).
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", " | ")
}

// writeFramesPerOp writes -performance's protocol-cost figure: frames sent
// per committed op, per command, sorted by command name.
func writeFramesPerOp(b *bytes.Buffer, r *sim.Result) {
	names := make([]string, 0, len(r.FramesByCommand))
	for n := range r.FramesByCommand {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		frames := r.FramesByCommand[n]
		perOp := "-"
		if r.Commits > 0 {
			perOp = fmt.Sprintf("%.3f", float64(frames)/float64(r.Commits))
		}
		fmt.Fprintf(b, "frames_per_op command=%s frames=%d per_op=%s\n", n, frames, perOp)
	}
	total := "-"
	if r.Commits > 0 {
		total = fmt.Sprintf("%.3f", float64(r.Frames)/float64(r.Commits))
	}
	fmt.Fprintf(b, "frames_per_op command=all frames=%d per_op=%s\n", r.Frames, total)
	writeFramesPerMessage(b, r)
}

// writeFramesPerMessage writes -performance's partition-plane cost: the
// frames of the partition planes delivered between replicas per message
// committed, per command, sorted by command name.
func writeFramesPerMessage(b *bytes.Buffer, r *sim.Result) {
	names := make([]string, 0, len(r.PartitionFrames))
	all := uint64(0)
	for n, f := range r.PartitionFrames {
		names = append(names, n)
		all += f
	}
	sort.Strings(names)
	per := func(frames uint64) string {
		if r.Messages == 0 {
			return "-"
		}
		return fmt.Sprintf("%.3f", float64(frames)/float64(r.Messages))
	}
	for _, n := range names {
		fmt.Fprintf(b, "frames_per_message command=%s frames=%d per_message=%s\n", n, r.PartitionFrames[n], per(r.PartitionFrames[n]))
	}
	fmt.Fprintf(b, "frames_per_message command=all frames=%d messages=%d per_message=%s\n", all, r.Messages, per(all))
}

// jsonObject writes a JSON object with its keys in the order given.
type jsonObject struct {
	b *bytes.Buffer
	n int
}

func newJSONObject(b *bytes.Buffer) *jsonObject {
	b.WriteByte('{')
	return &jsonObject{b: b}
}

func (j *jsonObject) key(k string) {
	if j.n > 0 {
		j.b.WriteByte(',')
	}
	j.n++
	kb, _ := json.Marshal(k)
	j.b.Write(kb)
	j.b.WriteByte(':')
}

func (j *jsonObject) value(k string, v any) {
	j.key(k)
	vb, err := json.Marshal(v)
	if err != nil {
		vb, _ = json.Marshal(fmt.Sprint(v))
	}
	j.b.Write(vb)
}

func (j *jsonObject) raw(k string, raw []byte) {
	j.key(k)
	j.b.Write(raw)
}

func (j *jsonObject) close() { j.b.WriteByte('}') }

// jsonSchema is the version of vopr's JSON objects (the "schema" key of
// each): it changes when a key changes meaning or goes away, not when one
// is added. README.md documents every key.
const jsonSchema = 1

// jsonKeys are the keys of a seed's JSON object, in order: the schema,
// those of the summary line, then the rest.
var jsonKeys = []string{
	"schema",
	"seed", "result", "liveness", "replicas", "clients", "ticks", "requests", "commits", "view_changes", "groups", "messages", "polls", "checkpoints", "state_transfers", "beyond_f_losses",
	"crashes", "restarts", "partitions", "resets", "storage_faults", "frames", "digest",
	"evictions", "indefinite", "state_transfers_metadata", "state_transfers_partition", "porcupine", "determinism", "divergence",
	"losses_beyond_f", "build", "options", "disabled", "probes", "violation", "explanation", "evidence",
	"frames_by_command", "reproduce",
}

// writeSeedJSON writes a seed as one JSON object on one line. Maps (probes,
// frames_by_command, disabled) have sorted keys; options keep the order of
// Fields. The seed is a decimal string: a u64 does not survive a JSON
// number in jq or JavaScript (doubles), 11971028900399579235 would read
// 11971028900399580000.
func writeSeedJSON(b *bytes.Buffer, sr *seedRun, reproduce string, build *buildInfo) {
	r := &sr.result
	j := newJSONObject(b)
	j.value("schema", jsonSchema)
	j.value("seed", strconv.FormatUint(r.Seed, 10))
	j.value("result", r.Outcome.String())
	j.value("liveness", r.Liveness.String())
	j.value("replicas", r.Options.Replicas)
	j.value("clients", r.Options.Clients)
	j.value("ticks", r.Ticks)
	j.value("requests", r.Requests)
	j.value("commits", r.Commits)
	j.value("view_changes", r.ViewChanges)
	j.value("groups", r.Groups)
	j.value("messages", r.Messages)
	j.value("polls", r.Polls)
	j.value("checkpoints", r.Checkpoints)
	j.value("state_transfers", r.StateTransfers())
	j.value("beyond_f_losses", r.LossTotal())
	j.value("crashes", r.Crashes)
	j.value("restarts", r.Restarts)
	j.value("partitions", r.Partitions)
	j.value("resets", r.Resets)
	j.value("storage_faults", r.StorageFaults)
	j.value("frames", r.Frames)
	j.value("digest", fmt.Sprintf("%016x", r.Digest))
	// Beyond the summary line's keys: sessions evicted, and requests whose
	// outcome the eviction left unknown, so that -json shows evictions happen.
	j.value("evictions", r.Evictions)
	j.value("indefinite", r.Indefinite)
	j.value("state_transfers_metadata", r.StateTransfersMetadata)
	j.value("state_transfers_partition", r.StateTransfersPartition)
	// porcupine's verdict on the metadata history (-porcupine), "off"
	// without it.
	if r.Porcupine != nil {
		j.value("porcupine", r.Porcupine.Word())
	} else {
		j.value("porcupine", "off")
	}
	// -check-determinism's verdict, and the first diverging event.
	j.value("determinism", sr.determinism)
	j.value("divergence", sr.divergence)
	// The losses beyond the memory-loss bound, by name (beyond_f_losses
	// sums them).
	var lb bytes.Buffer
	losses := newJSONObject(&lb)
	for _, l := range r.Losses {
		losses.value(l.Name, l.Count)
	}
	losses.close()
	j.raw("losses_beyond_f", lb.Bytes())
	j.raw("build", buildJSON(build))

	var ob bytes.Buffer
	opts := newJSONObject(&ob)
	for i := range knobs {
		v, _ := knobValue(&knobs[i], &sr.opts)
		opts.value(knobs[i].name, v)
	}
	opts.close()
	j.raw("options", ob.Bytes())
	off := map[string]string{}
	for _, d := range sr.off {
		off[d.knob] = d.why
	}
	j.value("disabled", off)

	probes := r.Probes
	if probes == nil {
		probes = map[string]int{}
	}
	j.value("probes", probes)
	j.value("violation", r.Violation)
	j.value("explanation", r.Explanation)
	evidence := r.Evidence
	if evidence == nil {
		evidence = []string{}
	}
	j.value("evidence", evidence)
	frames := r.FramesByCommand
	if frames == nil {
		frames = map[string]uint64{}
	}
	j.value("frames_by_command", frames)
	j.value("reproduce", reproduce)
	j.close()
	b.WriteByte('\n')
}

// buildJSON is the build as a JSON object: module, version, revision,
// modified (a string: "true", "false" or "unknown"), go.
func buildJSON(b *buildInfo) []byte {
	var buf bytes.Buffer
	j := newJSONObject(&buf)
	j.value("module", b.module)
	j.value("version", b.version)
	j.value("revision", b.revision)
	j.value("modified", b.modified)
	j.value("go", b.goVersion)
	j.close()
	return buf.Bytes()
}

// seedSummary is what a campaign's table needs of one seed: the campaign
// takes it from the seed's run, vopr report from the seed's -json line, so
// that both print the one table.
type seedSummary struct {
	seed        uint64
	outcome     sim.Outcome
	liveness    sim.LivenessVerdict
	violation   string
	reproduce   string
	options     sim.Options    // the options it ran with: the trap families
	probes      map[string]int // coverage probe to times fired
	determinism string         // determinismOff, OK or Diverged
}

// summary is sr's seedSummary; reproduce is its reproduction command.
func (sr *seedRun) summary(reproduce string) seedSummary {
	r := &sr.result
	return seedSummary{seed: sr.seed, outcome: r.Outcome, liveness: r.Liveness, violation: r.Violation,
		reproduce: reproduce, options: r.Options, probes: r.Probes, determinism: sr.determinism}
}

// campaignStats is what a campaign's summary table reports, over the seeds
// it printed.
type campaignStats struct {
	seeds int
	// first and last are the lowest and the highest seed added (seeds
	// come in seed order); shard is the campaign's -shard, "" when whole.
	first, last uint64
	shard       string
	// checked and diverged count the seeds -check-determinism ran twice,
	// and those whose two digests differed.
	checked, diverged int
	byOutcome         map[sim.Outcome]int
	byLiveness        map[sim.LivenessVerdict]int
	worst             sim.Outcome
	failures          []failure
	probes            map[string]*probeCount
	// traps: per sim.Traps() rule, the seeds of its family and those its
	// probe fired in.
	traps []trapCount
}

type trapCount struct{ family, fired int }

type failure struct {
	seed      uint64
	outcome   sim.Outcome
	violation string
	reproduce string
}

type probeCount struct {
	seeds int // seeds it fired in
	fired int // times it fired, over all seeds
}

func newCampaignStats() *campaignStats {
	return &campaignStats{
		byOutcome:  map[sim.Outcome]int{},
		byLiveness: map[sim.LivenessVerdict]int{},
		probes:     map[string]*probeCount{},
		traps:      make([]trapCount, len(sim.Traps())),
	}
}

// add counts one seed; seeds come in seed order.
func (s *campaignStats) add(r seedSummary) {
	if s.seeds == 0 || r.seed < s.first {
		s.first = r.seed
	}
	if s.seeds == 0 || r.seed > s.last {
		s.last = r.seed
	}
	s.seeds++
	s.byOutcome[r.outcome]++
	s.byLiveness[r.liveness]++
	if r.outcome.Worse(s.worst) {
		s.worst = r.outcome
	}
	if r.outcome != sim.Pass {
		s.failures = append(s.failures, failure{r.seed, r.outcome, oneLine(r.violation), r.reproduce})
	}
	switch r.determinism {
	case determinismDiverged:
		s.diverged++
		fallthrough
	case determinismOK:
		s.checked++
	}
	for i, t := range sim.Traps() {
		if sim.InFamily(t.Family, r.options) {
			s.traps[i].family++
			if sim.ProbeFired(r.probes, t.Probe) {
				s.traps[i].fired++
			}
		}
	}
	for name, n := range r.probes {
		if n <= 0 {
			continue
		}
		p := s.probes[name]
		if p == nil {
			p = &probeCount{}
			s.probes[name] = p
		}
		p.seeds++
		p.fired += n
	}
}

// writeTable writes the campaign's summary table: the seeds run, the
// first and last (start when there were none), the shard, and
// `interrupted` when a signal stopped the campaign; outcomes by kind,
// liveness verdicts, what -check-determinism found, the failing seeds with
// their reproduction commands, each probe that fired (by name) with the
// number of seeds it fired in and the times it fired in all, and the
// declared probes that never fired. vopr report prints it too, for the
// seeds of many campaigns.
func (s *campaignStats) writeTable(w io.Writer, start uint64, interrupted bool) {
	var b bytes.Buffer
	if s.seeds > 0 {
		fmt.Fprintf(&b, "campaign seeds=%d first=%d last=%d", s.seeds, s.first, s.last)
	} else {
		fmt.Fprintf(&b, "campaign seeds=0 first=%d", start)
	}
	if s.shard != "" {
		b.WriteString(" shard=" + s.shard)
	}
	if interrupted {
		b.WriteString(" interrupted")
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	for _, o := range []sim.Outcome{sim.Pass, sim.Correctness, sim.Liveness, sim.SimError} {
		fmt.Fprintf(tw, "  result=%s\t%d\n", o, s.byOutcome[o])
	}
	for _, v := range []sim.LivenessVerdict{sim.LivenessConverged, sim.LivenessExplained, sim.LivenessSkipped, sim.LivenessFailed} {
		fmt.Fprintf(tw, "  liveness=%s\t%d\n", v, s.byLiveness[v])
	}
	tw.Flush()
	if s.checked > 0 {
		fmt.Fprintf(&b, "determinism: %d seeds run twice, %d diverged\n", s.checked, s.diverged)
	}
	if len(s.failures) > 0 {
		fmt.Fprintf(&b, "failing seeds: %d\n", len(s.failures))
		for _, f := range s.failures {
			fmt.Fprintf(&b, "  seed=%d result=%s violation=%q\n    reproduce: %s\n", f.seed, f.outcome, f.violation, f.reproduce)
		}
	}
	names := make([]string, 0, len(s.probes))
	for n := range s.probes {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "probes fired: %d\n", len(names))
	if len(names) > 0 {
		tw = tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
		fmt.Fprintf(tw, "  probe\tseeds\tfired\n")
		for _, n := range names {
			fmt.Fprintf(tw, "  %s\t%d\t%d\n", n, s.probes[n].seeds, s.probes[n].fired)
		}
		tw.Flush()
	}
	// The declared coverage probes (sim.ProbeCatalogue) that fired in no
	// seed, with the scenario family meant to reach each.
	fired := make(map[string]int, len(s.probes))
	for n, p := range s.probes {
		fired[n] = p.fired
	}
	never := sim.NeverFired(fired)
	fmt.Fprintf(&b, "never fired: %d of %d declared probes\n", len(never), len(sim.ProbeCatalogue()))
	if len(never) > 0 {
		tw = tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
		fmt.Fprintf(tw, "  probe\tmeant to be reached by\n")
		for _, d := range never {
			name := d.Name
			if d.Prefix {
				name += "..."
			}
			fmt.Fprintf(tw, "  %s\t%s\n", name, d.Scenario)
		}
		tw.Flush()
	}
	s.writeTraps(&b)
	w.Write(b.Bytes())
}

// trapShareMin is the share of its family's seeds a trap's probe must fire
// in for the table not to flag it (issue 12: at least 1%).
const trapShareMin = 0.01

// writeTraps writes the trap section: for each rule of sim.Traps, the
// seeds of its scenario family, those its probe fired in and their share,
// flagged "below 1%" when under trapShareMin; then the rules no family
// reaches, with why.
func (s *campaignStats) writeTraps(b *bytes.Buffer) {
	traps := sim.Traps()
	fmt.Fprintf(b, "trap probes: %d rules (consensus.md's traps and corrections, the merge), fired in seeds of their family\n", len(traps))
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  rule\tprobe\tfamily\tseeds\tfired\tshare\n")
	below := 0
	for i, t := range traps {
		c := s.traps[i]
		share := "-"
		if c.family > 0 {
			share = fmt.Sprintf("%.1f%%", 100*float64(c.fired)/float64(c.family))
			if float64(c.fired) < trapShareMin*float64(c.family) {
				share += " below 1%"
				below++
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\t%s\n", t.Rule, t.Probe, t.Family, c.family, c.fired, share)
	}
	tw.Flush()
	fmt.Fprintf(b, "  below 1%% of their family: %d\n", below)
	unreached := sim.UnreachedRules()
	fmt.Fprintf(b, "unreached rules: %d\n", len(unreached))
	for _, u := range unreached {
		fmt.Fprintf(b, "  %s (%s): %s\n", u.Rule, u.Probe, u.Why)
	}
}

// campaignRecord is a campaign's first or last line with -json (key
// "campaign": "start" or "end"): the wall-clock times its seeds ran
// between, which vopr report turns into seeds per second. Wall time is
// allowed here, in records of when the campaign ran, never in a seed's
// line (whose bytes the seed alone decides).
type campaignRecord struct {
	kind        string // "start" or "end"
	first       uint64 // the campaign's first seed, N (every shard's the same)
	shard       shardFlag
	seeds       int  // end: seeds printed
	interrupted bool // end: a signal stopped it
	started     time.Time
	ended       time.Time // end only
	build       []byte    // start only: the build, as buildJSON writes it
}

// wallTime is how a record writes a wall-clock time: UTC, RFC 3339 with
// the nanoseconds the clock gave.
func wallTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// seedsPerSecond is n seeds over wall, 0 when no time passed.
func seedsPerSecond(n int, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return float64(n) / wall.Seconds()
}

// writeCampaignRecord writes rec as one JSON line, keys in this order:
// schema, campaign, first, shard, then started_at and build (start), or
// seeds, interrupted, started_at, ended_at, wall_seconds and
// seeds_per_second (end).
func writeCampaignRecord(b *bytes.Buffer, rec *campaignRecord) {
	j := newJSONObject(b)
	j.value("schema", jsonSchema)
	j.value("campaign", rec.kind)
	j.value("first", strconv.FormatUint(rec.first, 10))
	j.value("shard", rec.shard.String())
	if rec.kind == "start" {
		j.value("started_at", wallTime(rec.started))
		j.raw("build", rec.build)
	} else {
		wall := rec.ended.Sub(rec.started)
		j.value("seeds", rec.seeds)
		j.value("interrupted", rec.interrupted)
		j.value("started_at", wallTime(rec.started))
		j.value("ended_at", wallTime(rec.ended))
		j.value("wall_seconds", wall.Seconds())
		j.value("seeds_per_second", seedsPerSecond(rec.seeds, wall))
	}
	j.close()
	b.WriteByte('\n')
}
