package storage_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

// Compile-time: the loop and the streams of sim satisfy what storage
// declares, and the simulated device is a Device.
var (
	_ storage.Scheduler = (*kernel.Loop)(nil)
	_ storage.Streams   = kernel.Streams{}
	_ storage.Device    = (*storage.SimDevice)(nil)
)

// TestInterfaces checks the same at run time, through interface values, so a
// change to kernel.Event's literal shows up as a test failure too.
func TestInterfaces(t *testing.T) {
	var sched any = kernel.NewLoop()
	if _, ok := sched.(storage.Scheduler); !ok {
		t.Fatal("*kernel.Loop does not satisfy storage.Scheduler")
	}
	var streams any = kernel.NewStreams(1)
	if _, ok := streams.(storage.Streams); !ok {
		t.Fatal("kernel.Streams does not satisfy storage.Streams")
	}
}

// quiet returns options with fixed small latencies and no faults.
func quiet(layout *storage.Layout, sectorSize int) storage.Options {
	return storage.Options{
		SectorSize:   sectorSize,
		Layout:       layout,
		IOsMax:       256,
		ReadLatency:  storage.Latency{MinNs: 1_000, MeanNs: 5_000},
		WriteLatency: storage.Latency{MinNs: 2_000, MeanNs: 10_000},
		SyncLatency:  storage.Latency{MinNs: 5_000, MeanNs: 20_000},
	}
}

// flat is a one-zone layout of sectors sectors in chunks of chunkSectors.
func flat(sectors, chunkSectors uint64) *storage.Layout {
	return storage.NewLayout(storage.Zone{Name: "data", ChunkSectors: chunkSectors, Chunks: sectors / chunkSectors})
}

func drain(loop *kernel.Loop) {
	for loop.Step() {
	}
}

// pattern returns n bytes drawn from a PCG seeded with seed.
func pattern(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, ^seed))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// tb is what the helpers need of *testing.T, *testing.B and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// readSync issues a read and runs the loop until it completes, failing the
// test if other events keep it from completing.
func readSync(t tb, loop *kernel.Loop, dev storage.Device, sector uint64, count int) ([]byte, error) {
	t.Helper()
	buf := make([]byte, count*dev.SectorSize())
	var err error
	fired := false
	dev.Read(sector, buf, func(e error) { err, fired = e, true })
	for !fired && loop.Step() {
	}
	if !fired {
		t.Fatalf("read of sector %d never completed", sector)
	}
	return buf, err
}

// writeSync writes and runs the loop until the write completes.
func writeSync(t tb, loop *kernel.Loop, dev storage.Device, sector uint64, data []byte) {
	t.Helper()
	fired := false
	dev.Write(sector, data, func(e error) {
		if e != nil {
			t.Fatalf("write of sector %d: %v", sector, e)
		}
		fired = true
	})
	for !fired && loop.Step() {
	}
	if !fired {
		t.Fatalf("write of sector %d never completed", sector)
	}
}

// syncSync syncs and runs the loop until the sync completes.
func syncSync(t tb, loop *kernel.Loop, dev storage.Device) {
	t.Helper()
	fired := false
	dev.Sync(func(error) { fired = true })
	for !fired && loop.Step() {
	}
	if !fired {
		t.Fatal("sync never completed")
	}
}

// tornFrom reports whether got is made, atom by atom, of old's and new's
// atoms: the definition of a torn mix (lost and kept are its two extremes).
func tornFrom(got, old, new []byte, atomBytes int) bool {
	for a := 0; a < len(got); a += atomBytes {
		g := got[a : a+atomBytes]
		if !bytes.Equal(g, old[a:a+atomBytes]) && !bytes.Equal(g, new[a:a+atomBytes]) {
			return false
		}
	}
	return true
}
