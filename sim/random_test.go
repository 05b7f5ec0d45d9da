package sim

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

var (
	randomRuns  = flag.Int("sim.runs", 0, "how many seeds TestRandomClusterRuns runs (0: the default)")
	randomFirst = flag.Uint64("sim.first", 0, "the first seed TestRandomClusterRuns runs")
)

// TestRandomClusterRuns: whole clusters of real replicas under random
// faults of every kind (network resets, partitions, clogs, corruption;
// storage faults within the atlas; crashes and restarts), with clients
// throughout; the agreement checker watches every commit. Then the faults
// stop, every replica comes back, and the cluster must converge with every
// request answered.
func TestRandomClusterRuns(t *testing.T) {
	runs := 20
	if *randomRuns > 0 {
		runs = *randomRuns
	}
	regressions, err := kernel.ReadSeeds("../seeds", "cluster-random")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range regressions {
		t.Run(fmt.Sprintf("regression/seed=%d", r.Seed), func(t *testing.T) { randomClusterRun(t, r.Seed) })
	}
	for seed := *randomFirst; seed < *randomFirst+uint64(runs); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) { randomClusterRun(t, seed) })
	}
}

func randomClusterRun(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	replicas := 1 + rng.IntN(5)
	o := DefaultClusterOptions(seed, replicas, 1+rng.IntN(4))
	o.Network.ResetProbability = rng.Float64() * 0.01
	o.Network.PartitionMode = network.PartitionMode(rng.IntN(4))
	o.Network.PartitionSymmetry = network.PartitionSymmetry(rng.IntN(2))
	o.Network.PartitionProbability = rng.Float64() * 0.01
	o.Network.UnpartitionProbability = 0.01 + rng.Float64()*0.05
	o.Network.PartitionStabilityMinTicks = 50
	o.Network.UnpartitionStabilityMinTicks = 50
	o.Network.ClogProbability = rng.Float64() * 0.001
	o.Network.ClogDurationMeanNs = 200_000_000
	o.Network.CorruptProbability = rng.Float64() * 0.002
	o.Storage.Faults.LatentProbability = rng.Float64() * 0.01
	o.Storage.Faults.CorruptProbability = rng.Float64() * 0.01
	o.Storage.Faults.MisdirectProbability = rng.Float64() * 0.005
	o.Storage.CrashLostProbability = 0.3
	o.Storage.CrashTornProbability = 0.3
	c := NewCluster(o)
	defer func() {
		if e := recover(); e != nil {
			dumpCluster(t, c)
			t.Fatalf("seed %d (%d replicas): %v", seed, replicas, e)
		}
	}()
	for i, cl := range c.Clients {
		submitStreams(cl, fmt.Sprintf("c%d", i), 5+rng.IntN(20))
	}
	f := (replicas - 1) / 2
	crashRate := rng.Float64() * 0.002
	for tick := 0; tick < 6000; tick++ {
		c.Loop.RunUntil(c.Loop.Now()+kernel.TickNs, 0)
		if rng.Float64() < crashRate {
			down := 0
			for _, n := range c.Replicas {
				if !n.Up() {
					down++
				}
			}
			if n := c.Replicas[rng.IntN(replicas)]; n.Up() && down < f {
				n.Crash()
			}
		}
		if rng.Float64() < 0.002 {
			for _, n := range c.Replicas {
				if !n.Up() {
					n.Restart()
					break
				}
			}
		}
	}
	// Liveness: heal everything and require convergence.
	c.Net.FaultsOff()
	all := make([]network.NodeID, 0, replicas)
	for _, n := range c.Replicas {
		all = append(all, network.NodeID(n.ID()))
		n.Device().FaultsOff()
		n.Restart()
	}
	c.Net.Heal(all)
	if !c.RunUntil(300*second, func() bool { return clientsIdle(c) }) {
		dumpCluster(t, c)
		t.Fatalf("seed %d (%d replicas): the clients did not finish after healing", seed, replicas)
	}
	top := c.Checker.Committed()
	if !c.RunUntil(120*second, func() bool { return c.CommittedEverywhere(top) }) {
		dumpCluster(t, c)
		t.Fatalf("seed %d (%d replicas): no convergence on op %d", seed, replicas, top)
	}
	expectAllCommitted(t, c)
}
