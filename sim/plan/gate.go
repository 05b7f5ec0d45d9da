package plan

import (
	"cmp"
	"fmt"
	"slices"
)

// Gate stands at every fault site of a run: recording, it lets the draws
// decide and notes each firing; replaying, it lets the plan decide. A nil
// *Gate is no plan at all: the draws decide and nothing is noted.
type Gate struct {
	replay   bool
	windowNs int64
	// queues: replaying, the plan's firings by site in time order, with
	// how many are used or gone; looked up only, never iterated.
	queues map[Site]*queue
	// scheduled: replaying, the firings of the kinds a site asks for by
	// kind (Due), in time order.
	scheduled map[Kind]*queue
	fired     []Firing
	// chances: per site, the time of its last chance and how many it had
	// then (a site may have several chances at one instant: frames sent on
	// one connection in one event), so a firing names its chance exactly.
	chances map[Site]chance
	// lastChance: the chance of the latest Fire call, for Fired.
	lastChance int32
	// suppressed: firings the draws decided that the plan lacked; missed:
	// the plan's firings whose site had no chance within their window.
	suppressed, missed int
}

type chance struct {
	atNs int64
	n    int32
}

type queue struct {
	firings []Firing
	next    int
}

// Recorder returns a gate that records the firings the draws decide.
func Recorder() *Gate { return &Gate{chances: map[Site]chance{}} }

// Replayer returns a gate that replays p's firings, each at its site's
// first chance in [AtNs, AtNs+windowNs).
func Replayer(p Plan, windowNs int64) *Gate {
	if windowNs < 1 {
		panic(fmt.Sprintf("plan: window of %d ns", windowNs))
	}
	g := &Gate{replay: true, windowNs: windowNs, queues: map[Site]*queue{}, scheduled: map[Kind]*queue{}, chances: map[Site]chance{}}
	for _, f := range p.Firings {
		var q *queue
		if scheduledKind(f.Site.Kind) {
			if q = g.scheduled[f.Site.Kind]; q == nil {
				q = &queue{}
				g.scheduled[f.Site.Kind] = q
			}
		} else if q = g.queues[f.Site]; q == nil {
			q = &queue{}
			g.queues[f.Site] = q
		}
		q.firings = append(q.firings, f)
	}
	byTime := func(a, b Firing) int {
		if c := cmp.Compare(a.AtNs, b.AtNs); c != 0 {
			return c
		}
		return int(a.Chance) - int(b.Chance)
	}
	for _, q := range g.queues {
		// Stable: two firings at one site and time keep their file order.
		slices.SortStableFunc(q.firings, byTime)
	}
	for _, q := range g.scheduled {
		slices.SortStableFunc(q.firings, byTime)
	}
	return g
}

// scheduledKind: a kind whose sites are too many to ask one by one each
// tick (a clog may hit any path): its site asks Due for the kind instead.
func scheduledKind(k Kind) bool { return k == Clog }

// Due returns, replaying, the firings of kind (a scheduled kind: Clog) due
// at or before nowNs that were not returned yet, in time order; nil
// otherwise. The caller notes each it applies with Fired.
func (g *Gate) Due(nowNs int64, kind Kind) []Firing {
	if !g.Replaying() {
		return nil
	}
	q := g.scheduled[kind]
	if q == nil {
		return nil
	}
	from := q.next
	for q.next < len(q.firings) && q.firings[q.next].AtNs <= nowNs {
		q.next++
	}
	return q.firings[from:q.next]
}

// Release ends a replay: from now on the draws decide, as when recording,
// and what fires is noted (vopr branch: the plan up to the branch point,
// the reseeded draws after it). A nil gate or a recording one is left as
// it is.
func (g *Gate) Release() {
	if g != nil {
		g.replay = false
	}
}

// Replaying reports whether the plan decides (a draw's follow-up draws still
// happen as they would, but a firing's arguments come from Fire).
func (g *Gate) Replaying() bool { return g != nil && g.replay }

// Fire decides whether site fires at nowNs, given what the draw decided
// (drawn): without a plan or recording, as drawn; replaying, when the plan
// holds a firing for site due now, which it consumes, with its arguments.
// The caller notes what it then did with Fired.
func (g *Gate) Fire(nowNs int64, site Site, drawn bool) (args string, fire bool) {
	if g == nil {
		return "", drawn
	}
	c := g.chances[site]
	if c.atNs != nowNs {
		c = chance{atNs: nowNs}
	}
	g.lastChance = c.n
	c.n++
	g.chances[site] = c
	if !g.replay {
		return "", drawn
	}
	q := g.queues[site]
	for q != nil && q.next < len(q.firings) {
		f := q.firings[q.next]
		if f.AtNs+g.windowNs <= nowNs {
			q.next++
			g.missed++
			continue
		}
		if f.AtNs > nowNs || f.AtNs == nowNs && g.lastChance < f.Chance {
			break // not yet: a later instant, or a later chance of this one
		}
		q.next++
		return f.Args, true
	}
	if drawn {
		g.suppressed++
	}
	return "", false
}

// Fired notes a firing that happened at site with args (recording: the
// plan being written; replaying: what the replay fired).
func (g *Gate) Fired(nowNs int64, site Site, args string) {
	if g == nil {
		return
	}
	f := Firing{AtNs: nowNs, Site: site, Args: args}
	if c, ok := g.chances[site]; ok && c.atNs == nowNs {
		f.Chance = g.lastChance
	}
	g.fired = append(g.fired, f)
}

// Firings returns the firings noted so far, in the order they happened.
func (g *Gate) Firings() []Firing {
	if g == nil {
		return nil
	}
	return slices.Clone(g.fired)
}

// Stats counts what a replay did: firings fired, drawn firings it
// suppressed, and plan firings that found no chance in their window
// (counted once the run has passed them).
func (g *Gate) Stats() (fired, suppressed, missed int) {
	if g == nil {
		return 0, 0, 0
	}
	return len(g.fired), g.suppressed, g.missed
}
