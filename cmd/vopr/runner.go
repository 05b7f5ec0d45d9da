package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/iggy-vopr/vopr/sim"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// runner runs simulations for a parsed command line. Everything the outside
// world supplies (the simulator, the clock that bounds campaigns, the
// random seed, whether stderr is a terminal, the CPU count, interrupts, the
// build) is a field, so tests can fake it.
type runner struct {
	cfg        *config
	runSeed    func(sim.Options, sim.Outputs) sim.Result
	now        func() time.Time
	random     func() uint64
	terminal   bool // stderr is a terminal: show campaign progress there
	cpus       int  // simulations that can run at once (0: no bound)
	interrupts func() (<-chan struct{}, func())
	ticker     func() (<-chan time.Time, func())
	build      buildInfo
	out        *checkedWriter // stdout, which remembers its first write error
	stdout     io.Writer      // out, as a plain writer
	stderr     io.Writer
}

// seedRun is one finished seed: its result and its output, formatted.
type seedRun struct {
	seed   uint64
	opts   sim.Options // the options the seed ran with
	off    []disabled  // knobs its replica count could not carry (needsMet)
	result sim.Result
	out    []byte        // for stdout, deterministic
	wall   time.Duration // for -v only
	note   string        // for stderr: a simulator panic's stack, a trace I/O error
	// determinism is what -check-determinism found (determinismOff
	// without it); divergence names the first diverging event when the
	// two runs' digests differed.
	determinism string
	divergence  string
	// planned: the run recorded or replayed a fault plan; then the
	// firings it fired, the drawn ones a replay suppressed, and the plan's
	// firings that found no chance (plan.Gate.Stats).
	planned                               bool
	planFired, planSuppressed, planMissed int
}

// The verdicts of -check-determinism, as -json's "determinism" key spells
// them.
const (
	determinismOff      = "off"
	determinismOK       = "ok"
	determinismDiverged = "diverged"
)

func (r *seedRun) failed() bool { return r.result.Outcome != sim.Pass }

// safeRun calls the simulator, turning a panic that escapes it (sim.Run
// promises none) into a simulator error; note then holds the panic and its
// stack, for stderr.
func (rn *runner) safeRun(o sim.Options, out sim.Outputs) (res sim.Result, note string) {
	defer func() {
		if p := recover(); p != nil {
			note = fmt.Sprintf("vopr: seed %d: the simulator panicked: %v\n%s", o.Seed, p, bytes.TrimRight(debug.Stack(), "\n"))
			res = sim.Result{Seed: o.Seed, Options: o, Outcome: sim.SimError,
				Violation: fmt.Sprintf("simulator panic: %v", p)}
		}
	}()
	return rn.runSeed(o, out), ""
}

// tracePath is where seed's trace goes: -trace FILE as given for one run,
// with the seed inserted before the extension in a campaign.
func (c *config) tracePath(seed uint64) string { return c.perSeed(c.trace, seed) }

// capturePath is where seed's capture goes, named as its trace is.
func (c *config) capturePath(seed uint64) string { return c.perSeed(c.capture, seed) }

func (c *config) perSeed(path string, seed uint64) string {
	if path == "" || !c.campaign() {
		return path
	}
	ext := filepath.Ext(path)
	if strings.ContainsRune(ext, filepath.Separator) {
		ext = ""
	}
	return strings.TrimSuffix(path, ext) + "." + strconv.FormatUint(seed, 10) + ext
}

// openTrace opens a trace file write-only, created or truncated. Not
// os.Create, which opens read-write: -trace /dev/stdout | head -1 then
// hangs, the process holding a reader of its own pipe, so that the pipe
// never breaks when head exits and the writer blocks once it fills.
func openTrace(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
}

// output is one -trace or -capture file of a seed: buffered, and checked at
// the end of the run.
type output struct {
	flag string
	file *os.File
	buf  *bufio.Writer
	err  error // an output that already failed (the plan file)
}

func openOutput(flag, path string) (*output, error) {
	f, err := openTrace(path)
	if err != nil {
		return nil, err
	}
	return &output{flag: flag, file: f, buf: bufio.NewWriterSize(f, 1<<16)}, nil
}

// close flushes and closes the file; the first error.
func (o *output) close() error {
	if o.err != nil {
		return o.err
	}
	err := o.buf.Flush()
	if cerr := o.file.Close(); err == nil {
		err = cerr
	}
	return err
}

