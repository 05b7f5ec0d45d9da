package journal

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
)

// TestInjectedFaults: corruption or a read error on any sector of an
// acknowledged op's header copy or prepare chunk. The op must come back held
// byte for byte (a damaged header copy: Clean, header rewritten) or
// header-only (a damaged prepare: Corrupt); never Nackable, never held with
// other bytes. A fault past the frame's last sector changes nothing.
func TestInjectedFaults(t *testing.T) {
	cfg := testConfig()
	S := cfg.SlotCount
	// One acknowledged op per slot, ops S+1..2S over a first lap 1..S, with
	// frames of 1 to 8 sectors.
	frames := map[uint64][]byte{}
	build := func(e *env) {
		j, _ := e.mustOpen()
		for op := uint64(1); op <= 2*S; op++ {
			f := prepareFrame(cfg, op, 0, int(op%S)*500)
			frames[op] = f
			appendWait(e, j, f)
		}
	}
	chunkSectors := int(newGeometry(cfg).prepareChunkSectors)
	for _, latent := range []bool{false, true} {
		for _, inHeader := range []bool{false, true} {
			for k := 0; k < chunkSectors; k++ {
				if inHeader && k > 0 {
					break
				}
				e := newEnv(t, cfg, envOptions{seed: uint64(k)})
				e.format()
				build(e)
				for op := S + 1; op <= 2*S; op++ {
					sector := e.geo.headerSector(op % S)
					if !inHeader {
						sector = e.geo.prepareSector(op%S) + uint64(k)
					}
					if latent {
						e.dev.InjectLatent(sector)
					} else {
						e.dev.InjectCorruption(sector)
					}
				}
				j, r := e.mustOpen()
				for op := S + 1; op <= 2*S; op++ {
					s := r.Slot(op % S)
					used := e.geo.paddedBytes(len(frames[op])+sealBytes) / cfg.SectorSize
					where := fmt.Sprintf("latent=%v header=%v sector %d of op %d (%d used): %+v", latent, inHeader, k, op, used, s)
					kn := r.Knowledge(op)
					switch {
					case inHeader:
						if s.Class != ClassClean || !s.HeaderRepaired || kn != Held {
							t.Fatalf("%s: knowledge %s", where, kn)
						}
					case k < used:
						if s.Class != ClassCorrupt || s.Op != op || kn != HeaderOnly {
							t.Fatalf("%s: knowledge %s", where, kn)
						}
						h, ok := j.Header(op)
						if !ok || !bytes.Equal(h[:], frames[op][:wire.HeaderSize]) {
							t.Fatalf("%s: header differs", where)
						}
					default:
						if s.Class != ClassClean || !s.HeaderWritten || s.HeaderRepaired || kn != Held {
							t.Fatalf("%s: a fault past the frame mattered", where)
						}
					}
					if kn == Held {
						if f, ok := j.Frame(op); !ok || !bytes.Equal(f, frames[op]) {
							t.Fatalf("%s: held bytes differ", where)
						}
					}
					// The previous lap's op was acknowledged too: never
					// nackable.
					if r.Knowledge(op-S) == Nackable {
						t.Fatalf("%s: op %d nackable", where, op-S)
					}
				}
			}
		}
	}
}

// TestBothCopiesDamaged: corruption in both copies of an acknowledged op's
// slot (beyond what one fault does) leaves it Faulty: unknown, not nackable.
func TestBothCopiesDamaged(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 400})
	e.format()
	j, _ := e.mustOpen()
	appendWait(e, j, prepareFrame(cfg, 2, 0, 100))
	e.dev.InjectCorruption(e.geo.headerSector(2))
	e.dev.InjectLatent(e.geo.prepareSector(2))
	_, r := e.mustOpen()
	if s := r.Slot(2); s.Class != ClassFaulty {
		t.Fatalf("slot %+v", s)
	}
	for _, op := range []uint64{2, 2 + cfg.SlotCount, 2 + 5*cfg.SlotCount} {
		if k := r.Knowledge(op); k != Unknown {
			t.Fatalf("op %d: %s", op, k)
		}
	}
}

