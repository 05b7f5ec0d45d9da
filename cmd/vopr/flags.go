package main

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/sim"
	"github.com/iggy-vopr/vopr/sim/plan"
)

// knob is one Options field that a flag of the same name overrides. The
// table below lists them in the order of sim.Options.Fields, under the same
// names (a test keeps the two in step).
type knob struct {
	name  string
	prob  bool                   // a probability: the value must lie in [0, 1]
	field func(*sim.Options) any // a pointer to the field
	help  string
}

var knobs = []knob{
	{"replicas", false, func(o *sim.Options) any { return &o.Replicas }, "replica count (1..6)"},
	{"clients", false, func(o *sim.Options) any { return &o.Clients }, "simulated clients (1..64)"},
	{"requests", false, func(o *sim.Options) any { return &o.Requests }, "requests in all, spread over the clients"},
	{"think-ticks", false, func(o *sim.Options) any { return &o.ThinkTicks }, "ticks a client waits after each reply before its next request (safety phase)"},
	{"lite", false, func(o *sim.Options) any { return &o.Lite }, "safety phase only (no liveness phase)"},
	{"safety-ticks", false, func(o *sim.Options) any { return &o.SafetyTicksMax }, "tick budget of the safety phase"},
	{"liveness-ticks", false, func(o *sim.Options) any { return &o.LivenessTicksMax }, "ticks the core has to converge (and 100 more for each request left when the liveness phase begins)"},
	{"delay-min-ns", false, func(o *sim.Options) any { return &o.DelayMinNs }, "minimum one-way frame delay"},
	{"delay-mean-ns", false, func(o *sim.Options) any { return &o.DelayMeanNs }, "mean of the exponential part of the delay"},
	{"reset", true, func(o *sim.Options) any { return &o.ResetProbability }, "per frame: the connection resets"},
	{"partition-mode", false, func(o *sim.Options) any { return &o.PartitionMode }, "none, isolate-single, uniform-size, uniform-partition, bridge or primary"},
	{"partition-symmetry", false, func(o *sim.Options) any { return &o.PartitionSymmetry }, "symmetric or one-way"},
	{"partition", true, func(o *sim.Options) any { return &o.PartitionProbability }, "per tick: a partition starts"},
	{"unpartition", true, func(o *sim.Options) any { return &o.UnpartitionProbability }, "per tick: a partition heals"},
	{"repartition", true, func(o *sim.Options) any { return &o.RepartitionProbability }, "per heal: a new partition replaces the old one at once"},
	{"clog", true, func(o *sim.Options) any { return &o.ClogProbability }, "per tick per path: the path clogs"},
	{"clog-mean-ns", false, func(o *sim.Options) any { return &o.ClogDurationMeanNs }, "mean clog duration"},
	{"corrupt", true, func(o *sim.Options) any { return &o.CorruptProbability }, "per frame: a bit flips on the wire"},
	{"read-latency-ns", false, func(o *sim.Options) any { return &o.ReadLatencyMeanNs }, "mean storage read latency"},
	{"write-latency-ns", false, func(o *sim.Options) any { return &o.WriteLatencyMeanNs }, "mean storage write latency"},
	{"sync-latency-ns", false, func(o *sim.Options) any { return &o.SyncLatencyMeanNs }, "mean storage sync latency"},
	{"latent", true, func(o *sim.Options) any { return &o.LatentProbability }, "per I/O: a latent read error"},
	{"corrupt-sector", true, func(o *sim.Options) any { return &o.CorruptSectorProbability }, "per I/O: a sector silently corrupts"},
	{"misdirect", true, func(o *sim.Options) any { return &o.MisdirectProbability }, "per write: the write lands elsewhere"},
	{"crash-torn", true, func(o *sim.Options) any { return &o.CrashTornProbability }, "per unsynced sector at a crash: torn"},
	{"crash-lost", true, func(o *sim.Options) any { return &o.CrashLostProbability }, "per unsynced sector at a crash: lost"},
	{"crash", true, func(o *sim.Options) any { return &o.CrashProbability }, "per replica per tick: a crash"},
	{"crash-io-factor", false, func(o *sim.Options) any { return &o.CrashIOFactor }, "crash probability multiplier while I/O is in flight"},
	{"restart-ticks", false, func(o *sim.Options) any { return &o.RestartDelayMeanTicks }, "mean delay before a crashed replica restarts"},
	{"pause", true, func(o *sim.Options) any { return &o.PauseProbability }, "per replica per tick: a pause"},
	{"pause-ticks", false, func(o *sim.Options) any { return &o.PauseMeanTicks }, "mean pause length"},
	{"clock-offset-ns", false, func(o *sim.Options) any { return &o.ClockOffsetMaxNs }, "largest clock offset"},
	{"clock-drift-ppb", false, func(o *sim.Options) any { return &o.ClockDriftMaxPPB }, "largest clock drift (0..1000000)"},
	{"auth", false, func(o *sim.Options) any { return &o.Auth }, "replica handshake authentication"},
	{"rotation", false, func(o *sim.Options) any { return &o.RotationWindow }, "replicas hold two secrets, as mid-rotation (needs -auth)"},
	{"repair-any-peer", false, func(o *sim.Options) any { return &o.RepairAnyPeer }, "backups send half their first repair requests to a random peer"},
	{"rollback", false, func(o *sim.Options) any { return &o.Rollback }, "the rollback nemesis drives the partitions (turns random partitions off; an explicit -partition-mode turns it off)"},
	{"stale-answers", false, func(o *sim.Options) any { return &o.StaleAnswers }, "the stale-answer nemesis: a probe's StartView held across its addressee's restart"},
	{"view-change-faults", false, func(o *sim.Options) any { return &o.ViewChangeFaults }, "the view-change fault nemesis: a primary crashed with the slots of head ops only it holds damaged"},
	{"bad-frames", false, func(o *sim.Options) any { return &o.BadFrames }, "the bad-frames nemesis: sealed frames that break one receiver rule of wire.md each, injected on the replicas' connections"},
	{"memory-loss-bounded", false, func(o *sim.Options) any { return &o.MemoryLossBounded }, "at most f replicas without partition memory at once (a crash beyond waits)"},
	{"sends", false, func(o *sim.Options) any { return &o.Sends }, "the workload sends messages to its partitions (needs -memory-loss-bounded)"},
	{"flush-messages", false, func(o *sim.Options) any { return &o.FlushMessages }, "a segment log flushes once this many committed messages are buffered (Iggy: 1024)"},
	{"evicted-ring", false, func(o *sim.Options) any { return &o.EvictedRing }, "flushed ops a partition journal keeps for repair (0: Iggy's 4096)"},
	{"checkpoint-interval", false, func(o *sim.Options) any { return &o.CheckpointInterval }, "the metadata plane checkpoints after every multiple of this many ops (0: the profile's 256)"},
	{"journal-slots", false, func(o *sim.Options) any { return &o.JournalSlots }, "the metadata journal's ring in slots, at least the checkpoint interval plus two pipelines (0: the profile's 4096)"},
	{"chunk-corrupt", true, func(o *sim.Options) any { return &o.ChunkCorruptProbability }, "per StateChunk: a bit of its unsealed body flips in flight"},
	{"logout", true, func(o *sim.Options) any { return &o.LogoutProbability }, "per request drawn: a client logs out instead and registers again"},
	{"bad-requests", true, func(o *sim.Options) any { return &o.BadRequestProbability }, "per request drawn: a client sends a bad request instead (bodies that do not decode, bounds, internal operations)"},
	{"format-extent", false, func(o *sim.Options) any { return &o.FormatExtentSlots }, "the journal's ring is formatted this many slots at a time, each next extent before its first write (0: 256; at most the ring)"},
	{"flush-bytes", false, func(o *sim.Options) any { return &o.FlushBytes }, "a segment log also flushes once this many bytes of committed batches are buffered (0: Iggy's 1 MiB)"},
	{"segment-artifact-bytes", false, func(o *sim.Options) any { return &o.SegmentArtifactBytes }, "a partition state transfer's offer starts a new segment artifact once this many bytes of batches fill one (0: the replica's 64 KiB)"},
}

