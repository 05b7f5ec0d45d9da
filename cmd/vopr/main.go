// Command vopr is a deterministic cluster simulator for Apache Iggy's replica
// plane, in the manner of TigerBeetle's VOPR.
//
//	vopr [-seed N] [flags] [knob flags]
//
// runs one seed: the seed (random when absent, always printed first), the
// options the seed's swarm drew (with the knob flags' overrides), then, on a
// failure, the violation, the evidence and the exact command that reproduces
// it, and last one summary line ending in digest=HEX. The output is
// deterministic: the same seed and build print the same bytes.
//
//	vopr -seeds K | -duration D [-parallel P] [-keep-going] [-json] ...
//
// runs a campaign of seeds N, N+1, ...: P simulations at once, each on its own
// goroutine and single-threaded, their output strictly in seed order. It
// stops at the first failure unless -keep-going, and ends with a summary
// table (outcomes, failing seeds with their reproduction commands, coverage
// probes). A passing seed prints its summary line only.
//
//	vopr -long [-seed N | -seeds K | -duration D] ...
//
// runs long runs (sim.Long): each seed's swarm draw with 10 M safety ticks
// and its requests spread over them (clients think between requests).
//
//	vopr -performance
//
// runs the fixed fault-free configuration (sim.Performance) and prints the
// frames sent per committed op per command: a deterministic protocol cost.
//
//	vopr -version
//
// prints the build (module version, VCS revision and modified, Go), which
// the header of every run and every -json object carry too.
//
//	vopr decode [-json] [-hex] [-max-frame N] [FILE]
//
// reads a stream of replica-port frames (from FILE, or stdin) and prints
// every frame.
//
//	vopr -seeds K | -duration D -seed N -shard i/n -json ... > shard-i.jsonl
//	vopr report [-json] shard-*.jsonl
//
// runs shard i of n of a campaign (the seeds N+j with j mod n == i), on
// as many machines as there are shards, and merges their -json output into
// the table the whole campaign would print, with its seeds per second.
//
//	vopr -check-determinism [-seed N | -seeds K | -duration D] ...
//
// runs every seed twice and fails a seed whose digests differ, naming the
// first event where two runs with the kernel's trace recorded part.
//
//	vopr shrink [-budget D] [-o FILE] [run flags]
//
// searches for a smaller run that fails with the same violation name.
//
//	vopr branch -at T [-salt S] | -sweep [-branches M] [-o FILE] [run flags]
//
// replays the run to virtual time T, reseeds its fault streams there and
// runs M branches; -sweep moves T through the run and bisects to the moment
// its failure became inevitable.
//
//	vopr timeline -o FILE [-perfetto FILE] [-likelihood FILE] [run flags]
//
// runs one run (-seed N, knob flags, -long, -plan FILE: as above), prints
// its usual output, and writes FILE, a self-contained HTML page of it
// (package timeline): a lane per replica (status, view, log_view, op,
// commit), the network, a lane per client (each request), crashes,
// restarts, pauses, partitions and disk faults as marks, and the
// violation with the events its evidence names; the whole run in at most
// 2048 buckets a lane, the last 20,000 events and 4,000 messages between
// replicas whole. -perfetto also writes Chrome trace-event JSON for
// Perfetto; -likelihood draws a vopr branch -sweep file's failure
// likelihood above the replicas.
//
// Decisions worth knowing:
//   - Options are built as Swarm(seed) (or Long(seed)), then -faults=none
//     (NoFaults, the rollback nemesis included), then every knob flag, then
//     what the replica count cannot carry turned off, then Check: an
//     explicit knob wins over -faults=none and over -long.
//   - -rollback needs 3 replicas, a partition mode 2 (bridge 3): refused
//     with -replicas given too small; with the count drawn, a seed drawn
//     too small runs without it, its options reading
//     rollback=false(needs 3 replicas) and its -json "disabled" naming it.
//   - A campaign's seeds never wrap past 2^64-1: a -seeds range that would
//     is refused, a -duration campaign stops there. -duration is 1s at
//     least, and the first seed always runs.
//   - -parallel above the CPUs (GOMAXPROCS) is capped at the CPUs, with a
//     warning: more at once adds memory, not speed.
//   - SIGINT or SIGTERM stops a campaign: no new seed, the seeds in flight
//     dropped, the table marked interrupted, exit 130 (or the worst
//     failure's status).
//   - A write error on stdout ends the run: the error on stderr, exit 1
//     at least.
//   - -trace FILE with a campaign writes one file per seed, the seed inserted
//     before the extension (trace.jsonl -> trace.17.jsonl).
//   - A campaign that stops at a failure prints the seeds up to and including
//     the first failing one in seed order, whatever -parallel is; seeds that
//     were still running past it finish but are not reported.
//   - With -json, stdout holds only JSON lines: a campaign's start record,
//     one line per seed, its end record; the summary table goes to stderr.
//   - Wall time appears only on stderr (with -v, and in the progress line of
//     a campaign when stderr is a terminal) and in a -json campaign's start
//     and end records, never in a seed's output.
//   - -shard i/n needs -seed N when n > 1: shards that drew their own first
//     seeds would be slices of different campaigns.
//   - A seed whose two runs diverge under -check-determinism is a
//     simulator error unless it failed worse; its reproduction command
//     carries -check-determinism.
//
// Exit status: 0 pass, 1 simulator error (or a stdout write error), 2 bad
// usage, 128 liveness failure, 129 correctness failure, 130 interrupted; a
// campaign exits with the worst it saw. `vopr decode` exits 1 on a framing,
// input or output error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/iggy-vopr/vopr/sim"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runEnv(args, stdin, stdout, stderr, env{
		runSeed:    sim.RunWith,
		now:        time.Now,
		random:     randomSeed,
		terminal:   isTerminal(stderr),
		cpus:       runtime.GOMAXPROCS(0),
		interrupts: notifyInterrupts,
		ticker:     secondTicker,
		build:      debug.ReadBuildInfo,
	})
}

