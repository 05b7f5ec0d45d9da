package storage_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

// fixed returns options whose latencies are exact: reads 50ns, writes 100ns,
// syncs 1000ns, so a test can script an interleaving.
func fixed(layout *storage.Layout) storage.Options {
	opts := quiet(layout, 512)
	opts.ReadLatency = storage.Latency{MinNs: 50}
	opts.WriteLatency = storage.Latency{MinNs: 100}
	opts.SyncLatency = storage.Latency{MinNs: 1000}
	return opts
}

// TestSyncCoversExactlyCompletedWrites scripts the three cases at a sync's
// boundary: a write completed before the sync was issued (covered), one in
// flight at the call that completes before the sync does (not covered), and
// one issued after the call (not covered). A crash that loses every
// non-durable write then shows exactly the first.
func TestSyncCoversExactlyCompletedWrites(t *testing.T) {
	loop := kernel.NewLoop()
	opts := fixed(flat(8, 1))
	opts.CrashLostProbability = 1
	dev := storage.NewSimDevice(loop, kernel.NewStreams(1), 0, opts)
	garbage := make([][]byte, 3)
	for s := range garbage {
		garbage[s], _ = readSync(t, loop, dev, uint64(s), 1)
	}
	a, b, c := pattern(1, 512), pattern(2, 512), pattern(3, 512)
	writeSync(t, loop, dev, 0, a)
	dev.Write(1, b, func(error) {}) // in flight at the sync's call
	synced := false
	dev.Sync(func(error) { synced = true })
	dev.Write(2, c, func(error) {}) // issued after the call
	for !synced && loop.Step() {
	}
	if got, _ := readSync(t, loop, dev, 1, 2); !bytes.Equal(got, append(bytes.Clone(b), c...)) {
		t.Fatal("writes completed after the sync's call are not visible")
	}
	dev.Crash()
	want := [][]byte{a, garbage[1], garbage[2]}
	for s, w := range want {
		if got, _ := readSync(t, loop, dev, uint64(s), 1); !bytes.Equal(got, w) {
			t.Errorf("sector %d after crash: durable state wrong (want %s)", s, []string{"the synced write", "garbage", "garbage"}[s])
		}
	}
}

// TestSyncedSurvivesCrash: whatever the crash probabilities, synced bytes
// come back, also under later unsynced overwrites of other sectors.
func TestSyncedSurvivesCrash(t *testing.T) {
	for _, probs := range [][2]float64{{1, 0}, {0, 0}, {0, 1}, {0.3, 0.3}} {
		loop := kernel.NewLoop()
		opts := quiet(flat(16, 1), 512)
		opts.CrashLostProbability, opts.CrashTornProbability = probs[0], probs[1]
		dev := storage.NewSimDevice(loop, kernel.NewStreams(7), 0, opts)
		data := pattern(9, 8*512)
		writeSync(t, loop, dev, 0, data)
		syncSync(t, loop, dev)
		dev.Write(8, pattern(10, 8*512), func(error) {})
		loop.Step()
		dev.Crash()
		if got, _ := readSync(t, loop, dev, 0, 8); !bytes.Equal(got, data) {
			t.Errorf("lost %.1f torn %.1f: synced bytes changed by a crash", probs[0], probs[1])
		}
	}
}

