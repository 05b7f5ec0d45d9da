package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/iggy-vopr/vopr/sim"
)

// runner runs simulations for a parsed command line. Everything the outside
// world supplies (the simulator, the clock that bounds campaigns, the
// random seed, whether stderr is a terminal) is a field, so tests can fake it.
type runner struct {
	cfg      *config
	runSeed  func(sim.Options, io.Writer) sim.Result
	now      func() time.Time
	random   func() uint64
	terminal bool // stderr is a terminal: show campaign progress there
	stdout   io.Writer
	stderr   io.Writer
}

// seedRun is one finished seed: its result and its output, formatted.
type seedRun struct {
	seed   uint64
	opts   sim.Options // the options the seed ran with
	result sim.Result
	out    []byte        // for stdout, deterministic
	wall   time.Duration // for -v only
	note   string        // for stderr: a simulator panic's stack, a trace I/O error
}

func (r *seedRun) failed() bool { return r.result.Outcome != sim.Pass }

// safeRun calls the simulator, turning a panic that escapes it (sim.Run
// promises none) into a simulator error; note then holds the panic and its
// stack, for stderr.
func (rn *runner) safeRun(o sim.Options, trace io.Writer) (res sim.Result, note string) {
	defer func() {
		if p := recover(); p != nil {
			note = fmt.Sprintf("vopr: seed %d: the simulator panicked: %v\n%s", o.Seed, p, bytes.TrimRight(debug.Stack(), "\n"))
			res = sim.Result{Seed: o.Seed, Options: o, Outcome: sim.SimError,
				Violation: fmt.Sprintf("simulator panic: %v", p)}
		}
	}()
	return rn.runSeed(o, trace), ""
}

// tracePath is where seed's trace goes: -trace FILE as given for one run,
// with the seed inserted before the extension in a campaign.
func (c *config) tracePath(seed uint64) string {
	if c.trace == "" || !c.campaign() {
		return c.trace
	}
	ext := filepath.Ext(c.trace)
	if strings.ContainsRune(ext, filepath.Separator) {
		ext = ""
	}
	return strings.TrimSuffix(c.trace, ext) + "." + strconv.FormatUint(seed, 10) + ext
}

// runOne runs one seed with its options and formats its output.
func (rn *runner) runOne(o sim.Options, compact bool) *seedRun {
	sr := &seedRun{seed: o.Seed, opts: o}
	var trace io.Writer
	var traceFile *os.File
	var traceBuf *bufio.Writer
	if path := rn.cfg.tracePath(o.Seed); path != "" {
		f, err := os.Create(path)
		if err != nil {
			sr.note = fmt.Sprintf("vopr: seed %d: -trace: %v", o.Seed, err)
			sr.result = sim.Result{Seed: o.Seed, Options: o, Outcome: sim.SimError, Violation: "cannot create the trace file: " + err.Error()}
			sr.out = rn.format(sr, compact)
			return sr
		}
		traceFile, traceBuf = f, bufio.NewWriterSize(f, 1<<16)
		trace = traceBuf
	}
	start := rn.now()
	sr.result, sr.note = rn.safeRun(o, trace)
	sr.wall = rn.now().Sub(start)
	if traceFile != nil {
		err := traceBuf.Flush()
		if cerr := traceFile.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			// The simulation itself is fine; the trace is not. Say so on
			// stderr and count the seed as a simulator error at least.
			if sr.note != "" {
				sr.note += "\n"
			}
			sr.note += fmt.Sprintf("vopr: seed %d: writing the trace: %v", o.Seed, err)
			if sim.SimError.Worse(sr.result.Outcome) {
				sr.result.Outcome = sim.SimError
				sr.result.Violation = "writing the trace failed: " + err.Error()
			}
		}
	}
	sr.out = rn.format(sr, compact)
	return sr
}

// format is a seed's stdout: a JSON line with -json; otherwise text (see
// writeSeedText).
func (rn *runner) format(sr *seedRun, compact bool) []byte {
	var b bytes.Buffer
	if rn.cfg.json {
		writeSeedJSON(&b, sr, rn.cfg.reproduce(sr.seed))
	} else {
		writeSeedText(&b, sr, rn.cfg, compact)
	}
	return b.Bytes()
}

