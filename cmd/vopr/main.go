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
//	vopr -performance
//
// runs the fixed fault-free configuration (sim.Performance) and prints the
// frames sent per committed op per command: a deterministic protocol cost.
//
//	vopr decode [-json] [-hex] [-max-frame N] [FILE]
//
// reads a stream of replica-port frames (from FILE, or stdin) and prints
// every frame.
//
// Decisions worth knowing:
//   - Options are built as Swarm(seed), then -faults=none (NoFaults), then
//     every knob flag, then Check: an explicit knob wins over -faults=none.
//   - -trace FILE with a campaign writes one file per seed, the seed inserted
//     before the extension (trace.jsonl -> trace.17.jsonl).
//   - A campaign that stops at a failure prints the seeds up to and including
//     the first failing one in seed order, whatever -parallel is; seeds that
//     were still running past it finish but are not reported.
//   - With -json, stdout holds only the per-seed JSON lines; a campaign's
//     summary table goes to stderr.
//   - Wall time appears only on stderr: with -v, and in the progress line of
//     a campaign when stderr is a terminal.
//
// Exit status: 0 pass, 1 simulator error, 2 bad usage, 128 liveness failure,
// 129 correctness failure; a campaign exits with the worst it saw. `vopr
// decode` exits 1 on a framing or input error.
package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"time"

	"github.com/iggy-vopr/vopr/sim"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runEnv(args, stdin, stdout, stderr, env{
		runSeed:  sim.Run,
		now:      time.Now,
		random:   randomSeed,
		terminal: isTerminal(stderr),
	})
}

// env is what a run takes from the world, as values so tests can fake them:
// the simulator, the wall clock (which bounds -duration campaigns and feeds
// -v, never stdout), the random source of a seed not given, and whether
// stderr is a terminal (campaign progress).
type env struct {
	runSeed  func(sim.Options, io.Writer) sim.Result
	now      func() time.Time
	random   func() uint64
	terminal bool
}

// runEnv is run in the given env.
func runEnv(args []string, stdin io.Reader, stdout, stderr io.Writer, e env) int {
	if len(args) > 0 && args[0] == "decode" {
		return runDecode(args[1:], stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "help" {
		writeUsage(stdout)
		return 0
	}
	cfg, printed, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		writeUsage(stdout)
		return 0
	}
	rn := &runner{
		cfg:      cfg,
		runSeed:  e.runSeed,
		now:      e.now,
		random:   e.random,
		terminal: e.terminal,
		stdout:   stdout,
		stderr:   stderr,
	}
	if err != nil {
		if printed { // the flag package named the flag and the rule already
			writeUsage(stderr)
			return 2
		}
		return rn.usage(err.Error())
	}
	return rn.main()
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