// TestMisdirectedWrites: a header copy or a prepare that lands on another
// slot is damage there, and leaves a stale copy at its target; neither is
// ever taken for the other slot's data, and the acknowledged op stays
// un-nackable.
func TestMisdirectedWrites(t *testing.T) {
	cfg := testConfig()
	S := cfg.SlotCount
	e := newEnv(t, cfg, envOptions{seed: 401})
	e.format()
	j, _ := e.mustOpen()
	for op := uint64(1); op <= S; op++ {
		appendWait(e, j, prepareFrame(cfg, op, 0, 300))
	}
	// Op S+1's prepare landed on slot 2's chunk (slot 1 stale at op 1),
	// then its header copy on slot 1 as intended: slot 1 is Corrupt(S+1),
	// slot 2's chunk holds another slot's prepare (damaged) under the
	// header of op 2, below the window of head S+3: Torn(2), op 2 still
	// header-only.
	f := prepareFrame(cfg, S+1, 0, 300)
	e.writeRaw(e.geo.prepareSector(2), e.recordSectors(f))
	e.writeRaw(e.geo.headerSector(1), e.recordSectors(f[:wire.HeaderSize]))
	// Op S+3's header copy landed on slot 4's header sector (slot 3's left
	// at op 3) after its prepare landed as intended: slot 3 is Clean(S+3)
	// with an older header; slot 4's header copy is damaged: Clean(4),
	// rewritten.
	g := prepareFrame(cfg, S+3, 0, 300)
	e.writeRaw(e.geo.prepareSector(3), e.recordSectors(g))
	e.writeRaw(e.geo.headerSector(4), e.recordSectors(g[:wire.HeaderSize]))
	_, r := e.mustOpen()
	for _, c := range []struct {
		slot  uint64
		class Class
		op    uint64
	}{{1, ClassCorrupt, S + 1}, {2, ClassTorn, 2}, {3, ClassClean, S + 3}, {4, ClassClean, 4}} {
		if s := r.Slot(c.slot); s.Class != c.class || s.Op != c.op {
			t.Fatalf("slot %d: %+v, want %s(%d)", c.slot, s, c.class, c.op)
		}
	}
	for _, op := range []uint64{S + 1, 2, S + 3, 4} {
		if k := r.Knowledge(op); k == Nackable || k == Unknown {
			t.Fatalf("op %d: %s", op, k)
		}
	}
}

// failingDevice wraps a device and completes the failAt-th I/O of kind with
// err instead of its own result (real devices fail writes and syncs; the
// simulated one never does).
type failingDevice struct {
	*storage.SimDevice
	kind   string // "read", "write" or "sync"
	failAt int
	count  int
	err    error
}

func (d *failingDevice) wrap(kind string, done func(error)) func(error) {
	if kind != d.kind {
		return done
	}
	d.count++
	if d.count != d.failAt {
		return done
	}
	return func(error) { done(d.err) }
}

func (d *failingDevice) Read(sector uint64, buf []byte, done func(error)) {
	d.SimDevice.Read(sector, buf, d.wrap("read", done))
}

func (d *failingDevice) Write(sector uint64, data []byte, done func(error)) {
	d.SimDevice.Write(sector, data, d.wrap("write", done))
}

func (d *failingDevice) Sync(done func(error)) { d.SimDevice.Sync(d.wrap("sync", done)) }

// ReadBatch fails one extent of the failAt-th read when that read is a batch.
func (d *failingDevice) ReadBatch(extents []storage.Extent, done func()) {
	fail := false
	if d.kind == "read" {
		d.count++
		fail = d.count == d.failAt
	}
	d.SimDevice.ReadBatch(extents, func() {
		if fail {
			extents[len(extents)-1].Err = d.err
		}
		done()
	})
}

func (d *failingDevice) WriteBatch(extents []storage.Extent, done func(error)) {
	d.SimDevice.WriteBatch(extents, d.wrap("write", done))
}

// TestDeviceErrors: a device error other than a read fault fails Format and
// Open (done runs once, with the error, after every I/O in flight is
// back), and is fatal on the append and state paths.
func TestDeviceErrors(t *testing.T) {
	cfg := testConfig()
	boom := errors.New("device on fire")
	for _, kind := range []string{"read", "write", "sync"} {
		for failAt := 1; failAt <= 20; failAt++ {
			e := newEnv(t, cfg, envOptions{seed: uint64(failAt)})
			d := &failingDevice{SimDevice: e.dev, kind: kind, failAt: failAt, err: boom}
			var formatErr error
			fired := 0
			Format(d, cfg, func(err error) { formatErr = err; fired++ })
			e.drain()
			failed := d.count >= failAt
			if fired != 1 || failed != (formatErr != nil) || (failed && !errors.Is(formatErr, boom)) {
				t.Fatalf("%s #%d: format fired %d: %v", kind, failAt, fired, formatErr)
			}
			if failed {
				continue
			}
			d.count = 0
			var openErr error
			fired = 0
			Open(d, cfg, func(_ *Journal, _ *Recovery, err error) { openErr = err; fired++ })
			e.drain()
			failed = d.count >= failAt
			if fired != 1 || failed != (openErr != nil) || (failed && !errors.Is(openErr, boom)) {
				t.Fatalf("%s #%d: open fired %d: %v", kind, failAt, fired, openErr)
			}
		}
	}
	// On the append and state paths a write or sync error is fatal.
	for _, kind := range []string{"write", "sync"} {
		e := newEnv(t, cfg, envOptions{seed: 9})
		e.format()
		d := &failingDevice{SimDevice: e.dev, failAt: 1, err: boom}
		var j *Journal
		Open(d, cfg, func(jj *Journal, _ *Recovery, _ error) { j = jj })
		e.drain()
		d.kind = kind
		j.Append(prepareFrame(cfg, 1, 0, 10), func() { t.Fatal("done after a failed write") })
		expectPanic(t, "append "+kind+" error", e.drain)
		d.count = 0
		j2, _ := e.mustOpen()
		j2.dev = d
		j2.WriteState(stateAt(cfg, 1), func() { t.Fatal("done after a failed write") })
		expectPanic(t, "state "+kind+" error", e.drain)
	}
}