// main runs the parsed command line and returns the exit status.
func (rn *runner) main() int {
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
	o, err := cfg.options(seed)
	if err != nil {
		return rn.usage(err.Error())
	}
	if !cfg.json {
		var b bytes.Buffer
		writeHeader(&b, &o)
		rn.stdout.Write(b.Bytes())
	}
	sr := rn.runOne(o, false)
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

// campaign runs seeds N, N+1, ... on cfg.parallel goroutines, one
// simulation each, and prints their output strictly in seed order. Unless
// -keep-going, the first failure stops the launching of new seeds; the
// seeds already running finish, and the output stops after the first
// failing seed in seed order, so that it does not depend on -parallel.
func (rn *runner) campaign() int {
	cfg := rn.cfg
	start := cfg.seed.value
	if !cfg.seed.set {
		start = rn.random()
	}
	// A bad override shows on the first seed before anything runs.
	if _, err := cfg.options(start); err != nil {
		return rn.usage(err.Error())
	}
	if !cfg.json {
		fmt.Fprintf(rn.stdout, "seed=%d\n", start)
	} else {
		fmt.Fprintf(rn.stderr, "vopr: campaign from seed=%d\n", start)
	}

	began := rn.now()
	var deadline time.Time
	if cfg.duration > 0 {
		deadline = began.Add(cfg.duration)
	}
	var failed atomic.Bool
	slots := make(chan struct{}, cfg.parallel)
	window := max(64, 16*cfg.parallel)
	var pending []chan *seedRun // launched, not yet printed, in seed order
	var optionsErr error
	stats := newCampaignStats()
	printing := true // false once the first failure (without -keep-going) is printed
	prog := progress{rn: rn, began: began}

	// emit prints one finished seed, in order.
	emit := func(sr *seedRun) {
		if !printing {
			return
		}
		rn.stdout.Write(sr.out)
		if sr.note != "" {
			fmt.Fprintln(rn.stderr, sr.note)
		}
		if cfg.verbose {
			prog.clear()
			fmt.Fprintf(rn.stderr, "vopr: seed=%d wall=%v\n", sr.seed, sr.wall)
		}
		stats.add(sr, cfg.reproduce(sr.seed))
		prog.show(stats)
		if sr.failed() && !cfg.keepGoing {
			printing = false
		}
	}
	// flush prints the finished seeds at the head of pending; with wait, it
	// waits for every launched seed.
	flush := func(wait bool) {
		for len(pending) > 0 {
			var sr *seedRun
			if wait {
				sr = <-pending[0]
			} else {
				select {
				case sr = <-pending[0]:
				default:
					return
				}
			}
			pending = pending[1:]
			emit(sr)
		}
	}

	for i := uint64(0); ; i++ {
		if cfg.seeds > 0 && i >= uint64(cfg.seeds) {
			break
		}
		if !deadline.IsZero() && !rn.now().Before(deadline) {
			break
		}
		slots <- struct{}{} // wait for a free goroutine
		flush(false)
		// Bound the seeds finished but held back behind a slow one (their
		// output waits in memory): wait for the oldest.
		for len(pending) >= window {
			sr := <-pending[0]
			pending = pending[1:]
			emit(sr)
		}
		if (failed.Load() && !cfg.keepGoing) || (!deadline.IsZero() && !rn.now().Before(deadline)) {
			<-slots
			break
		}
		o, err := cfg.options(start + i)
		if err != nil {
			optionsErr = err
			<-slots
			break
		}
		done := make(chan *seedRun, 1)
		pending = append(pending, done)
		go func() {
			sr := rn.runOne(o, true)
			if sr.failed() {
				failed.Store(true)
			}
			done <- sr
			<-slots
		}()
	}
	flush(true)
	prog.clear()

	if cfg.json {
		stats.writeTable(rn.stderr, start)
	} else {
		stats.writeTable(rn.stdout, start)
	}
	if cfg.verbose {
		wall := rn.now().Sub(began)
		rate := 0.0
		if wall > 0 {
			rate = float64(stats.seeds) / wall.Seconds()
		}
		fmt.Fprintf(rn.stderr, "vopr: campaign seeds=%d wall=%v seeds_per_second=%.1f\n", stats.seeds, wall, rate)
	}
	if optionsErr != nil {
		return rn.usage(optionsErr.Error())
	}
	return stats.worst.ExitCode()
}

// progress is the campaign's one-line progress on stderr, shown only when
// stderr is a terminal (it carries wall time, which stdout never does).
type progress struct {
	rn    *runner
	began time.Time
	last  time.Time
	shown bool
}

func (p *progress) show(s *campaignStats) {
	if !p.rn.terminal {
		return
	}
	now := p.rn.now()
	if p.shown && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.shown = now, true
	fmt.Fprintf(p.rn.stderr, "\r\x1b[Kvopr: %d seeds, %d failed, %v", s.seeds, s.seeds-s.byOutcome[sim.Pass],
		now.Sub(p.began).Truncate(time.Second))
}

func (p *progress) clear() {
	if p.shown {
		io.WriteString(p.rn.stderr, "\r\x1b[K")
		p.shown = false
	}
}
