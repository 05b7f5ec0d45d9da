package storage_test

import (
	"bytes"
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

// benchDevice is a 1 GiB device of 4 KiB sectors (sparse: only the working
// set is ever stored), with a fault-free atlas-less configuration, so the
// figures are the device's own cost per byte and per I/O.
func benchDevice() (*kernel.Loop, *storage.SimDevice) {
	loop := kernel.NewLoop()
	layout := storage.NewLayout(storage.Zone{Name: "data", ChunkSectors: 256, Chunks: 1024})
	opts := quiet(layout, 4096)
	opts.CrashTornProbability = 0.5
	return loop, storage.NewSimDevice(loop, kernel.NewStreams(1), 0, opts)
}

const (
	benchIOBytes      = 64 << 10 // one I/O
	benchWorkingBytes = 64 << 20 // the sectors the benchmark cycles over
	benchInFlightMax  = 32
)

// benchRun issues b.N I/Os of benchIOBytes over the working set, keeping up
// to benchInFlightMax in flight, with issue choosing read or write (and
// syncing every syncEvery writes when syncEvery > 0).
func benchRun(b *testing.B, loop *kernel.Loop, dev *storage.SimDevice, write bool, syncEvery int) {
	buf := make([][]byte, benchInFlightMax)
	for i := range buf {
		buf[i] = pattern(uint64(i), benchIOBytes)
	}
	done := func(error) {}
	ioSectors := uint64(benchIOBytes / 4096)
	slots := uint64(benchWorkingBytes / benchIOBytes)
	b.SetBytes(benchIOBytes)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for dev.InFlight() >= benchInFlightMax {
			loop.Step()
		}
		// A stride coprime with the slot count visits every slot.
		sector := (uint64(i) * 7919 % slots) * ioSectors
		if write {
			dev.Write(sector, buf[i%benchInFlightMax], done)
			if syncEvery > 0 && i%syncEvery == syncEvery-1 {
				dev.Sync(done)
			}
		} else {
			dev.Read(sector, buf[i%benchInFlightMax], done)
		}
	}
	drain(loop)
}

// BenchmarkWriteSync: 64 KiB writes with a sync after every 8, over a
// working set written once beforehand, so the figure is the steady state
// (the first write of a sector allocates its durable buffer).
func BenchmarkWriteSync(b *testing.B) {
	loop, dev := benchDevice()
	fill(loop, dev)
	benchRun(b, loop, dev, true, 8)
}

// fill writes and syncs the working set.
func fill(loop *kernel.Loop, dev *storage.SimDevice) {
	data := pattern(1, benchIOBytes)
	for s := uint64(0); s < benchWorkingBytes/4096; s += benchIOBytes / 4096 {
		dev.Write(s, data, func(error) {})
		if dev.InFlight() >= benchInFlightMax {
			drain(loop)
		}
	}
	dev.Sync(func(error) {})
	drain(loop)
}

// BenchmarkRead: 64 KiB reads of written, synced data.
func BenchmarkRead(b *testing.B) {
	loop, dev := benchDevice()
	fill(loop, dev)
	benchRun(b, loop, dev, false, 0)
}

// BenchmarkReadGarbage: 64 KiB reads of never-written sectors, which
// generate their garbage on every read.
func BenchmarkReadGarbage(b *testing.B) {
	loop, dev := benchDevice()
	benchRun(b, loop, dev, false, 0)
}

// BenchmarkWrite4KiBSync: the per-I/O cost: one-sector writes, a sync after
// every 8.
func BenchmarkWrite4KiBSync(b *testing.B) {
	loop, dev := benchDevice()
	fill(loop, dev)
	data := pattern(1, 4096)
	done := func(error) {}
	b.SetBytes(4096)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		for dev.InFlight() >= benchInFlightMax {
			loop.Step()
		}
		dev.Write(uint64(i)*7919%16384, data, done)
		if i%8 == 7 {
			dev.Sync(done)
		}
	}
	drain(loop)
}

// BenchmarkCrash: a crash with 32 writes of 64 KiB in flight and as many
// completed but unsynced.
func BenchmarkCrash(b *testing.B) {
	loop, dev := benchDevice()
	data := pattern(1, benchIOBytes)
	done := func(error) {}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for k := range uint64(32) {
			dev.Write(k*16, data, done)
		}
		drain(loop)
		for k := range uint64(32) {
			dev.Write(k*16+1024, data, done)
		}
		dev.Crash()
	}
}

// TestZeroAllocsSteadyPath: once the working set has been written and the
// buffer pool has grown, a cycle of writes, a sync, rewrites racing a second
// sync, and reads of what was written allocates nothing, as
// BenchmarkWriteSync and BenchmarkRead claim per I/O.
func TestZeroAllocsSteadyPath(t *testing.T) {
	loop, dev := benchDevice()
	const ios, ioSectors = 8, 4
	data := make([][]byte, ios)
	bufs := make([][]byte, ios)
	for k := range ios {
		data[k] = pattern(uint64(k), ioSectors*4096)
		bufs[k] = make([]byte, ioSectors*4096)
	}
	completed, failed := 0, 0
	done := func(err error) {
		completed++
		if err != nil {
			failed++
		}
	}
	cycle := func() {
		for k := range ios {
			dev.Write(uint64(k*ioSectors), data[k], done)
		}
		drain(loop) // writes in flight together land in either order
		dev.Sync(done)
		// Rewrites that complete while the first sync is in flight keep a
		// version apart for it: the device's costliest steady case.
		for k := range ios {
			dev.Write(uint64(k*ioSectors), data[(k+1)%ios], done)
		}
		dev.Sync(done)
		drain(loop)
		for k := range ios {
			dev.Read(uint64(k*ioSectors), bufs[k], done)
		}
		drain(loop)
	}
	for range 8 {
		cycle()
	}
	before := completed
	allocs := testing.AllocsPerRun(200, cycle)
	if per := 3*ios + 2; completed-before < 200*per || failed != 0 {
		t.Fatalf("%d I/Os completed (%d failed) over 200 cycles, want %d each, none failed", completed-before, failed, per)
	}
	for k := range ios {
		if !bytes.Equal(bufs[k], data[(k+1)%ios]) {
			t.Fatalf("read %d returned other bytes than the last write", k)
		}
	}
	if allocs != 0 {
		t.Fatalf("%v allocations per cycle of %d I/Os in steady state, want 0", allocs, 3*ios+2)
	}
}