// TestCrashOutcomes forces each crash outcome and checks it, with a torn
// sector defined as: every atom (AtomBytes) is the old or the new atom, and,
// when old and new differ in every atom, at least one of each.
func TestCrashOutcomes(t *testing.T) {
	const sectors, atomBytes = 64, 64
	for _, tc := range []struct {
		name       string
		lost, torn float64
	}{{"lost", 1, 0}, {"kept", 0, 0}, {"torn", 0, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			loop := kernel.NewLoop()
			opts := quiet(flat(sectors, 1), 512)
			opts.AtomBytes = atomBytes
			opts.CrashLostProbability, opts.CrashTornProbability = tc.lost, tc.torn
			dev := storage.NewSimDevice(loop, kernel.NewStreams(3), 0, opts)
			old := bytes.Repeat([]byte{0xAA}, sectors*512)
			writeSync(t, loop, dev, 0, old)
			syncSync(t, loop, dev)
			new := bytes.Repeat([]byte{0x55}, sectors*512)
			// Half completed but unsynced, half in flight at the crash.
			writeSync(t, loop, dev, 0, new[:sectors/2*512])
			dev.Write(sectors/2, new[sectors/2*512:], func(error) { t.Error("callback after crash") })
			report := dev.Crash()
			got, _ := readSync(t, loop, dev, 0, sectors)
			torn := 0
			for s := range sectors {
				g, o, n := got[s*512:(s+1)*512], old[s*512:(s+1)*512], new[s*512:(s+1)*512]
				switch {
				case bytes.Equal(g, o):
					if tc.name != "lost" {
						t.Errorf("sector %d lost", s)
					}
				case bytes.Equal(g, n):
					if tc.name != "kept" {
						t.Errorf("sector %d kept", s)
					}
				case tornFrom(g, o, n, atomBytes):
					torn++
				default:
					t.Fatalf("sector %d is neither old, new nor a torn mix", s)
				}
			}
			if tc.name == "torn" && torn != sectors {
				t.Errorf("%d of %d sectors torn", torn, sectors)
			}
			if report.Lost+report.Kept+report.Torn != sectors || report.Dropped != 1 {
				t.Errorf("report %+v", report)
			}
		})
	}
}

// TestCallbacksNeverFireAfterCrash: reads, writes and syncs in flight at a
// crash never complete, their stale events leave the digest alone, and the
// device serves the restarted replica.
func TestCallbacksNeverFireAfterCrash(t *testing.T) {
	loop := kernel.NewLoop()
	dev := storage.NewSimDevice(loop, kernel.NewStreams(5), 0, quiet(flat(64, 1), 512))
	fired := 0
	for i := range 60 {
		switch i % 3 {
		case 0:
			dev.Write(uint64(i), pattern(uint64(i), 512), func(error) { fired++ })
		case 1:
			dev.Read(uint64(i), make([]byte, 512), func(error) { fired++ })
		case 2:
			dev.Sync(func(error) { fired++ })
		}
	}
	dev.Crash()
	if dev.InFlight() != 0 {
		t.Fatalf("%d I/Os in flight after a crash", dev.InFlight())
	}
	digest := loop.Digest()
	drain(loop)
	if fired != 0 {
		t.Fatalf("%d callbacks ran after the crash", fired)
	}
	if loop.Digest() != digest {
		t.Error("stale completions changed the digest")
	}
	data := pattern(99, 512)
	writeSync(t, loop, dev, 3, data)
	if got, _ := readSync(t, loop, dev, 3, 1); !bytes.Equal(got, data) {
		t.Error("device does not serve I/O after a crash")
	}
}

// TestReadWhileWriteInFlight: a read takes its contents when it completes, so
// it sees an overlapping write in flight if and only if that write completes
// first.
func TestReadWhileWriteInFlight(t *testing.T) {
	for _, readNs := range []int64{50, 150} {
		loop := kernel.NewLoop()
		opts := fixed(flat(4, 1))
		opts.ReadLatency = storage.Latency{MinNs: readNs}
		dev := storage.NewSimDevice(loop, kernel.NewStreams(1), 0, opts)
		old, _ := readSync(t, loop, dev, 0, 1)
		data := pattern(4, 512)
		dev.Write(0, data, func(error) {})
		buf := make([]byte, 512)
		dev.Read(0, buf, func(error) {})
		drain(loop)
		want := old
		if readNs > 100 {
			want = data
		}
		if !bytes.Equal(buf, want) {
			t.Errorf("read of %dns against a 100ns write: wrong version", readNs)
		}
	}
}

