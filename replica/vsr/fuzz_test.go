package vsr

import (
	"flag"
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
)

var (
	randomSeeds = flag.Int("vsr.seeds", 0, "how many seeds TestRandomClusters runs (0: the default)")
	randomFirst = flag.Int("vsr.first", 0, "the first seed TestRandomClusters runs")
)

// TestRandomClusters: many seeds of a small cluster under message loss,
// crashes and restarts, with proposals throughout; the checker in the
// harness asserts agreement and the hash chain at every commit. Then the
// faults stop and every replica must converge.
func TestRandomClusters(t *testing.T) {
	seeds := 200
	if testing.Short() {
		seeds = 30
	}
	if *randomSeeds > 0 {
		seeds = *randomSeeds
	}
	regressions, err := kernel.ReadSeeds("../../seeds", "vsr-random")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regressions {
		n := 1 + int(r.Seed)%5
		t.Run(fmt.Sprintf("regression/seed=%d/n=%d", r.Seed, n), func(t *testing.T) {
			runRandomCluster(t, r.Seed, n)
		})
	}
	for seed := *randomFirst; seed < *randomFirst+seeds; seed++ {
		n := 1 + seed%5
		t.Run(fmt.Sprintf("seed=%d/n=%d", seed, n), func(t *testing.T) {
			runRandomCluster(t, uint64(seed), n)
		})
	}
}

func runRandomCluster(t *testing.T, seed uint64, n int) {
	c := newCluster(t, n, seed)
	lossPercent := c.rng.IntN(20)
	// A partition: side[r] says which side replica r is on; messages across
	// the cut are lost while it lasts.
	side := make([]bool, n)
	partitioned := false
	c.drop = func(m message) bool {
		if partitioned && side[m.from] != side[m.to] {
			return true
		}
		return c.rng.IntN(100) < lossPercent
	}
	f := (n - 1) / 2
	proposed := 0
	for range 30000 {
		if p := c.primary(); p != nil && c.rng.IntN(20) == 0 && proposed < 200 {
			if p.group.Propose(Proposal{Request: uint64(proposed + 1), Body: []byte{byte(proposed)}}) != Refused {
				proposed++
			}
		}
		if c.rng.IntN(2000) == 0 {
			// Crash a replica, keeping a view-change quorum up.
			down := 0
			for _, r := range c.replicas {
				if !r.up {
					down++
				}
			}
			if r := c.replicas[c.rng.IntN(n)]; r.up && down < f {
				r.crash()
			}
		}
		if c.rng.IntN(1500) == 0 {
			partitioned = !partitioned
			for i := range side {
				side[i] = c.rng.IntN(2) == 0
			}
		}
		if c.rng.IntN(500) == 0 {
			for _, r := range c.replicas {
				if !r.up {
					r.start(false)
					break
				}
			}
		}
		c.stepChecked()
	}
	// Heal: everyone up, no loss, no partition; the cluster must converge.
	c.drop = nil
	partitioned = false
	for _, r := range c.replicas {
		if !r.up {
			r.start(false)
		}
	}
	target := uint64(0)
	for op := range c.canon {
		target = max(target, op)
	}
	ok := c.runUntil(400000, func() bool {
		p := c.primary()
		if p == nil {
			return false
		}
		top := p.group.CommitMax()
		if top < target {
			return false
		}
		for _, r := range c.replicas {
			if r.group.Status() != StatusNormal || r.group.CommitMin() != top || r.group.View() != p.group.View() {
				return false
			}
		}
		return true
	})
	if !ok {
		c.dump()
		t.Fatalf("no convergence after healing (target op %d, %d steps, probes %v)", target, c.steps, c.probes)
	}
}
