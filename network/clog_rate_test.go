package network_test

import (
	"math"
	"testing"

	"github.com/iggy-vopr/vopr/network"
)

// TestClogRate: each ordered path clogs with ClogProbability at every tick
// it is not clogged, so with clogs of zero length a run of T ticks over P
// paths clogs about P*T*p times. The network draws the gap to each path's
// next clog instead of a coin per path per tick; the count must still
// match the Bernoulli process's mean (within five standard deviations, on
// fixed seeds, so the test is deterministic).
func TestClogRate(t *testing.T) {
	for _, tt := range []struct {
		p      float64
		nodes  int
		ticks  int64
		meanNs int64
	}{
		{0.001, 6, 20_000, 0},
		{0.02, 4, 5_000, 0},
		{0.5, 3, 2_000, 0},
		{1, 3, 500, 0},
	} {
		o := quietOptions()
		o.ClogProbability, o.ClogDurationMeanNs = tt.p, tt.meanNs
		w := newWorld(t, 7, o, tt.nodes, 0)
		w.run(tt.ticks * network.TickNs)
		paths := float64(tt.nodes * (tt.nodes - 1))
		trials := paths * float64(tt.ticks)
		mean, sd := trials*tt.p, math.Sqrt(trials*tt.p*(1-tt.p))
		got := float64(w.net.Stats().Clogs)
		if math.Abs(got-mean) > 5*sd+1 {
			t.Errorf("p=%v, %d nodes, %d ticks: %v clogs, want %.0f ± %.0f", tt.p, tt.nodes, tt.ticks, got, mean, 5*sd)
		}
	}
}
