// Package plan records a run's fault firings as a fault plan and replays
// a run from one (issue 14, "Fault plans and replay").
//
// A firing is one fault that happened: a crash, a pause, a partition or its
// heal, a clog, a connection reset, a frame corrupted in flight, a sector
// faulted on a disk, the liveness phase's choice of core. It is keyed by its
// virtual time and its site (what kind, where), never by its position in the
// run, so removing one from a plan renumbers nothing.
//
// Recording changes nothing: the draws decide, and each firing is noted.
// Replaying, the draws still happen exactly as they would (so that, with
// the whole plan, the run is the recorded one, digest and all), but the
// plan decides: a site fires when the plan holds a firing for it at that
// moment, with the plan's arguments (a restart delay, a partition's
// shape), and a drawn firing the plan lacks is suppressed. Once a firing is
// removed, the run parts from the recording, and the draws that follow may
// differ, but they never decide a firing: the plan's firings still happen
// at their times where their sites allow (a crash of a replica that is up,
// a reset of a connection that carries a frame then). A per-frame or
// per-write firing fires at its site's chance of that instant (its Chance:
// the n-th frame sent on the link then), or failing that at the site's
// first chance after it within one tick.
package plan

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// Kind names a class of fault firing, as the plan file spells it.
type Kind string

// The kinds of firing. A is the replica (process and disk faults) or the
// sending node (link faults); B is the receiving node of a link fault, and
// -1 where there is none.
const (
	Crash         Kind = "crash"          // args: the ticks until the restart
	Pause         Kind = "pause"          // args: the ticks until the resume
	Partition     Kind = "partition"      // args: the sides and direction (network)
	Heal          Kind = "heal"           // every cut between replicas lifted
	Clog          Kind = "clog"           // args: the clog's length in ns; A>B the path
	Reset         Kind = "reset"          // a connection reset as a frame went out on A>B
	Corrupt       Kind = "corrupt"        // a bit flipped in a frame on A>B
	ChunkCorrupt  Kind = "chunk_corrupt"  // a bit flipped in a StateChunk body on A>B
	Latent        Kind = "latent"         // a sector of replica A's write made unreadable
	CorruptSector Kind = "corrupt_sector" // a sector of replica A's write corrupted
	Misdirect     Kind = "misdirect"      // a write of replica A landed elsewhere
	Core          Kind = "core"           // args: the liveness core's replicas
)

var kinds = []Kind{Crash, Pause, Partition, Heal, Clog, Reset, Corrupt, ChunkCorrupt, Latent, CorruptSector, Misdirect, Core}

// Site is where a firing happens.
type Site struct {
	Kind Kind
	A, B int32
}

// Firing is one fault that happened (or is to happen) at AtNs of virtual time.
type Firing struct {
	AtNs int64
	// Chance: which of its site's chances at AtNs it was, from 0 (frames
	// sent on one connection in one event share an instant); written
	// "at_ns+chance" when not 0.
	Chance int32
	Site   Site
	Args   string // no spaces
}

// Plan is a run's fault firings, in the order they happened, with the seed
// and the flags of the run they came from (a replay runs with both).
type Plan struct {
	Seed    uint64
	Flags   []string // the run's flags, -seed excluded
	Firings []Firing
}

const header = "vopr-plan 1"

// Write writes p in its text form: a header, the seed, the flags, then one
// firing a line ("at_ns kind a b [args]"), so that a plan can be read,
// diffed and edited by hand.
func (p Plan) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n# one firing a line: at_ns kind a b [args]; delete lines to replay without them (vopr -plan FILE)\n", header)
	fmt.Fprintf(bw, "seed %d\n", p.Seed)
	fmt.Fprintf(bw, "flags %s\n", strings.Join(p.Flags, " "))
	for _, f := range p.Firings {
		if f.Chance != 0 {
			fmt.Fprintf(bw, "%d+%d %s %d %d", f.AtNs, f.Chance, f.Site.Kind, f.Site.A, f.Site.B)
		} else {
			fmt.Fprintf(bw, "%d %s %d %d", f.AtNs, f.Site.Kind, f.Site.A, f.Site.B)
		}
		if f.Args != "" {
			fmt.Fprintf(bw, " %s", f.Args)
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// ErrFormat is wrapped by every error Read returns about the file's content.
var ErrFormat = errors.New("plan: bad plan file")

// firingsMax bounds a plan file: a 10 M-tick run fires some millions.
const firingsMax = 50_000_000

// Read parses a plan written by Write (comments and blank lines allowed).
// Firings need not be in time order.
func Read(r io.Reader) (Plan, error) {
	var p Plan
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	line, sawHeader, sawSeed := 0, false, false
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%w: line %d: %s", ErrFormat, line, fmt.Sprintf(format, a...))
		}
		switch {
		case !sawHeader:
			if text != header {
				return p, bad("want the header %q, got %q", header, text)
			}
			sawHeader = true
			continue
		case strings.HasPrefix(text, "seed "):
			seed, err := strconv.ParseUint(strings.TrimSpace(text[len("seed "):]), 10, 64)
			if err != nil {
				return p, bad("seed: %v", err)
			}
			p.Seed, sawSeed = seed, true
			continue
		case text == "flags" || strings.HasPrefix(text, "flags "):
			p.Flags = strings.Fields(text[len("flags"):])
			continue
		}
		fields := strings.Fields(text)
		if len(fields) < 4 || len(fields) > 5 {
			return p, bad("a firing is \"at_ns kind a b [args]\", got %d fields", len(fields))
		}
		atText, chanceText, hasChance := strings.Cut(fields[0], "+")
		at, err := strconv.ParseInt(atText, 10, 64)
		if err != nil || at < 0 {
			return p, bad("at_ns %q: not a time", fields[0])
		}
		var chance int64
		if hasChance {
			if chance, err = strconv.ParseInt(chanceText, 10, 32); err != nil || chance < 0 {
				return p, bad("at_ns %q: chance %q is not a count", fields[0], chanceText)
			}
		}
		kind := Kind(fields[1])
		if !slices.Contains(kinds, kind) {
			return p, bad("unknown kind %q", fields[1])
		}
		a, errA := strconv.ParseInt(fields[2], 10, 32)
		b, errB := strconv.ParseInt(fields[3], 10, 32)
		if errA != nil || errB != nil {
			return p, bad("a and b must be integers, got %q %q", fields[2], fields[3])
		}
		f := Firing{AtNs: at, Chance: int32(chance), Site: Site{Kind: kind, A: int32(a), B: int32(b)}}
		if len(fields) == 5 {
			f.Args = fields[4]
		}
		if len(p.Firings) >= firingsMax {
			return p, bad("more than %d firings", firingsMax)
		}
		p.Firings = append(p.Firings, f)
	}
	if err := sc.Err(); err != nil {
		return p, fmt.Errorf("plan: reading: %w", err)
	}
	if !sawHeader || !sawSeed {
		return p, fmt.Errorf("%w: no %q header and seed line", ErrFormat, header)
	}
	return p, nil
}