// TestCompletionsAreEvents: done never runs inside the call, and each
// completion is one digest event of the right kind and node.
func TestCompletionsAreEvents(t *testing.T) {
	loop := kernel.NewLoop()
	loop.RecordTrace(true)
	dev := storage.NewSimDevice(loop, kernel.NewStreams(1), 4, fixed(flat(4, 1)))
	ran := false
	dev.Write(0, make([]byte, 512), func(error) { ran = true })
	dev.Read(1, make([]byte, 512), func(error) { ran = true })
	dev.Sync(func(error) { ran = true })
	if ran {
		t.Fatal("done ran inside the call")
	}
	drain(loop)
	var kinds []string
	for _, e := range loop.Trace() {
		if e.Node != 4 {
			t.Errorf("event %v on the wrong node", e)
		}
		kinds = append(kinds, e.Kind)
	}
	if got := strings.Join(kinds, " "); got != "storage.read storage.write storage.sync" {
		t.Errorf("events %q", got)
	}
}

// TestGarbage: never-written sectors read the same bytes every time, not
// zeros, different per sector, per replica and per seed; the garbage is
// what a crash that loses a first write leaves.
func TestGarbage(t *testing.T) {
	read := func(seed uint64, node int32, sector uint64) []byte {
		loop := kernel.NewLoop()
		dev := storage.NewSimDevice(loop, kernel.NewStreams(seed), node, quiet(flat(8, 1), 512))
		got, err := readSync(t, loop, dev, sector, 1)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := readSync(t, loop, dev, sector, 1)
		if !bytes.Equal(got, again) {
			t.Fatal("never-written sector read differently twice")
		}
		return got
	}
	base := read(1, 0, 3)
	if bytes.Equal(base, make([]byte, 512)) {
		t.Error("never-written sector reads as zeros")
	}
	if bytes.Equal(base, read(1, 0, 4)) || bytes.Equal(base, read(2, 0, 3)) || bytes.Equal(base, read(1, 1, 3)) {
		t.Error("garbage does not differ between sectors, seeds or replicas")
	}
	if !bytes.Equal(base, read(1, 0, 3)) {
		t.Error("garbage differs between devices of one seed")
	}
}

// TestArgumentsPanic: programmer errors panic at the call.
func TestArgumentsPanic(t *testing.T) {
	loop := kernel.NewLoop()
	opts := quiet(flat(8, 1), 512)
	opts.IOsMax = 2
	dev := storage.NewSimDevice(loop, kernel.NewStreams(1), 0, opts)
	nop := func(error) {}
	for name, call := range map[string]func(){
		"unaligned":    func() { dev.Write(0, make([]byte, 100), nop) },
		"empty":        func() { dev.Read(0, nil, nop) },
		"past the end": func() { dev.Read(7, make([]byte, 1024), nop) },
		"far past":     func() { dev.Write(1<<63, make([]byte, 512), nop) },
		"nil done":     func() { dev.Sync(nil) },
		"over IOsMax": func() {
			dev.Sync(nop)
			dev.Sync(nop)
			dev.Sync(nop)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			call()
		}()
	}
}

// TestBigSparseDevice: a 1 TiB device costs only what is written.
func TestBigSparseDevice(t *testing.T) {
	loop := kernel.NewLoop()
	layout := storage.NewLayout(
		storage.Zone{Name: "superblock", ChunkSectors: 8, Chunks: 4},
		storage.Zone{Name: "segments", ChunkSectors: 1 << 16, Chunks: 1 << 12},
	)
	dev := storage.NewSimDevice(loop, kernel.NewStreams(1), 0, quiet(layout, 4096))
	if dev.Sectors()*4096 < 1<<40 {
		t.Fatalf("device of %d sectors", dev.Sectors())
	}
	last := dev.Sectors() - 1
	data := pattern(1, 4096)
	writeSync(t, loop, dev, last, data)
	if got, err := readSync(t, loop, dev, last, 1); err != nil || !bytes.Equal(got, data) {
		t.Fatal("last sector of a 1 TiB device")
	}
}
