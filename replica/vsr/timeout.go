package vsr

import "math/rand/v2"

// timeout is one protocol timer counted in ticks. Every (re)start draws a
// jitter of up to half the base from the replica's own stream, so that
// replicas started together do not fire together (TigerBeetle learned this
// from a repair "resonance": vopr-notes.md, weaknesses).
type timeout struct {
	name      string
	baseTicks int
	backoff   bool // prepare retransmit: after·2^min(attempts,4) + U[0, that]
	rng       *rand.Rand

	running  bool
	ticks    int // ticks since (re)start
	after    int // ticks at which it fires
	attempts int // fires since the last start
}

func newTimeout(name string, baseTicks int, backoff bool, rng *rand.Rand) timeout {
	if baseTicks < 1 {
		panic("vsr: timeout " + name + " below one tick")
	}
	return timeout{name: name, baseTicks: baseTicks, backoff: backoff, rng: rng}
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
	t.ticks = 0
	base := t.baseTicks
	if t.backoff {
		base <<= min(t.attempts, 4)
	}
	t.after = base + t.rng.IntN(base/2+1)
}

// tick advances the timer and reports whether it fired; a fired timer
// re-arms itself (with backoff where it has it) and counts the attempt.
func (t *timeout) tick() bool {
	if !t.running {
		return false
	}
	t.ticks++
	if t.ticks < t.after {
		return false
	}
	t.attempts++
	t.arm()
	return true
}
