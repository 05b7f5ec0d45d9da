package diskread

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
	"github.com/zeebo/xxh3"
)

// tb is what the helpers need of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// testConfig is a small journal: eight slots of multi-sector prepare
// chunks, so that one test can reach every cell of the table.
func testConfig() journal.Config {
	return journal.Config{
		SectorSize:     512,
		SlotCount:      8,
		FrameSizeMax:   4096,
		AppendsMax:     8,
		IOsMax:         16,
		StateWritesMax: 8,
		Cluster:        wire.ClusterID("diskread-test"),
		Replica:        1,
		ReplicaCount:   3,
	}
}

// geometryOf is the reader's geometry of a journal configuration.
func geometryOf(cfg journal.Config) Geometry {
	return Geometry{SectorSize: cfg.SectorSize, FirstSector: cfg.FirstSector, SlotCount: cfg.SlotCount,
		FrameSizeMax: cfg.FrameSizeMax, Cluster: cfg.Cluster, Replica: cfg.Replica, ReplicaCount: cfg.ReplicaCount}
}

// disk is one replica's simulated device on a loop, laid out as the
// journal alone.
type disk struct {
	t      tb
	loop   *kernel.Loop
	dev    *storage.SimDevice
	cfg    journal.Config
	g      Geometry
	layout *storage.Layout
}

// newDisk builds a device for cfg whose crashes lose each unsynced sector
// with probability lost and tear it with probability torn.
func newDisk(t tb, cfg journal.Config, seed uint64, lost, torn float64) *disk {
	t.Helper()
	loop := kernel.NewLoop()
	layout := journal.Layout(cfg)
	dev := storage.NewSimDevice(loop, kernel.NewStreams(seed), int32(cfg.Replica), storage.Options{
		SectorSize:           cfg.SectorSize,
		Layout:               layout,
		IOsMax:               256,
		ReadLatency:          storage.Latency{MinNs: 1_000, MeanNs: 5_000},
		WriteLatency:         storage.Latency{MinNs: 2_000, MeanNs: 10_000},
		SyncLatency:          storage.Latency{MinNs: 5_000, MeanNs: 20_000},
		CrashLostProbability: lost,
		CrashTornProbability: torn,
	})
	return &disk{t: t, loop: loop, dev: dev, cfg: cfg, g: geometryOf(cfg), layout: layout}
}

// drain runs the loop until nothing is scheduled.
func (d *disk) drain() {
	for d.loop.Step() {
	}
}

// format runs journal.Format to completion.
func (d *disk) format() {
	d.t.Helper()
	var err error
	fired := false
	journal.Format(d.dev, d.cfg, func(e error) { err, fired = e, true })
	d.drain()
	if !fired || err != nil {
		d.t.Fatalf("format: fired %v, err %v", fired, err)
	}
}

// openResult is what journal.Open did: a journal and its recovery, an
// error, or a panic.
type openResult struct {
	j        *journal.Journal
	r        *journal.Recovery
	err      error
	panicked any
}

// open runs journal.Open to completion, catching a panic (the journal
// panics on superblock states it takes for impossible).
func (d *disk) open() (res openResult) {
	d.t.Helper()
	defer func() {
		if p := recover(); p != nil {
			res = openResult{panicked: p}
		}
	}()
	fired := 0
	journal.Open(d.dev, d.cfg, func(j *journal.Journal, r *journal.Recovery, err error) {
		res = openResult{j: j, r: r, err: err}
		fired++
	})
	for fired == 0 && d.loop.Step() {
	}
	if fired != 1 {
		d.t.Fatalf("journal.Open's done ran %d times", fired)
	}
	return res
}

// mustOpen opens the journal and fails on an error.
func (d *disk) mustOpen() (*journal.Journal, *journal.Recovery) {
	d.t.Helper()
	res := d.open()
	if res.err != nil || res.panicked != nil {
		d.t.Fatalf("journal.Open: %v %v", res.err, res.panicked)
	}
	return res.j, res.r
}

// appendWait appends frame and runs the loop until its done.
func (d *disk) appendWait(j *journal.Journal, frame []byte) {
	d.t.Helper()
	fired := 0
	j.Append(frame, func() { fired++ })
	d.drain()
	if fired != 1 {
		d.t.Fatalf("append: done ran %d times", fired)
	}
}

// writeState runs WriteState to completion.
func (d *disk) writeState(j *journal.Journal, s wire.VsrState) {
	d.t.Helper()
	fired := 0
	j.WriteState(s, func() { fired++ })
	d.drain()
	if fired != 1 {
		d.t.Fatalf("write state: done ran %d times", fired)
	}
}

// writeRaw writes data at sector durably, behind the journal's back.
func (d *disk) writeRaw(sector uint64, data []byte) {
	d.t.Helper()
	fired := 0
	d.dev.Write(sector, data, func(err error) {
		if err != nil {
			d.t.Fatalf("raw write: %v", err)
		}
		d.dev.Sync(func(error) { fired++ })
	})
	d.drain()
	if fired != 1 {
		d.t.Fatal("raw write did not complete")
	}
}

// readRaw returns the durable bytes of sectors sectors from sector.
func (d *disk) readRaw(sector uint64, sectors int) []byte {
	buf := make([]byte, sectors*d.cfg.SectorSize)
	d.dev.PeekDurable(sector, buf)
	return buf
}