// parseKnob reads s as the value of k's field: the value to store (of the
// field's own type), or an error stating the rule.
func parseKnob(k *knob, s string) (any, error) {
	switch k.field(&sim.Options{}).(type) {
	case *int:
		v, err := strconv.ParseInt(s, 10, 0)
		if err != nil {
			return nil, errors.New("want a decimal integer")
		}
		return int(v), nil
	case *int64:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, errors.New("want a decimal integer")
		}
		return v, nil
	case *float64:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, errors.New("want a finite number")
		}
		if k.prob && (v < 0 || v > 1) {
			return nil, errors.New("a probability must lie in [0, 1]")
		}
		if v < 0 {
			return nil, errors.New("must not be negative")
		}
		return v, nil
	case *bool:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return nil, errors.New("want true or false")
		}
		return v, nil
	case *network.PartitionMode:
		return sim.ParsePartitionMode(s)
	case *network.PartitionSymmetry:
		return sim.ParsePartitionSymmetry(s)
	}
	panic("vopr: knob " + k.name + " has a field type the command does not know")
}

// setKnob stores v (as parseKnob returned it) into o's field.
func setKnob(k *knob, o *sim.Options, v any) {
	switch p := k.field(o).(type) {
	case *int:
		*p = v.(int)
	case *int64:
		*p = v.(int64)
	case *float64:
		*p = v.(float64)
	case *bool:
		*p = v.(bool)
	case *network.PartitionMode:
		*p = v.(network.PartitionMode)
	case *network.PartitionSymmetry:
		*p = v.(network.PartitionSymmetry)
	}
}

