package journal

import (
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// benchConfig is the simulator's profile: 4 KiB sectors, a ring of 1024
// slots, frames up to 1 MiB, a pipeline of 32 appends.
func benchConfig() Config {
	return Config{
		SectorSize:     4096,
		SlotCount:      1024,
		FrameSizeMax:   1 << 20,
		AppendsMax:     32,
		IOsMax:         40,
		StateWritesMax: 8,
		Cluster:        wire.ClusterID("bench"),
		Replica:        0,
		ReplicaCount:   3,
	}
}

// retarget rewrites frame (a prepare built for another op) as op's: the op
// field, then the identity. The body and its seal stay.
func retarget(frame []byte, op uint64) {
	h := wire.HeaderOf(frame)
	binary.LittleEndian.PutUint64(h[offPrepareOp:], op)
	h.SealPrepare()
}

// benchmarkAppends keeps inFlight appends of small metadata prepares (a
// 200-byte body) going on a fault-free device with realistic latencies, and
// reports wall-clock time and allocations per append, and the throughput in
// virtual time (appends per simulated second) and the mean virtual latency.
func benchmarkAppends(b *testing.B, inFlight int) {
	cfg := benchConfig()
	e := newEnv(b, cfg, envOptions{seed: 1, realistic: true})
	e.format()
	j, _ := e.mustOpen()
	frame := prepareFrame(cfg, 1, 0, 200)
	fired := 0
	done := func() { fired++ }
	startNs := e.loop.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j.InFlight() >= inFlight {
			e.loop.Step()
		}
		retarget(frame, uint64(i+1))
		j.Append(frame, done)
	}
	for j.InFlight() > 0 {
		e.loop.Step()
	}
	b.StopTimer()
	if fired != b.N {
		b.Fatalf("%d dones for %d appends", fired, b.N)
	}
	virtualNs := float64(e.loop.Now() - startNs)
	b.ReportMetric(float64(b.N)/(virtualNs/1e9), "appends/vs")
	b.ReportMetric(virtualNs*float64(inFlight)/float64(b.N)/1e3, "vµs/append")
}

// BenchmarkAppendPipelined: 32 appends in flight (a full pipeline).
func BenchmarkAppendPipelined(b *testing.B) { benchmarkAppends(b, 32) }

// BenchmarkAppendSerial: one append at a time (latency-bound: two writes
// and two syncs in sequence).
func BenchmarkAppendSerial(b *testing.B) { benchmarkAppends(b, 1) }

// BenchmarkOpenFullRing: recovery of a ring of 1024 small prepares.
func BenchmarkOpenFullRing(b *testing.B) {
	cfg := benchConfig()
	e := newEnv(b, cfg, envOptions{seed: 2, realistic: true})
	e.format()
	j, _ := e.mustOpen()
	frame := prepareFrame(cfg, 1, 0, 200)
	for op := uint64(1); op <= cfg.SlotCount; op++ {
		for j.InFlight() >= cfg.AppendsMax {
			e.loop.Step()
		}
		retarget(frame, op)
		j.Append(frame, func() {})
	}
	e.drain()
	b.ReportAllocs()
	b.ResetTimer()
	var virtualNs int64
	for i := 0; i < b.N; i++ {
		start := e.loop.Now()
		_, r := e.mustOpen()
		virtualNs += e.loop.Now() - start
		if r.Count(ClassClean) != int(cfg.SlotCount) {
			b.Fatal("not all clean")
		}
	}
	b.ReportMetric(float64(virtualNs)/float64(b.N)/1e6, "vms/open")
}