// porcupineTimeout bounds porcupine's search per seed (-porcupine): the
// histories of swarm seeds take milliseconds, and a search that runs out
// reports unknown rather than hold a campaign.
const porcupineTimeout = 60 * time.Second

// runOne runs one seed with its options and formats its output.
func (rn *runner) runOne(o sim.Options, off []disabled, compact bool) *seedRun {
	sr := &seedRun{seed: o.Seed, opts: o, off: off, determinism: determinismOff}
	outs := sim.Outputs{Porcupine: rn.cfg.porcupine, PorcupineTimeout: porcupineTimeout}
	var files []*output
	for _, want := range []struct {
		flag, path string
		set        func(w io.Writer)
	}{
		{"trace", rn.cfg.tracePath(o.Seed), func(w io.Writer) { outs.Trace = w }},
		{"capture", rn.cfg.capturePath(o.Seed), func(w io.Writer) { outs.Capture = w }},
	} {
		if want.path == "" {
			continue
		}
		f, err := openOutput(want.flag, want.path)
		if err != nil {
			for _, g := range files {
				g.close()
			}
			sr.note = fmt.Sprintf("vopr: seed %d: -%s: %v", o.Seed, want.flag, err)
			sr.result = sim.Result{Seed: o.Seed, Options: o, Outcome: sim.SimError,
				Violation: "cannot create the " + want.flag + " file: " + err.Error()}
			sr.out = rn.format(sr, compact)
			return sr
		}
		files = append(files, f)
		want.set(f.buf)
	}
	gate := rn.cfg.planGate()
	outs.Plan = gate
	outs.Branch = rn.cfg.branch.b
	start := rn.now()
	sr.result, sr.note = rn.safeRun(o, outs)
	if gate != nil {
		sr.planFired, sr.planSuppressed, sr.planMissed = gate.Stats()
		sr.planned = true
		if err := rn.cfg.writeSeedPlan(o.Seed, gate); err != nil {
			files = append(files, &output{flag: "plan", err: err})
		}
	}
	if rn.cfg.checkDeterminism {
		rn.checkDeterminism(sr)
	}
	sr.wall = rn.now().Sub(start)
	for _, f := range files {
		if err := f.close(); err != nil {
			// The simulation itself is fine; the file is not. Say so on
			// stderr and count the seed as a simulator error at least.
			if sr.note != "" {
				sr.note += "\n"
			}
			sr.note += fmt.Sprintf("vopr: seed %d: writing the %s: %v", o.Seed, f.flag, err)
			if sim.SimError.Worse(sr.result.Outcome) {
				sr.result.Outcome = sim.SimError
				sr.result.Violation = "writing the " + f.flag + " failed: " + err.Error()
			}
		}
	}
	sr.out = rn.format(sr, compact)
	return sr
}

// checkDeterminism is -check-determinism: it runs sr's seed once more and
// compares the digests. The second run is a plain one (no trace, capture
// or porcupine: a traced or captured run has the digest of a plain one,
// so a difference there is caught too). When they differ, two more runs
// record the kernel's event trace, and the divergence names the first
// event where those part; a divergence that does not recur in them says
// so. The seed then fails as a simulator error, unless its first run
// failed worse (a correctness or liveness failure keeps its class: the
// divergence is reported beside it).
func (rn *runner) checkDeterminism(sr *seedRun) {
	branch := rn.cfg.branch.b // a branch's second run is that branch too
	again, note := rn.safeRun(sr.opts, sim.Outputs{Branch: branch})
	if note != "" {
		sr.note = joinNotes(sr.note, note)
	}
	if again.Digest == sr.result.Digest {
		sr.determinism = determinismOK
		return
	}
	sr.determinism = determinismDiverged
	var a, b []kernel.TraceEntry
	for _, t := range []*[]kernel.TraceEntry{&a, &b} {
		if _, note := rn.safeRun(sr.opts, sim.Outputs{RecordTrace: t, Branch: branch}); note != "" {
			sr.note = joinNotes(sr.note, note)
		}
	}
	where := kernel.DescribeDivergence(a, b)
	if where == "" {
		where = fmt.Sprintf("the two runs with the event trace recorded agreed (%d events): the divergence did not recur", len(a))
	}
	sr.divergence = fmt.Sprintf("digest %016x, then %016x; %s", sr.result.Digest, again.Digest, where)
	if sim.SimError.Worse(sr.result.Outcome) {
		sr.result.Outcome = sim.SimError
		sr.result.Violation = fmt.Sprintf("nondeterminism: two runs of seed %d gave digests %016x and %016x", sr.seed, sr.result.Digest, again.Digest)
	}
}

