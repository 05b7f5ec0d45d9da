package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/iggy-vopr/vopr/sim"
	"github.com/iggy-vopr/vopr/timeline"
)

const timelineUsage = `usage: vopr timeline -o FILE [-perfetto FILE] [-likelihood FILE] [run flags]

Runs the run the run flags describe (-seed N, knob flags, -long, -plan FILE,
-trace FILE: as for a run; one run only), prints its usual output, and
writes FILE (created or overwritten): a self-contained HTML page of the run,
with nothing loaded from anywhere else. It shows a lane per replica (status,
view, log_view, op and commit over virtual time; crashes, restarts, pauses
and disk faults as marks), the network (partitions, clogs, resets, corrupted
frames), a lane per client (each request from invocation to reply), and the
violation with the events its evidence names, in red. The whole run is drawn
in at most 2048 buckets a lane; the last 20,000 events and 4,000 messages
between replicas are drawn whole below it. A small inline script zooms
(wheel) and pans (drag); the page reads without it.

  -o FILE           the HTML page (required)
  -perfetto FILE    also write the run as Chrome trace-event JSON, which
                    Perfetto (ui.perfetto.dev) and chrome://tracing open
  -likelihood FILE  draw a failure-likelihood lane from a sweep file (the
                    JSON of vopr branch -sweep, schema 1)

Exit status: the run's (0 pass, 128 liveness, 129 correctness, 1 simulator
error); 1 when a file cannot be written, 2 for bad flags.
`

// timelineFlags splits timeline's own flags from the run flags.
func timelineFlags(args []string) (out, perfetto, likelihood string, rest []string, help bool, err error) {
	fs := flag.NewFlagSet("vopr timeline", flag.ContinueOnError)
	fs.StringVar(&out, "o", "", "")
	fs.StringVar(&perfetto, "perfetto", "", "")
	fs.StringVar(&likelihood, "likelihood", "", "")
	rest, err = splitFlags(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return "", "", "", nil, true, nil
	}
	if err != nil {
		return "", "", "", nil, false, err
	}
	var empty error
	fs.Visit(func(f *flag.Flag) {
		if f.Value.String() == "" && empty == nil {
			empty = fmt.Errorf("-%s: give a file name", f.Name)
		}
	})
	return out, perfetto, likelihood, rest, false, empty
}

// runTimeline is vopr timeline. The run goes through the runner exactly
// as `vopr [run flags]` would (its output, its fault plan gate, its trace
// file), with a timeline.Recorder added to its outputs: the trace teed to
// it, and its frames.
func runTimeline(args []string, stdout *checkedWriter, stderr io.Writer, e env) int {
	outPath, perfettoPath, likelihoodPath, rest, help, err := timelineFlags(args)
	if help {
		io.WriteString(stdout, timelineUsage)
		return 0
	}
	fail := func(msg string) int {
		if msg != "" {
			fmt.Fprintf(stderr, "vopr timeline: %s\n", msg)
		}
		io.WriteString(stderr, timelineUsage)
		return 2
	}
	if err != nil {
		return fail(err.Error())
	}
	cfg, printed, err := parseArgs(rest, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		io.WriteString(stdout, timelineUsage)
		return 0
	case err != nil && printed: // the flag package named the flag already
		return fail("")
	case err != nil:
		return fail(err.Error())
	case outPath == "":
		return fail("give the page's file with -o FILE")
	case cfg.campaign() || cfg.performance:
		return fail("timeline draws one run: no -seeds, -duration or -performance")
	case cfg.version:
		return fail("-version does not run anything to draw")
	}
	var sweep *timeline.Sweep
	if likelihoodPath != "" {
		f, err := os.Open(likelihoodPath)
		if err != nil {
			return fail(fmt.Sprintf("-likelihood: %v", err))
		}
		sweep = &timeline.Sweep{}
		err = sweep.Read(f)
		f.Close()
		if err != nil {
			return fail(fmt.Sprintf("-likelihood %s: %v", likelihoodPath, err))
		}
	}
	// The seed is drawn here rather than in the runner, so that a bad knob
	// is refused before anything runs (the runner would print the main
	// usage); the run prints it first all the same.
	if !cfg.seed.set {
		cfg.seed.value, cfg.seed.set = e.random(), true
	}
	if _, _, err := cfg.options(cfg.seed.value); err != nil {
		return fail(err.Error())
	}

	var rec *timeline.Recorder
	var res sim.Result
	ran := false
	runSeed := e.runSeed
	record := func(o sim.Options, outs sim.Outputs) sim.Result {
		if ran { // -check-determinism's second run: a plain one
			return runSeed(o, outs)
		}
		ran = true
		rec = timeline.NewRecorder(timeline.Options{Replicas: o.Replicas, Clients: o.Clients})
		if outs.Trace != nil {
			outs.Trace = io.MultiWriter(outs.Trace, rec)
		} else {
			outs.Trace = rec
		}
		outs.Frames = rec.Frame
		res = runSeed(o, outs)
		return res
	}
	e.runSeed = record
	rn := newRunner(cfg, stdout, stderr, e)
	code := rn.main()
	if !ran {
		return code
	}
	t := rec.Finish(res)
	t.Command = cfg.reproduce(res.Seed)
	t.Sweep = sweep
	// With -json, stdout holds only JSON lines: say where the files went
	// on stderr.
	say := io.Writer(stdout)
	if cfg.json {
		say = stderr
	}
	for _, out := range []struct {
		flag, path string
		write      func(io.Writer) error
	}{
		{"o", outPath, t.WriteHTML},
		{"perfetto", perfettoPath, t.WritePerfetto},
	} {
		if out.path == "" {
			continue
		}
		n, err := writeFile(out.path, out.write)
		if err != nil {
			fmt.Fprintf(stderr, "vopr timeline: -%s %s: %v\n", out.flag, out.path, err)
			code = exitWorse(code, 1)
			continue
		}
		fmt.Fprintf(say, "timeline: -%s %s (%d bytes)\n", out.flag, out.path, n)
	}
	return code
}

// writeFile creates (or truncates) path, writes it with write, and returns
// its size.
func writeFile(path string, write func(io.Writer) error) (int64, error) {
	f, err := openTrace(path)
	if err != nil {
		return 0, err
	}
	c := &countingWriter{w: f}
	bw := bufio.NewWriterSize(c, 1<<16)
	err = write(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return c.n, err
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