// knobValue is o's value of k: the JSON value (numbers and booleans typed,
// partition modes by name) and its flag spelling (which parseKnob reads back
// exactly; floats keep every digit).
func knobValue(k *knob, o *sim.Options) (jsonValue any, flagText string) {
	switch p := k.field(o).(type) {
	case *int:
		return *p, strconv.Itoa(*p)
	case *int64:
		return *p, strconv.FormatInt(*p, 10)
	case *float64:
		return *p, strconv.FormatFloat(*p, 'g', -1, 64)
	case *bool:
		return *p, strconv.FormatBool(*p)
	}
	// Partition mode and symmetry: the name Fields prints, which the
	// parsers read back.
	for _, f := range o.Fields() {
		if f.Name == k.name {
			return f.Value, f.Value
		}
	}
	return nil, ""
}

// override is one knob flag the user gave.
type override struct {
	knob  *knob
	value any
}

// knobFlag is the flag.Value of one knob: it records the override.
type knobFlag struct {
	knob *knob
	cfg  *config
}

func (f *knobFlag) String() string { return "" }

func (f *knobFlag) Set(s string) error {
	v, err := parseKnob(f.knob, s)
	if err != nil {
		return err
	}
	for i := range f.cfg.overrides {
		if f.cfg.overrides[i].knob == f.knob {
			f.cfg.overrides[i].value = v // the last one given wins
			return nil
		}
	}
	f.cfg.overrides = append(f.cfg.overrides, override{f.knob, v})
	return nil
}

func (f *knobFlag) IsBoolFlag() bool {
	_, ok := f.knob.field(&sim.Options{}).(*bool)
	return ok
}

// seedFlag is -seed: a decimal u64, or a 40-hex commit hash read as its
// first 16 hex digits.
type seedFlag struct {
	set   bool
	value uint64
}

func (f *seedFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.FormatUint(f.value, 10)
}

func (f *seedFlag) Set(s string) error {
	v, err := parseSeed(s)
	if err != nil {
		return err
	}
	f.set, f.value = true, v
	return nil
}

