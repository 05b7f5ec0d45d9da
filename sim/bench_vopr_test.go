package sim

import (
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-vopr/vopr/sim/kernel"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// BenchmarkVOPRSwarm runs whole swarm seeds (safety and liveness phases,
// checker on) one after another, as a campaign does on one core, and
// reports the campaign's figures: seeds per second, simulated seconds per
// wall second, and frames per CPU second.
func BenchmarkVOPRSwarm(b *testing.B) {
	var frames, ticks uint64
	seeds := 0
	cpuStart, wallStart := cpuTime(b), time.Now()
	for i := 0; b.Loop(); i++ {
		r := Run(Swarm(uint64(i%200)+1), nil)
		if r.Outcome != Pass {
			b.Fatalf("seed %d: %s: %s", r.Seed, r.Outcome, r.Violation)
		}
		frames += r.Frames
		ticks += r.Ticks
		seeds++
	}
	wall, cpu := time.Since(wallStart).Seconds(), (cpuTime(b) - cpuStart).Seconds()
	b.ReportMetric(float64(seeds)/wall, "seeds/s")
	b.ReportMetric(float64(ticks)*float64(kernel.TickNs)/1e9/wall, "sim-s/wall-s")
	b.ReportMetric(float64(frames)/cpu, "frames/cpu-s")
	b.ReportMetric(float64(ticks)*float64(kernel.TickNs)/1e9/cpu, "sim-s/cpu-s")
}

// heapSampler samples the heap in use every few hundred trace lines, so a
// run's peak heap is known without stopping the world.
type heapSampler struct {
	lines  int
	sample []metrics.Sample
	peak   uint64
}

func newHeapSampler() *heapSampler {
	return &heapSampler{sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
}

func (h *heapSampler) Write(p []byte) (int, error) {
	h.lines++
	if h.lines%256 == 0 {
		h.read()
	}
	return len(p), nil
}

func (h *heapSampler) read() {
	metrics.Read(h.sample)
	h.peak = max(h.peak, h.sample[0].Value.Uint64())
}

// BenchmarkVOPRLongSeedPeakHeap runs one long seed (six replicas, twelve
// clients, 3,000 requests under the swarm's faults) and reports the peak
// heap in use, garbage not yet collected included, and the run's length.
func BenchmarkVOPRLongSeedPeakHeap(b *testing.B) {
	o := Swarm(30)
	o.Replicas, o.Clients, o.Requests = 6, 12, 3000
	o.SafetyTicksMax = 200_000
	var peak uint64
	var r Result
	for b.Loop() {
		h := newHeapSampler()
		h.read()
		r = Run(o, h)
		h.read()
		if r.Outcome != Pass {
			b.Fatalf("seed %d: %s: %s", r.Seed, r.Outcome, r.Violation)
		}
		peak = max(peak, h.peak)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(r.Ticks)*float64(kernel.TickNs)/1e9, "sim-s")
	b.ReportMetric(float64(r.Commits), "commits")
}
