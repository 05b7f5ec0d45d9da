package vsr

import "math/rand/v2"

// timeout is one protocol timer counted in ticks. Every (re)arm draws a
// jitter in U[0, period/2] from the replica's own stream, where period is the
// base (times the backoff, for the prepare retransmit), so that replicas
// started together do not fire together (TigerBeetle learned this from a
// repair "resonance": vopr-notes.md, weaknesses).
//
// consensus.md gives the prepare retransmit U[0, period] (Iggy's full
// jitter); we keep half the period for it too, one rule for every timer:
// that already desynchronizes, and the retransmit is sent by one primary
// per group over per-backup connections, with no crowd of senders for a
// wider spread to thin out, so the extra spread would only delay the resend
// (at the 2^4 cap, up to 800 ticks instead of 600).
type timeout struct {
	name      string
	baseTicks int
	backoff   bool // prepare retransmit: period = base·2^min(attempts,4), fires after period + U[0, period/2]
	rng       *rand.Rand
	clock     *timerClock
	stage     int // its place in Group.Tick's order

	running  bool
	due      uint64 // the tick at which it fires
	after    int    // ticks from its (re)arm to its fire
	attempts int    // fires since the last start
}

// timerClock is a group's tick count, which its timers' deadlines are in,
// and the stage of Group.Tick running now (-1 outside a Tick). A timer armed
// during a Tick before its own stage counts that tick, as a timer that
// counted its own ticks did; one armed at or after its stage counts from the
// next. Deadlines instead of counters let a host tick a group only when one
// of its timers is due (Group.NextDue, Group.TickTo) with the same fires as
// ticking it every tick.
type timerClock struct {
	now   uint64
	stage int
}

func newTimeout(name string, baseTicks int, backoff bool, rng *rand.Rand, clock *timerClock, stage int) timeout {
	if baseTicks < 1 {
		panic("vsr: timeout " + name + " below one tick")
	}
	return timeout{name: name, baseTicks: baseTicks, backoff: backoff, rng: rng, clock: clock, stage: stage}
}

// start (re)arms the timer from zero, forgetting earlier fires.
func (t *timeout) start() {
	t.running = true
	t.attempts = 0
	t.arm()
}

// stop disarms it.
func (t *timeout) stop() {
	t.running = false
	t.attempts = 0
}

// reset restarts a running timer (a heartbeat arrived); a stopped timer stays stopped.
func (t *timeout) reset() {
	if t.running {
		t.start()
	}
}

func (t *timeout) arm() {
	base := t.baseTicks
	if t.backoff {
		base <<= min(t.attempts, 4)
	}
	t.after = base + t.rng.IntN(base/2+1)
	t.due = t.clock.now + uint64(t.after)
	if t.clock.stage >= 0 && t.stage > t.clock.stage {
		t.due-- // this Tick's check of it is still to come, and counts
	}
}

// tick reports whether the timer is due at the clock's tick; a fired timer
// re-arms itself (with backoff where it has it) and counts the attempt.
func (t *timeout) tick() bool {
	if !t.running || t.clock.now < t.due {
		return false
	}
	t.attempts++
	t.arm()
	return true
}
