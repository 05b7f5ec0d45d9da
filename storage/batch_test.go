package storage_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

// TestBatchesAreTheirIOs: a write batch lands each extent where a write of
// its own would, a read batch returns what single reads return, each
// extent with its own error, and both complete as one event.
func TestBatchesAreTheirIOs(t *testing.T) {
	loop := kernel.NewLoop()
	dev := storage.NewSimDevice(loop, kernel.NewStreams(5), 0, quiet(flat(64, 1), 512))
	a, b := pattern(1, 2*512), pattern(2, 512)
	fired := 0
	dev.WriteBatch([]storage.Extent{{Sector: 3, Buf: a}, {Sector: 40, Buf: b}}, func(err error) {
		if err != nil {
			t.Errorf("write batch: %v", err)
		}
		fired++
	})
	clear(a) // the data is copied at the call
	before := loop.Processed()
	drain(loop)
	if fired != 1 || loop.Processed()-before != 1 {
		t.Fatalf("write batch: done ran %d times in %d events, want once in one", fired, loop.Processed()-before)
	}
	dev.InjectLatent(41)
	exts := []storage.Extent{{Sector: 3, Buf: make([]byte, 2*512)}, {Sector: 40, Buf: make([]byte, 512)}, {Sector: 41, Buf: make([]byte, 512)}}
	dev.ReadBatch(exts, func() { fired++ })
	drain(loop)
	if fired != 2 {
		t.Fatal("read batch: done did not run once")
	}
	if !bytes.Equal(exts[0].Buf, pattern(1, 2*512)) || !bytes.Equal(exts[1].Buf, b) || exts[0].Err != nil || exts[1].Err != nil {
		t.Errorf("read batch: extents 0 and 1 do not hold what was written (errors %v, %v)", exts[0].Err, exts[1].Err)
	}
	if !errors.Is(exts[2].Err, storage.ErrReadFault) {
		t.Errorf("read batch: the latent sector read with %v, want ErrReadFault for that extent alone", exts[2].Err)
	}
	single, err := readSync(t, loop, dev, 40, 1)
	if err != nil || !bytes.Equal(single, exts[1].Buf) {
		t.Errorf("a single read differs from the batch's: %v", err)
	}
}

// TestWriteBatchInFlightAtCrash: every extent of a write batch in flight
// at a crash is a write in flight: each of its sectors is lost, kept or
// torn, and the batch's done never runs.
func TestWriteBatchInFlightAtCrash(t *testing.T) {
	const atomBytes = 64
	for _, tc := range []struct {
		name       string
		lost, torn float64
	}{{"lost", 1, 0}, {"kept", 0, 0}, {"torn", 0, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			loop := kernel.NewLoop()
			opts := quiet(flat(64, 1), 512)
			opts.AtomBytes = atomBytes
			opts.CrashLostProbability, opts.CrashTornProbability = tc.lost, tc.torn
			dev := storage.NewSimDevice(loop, kernel.NewStreams(9), 0, opts)
			old := bytes.Repeat([]byte{0xAA}, 512)
			for _, s := range []uint64{2, 30} {
				writeSync(t, loop, dev, s, old)
			}
			syncSync(t, loop, dev)
			new := bytes.Repeat([]byte{0x55}, 512)
			dev.WriteBatch([]storage.Extent{{Sector: 2, Buf: new}, {Sector: 30, Buf: new}}, func(error) { t.Error("done after a crash") })
			report := dev.Crash()
			drain(loop)
			if report.Lost+report.Kept+report.Torn != 2 || report.Dropped != 1 {
				t.Fatalf("report %+v, want two sectors decided and one I/O dropped", report)
			}
			for _, s := range []uint64{2, 30} {
				got, _ := readSync(t, loop, dev, s, 1)
				switch {
				case tc.name == "lost" && !bytes.Equal(got, old), tc.name == "kept" && !bytes.Equal(got, new):
					t.Errorf("sector %d after a %s crash: %x...", s, tc.name, got[:8])
				case tc.name == "torn" && (bytes.Equal(got, old) || bytes.Equal(got, new) || !tornFrom(got, old, new, atomBytes)):
					t.Errorf("sector %d is not a torn mix", s)
				}
			}
		})
	}
}
