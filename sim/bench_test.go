package sim

import (
	"fmt"
	"testing"
)

// BenchmarkProtocolCost measures what the protocol costs, fault-free:
// frames on the network per committed op, and committed ops per simulated
// second, with four clients keeping the pipeline busy. Both figures are
// deterministic (a property of the protocol and the seed, not of the
// machine); the wall time per op is the simulator's speed.
func BenchmarkProtocolCost(b *testing.B) {
	for _, n := range []int{3, 5} {
		b.Run(fmt.Sprintf("replicas=%d", n), func(b *testing.B) {
			var frames, ops uint64
			var simNs int64
			for i := 0; b.Loop(); i++ {
				c := NewCluster(DefaultClusterOptions(uint64(i), n, 4))
				if !c.RunUntil(60*second, func() bool { return c.Primary() != nil && clientsIdle(c) }) {
					b.Fatal("the cluster did not come up")
				}
				before, startNs := c.Net.Stats().FramesSent, c.Loop.Now()
				committed := c.Checker.Committed()
				for k, cl := range c.Clients {
					submitStreams(cl, fmt.Sprintf("b%d", k), 50)
				}
				if !c.RunUntil(600*second, func() bool { return clientsIdle(c) }) {
					b.Fatal("the clients did not finish")
				}
				frames += c.Net.Stats().FramesSent - before
				ops += c.Checker.Committed() - committed
				simNs += c.Loop.Now() - startNs
			}
			b.ReportMetric(float64(frames)/float64(ops), "frames/op")
			b.ReportMetric(float64(ops)/(float64(simNs)/1e9), "ops/sim-s")
		})
	}
}