func parseSeed(s string) (uint64, error) {
	if len(s) == 40 && isHex(s) {
		return strconv.ParseUint(s[:16], 16, 64)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, errors.New("want a decimal integer in 0..18446744073709551615 or a 40-hex commit hash")
	}
	return v, nil
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// faultsFlag is -faults: swarm (the default) or none.
type faultsFlag struct{ none bool }

func (f *faultsFlag) String() string {
	if f != nil && f.none {
		return "none"
	}
	return "swarm"
}

func (f *faultsFlag) Set(s string) error {
	switch s {
	case "swarm":
		f.none = false
	case "none":
		f.none = true
	default:
		return errors.New("want swarm or none")
	}
	return nil
}

// config is the parsed command line of a simulation run.
type config struct {
	seed        seedFlag
	seeds       int           // 0: not a -seeds campaign
	duration    time.Duration // 0: not a -duration campaign
	parallel    int
	keepGoing   bool
	json        bool
	trace       string
	capture     string
	porcupine   bool
	faults      faultsFlag
	verbose     bool
	performance bool
	long        bool       // the long-run preset (sim.Long) instead of the swarm
	version     bool       // print the build and exit
	overrides   []override // in the order of knobs (see sortOverrides)
	// checkDeterminism runs every seed twice and compares the digests
	// (-check-determinism).
	checkDeterminism bool
	shard            shardFlag // -shard i/n; n is 1 without it
	// writePlan: -write-plan FILE, where each seed's fault plan goes (in
	// a campaign, one file per seed, named as for -trace); plan: -plan
	// FILE, the fault plan the run replays, read into replay.
	writePlan string
	plan      string
	replay    *plan.Plan
	// branch: -branch T/S (or vopr branch -at T -salt S), the one branch
	// of the seed the run is: its fault streams reseeded with salt S at
	// the first tick from T.
	branch branchFlag
}

// branchFlag is -branch T/S: a branch of the seed's run (vopr branch),
// at virtual time T (a duration, rounded up to a tick) with salt S (from
// 1). Its zero value is no branch.
type branchFlag struct {
	b *sim.Branch
}

func (f *branchFlag) String() string {
	if f == nil || f.b == nil {
		return ""
	}
	return fmt.Sprintf("%v/%d", time.Duration(f.b.AtNs), f.b.Salt)
}

func (f *branchFlag) Set(s string) error {
	at, salt, ok := strings.Cut(s, "/")
	d, err := time.ParseDuration(at)
	if !ok || err != nil || d < 0 {
		return errors.New("want T/S: a virtual time T (1.5s) and a salt S from 1 (vopr branch prints them)")
	}
	n, err := strconv.ParseUint(salt, 10, 64)
	if err != nil || n == 0 {
		return errors.New("want T/S: the salt S is a whole number from 1")
	}
	f.b = &sim.Branch{AtNs: tickCeil(int64(d)), Salt: n}
	return nil
}

// shardFlag is -shard i/n: the campaign's shard i of n. Shard i runs the
// seeds N+j of the campaign with j mod n == i, so that n machines given
// the same command (and the same -seed) run the campaign between them,
// each seed once.
type shardFlag struct {
	index, count uint64 // i and n; count is 0 until parsed (read as 1)
}

// n is the number of shards: 1 without -shard.
func (f *shardFlag) n() uint64 { return max(f.count, 1) }

// sharded reports whether the campaign is split (n > 1).
func (f *shardFlag) sharded() bool { return f.count > 1 }

func (f *shardFlag) String() string {
	if f == nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", f.index, f.n())
}

func (f *shardFlag) Set(s string) error {
	i, n, err := parseShard(s)
	if err != nil {
		return err
	}
	f.index, f.count = i, n
	return nil
}

// parseShard reads "i/n" with 0 <= i < n.
func parseShard(s string) (index, count uint64, err error) {
	is, ns, ok := strings.Cut(s, "/")
	i, ierr := strconv.ParseUint(is, 10, 64)
	n, nerr := strconv.ParseUint(ns, 10, 64)
	if !ok || ierr != nil || nerr != nil || n < 1 || i >= n {
		return 0, 0, errors.New("want i/n with 0 <= i < n")
	}
	return i, n, nil
}

// nth is the seed of the i-th run of the campaign's shard: N + index +
// i*n, the i-th of the seeds N+j with j mod n == index. ok is false past
// the campaign's end: j at or beyond -seeds K, or (wrapped) a seed past
// the last u64, which a -duration campaign stops at.
func (c *config) nth(start, i uint64) (seed uint64, ok, wrapped bool) {
	n := c.shard.n()
	if i > (math.MaxUint64-c.shard.index)/n {
		return 0, false, true
	}
	j := c.shard.index + i*n
	if c.seeds > 0 && j >= uint64(c.seeds) {
		return 0, false, false
	}
	if j > math.MaxUint64-start {
		return 0, false, true
	}
	return start + j, true, false
}

// durationMin is the shortest -duration accepted. A campaign checks its
// deadline before it launches each seed, so a shorter one may end before
// its first seed; and a campaign of less than a second is a single seed
// (-seed N), which says what it runs.
const durationMin = time.Second

// given reports whether the knob named name was given as a flag, and its
// value.
func (c *config) given(name string) (any, bool) {
	for _, ov := range c.overrides {
		if ov.knob.name == name {
			return ov.value, true
		}
	}
	return nil, false
}

// campaign reports whether the command runs a campaign (-seeds or -duration)
// rather than one seed.
func (c *config) campaign() bool { return c.seeds > 0 || c.duration > 0 }

// usageError is a bad command line: exit 2 with usage on stderr.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// parseArgs parses a simulation command line. It returns flag.ErrHelp for
// -h, a *usageError for anything else wrong (the flag package has already
// printed its own message for a bad flag value when printed is true).
func parseArgs(args []string, stderr io.Writer) (cfg *config, printed bool, err error) {
	return parseArgsInto(&config{parallel: 1}, args, stderr)
}

// parseArgsInto is parseArgs into cfg (a replay's config comes with its
// plan already read).
func parseArgsInto(cfg *config, args []string, stderr io.Writer) (_ *config, printed bool, err error) {
	fs := flag.NewFlagSet("vopr", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // the caller prints the usage, to stdout for -h
	fs.Var(&cfg.seed, "seed", "")
	fs.IntVar(&cfg.seeds, "seeds", 0, "")
	fs.DurationVar(&cfg.duration, "duration", 0, "")
	fs.IntVar(&cfg.parallel, "parallel", 1, "")
	fs.BoolVar(&cfg.keepGoing, "keep-going", false, "")
	fs.BoolVar(&cfg.json, "json", false, "")
	fs.StringVar(&cfg.trace, "trace", "", "")
	fs.StringVar(&cfg.capture, "capture", "", "")
	fs.BoolVar(&cfg.porcupine, "porcupine", false, "")
	fs.Var(&cfg.faults, "faults", "")
	fs.BoolVar(&cfg.verbose, "v", false, "")
	fs.BoolVar(&cfg.performance, "performance", false, "")
	fs.BoolVar(&cfg.long, "long", false, "")
	fs.BoolVar(&cfg.version, "version", false, "")
	fs.BoolVar(&cfg.checkDeterminism, "check-determinism", false, "")
	fs.Var(&cfg.shard, "shard", "")
	fs.StringVar(&cfg.writePlan, "write-plan", "", "")
	fs.StringVar(&cfg.plan, "plan", "", "")
	fs.Var(&cfg.branch, "branch", "")
	for i := range knobs {
		fs.Var(&knobFlag{knob: &knobs[i], cfg: cfg}, knobs[i].name, "")
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil, false, err
		}
		return nil, true, &usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return nil, false, &usageError{fmt.Sprintf("unexpected argument %q (give the seed with -seed N)", fs.Arg(0))}
	}
	if cfg.version {
		return cfg, false, nil // -version prints the build whatever else is given
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	switch {
	case given["seeds"] && cfg.seeds < 1:
		return nil, false, &usageError{fmt.Sprintf("-seeds %d: the campaign needs at least one seed", cfg.seeds)}
	case given["duration"] && cfg.duration <= 0:
		return nil, false, &usageError{fmt.Sprintf("-duration %v: the duration must be positive", cfg.duration)}
	case given["duration"] && cfg.duration < durationMin:
		return nil, false, &usageError{fmt.Sprintf("-duration %v: a campaign that short may not run a single seed; give at least %v (or run one seed with -seed N)", cfg.duration, durationMin)}
	case cfg.parallel < 1:
		return nil, false, &usageError{fmt.Sprintf("-parallel %d: at least one simulation at a time", cfg.parallel)}
	case cfg.seed.set && cfg.seeds > 0 && cfg.seed.value > math.MaxUint64-uint64(cfg.seeds-1):
		// Seeds are u64s: seed N+K-1 would wrap to a low seed nobody asked for.
		return nil, false, &usageError{fmt.Sprintf("-seed %d -seeds %d: the campaign would run past seed %d, the last u64; start at %d at most",
			cfg.seed.value, cfg.seeds, uint64(math.MaxUint64), uint64(math.MaxUint64)-uint64(cfg.seeds-1))}
	case given["branch"] && (cfg.campaign() || cfg.performance):
		return nil, false, &usageError{fmt.Sprintf("-branch %s is a branch of one seed's run: no -seeds, -duration or -performance", &cfg.branch)}
	case given["shard"] && !cfg.campaign():
		return nil, false, &usageError{fmt.Sprintf("-shard %s splits a campaign: give -seeds K or -duration D too", &cfg.shard)}
	case cfg.shard.sharded() && !cfg.seed.set:
		// Each machine would draw its own first seed: the shards would be
		// slices of different campaigns, neither disjoint nor covering one.
		return nil, false, &usageError{fmt.Sprintf("-shard %s needs -seed N: every shard of a campaign starts from the same first seed", &cfg.shard)}
	case cfg.performance:
		for _, name := range []string{"seed", "seeds", "duration", "parallel", "keep-going", "faults", "lite", "long"} {
			if given[name] {
				return nil, false, &usageError{fmt.Sprintf("-performance runs one fixed, fault-free configuration: -%s does not combine with it", name)}
			}
		}
	}
	if cfg.plan != "" && cfg.replay == nil {
		return withPlan(cfg, args, given, stderr)
	}
	if err := cfg.checkReplicaNeeds(); err != nil {
		return nil, false, err
	}
	sortOverrides(cfg.overrides)
	return cfg, false, nil
}

// replicasNeeded is the replica count the rollback nemesis and each
// partition mode need to do anything, and why. With fewer, the simulator
// quietly does without them (sim: the nemesis starts with 3 replicas;
// network: a random partition needs 2 to split, and a bridge 3, below
// which it isolates one replica instead). vopr makes that explicit:
// refused when the count is a flag too (checkReplicaNeeds), turned off
// and noted in the seed's options when the count was drawn (needsMet).
var replicasNeeded = struct {
	rollback int
	nemeses  int // the stale-answer, view-change fault and bad-frames nemeses
	mode     func(network.PartitionMode) int
}{
	rollback: 3,
	nemeses:  2,
	mode: func(m network.PartitionMode) int {
		switch m {
		case network.PartitionNone:
			return 1
		case network.PartitionBridge:
			return 3
		}
		return 2
	},
}

// checkReplicaNeeds refuses -replicas=N with an explicit -rollback or
// -partition-mode that needs more than N replicas: the user fixed both, and
// would otherwise get a run without what they asked for.
func (c *config) checkReplicaNeeds() error {
	v, ok := c.given("replicas")
	if !ok {
		return nil
	}
	n := v.(int)
	if rb, ok := c.given("rollback"); ok && rb.(bool) && n < replicasNeeded.rollback {
		return &usageError{fmt.Sprintf("-rollback needs %d replicas or more, and -replicas=%d gives %d", replicasNeeded.rollback, n, n)}
	}
	for _, name := range []string{"stale-answers", "view-change-faults", "bad-frames"} {
		if on, ok := c.given(name); ok && on.(bool) && n < replicasNeeded.nemeses {
			return &usageError{fmt.Sprintf("-%s needs %d replicas or more, and -replicas=%d gives %d", name, replicasNeeded.nemeses, n, n)}
		}
	}
	if m, ok := c.given("partition-mode"); ok {
		mode := m.(network.PartitionMode)
		if need := replicasNeeded.mode(mode); n < need {
			var o sim.Options
			o.PartitionMode = mode
			_, name := knobValue(knobByName("partition-mode"), &o)
			return &usageError{fmt.Sprintf("-partition-mode=%s needs %d replicas or more, and -replicas=%d gives %d", name, need, n, n)}
		}
	}
	return nil
}

// knobByName is the knob of that name (which must exist).
func knobByName(name string) *knob {
	for i := range knobs {
		if knobs[i].name == name {
			return &knobs[i]
		}
	}
	panic("vopr: no knob " + name)
}

// disabled is a knob a seed's options had that its replica count cannot
// carry: turned off (or, for a bridge partition on two replicas, replaced
// by the partition the network makes instead), and said so.
type disabled struct {
	knob string // the knob's flag name
	why  string // "needs 3 replicas", "bridge needs 3 replicas"
}

// needsMet turns off what o's replica count cannot carry (replicasNeeded)
// and lists it. Each change leaves the world as the simulator would have
// run it anyway (the nemesis never starts, the partition never splits, or
// a bridge on two replicas draws exactly as isolate-single), so the digest
// is the same; only the options say what really ran.
func needsMet(o *sim.Options) []disabled {
	var off []disabled
	if o.Rollback && o.Replicas < replicasNeeded.rollback {
		o.Rollback = false
		off = append(off, disabled{"rollback", fmt.Sprintf("needs %d replicas", replicasNeeded.rollback)})
	}
	if o.StaleAnswers && o.Replicas < replicasNeeded.nemeses {
		o.StaleAnswers = false
		off = append(off, disabled{"stale-answers", fmt.Sprintf("needs %d replicas", replicasNeeded.nemeses)})
	}
	if o.ViewChangeFaults && o.Replicas < replicasNeeded.nemeses {
		o.ViewChangeFaults = false
		off = append(off, disabled{"view-change-faults", fmt.Sprintf("needs %d replicas", replicasNeeded.nemeses)})
	}
	if o.BadFrames && o.Replicas < replicasNeeded.nemeses {
		o.BadFrames = false
		off = append(off, disabled{"bad-frames", fmt.Sprintf("needs %d replicas", replicasNeeded.nemeses)})
	}
	if need := replicasNeeded.mode(o.PartitionMode); o.Replicas < need {
		_, name := knobValue(knobByName("partition-mode"), o)
		off = append(off, disabled{"partition-mode", fmt.Sprintf("%s needs %d replicas", name, need)})
		if o.PartitionMode == network.PartitionBridge && o.Replicas == 2 {
			o.PartitionMode = network.PartitionIsolateSingle
		} else {
			o.PartitionMode = network.PartitionNone
		}
	}
	return off
}

// sortOverrides puts the overrides in the order of the knobs table (that of
// Options.Fields), so reproduction commands read the same however the user
// ordered the flags.
func sortOverrides(ovs []override) {
	index := func(k *knob) int {
		for i := range knobs {
			if &knobs[i] == k {
				return i
			}
		}
		return len(knobs)
	}
	for i := 1; i < len(ovs); i++ {
		for j := i; j > 0 && index(ovs[j].knob) < index(ovs[j-1].knob); j-- {
			ovs[j], ovs[j-1] = ovs[j-1], ovs[j]
		}
	}
}

// options builds the world of one seed: the swarm's draw (or the
// performance configuration, or the long-run preset), then -faults=none,
// then the knob overrides (so an explicit knob wins over -faults=none and
// over the preset), then what the replica count cannot carry turned off
// (needsMet, listed in off), then Check.
func (c *config) options(seed uint64) (o sim.Options, off []disabled, err error) {
	switch {
	case c.performance:
		o = sim.Performance()
	case c.long:
		o = sim.Long(seed)
	default:
		o = sim.Swarm(seed)
	}
	if c.faults.none {
		o.NoFaults()
	}
	for _, ov := range c.overrides {
		setKnob(ov.knob, &o, ov.value)
	}
	_, modeGiven := c.given("partition-mode")
	_, rollbackGiven := c.given("rollback")
	// The rollback nemesis and random partitions exclude each other
	// (Options.Check): the one given as a flag wins over the swarm's draw of
	// the other; given both, Check says why they clash.
	switch {
	case o.Rollback && rollbackGiven && !modeGiven:
		o.PartitionMode = network.PartitionNone
	case o.Rollback && modeGiven && !rollbackGiven && o.PartitionMode != network.PartitionNone:
		o.Rollback = false
	}
	// Sends need the memory-loss bound (Options.Check): -sends given alone
	// bounds the seed; -memory-loss-bounded=false given alone stops a
	// seed's sends; given both, Check says why they clash.
	_, sendsGiven := c.given("sends")
	_, boundGiven := c.given("memory-loss-bounded")
	switch {
	case o.Sends && sendsGiven && !boundGiven:
		o.MemoryLossBounded = true
	case o.Sends && boundGiven && !sendsGiven && !o.MemoryLossBounded:
		o.Sends = false
	}
	// The long preset caps the requests by the client count; a -clients
	// flag changes the count it was drawn for, a -requests flag wins.
	if _, ok := c.given("requests"); c.long && !ok {
		o.Requests = sim.LongRequests(o.Clients)
	}
	if _, ok := c.given("think-ticks"); c.long && !ok {
		o.ThinkTicks = sim.LongThinkTicks(o.Clients)
	}
	off = needsMet(&o)
	if err := o.Check(); err != nil {
		if len(c.overrides) > 0 || c.faults.none {
			return o, off, fmt.Errorf("seed %d: options with the overrides given: %v", o.Seed, err)
		}
		return o, off, fmt.Errorf("seed %d: options: %v", o.Seed, err)
	}
	return o, off, nil
}

// reproduce is the command line that rebuilds the world of seed: the seed
// (or -performance), -faults=none if given, and every knob override.
func (c *config) reproduce(seed uint64) string {
	var b strings.Builder
	if c.performance {
		b.WriteString("vopr -performance")
	} else {
		b.WriteString("vopr -seed " + strconv.FormatUint(seed, 10))
	}
	for _, f := range c.runFlags() {
		b.WriteString(" " + f)
	}
	if c.plan != "" {
		b.WriteString(" -plan " + c.plan)
	}
	if c.branch.b != nil {
		b.WriteString(" -branch " + c.branch.String())
	}
	return b.String()
}

// runFlags are the flags that shape a seed's world: -long, -faults and
// the knob overrides, as a command line spells them (a fault plan
// records them; -seed, outputs and campaign flags are not among them).
func (c *config) runFlags() []string {
	var flags []string
	if c.long {
		flags = append(flags, "-long")
	}
	if c.faults.none {
		flags = append(flags, "-faults=none")
	}
	for _, ov := range c.overrides {
		var o sim.Options
		setKnob(ov.knob, &o, ov.value)
		_, text := knobValue(ov.knob, &o)
		flags = append(flags, "-"+ov.knob.name+"="+text)
	}
	return flags
}

// randomSeed draws the seed of a run given none: the one place randomness
// enters vopr. The seed is printed first, so the run can be reproduced.
func randomSeed() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

const usageText = `usage:
  vopr [-seed N] [flags] [knob flags]        run one seed (a random one if -seed is absent)
  vopr -seeds K | -duration D [-parallel P] [-keep-going] [flags] [knob flags]
                                             a campaign: seeds N, N+1, ... (N = -seed, or random)
  vopr -long [-seed N | -seeds K | -duration D ...] [flags] [knob flags]
                                             long runs: the swarm with 10,000,000 safety ticks
  vopr -performance [-json] [knob flags]     the fixed fault-free configuration: protocol cost
  vopr -version                              the build: module version and VCS revision
  vopr decode [-json] [-hex] [-max-frame BYTES] [FILE]
                                             print the frames of a replica-port stream
  vopr report [-json] FILE...                merge campaigns' -json output (the shards of
                                             one campaign) into one campaign table
  vopr shrink [-budget D] [-o FILE] [run flags]
                                             search for a smaller run that fails the same way
  vopr branch -at T | -sweep [-branches M] [run flags]
                                             reseed a run's faults at T and run M branches;
                                             -sweep: where its failure became inevitable
  vopr timeline -o FILE [run flags]          draw a run as a self-contained HTML page
  vopr mutants [-seed N] [-n N] [-seeds K] [-pkg LIST] [-o FILE]
                                             the VOPR's power on mutants of the replica:
                                             its recall against the unit tests'
  vopr SUBCOMMAND -h                         a subcommand's own usage

flags:
  -seed N          the seed: a decimal u64, or a 40-hex commit hash (read as its
                   first 16 hex digits); random when absent, and always printed first
  -seeds K         a campaign of K seeds, N..N+K-1 (the range may not pass the last
                   u64, 18446744073709551615)
  -duration D      a campaign that launches new seeds until D (a Go duration, at least
                   1s: 30s, 1h) has passed, the first seed always; with -seeds too,
                   whichever ends first; it stops at seed 18446744073709551615, the last
  -parallel P      run P simulations at once (one goroutine each); output stays in seed
                   order; more than the CPUs (GOMAXPROCS) is capped at the CPUs, with a
                   warning, since it adds only memory
  -keep-going      do not stop the campaign at the first failure
  -shard i/n       run shard i of n (0 <= i < n) of the campaign, so that n machines
                   given the same command and -seed run it between them: with -seeds K,
                   the seeds N+j for j in [0,K) with j mod n == i; with -duration, N+i,
                   N+i+n, ... until D has passed; vopr report merges the shards' -json
  -check-determinism
                   run every seed twice and compare the digests: two that differ fail
                   the seed (result=error, unless it failed worse already), and two more
                   runs with the kernel's event trace recorded name the first event
                   where they part; -json says determinism=ok or diverged
  -long            the long-run preset: every seed's swarm draw, with safety-ticks=10000000,
                   3500 requests (1750 with more clients than the client table's 8
                   slots, whose evictions cost a Register each) and think-ticks spreading
                   them over the budget; knob flags still win
  -lite            the safety phase only (a knob: see below)
  -json            one JSON object per seed, one line each (schema 1, keys in README.md):
                   the summary line's keys, then evictions, indefinite, build, options,
                   disabled, probes and the failure's details (a campaign's summary
                   table then goes to stderr); a campaign's first and last lines are
                   its records ("campaign":"start" and "end", with wall-clock times)
  -trace FILE      write every event as JSON lines to FILE (replica events, process,
                   network and disk faults, client invocations and completions; each
                   line has at_ns and kind); in a campaign, to one file per seed, FILE
                   with the seed before its extension (trace.jsonl -> trace.17.jsonl)
  -capture FILE    write every frame delivered from one replica to another to FILE, as
                   records with their own length and checksum (vopr decode reads it);
                   in a campaign, one file per seed, named as for -trace
  -write-plan FILE write the run's fault plan to FILE: its seed, its flags and one line
                   per fault firing (crash, pause, partition, heal, clog, reset, corrupt,
                   chunk_corrupt, latent, corrupt_sector, misdirect, core), keyed by
                   virtual time and site; in a campaign, one file per seed, as for -trace
  -plan FILE       replay a fault plan: the plan's seed and flags (flags given win), and
                   its firings decide the faults; delete lines to replay without them
                   (the draws still happen, so nothing else shifts). The targeted
                   nemeses (-rollback, -stale-answers, -view-change-faults, -bad-frames)
                   are not in it (each draws from its own stream)
  -branch T/S      run branch S of the seed at virtual time T (vopr branch): the seed's
                   own run up to the first tick from T, its fault streams reseeded with
                   salt S from there (a -plan decides until then)
  -porcupine       also check the clients' metadata history with porcupine under the
                   checker's reference model (at most 60 s of wall time a seed); the
                   summary line ends porcupine=ok, illegal or unknown (the search ran
                   out), and a history porcupine finds not linearizable fails the seed
  -faults MODE     swarm (default: drawn from the seed) or none (every fault off, the
                   rollback nemesis too); knob flags given explicitly still win
  -performance     run sim.Performance() once and print frames per committed op per command
  -version         print the build (module version, vcs revision and modified, go) and exit
  -v               also print wall time per seed and per campaign, on stderr
  -h               this help

A campaign interrupted (SIGINT, SIGTERM) starts no new seed, drops those running,
prints the seeds finished so far and its table marked interrupted, and exits 130 (the
worst failure's status if one was found). On a terminal, stderr shows a progress line.

knob flags (each overrides the value the seed's swarm drew, for every seed of a campaign;
probabilities lie in [0, 1]; durations are nanoseconds of virtual time, ticks 10 ms each;
-rollback needs 3 replicas, -stale-answers, -view-change-faults, -bad-frames and
-partition-mode 2, bridge 3: refused with -replicas too small, and when the count is drawn, off for a seed
drawn too small, which its options line says, as rollback=false(needs 3 replicas)):
`

const usageTail = `
exit status: 0 pass, 1 simulator error or stdout write error, 2 usage, 128 liveness
failure, 129 correctness failure, 130 interrupted; a campaign exits with the worst status
it saw (129 > 128 > 1 > 0).
`

func writeUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString(usageText)
	for i := range knobs {
		k := &knobs[i]
		kind := ""
		switch k.field(&sim.Options{}).(type) {
		case *int, *int64:
			kind = "int"
		case *float64:
			kind = "float"
			if k.prob {
				kind = "prob"
			}
		case *bool:
			kind = "bool"
		default:
			kind = "name"
		}
		fmt.Fprintf(&b, "  -%-20s %-5s %s\n", k.name, kind, k.help)
	}
	b.WriteString(usageTail)
	io.WriteString(w, b.String())
}
