package sim

import (
	"math"
	"testing"
)

// TestSwarmCrashIOFactor: the swarm draws the crash multiplier for I/O in
// flight per seed, log-uniform over [10, 1000] and a whole number (so the
// printed options reproduce it), and every drawn world passes Check.
func TestSwarmCrashIOFactor(t *testing.T) {
	const seeds = 2000
	low, high, aboveHundred := math.Inf(1), math.Inf(-1), 0
	for seed := uint64(1); seed <= seeds; seed++ {
		o := Swarm(seed)
		if err := o.Check(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		f := o.CrashIOFactor
		if f < 10 || f > 1000 || f != math.Trunc(f) {
			t.Fatalf("seed %d: crash-io-factor %v, want a whole number in [10, 1000]", seed, f)
		}
		low, high = min(low, f), max(high, f)
		if f >= 100 {
			aboveHundred++
		}
	}
	if low > 12 || high < 900 {
		t.Errorf("crash-io-factor spans [%v, %v] over %d seeds, want about [10, 1000]", low, high, seeds)
	}
	// Log-uniform: half the seeds draw 100 or more.
	if frac := float64(aboveHundred) / seeds; frac < 0.45 || frac > 0.55 {
		t.Errorf("%.2f of the seeds draw a crash-io-factor of 100 or more, want about 0.5 (log-uniform)", frac)
	}
}

// coreAt is the core as settling sees it at one tick.
type coreAt struct {
	converged     bool
	view, maxView uint32
}

// runSettling feeds settling one observation per tick from core(tick) until
// it decides, and returns the verdict and the tick it came at.
func runSettling(t *testing.T, s *settling, core func(tick int) coreAt) (settleVerdict, int) {
	t.Helper()
	for tick := 0; tick < 1_000_000; tick++ {
		c := core(tick)
		if c.converged && c.maxView < c.view {
			c.maxView = c.view
		}
		if v := s.observe(tick, c.converged, c.view, c.maxView); v != settleRunning {
			return v, tick
		}
	}
	t.Fatal("settling never decided")
	return settleRunning, 0
}

func TestSettling(t *testing.T) {
	const budget, settle, rotation = 60_000, 2250, 3
	fresh := func() *settling {
		return &settling{budgetTicks: budget, settleTicks: settle, rotation: rotation}
	}
	t.Run("stays settled", func(t *testing.T) {
		v, at := runSettling(t, fresh(), func(tick int) coreAt {
			return coreAt{converged: tick >= 100, view: 4}
		})
		if v != settleSettled || at != 100+settle {
			t.Fatalf("%v at tick %d, want settled at %d", v, at, 100+settle)
		}
	})
	t.Run("never converges", func(t *testing.T) {
		v, at := runSettling(t, fresh(), func(int) coreAt { return coreAt{view: 7, maxView: 7} })
		if v != settleNoConverge || at != budget {
			t.Fatalf("%v at tick %d, want no convergence at the budget %d", v, at, budget)
		}
	})
	t.Run("converges at the last tick of the budget", func(t *testing.T) {
		s := fresh()
		v, at := runSettling(t, s, func(tick int) coreAt { return coreAt{converged: tick >= budget, view: 1} })
		if v != settleSettled || at != budget+settle {
			t.Fatalf("%v at tick %d, want settled at %d", v, at, budget+settle)
		}
	})
	t.Run("needless view changes that end", func(t *testing.T) {
		// Converged in view 5; a backup that ignores two primaries'
		// heartbeats (wire.md correction 0.1) moves it to 6 and then 7,
		// where it stays: it settles.
		s := fresh()
		v, at := runSettling(t, s, func(tick int) coreAt {
			switch {
			case tick < 100:
				return coreAt{view: 4, maxView: 4}
			case tick < 800:
				return coreAt{converged: true, view: 5}
			case tick < 820:
				return coreAt{view: 5, maxView: 6}
			case tick < 1500:
				return coreAt{converged: true, view: 6}
			case tick < 1530:
				return coreAt{view: 6, maxView: 7}
			}
			return coreAt{converged: true, view: 7}
		})
		if v != settleSettled || at != 1530+settle {
			t.Fatalf("%v at tick %d, want settled at %d", v, at, 1530+settle)
		}
		if s.firstView != 5 || s.viewChanges != 2 {
			t.Fatalf("first view %d, %d view changes; want 5 and 2", s.firstView, s.viewChanges)
		}
	})
	t.Run("view changes that go on", func(t *testing.T) {
		// Every 700 ticks the backups time out and elect the next primary
		// (canary_heartbeat_reset): past a full rotation, it fails.
		s := fresh()
		v, at := runSettling(t, s, func(tick int) coreAt {
			view := uint32(2 + tick/700)
			if tick%700 < 20 {
				return coreAt{view: view - 1, maxView: view}
			}
			return coreAt{converged: true, view: view}
		})
		if v != settleUnsettled {
			t.Fatalf("%v at tick %d, want unsettled", v, at)
		}
		if want := (2 + rotation + 1 - 2) * 700; at != want {
			t.Fatalf("unsettled at tick %d, want %d (view %d, past view %d + %d)", at, want, 2+rotation+1, 2, rotation)
		}
	})
	t.Run("view changes slower than the rotation bound but unending", func(t *testing.T) {
		// A view change every 2000 ticks (seen converged in the new view
		// at once) never leaves a stretch of settleTicks; once the budget
		// is over, the next new stretch ends it, before a full rotation.
		s := &settling{budgetTicks: 5000, settleTicks: settle, rotation: 100}
		v, at := runSettling(t, s, func(tick int) coreAt {
			return coreAt{converged: true, view: uint32(1 + tick/2000)}
		})
		if v != settleUnsettled || at != 6000 {
			t.Fatalf("%v at tick %d, want unsettled at 6000 (a stretch begun after the budget)", v, at)
		}
	})
	t.Run("falls out of convergence for good", func(t *testing.T) {
		s := fresh()
		v, at := runSettling(t, s, func(tick int) coreAt {
			return coreAt{converged: tick >= 10 && tick < 500, view: 3, maxView: 3}
		})
		if v != settleUnsettled || at != budget {
			t.Fatalf("%v at tick %d, want unsettled at the budget", v, at)
		}
	})
}