// Sectors by the storage layout (not the reader's arithmetic, which the
// tests check against them).
func (d *disk) copySector(i int) uint64 {
	return d.layout.ChunkStart(d.layout.ZoneIndex(journal.ZoneSuperblock), uint64(i))
}

func (d *disk) headerSector(k uint64) uint64 {
	return d.layout.ChunkStart(d.layout.ZoneIndex(journal.ZoneHeaders), k)
}

func (d *disk) prepareSector(k uint64) uint64 {
	return d.layout.ChunkStart(d.layout.ZoneIndex(journal.ZonePrepares), k)
}

func (d *disk) prepareChunkSectors() int {
	return int(d.layout.Zone(d.layout.ZoneIndex(journal.ZonePrepares)).ChunkSectors)
}

// withFaults wraps a device's view so that what a sector's fault flags
// would do to a read is applied: a latent sector reads as garbage (a read
// of it fails; either way it is damage), a corrupt one with one bit
// flipped. Both readers get the same bytes; journal.Open reads through the
// device and gets its own faults, which have the same effect on every
// record (one flipped bit breaks any seal, magic or padding).
func withFaults(dev *storage.SimDevice, base func(uint64, []byte)) func(uint64, []byte) {
	size := dev.SectorSize()
	return func(sector uint64, buf []byte) {
		base(sector, buf)
		for k := 0; k*size < len(buf); k++ {
			s := sector + uint64(k)
			b := buf[k*size : (k+1)*size]
			latent, corrupt := dev.SectorFaults(s)
			if corrupt {
				bit := xxh3.HashSeed([]byte("corrupt"), s) % uint64(size*8)
				b[bit/8] ^= 1 << (bit % 8)
			}
			if latent {
				for i := 0; i+8 <= len(b); i += 8 {
					binary.LittleEndian.PutUint64(b[i:], xxh3.HashSeed([]byte{byte(i)}, ^s))
				}
			}
		}
	}
}

// prepareFrame builds a valid metadata-plane prepare of op; variant gives
// the same op another identity (and body), and bodyBytes is the body's
// length.
func prepareFrame(cluster wire.U128, op, variant uint64, bodyBytes int) []byte {
	rng := rand.New(rand.NewPCG(op, variant))
	body := make([]byte, bodyBytes)
	for i := range body {
		body[i] = byte(rng.Uint32())
	}
	h := &wire.PrepareHeader{
		Prefix:    wire.Prefix{Command: wire.CommandPrepare, Cluster: cluster, View: uint32(1 + variant), Replica: 0},
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

// stateOf is a VsrState of the test replica.
func stateOf(cfg journal.Config, view, logView uint32, commitMax uint64) wire.VsrState {
	return wire.VsrState{Cluster: cfg.Cluster, ReplicaID: cfg.Replica, ReplicaCount: cfg.ReplicaCount,
		View: view, LogView: logView, CommitMax: commitMax}
}

// sealRecord returns record, its seal under seed and zeros, in n bytes
// (format 4.1).
func sealRecord(record []byte, seed uint64, n int) []byte {
	b := make([]byte, n)
	copy(b, record)
	binary.LittleEndian.PutUint64(b[len(record):], xxh3.HashSeed(record, seed))
	return b
}

// encodeCopy builds a superblock copy's chunk by format 10.1.
func encodeCopy(g Geometry, seq uint64, payload []byte, formatted uint64, head LogHead) []byte {
	b := make([]byte, int(g.superblockChunkSectors())*g.SectorSize)
	n := copy(b, wire.EncodeSuperblock(seq, payload))
	binary.LittleEndian.PutUint64(b[n:], trailerMagic)
	binary.LittleEndian.PutUint64(b[n+8:], formatted)
	binary.LittleEndian.PutUint64(b[n+16:], head.Op)
	copy(b[n+24:], head.Header[:])
	binary.LittleEndian.PutUint64(b[n+trailerSealAt:], xxh3.HashSeed(b[n:n+trailerSealAt], seedSeal))
	return b
}

// slotDiff returns "" when the reader's slot agrees with the journal's
// report in every field the two share, else what differs.
func slotDiff(mine Slot, theirs journal.SlotReport) string {
	type view struct {
		Class           string
		Op              uint64
		Written, Repair bool
		HState          string
		HOp             uint64
		HID             wire.U128
		HUnacked        bool
		PState          string
		POp             uint64
		PID             wire.U128
	}
	a := view{mine.Class.String(), mine.Op, mine.Written, mine.Repaired, mine.Header.State.String(), mine.Header.Op,
		mine.Header.ID, mine.Header.Unacked, mine.Prepare.State.String(), mine.Prepare.Op, mine.Prepare.ID}
	b := view{theirs.Class.String(), theirs.Op, theirs.HeaderWritten, theirs.HeaderRepaired, theirs.Header.State.String(),
		theirs.Header.Op, theirs.Header.ID, theirs.Header.Unacked, theirs.Prepare.State.String(), theirs.Prepare.Op,
		theirs.Prepare.ID}
	if a != b {
		return fmt.Sprintf("reader %+v, journal %+v", a, b)
	}
	return ""
}