// joinNotes puts two stderr notes on lines of their own.
func joinNotes(a, b string) string {
	if a == "" {
		return b
	}
	return a + "\n" + b
}

// reproduce is the command that reproduces sr: the seed's world, and
// -check-determinism for a seed whose runs diverged (a single run of it
// shows nothing wrong).
func (rn *runner) reproduce(sr *seedRun) string {
	cmd := rn.cfg.reproduce(sr.seed)
	if sr.determinism == determinismDiverged {
		cmd += " -check-determinism"
	}
	return cmd
}

// format is a seed's stdout: a JSON line with -json; otherwise text (see
// writeSeedText).
func (rn *runner) format(sr *seedRun, compact bool) []byte {
	var b bytes.Buffer
	if rn.cfg.json {
		writeSeedJSON(&b, sr, rn.reproduce(sr), &rn.build)
	} else {
		writeSeedText(&b, sr, rn.cfg, rn.reproduce(sr), compact)
	}
	return b.Bytes()
}

// main runs the parsed command line and returns the exit status.
func (rn *runner) main() int {
	if rn.cfg.version {
		fmt.Fprintf(rn.stdout, "vopr %s %s\n", rn.build.module, rn.build.words())
		return 0
	}
	if rn.cfg.campaign() {
		return rn.campaign()
	}
	return rn.single()
}

// single runs one seed (or -performance). The seed and the options are
// printed before the run, so a run that never returns still names its seed.
func (rn *runner) single() int {
	cfg := rn.cfg
	seed := cfg.seed.value
	if !cfg.seed.set && !cfg.performance {
		seed = rn.random()
	}
	o, off, err := cfg.options(seed)
	if err != nil {
		return rn.usage(err.Error())
	}
	if !cfg.json {
		var b bytes.Buffer
		fmt.Fprintf(&b, "seed=%d\n", o.Seed)
		writeBuild(&b, &rn.build)
		writeOptions(&b, &o, off)
		rn.stdout.Write(b.Bytes())
	}
	sr := rn.runOne(o, off, false)
	rn.stdout.Write(sr.out)
	if sr.note != "" {
		fmt.Fprintln(rn.stderr, sr.note)
	}
	if cfg.verbose {
		fmt.Fprintf(rn.stderr, "vopr: seed=%d wall=%v\n", sr.seed, sr.wall)
	}
	return sr.result.Outcome.ExitCode()
}

// usage reports a bad command line: the message, the usage, exit 2.
func (rn *runner) usage(msg string) int {
	fmt.Fprintf(rn.stderr, "vopr: %s\n", msg)
	writeUsage(rn.stderr)
	return 2
}

// exitInterrupted is the status of a campaign stopped by SIGINT or SIGTERM
// before it found a failure (128 + SIGINT, as a shell reports it).
const exitInterrupted = 130

// simultaneous is how many simulations the campaign runs at once: -parallel,
// but never more than the CPUs. A simulation is single-threaded, so more
// at once than there are CPUs adds no speed, only worlds held in memory
// (each is tens of megabytes: -parallel 200 on 2 cores reached 7.9 GB and
// printed nothing for minutes, every seed advancing at 1/100 speed). The
// output does not depend on it, so it is capped, with a warning.
func (rn *runner) simultaneous() int {
	p := rn.cfg.parallel
	if rn.cpus > 0 && p > rn.cpus {
		fmt.Fprintf(rn.stderr, "vopr: -parallel %d is more than the %d CPUs: running %d simulations at a time "+
			"(more would only hold more worlds in memory; the output is the same)\n", p, rn.cpus, rn.cpus)
		return rn.cpus
	}
	return p
}

