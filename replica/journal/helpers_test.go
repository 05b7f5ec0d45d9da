package journal

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

// Compile-time: the simulated device is a Device.
var _ storage.Device = (*storage.SimDevice)(nil)

// tb is what the helpers need of *testing.T, *testing.B and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func testConfig() Config {
	return Config{
		SectorSize:     512,
		SlotCount:      8,
		FrameSizeMax:   4096,
		AppendsMax:     8,
		IOsMax:         16,
		StateWritesMax: 8,
		Cluster:        wire.ClusterID("journal-test"),
		Replica:        1,
		ReplicaCount:   3,
	}
}

// crashMode fixes the fate of every non-durable sector at a crash.
type crashMode int

const (
	crashLost crashMode = iota
	crashKept
	crashTorn
	crashMixed
)

var crashModes = []crashMode{crashLost, crashKept, crashTorn}

func (m crashMode) String() string { return [...]string{"lost", "kept", "torn", "mixed"}[m] }

type envOptions struct {
	seed  uint64
	crash crashMode
	// realistic: the latencies of the synthetic world (tens to hundreds of
	// microseconds, syncs of milliseconds) instead of small quiet ones.
	realistic bool
}

// env is one replica's device on a loop.
type env struct {
	t    tb
	loop *kernel.Loop
	dev  *storage.SimDevice
	cfg  Config
	geo  geometry
}

func newEnv(t tb, cfg Config, o envOptions) *env {
	t.Helper()
	loop := kernel.NewLoop()
	opts := storage.Options{
		SectorSize:   cfg.SectorSize,
		Layout:       Layout(cfg),
		IOsMax:       256,
		ReadLatency:  storage.Latency{MinNs: 1_000, MeanNs: 5_000},
		WriteLatency: storage.Latency{MinNs: 2_000, MeanNs: 10_000},
		SyncLatency:  storage.Latency{MinNs: 5_000, MeanNs: 20_000},
	}
	if o.realistic {
		opts.ReadLatency = storage.Latency{MinNs: 50_000, MeanNs: 200_000}
		opts.WriteLatency = storage.Latency{MinNs: 100_000, MeanNs: 500_000}
		opts.SyncLatency = storage.Latency{MinNs: 500_000, MeanNs: 2_000_000}
	}
	switch o.crash {
	case crashLost:
		opts.CrashLostProbability = 1
	case crashKept:
	case crashTorn:
		opts.CrashTornProbability = 1
	case crashMixed:
		opts.CrashLostProbability, opts.CrashTornProbability = 0.3, 0.4
	}
	dev := storage.NewSimDevice(loop, kernel.NewStreams(o.seed), int32(cfg.Replica), opts)
	return &env{t: t, loop: loop, dev: dev, cfg: cfg, geo: newGeometry(cfg)}
}

// drain runs the loop until nothing is scheduled.
func (e *env) drain() {
	for e.loop.Step() {
	}
}

func (e *env) format() {
	e.t.Helper()
	var err error
	fired := false
	Format(e.dev, e.cfg, func(ferr error) { err, fired = ferr, true })
	e.drain()
	if !fired || err != nil {
		e.t.Fatalf("format: fired %v, err %v", fired, err)
	}
}

// open runs Open to completion.
func (e *env) open() (*Journal, *Recovery, error) {
	e.t.Helper()
	var (
		j     *Journal
		r     *Recovery
		err   error
		fired int
	)
	Open(e.dev, e.cfg, func(jj *Journal, rr *Recovery, ee error) { j, r, err = jj, rr, ee; fired++ })
	if fired != 0 {
		e.t.Fatal("Open ran done inside the call")
	}
	for fired == 0 && e.loop.Step() {
	}
	if fired != 1 {
		e.t.Fatalf("Open's done ran %d times", fired)
	}
	if (err == nil) != (j != nil && r != nil) {
		e.t.Fatalf("Open: journal %v, recovery %v, err %v", j != nil, r != nil, err)
	}
	return j, r, err
}

func (e *env) mustOpen() (*Journal, *Recovery) {
	e.t.Helper()
	j, r, err := e.open()
	if err != nil {
		e.t.Fatalf("open: %v", err)
	}
	return j, r
}

// crash crashes the device and drains the loop of the stale completions.
func (e *env) crash() storage.CrashReport {
	rep := e.dev.Crash()
	e.drain()
	return rep
}

// writeRaw writes data at sector durably, bypassing the journal.
func (e *env) writeRaw(sector uint64, data []byte) {
	e.t.Helper()
	fired := 0
	e.dev.Write(sector, data, func(err error) {
		if err != nil {
			e.t.Fatalf("raw write: %v", err)
		}
		e.dev.Sync(func(error) { fired++ })
	})
	e.drain()
	if fired != 1 {
		e.t.Fatal("raw write did not complete")
	}
}

// readRaw returns what the device shows at sector now (no faults applied).
func (e *env) readRaw(sector uint64, sectors int) []byte {
	buf := make([]byte, sectors*e.cfg.SectorSize)
	e.dev.PeekVisible(sector, buf)
	return buf
}

// appendWait appends and runs the loop until done; it returns how often done
// ran.
func appendWait(e *env, j *Journal, frame []byte) {
	e.t.Helper()
	fired := 0
	j.Append(frame, func() { fired++ })
	if fired != 0 {
		e.t.Fatal("Append ran done inside the call")
	}
	for fired == 0 && e.loop.Step() {
	}
	e.drain()
	if fired != 1 {
		e.t.Fatalf("append of op %d: done ran %d times", opOf(wire.HeaderOf(frame)), fired)
	}
}

// prepareFrame builds a valid metadata-plane prepare of op. variant changes
// its identity (and body) for the same op; bodyBytes is the body's length.
func prepareFrame(cfg Config, op, variant uint64, bodyBytes int) []byte {
	rng := rand.New(rand.NewPCG(op, variant))
	body := make([]byte, bodyBytes)
	for i := 0; i+8 <= len(body); i += 8 {
		binary.LittleEndian.PutUint64(body[i:], rng.Uint64())
	}
	h := &wire.PrepareHeader{
		Prefix:    wire.Prefix{Command: wire.CommandPrepare, Cluster: cfg.Cluster, View: uint32(1 + variant), Replica: 0},
		Client:    wire.U128{Lo: 7, Hi: 1},
		Parent:    wire.U128{Lo: op * 31, Hi: variant},
		Op:        op,
		Commit:    op - 1,
		Timestamp: 1_000_000*op + variant,
		Request:   op + 100*variant,
		Operation: wire.OperationCreateStream,
		Group:     wire.MetadataGroup,
		UserID:    1,
	}
	return wire.BuildFrame(h, body)
}

func identityOf(frame []byte) wire.U128 { return wire.HeaderOf(frame).Checksum() }

// expectPanic runs f and fails unless it panics.
func expectPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Fatalf("%s: no panic", what)
		}
	}()
	f()
}
