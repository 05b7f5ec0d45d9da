package kernel

import (
	"fmt"
	"math/rand/v2"
)

// TickNs is one consensus tick: 10 ms of virtual time (Iggy's TICK_INTERVAL).
const TickNs int64 = 10_000_000

// EpochNs is the realtime at virtual time 0: 2026-01-01T00:00:00Z, so that
// realtime clocks read plausible Unix times.
const EpochNs int64 = 1_767_225_600_000_000_000

// Clock is one node's view of time. Its monotonic clock is virtual time
// itself; its realtime clock starts offsetNs away from the true epoch and
// runs driftPPB parts per billion fast (or slow, when negative). Drift and
// offset touch realtime only: ticks arrive every TickNs of virtual time
// whatever the clock says (DESIGN.md, "Faults").
type Clock struct {
	offsetNs int64
	driftPPB int64
}

// Drift beyond this many parts per billion (0.1%) is refused: a clock that
// far off is a broken machine, not a skewed one.
const driftPPBMax = 1_000_000

// NewClock returns a clock with the given realtime offset and drift.
func NewClock(offsetNs, driftPPB int64) Clock {
	if driftPPB < -driftPPBMax || driftPPB > driftPPBMax {
		panic(fmt.Sprintf("kernel: clock drift %d ppb outside ±%d", driftPPB, driftPPBMax))
	}
	return Clock{offsetNs: offsetNs, driftPPB: driftPPB}
}

// DrawClock draws a clock for one node of a run: an offset uniform in
// ±offsetMaxNs and a drift uniform in ±driftMaxPPB, from the node's own
// stream, so that every seed brings its own skew.
func DrawClock(rng *rand.Rand, offsetMaxNs, driftMaxPPB int64) Clock {
	if offsetMaxNs < 0 || driftMaxPPB < 0 {
		panic("kernel: negative clock bounds")
	}
	offset := rng.Int64N(2*offsetMaxNs+1) - offsetMaxNs
	drift := rng.Int64N(2*driftMaxPPB+1) - driftMaxPPB
	return NewClock(offset, drift)
}

// MonotonicNs returns the monotonic reading at virtual time nowNs.
func (c Clock) MonotonicNs(nowNs int64) int64 { return nowNs }

// RealtimeNs returns the realtime reading at virtual time nowNs. It never
// runs backwards: drift is bounded well below one.
func (c Clock) RealtimeNs(nowNs int64) int64 {
	// nowNs * driftPPB can overflow for runs of centuries; split it.
	drift := nowNs/1_000_000_000*c.driftPPB + nowNs%1_000_000_000*c.driftPPB/1_000_000_000
	return EpochNs + c.offsetNs + nowNs + drift
}

// OffsetNs returns the realtime offset at virtual time 0.
func (c Clock) OffsetNs() int64 { return c.offsetNs }

// DriftPPB returns the drift in parts per billion.
func (c Clock) DriftPPB() int64 { return c.driftPPB }

// Ticker delivers a node's ticks: every TickNs of virtual time, on the tick
// grid, unless the node is paused. While paused the node neither ticks nor
// sees time pass; on resume the next tick lands on the grid and the node sees
// the jump, as after a VM migration or a long GC pause.
//
// The tickers of one loop share one event per grid point (tickFanout), which
// delivers the tick of every ticker due then, in the order the tickers were
// made: a run schedules one tick event per grid point, not one per node.
type Ticker struct {
	loop   *Loop
	node   int32
	tick   func()
	paused bool
	ticks  uint64
	dueNs  int64 // the grid point of the next tick; 0 while paused
}

// NewTicker arms a ticker that calls tick for node on every tick of loop,
// starting at the next grid point after now.
func NewTicker(loop *Loop, node int32, tick func()) *Ticker {
	if loop.ticks == nil {
		loop.ticks = &tickFanout{loop: loop}
	}
	t := &Ticker{loop: loop, node: node, tick: tick}
	loop.ticks.tickers = append(loop.ticks.tickers, t)
	t.arm()
	return t
}

func (t *Ticker) arm() {
	t.dueNs = (t.loop.Now()/TickNs + 1) * TickNs
	t.loop.ticks.armAt(t.dueNs)
}

// Pause stops ticks until Resume.
func (t *Ticker) Pause() {
	t.paused = true
	t.dueNs = 0
}

// Resume restarts ticks at the next grid point.
func (t *Ticker) Resume() {
	if !t.paused {
		return
	}
	t.paused = false
	t.arm()
}

// Stop ends the ticker for good (a crashed node's ticker).
func (t *Ticker) Stop() { t.Pause() }

// Paused reports whether the ticker is paused.
func (t *Ticker) Paused() bool { return t.paused }

// Ticks returns how many ticks were delivered.
func (t *Ticker) Ticks() uint64 { return t.ticks }

// tickFanout is a loop's one tick event: at each grid point it fires, it
// ticks every ticker due, in creation order, then arms itself for the next
// grid point any ticker is due at.
type tickFanout struct {
	loop    *Loop
	tickers []*Ticker
	armedNs int64  // when the armed event fires; 0: none armed
	gen     uint64 // the generation of the armed event
}

// armAt makes sure the fan-out fires at atNs (a grid point) or earlier.
func (f *tickFanout) armAt(atNs int64) {
	if f.armedNs != 0 && f.armedNs <= atNs {
		return
	}
	f.gen++
	f.armedNs = atNs
	f.loop.At(atNs, f, f.gen)
}

// Fire delivers the ticks due now and arms the next fan-out. It reports one
// "clock.tick" whose hash covers which nodes ticked and their tick counts.
func (f *tickFanout) Fire(nowNs int64, gen uint64) (string, int32, uint64) {
	if gen != f.gen {
		return "", 0, 0 // superseded by an earlier arming
	}
	f.armedNs = 0
	var hash uint64
	ticked := false
	// A tick may make a ticker (a node starts): it is due at the next grid
	// point, not now; the index loop sees it and skips it.
	for i := 0; i < len(f.tickers); i++ {
		t := f.tickers[i]
		if t.dueNs == 0 || t.dueNs > nowNs { // paused, or not due yet
			continue
		}
		t.ticks++
		t.dueNs = nowNs + TickNs
		t.tick()
		hash = mixTick(hash, uint64(uint32(t.node))<<40^t.ticks)
		ticked = true
	}
	next := int64(0)
	for _, t := range f.tickers {
		if t.dueNs != 0 && (next == 0 || t.dueNs < next) {
			next = t.dueNs
		}
	}
	if next != 0 {
		f.armAt(next)
	}
	if !ticked {
		return "", 0, 0
	}
	return "clock.tick", -1, hash
}

// mixTick folds v into a running hash of the ticks of one grid point.
func mixTick(h, v uint64) uint64 {
	h = (h ^ v) * 0x9e3779b97f4a7c15
	return h ^ h>>29
}