// env is what a run takes from the world, as values so tests can fake them:
// the simulator, the wall clock (which bounds -duration campaigns and feeds
// -v and the progress line, never stdout), the random source of a seed not
// given, whether stderr is a terminal (campaign progress), the CPUs
// (GOMAXPROCS, which follows the process's CPU quota; 0: no bound on
// -parallel), the interrupts a campaign stops at, the ticker that redraws
// the progress line, and the build's description.
type env struct {
	runSeed    func(sim.Options, sim.Outputs) sim.Result
	now        func() time.Time
	random     func() uint64
	terminal   bool
	cpus       int
	interrupts func() (<-chan struct{}, func()) // a channel closed at the first interrupt, and its release
	ticker     func() (<-chan time.Time, func())
	build      func() (*debug.BuildInfo, bool)
}

// notifyInterrupts turns SIGINT and SIGTERM into a closed channel for as
// long as a campaign runs; release restores their default (the process
// dies), so a second Ctrl-C while the table prints still ends it.
func notifyInterrupts() (<-chan struct{}, func()) {
	ctx, release := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return ctx.Done(), release
}

// secondTicker redraws the progress line every second while seeds run.
func secondTicker() (<-chan time.Time, func()) {
	t := time.NewTicker(time.Second)
	return t.C, t.Stop
}

// runEnv is run in the given env. Stdout is checked: a write error there
// (vopr > /dev/full, a closed pipe) is reported on stderr and makes the
// status at least 1 (exitWorse), since the output the status vouches for
// was lost.
func runEnv(args []string, stdin io.Reader, stdout, stderr io.Writer, e env) int {
	out := &checkedWriter{w: stdout}
	code := runChecked(args, stdin, out, stderr, e)
	if out.err != nil {
		fmt.Fprintf(stderr, "vopr: writing stdout: %v\n", out.err)
		code = exitWorse(code, 1)
	}
	return code
}

// exitWorse is the worse of two exit statuses: 129 correctness, 128
// liveness, 1 simulator or output error, 2 usage, 130 interrupted, 0 pass.
func exitWorse(a, b int) int {
	rank := func(code int) int {
		switch code {
		case 0:
			return 0
		case exitInterrupted:
			return 1
		case 2:
			return 2
		case 1:
			return 3
		case 128:
			return 4
		case 129:
			return 5
		}
		return 3 // anything else is an error
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// runChecked is runEnv with stdout wrapped.
func runChecked(args []string, stdin io.Reader, out *checkedWriter, stderr io.Writer, e env) int {
	if len(args) > 0 && args[0] == "decode" {
		return runDecode(args[1:], stdin, out, stderr)
	}
	if len(args) > 0 && args[0] == "report" {
		return runReport(args[1:], stdin, out, stderr)
	}
	if len(args) > 0 && args[0] == "shrink" {
		return runShrink(args[1:], out, stderr)
	}
	if len(args) > 0 && args[0] == "branch" {
		return runBranch(args[1:], out, stderr, e)
	}
	if len(args) > 0 && args[0] == "timeline" {
		return runTimeline(args[1:], out, stderr, e)
	}
	if len(args) > 0 && args[0] == "mutants" {
		return runMutants(args[1:], out, stderr, e)
	}
	if len(args) > 0 && args[0] == "help" {
		writeUsage(out)
		return 0
	}
	cfg, printed, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		writeUsage(out)
		return 0
	}
	rn := newRunner(cfg, out, stderr, e)
	if err != nil {
		if printed { // the flag package named the flag and the rule already
			writeUsage(stderr)
			return 2
		}
		return rn.usage(err.Error())
	}
	return rn.main()
}

// newRunner is the runner of a parsed command line in env e.
func newRunner(cfg *config, out *checkedWriter, stderr io.Writer, e env) *runner {
	return &runner{
		cfg:        cfg,
		runSeed:    e.runSeed,
		now:        e.now,
		random:     e.random,
		terminal:   e.terminal,
		cpus:       e.cpus,
		interrupts: e.interrupts,
		ticker:     e.ticker,
		build:      readBuild(e.build),
		out:        out,
		stdout:     out,
		stderr:     stderr,
	}
}

// isTerminal reports whether w is a terminal: a character device other
// than the null device (2>/dev/null is a character device too, and a
// progress line there is wasted work). The standard library has no isatty;
// this is close enough for choosing whether to draw a progress line.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}