// campaign runs seeds N, N+1, ... on simultaneous() goroutines, one
// simulation each, and prints their output strictly in seed order. Unless
// -keep-going, the first failure stops the launching of new seeds; the
// seeds already running finish, and the output stops after the first
// failing seed in seed order, so that it does not depend on -parallel.
//
// An interrupt (SIGINT, SIGTERM) stops it at once: no new seed starts, the
// seeds finished in seed order so far are printed, those still running are
// dropped (a long run may take minutes, and whoever interrupts wants the
// table now), and the table is marked interrupted. A seed's output is
// written whole or not at all, so -json output stays whole lines. It exits
// 130 unless a printed seed failed: then the worst failure's status. A
// write error on stdout stops it the same way (nothing more can be said
// there); runEnv reports it.
func (rn *runner) campaign() int {
	cfg := rn.cfg
	start := cfg.seed.value
	if !cfg.seed.set {
		start = rn.random()
		if cfg.seeds > 0 && start > math.MaxUint64-uint64(cfg.seeds-1) {
			// A random start never runs past the last u64: move it back.
			start = math.MaxUint64 - uint64(cfg.seeds-1)
		}
	}
	// A bad override shows on the first seed before anything runs.
	if _, _, err := cfg.options(start); err != nil {
		return rn.usage(err.Error())
	}
	parallel := rn.simultaneous()
	var stop <-chan struct{} // nil: never
	if rn.interrupts != nil {
		var release func()
		stop, release = rn.interrupts()
		defer release()
	}
	var refresh <-chan time.Time // nil: the progress line changes only when a seed ends
	if rn.terminal && rn.ticker != nil {
		var stopTicker func()
		refresh, stopTicker = rn.ticker()
		defer stopTicker()
	}
	began := rn.now()
	if !cfg.json {
		var b bytes.Buffer
		fmt.Fprintf(&b, "seed=%d\n", start)
		writeBuild(&b, &rn.build)
		rn.stdout.Write(b.Bytes())
	} else {
		fmt.Fprintf(rn.stderr, "vopr: campaign from seed=%d\n", start)
		// The campaign's start record: where its wall time begins, for
		// vopr report's seeds per second (per-seed lines carry none).
		var b bytes.Buffer
		writeCampaignRecord(&b, &campaignRecord{kind: "start", first: start, shard: cfg.shard, started: began, build: buildJSON(&rn.build)})
		rn.stdout.Write(b.Bytes())
	}
	var deadline time.Time
	if cfg.duration > 0 {
		deadline = began.Add(cfg.duration)
	}
	var failed atomic.Bool
	slots := make(chan struct{}, parallel)
	// Bound the seeds finished but held back behind a slow one (their
	// output waits in memory).
	window := max(64, 16*parallel)
	var pending []chan *seedRun // launched, not yet printed, in seed order
	var optionsErr error
	stats := newCampaignStats()
	if cfg.shard.sharded() {
		stats.shard = cfg.shard.String()
	}
	printing := true // false once the first failure (without -keep-going) is printed
	interrupted, wrapped := false, false
	prog := progress{rn: rn, began: began, deadline: deadline}

	// emit prints one finished seed, in order.
	emit := func(sr *seedRun) {
		if !printing {
			return
		}
		prog.clear()
		rn.stdout.Write(sr.out)
		if sr.note != "" {
			fmt.Fprintln(rn.stderr, sr.note)
		}
		if cfg.verbose {
			fmt.Fprintf(rn.stderr, "vopr: seed=%d wall=%v\n", sr.seed, sr.wall)
		}
		stats.add(sr.summary(rn.reproduce(sr)))
		prog.show(stats)
		if sr.failed() && !cfg.keepGoing {
			printing = false
		}
	}
	// stopped reports whether the campaign must stop launching at once:
	// an interrupt came, or stdout broke.
	stopped := func() bool {
		select {
		case <-stop:
			interrupted = true
		default:
		}
		return interrupted || rn.out.err != nil
	}
	// acquire waits for a free simulation slot, redrawing the progress line
	// meanwhile; false if an interrupt came first.
	acquire := func() bool {
		for {
			select {
			case slots <- struct{}{}:
				return true
			case <-stop:
				interrupted = true
				return false
			case <-refresh:
				prog.show(stats)
			}
		}
	}
	// next waits for the oldest launched seed and emits it; false if an
	// interrupt came first.
	next := func() bool {
		for {
			select {
			case sr := <-pending[0]:
				pending = pending[1:]
				emit(sr)
				return true
			case <-stop:
				interrupted = true
				return false
			case <-refresh:
				prog.show(stats)
			}
		}
	}
	// ready emits the finished seeds at the head of pending, without waiting.
	ready := func() {
		for len(pending) > 0 {
			select {
			case sr := <-pending[0]:
				pending = pending[1:]
				emit(sr)
			default:
				return
			}
		}
	}
	// over reports whether a -duration campaign's time is up. The first
	// seed always runs, so a campaign never ends with no seed at all.
	over := func(i uint64) bool {
		return i > 0 && !deadline.IsZero() && !rn.now().Before(deadline)
	}

launch:
	for i := uint64(0); ; i++ {
		seed, ok, past := cfg.nth(start, i)
		if !ok {
			// Past -seeds K, or past seed 2^64-1 (a -duration campaign;
			// parseArgs refuses a -seeds range that would wrap): seed 0 is
			// not the next seed.
			wrapped = past
			break
		}
		if over(i) || stopped() || !acquire() {
			break
		}
		ready()
		for len(pending) >= window {
			if !next() {
				<-slots
				break launch
			}
		}
		if (failed.Load() && !cfg.keepGoing) || over(i) || stopped() {
			<-slots
			break
		}
		o, off, err := cfg.options(seed)
		if err != nil {
			optionsErr = err
			<-slots
			break
		}
		done := make(chan *seedRun, 1)
		pending = append(pending, done)
		go func() {
			sr := rn.runOne(o, off, true)
			if sr.failed() {
				failed.Store(true)
			}
			done <- sr
			<-slots
		}()
	}
	for len(pending) > 0 && !stopped() {
		if !next() {
			break
		}
	}
	if interrupted {
		ready() // what finished in order still prints; the rest is dropped
	}
	prog.clear()

	if wrapped {
		fmt.Fprintf(rn.stderr, "vopr: the campaign stops at seed %d, the last u64\n", uint64(math.MaxUint64))
	}
	if interrupted {
		fmt.Fprintf(rn.stderr, "vopr: interrupted: %d seeds printed, %d dropped while running\n", stats.seeds, len(pending))
	}
	first := start // what the table names first when no seed was printed
	if s, ok, _ := cfg.nth(start, 0); ok {
		first = s
	}
	if cfg.json {
		stats.writeTable(rn.stderr, first, interrupted)
	} else {
		stats.writeTable(rn.stdout, first, interrupted)
	}
	ended := rn.now()
	if cfg.json {
		var b bytes.Buffer
		writeCampaignRecord(&b, &campaignRecord{kind: "end", first: start, shard: cfg.shard, seeds: stats.seeds,
			interrupted: interrupted, started: began, ended: ended})
		rn.stdout.Write(b.Bytes())
	}
	if cfg.verbose {
		wall := ended.Sub(began)
		fmt.Fprintf(rn.stderr, "vopr: campaign seeds=%d wall=%v seeds_per_second=%.1f\n", stats.seeds, wall, seedsPerSecond(stats.seeds, wall))
	}
	if optionsErr != nil {
		return rn.usage(optionsErr.Error())
	}
	if interrupted && stats.worst == sim.Pass {
		return exitInterrupted
	}
	return stats.worst.ExitCode()
}

