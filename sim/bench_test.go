package sim

import (
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
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

// BenchmarkPartitionGroupsIdle measures what idle partition groups cost: a
// fault-free three-replica cluster with one topic of N partitions runs ten
// simulated seconds with no client traffic, so every frame is a group's
// heartbeat (the protocol's own per-group cost) and every tick ticks each
// group. It reports CPU per simulated second and frames per simulated
// second against N; each b.Loop iteration is one such run (the cluster's
// setup excluded from the timer).
func BenchmarkPartitionGroupsIdle(b *testing.B) {
	for _, n := range []int{0, 1, 16, 256} {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			const idleNs = 10 * second
			var frames uint64
			var runs int
			for b.Loop() {
				b.StopTimer()
				c := NewCluster(DefaultClusterOptions(7, 3, 1))
				cl := c.Clients[0]
				cl.Submit(workload.Op{Operation: wire.OperationCreateStream, Body: createStream("bench")})
				if n > 0 {
					cl.Submit(workload.Op{Operation: wire.OperationCreateTopic, Body: metadata.CreateTopic{
						Stream: metadata.Named("bench"), PartitionsCount: uint32(n), Name: "idle"}.Encode()})
				}
				if !c.RunUntil(60*second, func() bool { return clientsIdle(c) && c.CommittedEverywhere(c.Checker.Committed()) }) {
					b.Fatal("the cluster did not settle")
				}
				if got := len(c.Replicas[0].Replica().PartitionGroups()); got != n {
					b.Fatalf("%d partition groups, want %d", got, n)
				}
				before := c.Net.Stats().FramesSent
				b.StartTimer()
				c.Run(idleNs)
				b.StopTimer()
				frames += c.Net.Stats().FramesSent - before
				runs++
				b.StartTimer()
			}
			simS := float64(runs) * float64(idleNs) / 1e9
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/simS/1e3, "cpu-µs/sim-s")
			b.ReportMetric(float64(frames)/simS, "frames/sim-s")
		})
	}
}

// BenchmarkPartitionGroupsBusy is BenchmarkPartitionGroupsIdle with a
// producer: one client sends batches of 4 messages round robin over the N
// partitions (PartitionID) for the ten simulated seconds, as fast as its
// replies come back. It reports CPU per simulated second, frames per
// simulated second and per committed message, against N.
func BenchmarkPartitionGroupsBusy(b *testing.B) {
	for _, n := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("partitions=%d", n), func(b *testing.B) {
			const busyNs = 10 * second
			var frames, messages uint64
			var runs int
			for b.Loop() {
				b.StopTimer()
				c := NewCluster(DefaultClusterOptions(7, 3, 1))
				cl := c.Clients[0]
				cl.Submit(workload.Op{Operation: wire.OperationCreateStream, Body: createStream("bench")})
				cl.Submit(workload.Op{Operation: wire.OperationCreateTopic, Body: metadata.CreateTopic{
					Stream: metadata.Named("bench"), PartitionsCount: uint32(n), Name: "busy"}.Encode()})
				if !c.RunUntil(60*second, func() bool { return clientsIdle(c) && c.CommittedEverywhere(c.Checker.Committed()) }) {
					b.Fatal("the cluster did not settle")
				}
				for i := range 4000 {
					cl.Submit(workload.Op{Operation: wire.OperationSendMessages, Body: benchSend(uint32(i%n), uint64(4*i+1))})
				}
				before, committed := c.Net.Stats().FramesSent, c.Checker.PartitionMessages()
				b.StartTimer()
				c.Run(busyNs)
				b.StopTimer()
				frames += c.Net.Stats().FramesSent - before
				messages += c.Checker.PartitionMessages() - committed
				if v := c.Checker.Violation(); v != nil {
					b.Fatal(v)
				}
				runs++
				b.StartTimer()
			}
			simS := float64(runs) * float64(busyNs) / 1e9
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/simS/1e3, "cpu-µs/sim-s")
			b.ReportMetric(float64(frames)/simS, "frames/sim-s")
			b.ReportMetric(float64(frames)/float64(max(messages, 1)), "frames/msg")
		})
	}
}

// benchSend is a SendMessages of 4 messages to partition p of bench/busy.
func benchSend(p uint32, firstID uint64) []byte {
	msgs := make([]wire.Message, 4)
	for i := range msgs {
		msgs[i] = wire.Message{ID: wire.U128{Lo: firstID + uint64(i)}, OffsetDelta: uint32(i), Payload: []byte("0123456789abcdef")}
	}
	return partition.EncodeSendMessages(partition.SendMessages{Stream: metadata.Named("bench"), Topic: metadata.Named("busy"),
		Partitioning: partition.Partitioning{Kind: partition.PartitionID, Partition: p},
		Batch:        wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 1}, msgs)})
}