// progress is the campaign's one-line progress on stderr, shown only when
// stderr is a terminal (it carries wall time, which stdout never does:
// DEVIATIONS.md 43), redrawn in place after each seed and on each tick of
// the runner's ticker.
type progress struct {
	rn       *runner
	began    time.Time
	deadline time.Time // zero unless -duration
	shown    bool
}

// show draws the line: seeds done, seeds per second, failures, and the
// time left of a -duration campaign (the time so far otherwise).
func (p *progress) show(s *campaignStats) {
	if !p.rn.terminal {
		return
	}
	now := p.rn.now()
	elapsed := now.Sub(p.began)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(s.seeds) / elapsed.Seconds()
	}
	line := fmt.Sprintf("vopr: %d seeds, %.1f seeds/s, %d failed", s.seeds, rate, s.seeds-s.byOutcome[sim.Pass])
	if !p.deadline.IsZero() {
		line += fmt.Sprintf(", %v left", max(0, p.deadline.Sub(now)).Truncate(time.Second))
	} else {
		line += fmt.Sprintf(", %v", elapsed.Truncate(time.Second))
	}
	fmt.Fprintf(p.rn.stderr, "\r\x1b[K%s", line)
	p.shown = true
}

// clear erases the line, before anything else is printed.
func (p *progress) clear() {
	if p.shown {
		io.WriteString(p.rn.stderr, "\r\x1b[K")
		p.shown = false
	}
}

// checkedWriter is stdout: it remembers the first write error (a full disk,
// a closed pipe) and writes nothing after it, so the command can stop and
// exit 1 instead of reporting success for output that was lost.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = err
	}
	return n, err
}
