package journal

import (
	"bytes"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

func TestZones(t *testing.T) {
	cfg := testConfig()
	zones := Zones(cfg)
	if len(zones) != 3 || zones[0].Name != ZoneSuperblock || zones[1].Name != ZoneHeaders || zones[2].Name != ZonePrepares {
		t.Fatalf("zones %+v", zones)
	}
	if zones[0].Chunks != SuperblockCopies || zones[0].ChunkSectors != 1 {
		t.Fatalf("superblock zone %+v", zones[0])
	}
	if zones[1].Chunks != cfg.SlotCount || zones[1].ChunkSectors != 1 || zones[2].Chunks != cfg.SlotCount {
		t.Fatalf("ring zones %+v %+v", zones[1], zones[2])
	}
	// FrameSizeMax bytes plus the seal: 4096+8 bytes in 512-byte sectors.
	if zones[2].ChunkSectors != 9 {
		t.Fatalf("prepare chunk of %d sectors, want 9", zones[2].ChunkSectors)
	}
	l := Layout(cfg)
	if l.Sectors() != 4+8+8*9 {
		t.Fatalf("layout of %d sectors", l.Sectors())
	}
	g := newGeometry(cfg)
	if g.headerSector(0) != 4 || g.prepareSector(0) != 12 || g.prepareSector(7) != 12+63 || g.endSector != l.Sectors() {
		t.Fatalf("geometry %+v", g)
	}
	// A superblock record larger than a sector takes more sectors.
	if superblockRecordBytes > 512 {
		t.Fatalf("superblock record of %d bytes", superblockRecordBytes)
	}
	cfg.FirstSector = 100
	if g := newGeometry(cfg); g.superblockSector(0) != 100 || g.headerSector(0) != 104 {
		t.Fatalf("geometry at 100: %+v", g)
	}
}

func TestConfigChecks(t *testing.T) {
	for _, c := range []struct {
		name   string
		mutate func(*Config)
	}{
		{"sector 256", func(c *Config) { c.SectorSize = 256 }},
		{"sector 1000", func(c *Config) { c.SectorSize = 1000 }},
		{"no slots", func(c *Config) { c.SlotCount = 0 }},
		{"frame below header", func(c *Config) { c.FrameSizeMax = 100 }},
		{"no appends", func(c *Config) { c.AppendsMax = 0 }},
		{"IOs below appends", func(c *Config) { c.IOsMax = c.AppendsMax }},
		{"no state writes", func(c *Config) { c.StateWritesMax = 0 }},
		{"replica >= count", func(c *Config) { c.Replica = c.ReplicaCount }},
	} {
		cfg := testConfig()
		c.mutate(&cfg)
		expectPanic(t, c.name, func() { Zones(cfg) })
	}
}

func TestFormatThenOpen(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 1})
	e.format()
	j, r := e.mustOpen()
	if r.Count(ClassEmpty) != int(cfg.SlotCount) {
		t.Fatalf("slots %+v", r.Slots)
	}
	want := wire.VsrState{Cluster: cfg.Cluster, ReplicaID: cfg.Replica, ReplicaCount: cfg.ReplicaCount}
	if r.State != want || j.State() != want || r.Sequence != FormatSequence {
		t.Fatalf("state %+v seq %d", r.State, r.Sequence)
	}
	for i, c := range r.Copies {
		if !c.Valid || c.Sequence != FormatSequence {
			t.Fatalf("copy %d: %+v", i, c)
		}
	}
	if r.HeadOp != 0 || r.HeaderOpMax != 0 {
		t.Fatalf("head %d, header max %d", r.HeadOp, r.HeaderOpMax)
	}
	for op := uint64(1); op < 3*cfg.SlotCount; op++ {
		if k := r.Knowledge(op); k != Nackable {
			t.Fatalf("recovery knowledge of op %d: %s", op, k)
		}
		if k := j.Knowledge(op); k != Nackable {
			t.Fatalf("journal knowledge of op %d: %s", op, k)
		}
	}
}

// TestOpenUnformatted: a never-written device holds garbage everywhere; the
// superblock has no valid copy, so Open refuses.
func TestOpenUnformatted(t *testing.T) {
	e := newEnv(t, testConfig(), envOptions{seed: 2})
	if _, _, err := e.open(); err == nil {
		t.Fatal("opened an unformatted device")
	}
}

func TestAppendThenOpen(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 3})
	e.format()
	j, _ := e.mustOpen()
	frames := map[uint64][]byte{}
	// Ops 1..S+3: the last three overwrite slots of the first lap. Sizes
	// from an empty body to FrameSizeMax.
	sizes := []int{0, 1, 100, 247, 248, 256, 1000, 4096 - 256}
	last := cfg.SlotCount + 3
	for op := uint64(1); op <= last; op++ {
		f := prepareFrame(cfg, op, 0, sizes[op%uint64(len(sizes))])
		frames[op] = f
		appendWait(e, j, f)
		if !j.Durable(op) || j.Knowledge(op) != Held {
			t.Fatalf("op %d: durable %v knowledge %s", op, j.Durable(op), j.Knowledge(op))
		}
		got, ok := j.Frame(op)
		if !ok || !bytes.Equal(got, f) {
			t.Fatalf("op %d: frame in memory differs", op)
		}
	}
	if j.InFlight() != 0 {
		t.Fatalf("in flight %d", j.InFlight())
	}
	j2, r := e.mustOpen()
	if r.Count(ClassClean) != int(cfg.SlotCount) || r.HeadOp != last || r.HeaderOpMax != last {
		t.Fatalf("recovery: %+v head %d", r.Slots, r.HeadOp)
	}
	for op := last - cfg.SlotCount + 1; op <= last; op++ {
		s := r.Slot(op % cfg.SlotCount)
		if s.Op != op || !s.HeaderWritten {
			t.Fatalf("slot of op %d: %+v", op, s)
		}
		got, ok := j2.Frame(op)
		if !ok || !bytes.Equal(got, frames[op]) {
			t.Fatalf("op %d: recovered frame differs", op)
		}
		if !j2.Durable(op) || r.Knowledge(op) != Held || j2.Knowledge(op) != Held {
			t.Fatalf("op %d: durable %v knowledge %s", op, j2.Durable(op), r.Knowledge(op))
		}
		h, ok := j2.Header(op)
		if !ok || !bytes.Equal(h[:], frames[op][:wire.HeaderSize]) {
			t.Fatalf("op %d: header", op)
		}
		if op+cfg.SlotCount <= 3*cfg.SlotCount && j2.Knowledge(op+cfg.SlotCount) != Nackable {
			t.Fatalf("op %d: %s", op+cfg.SlotCount, j2.Knowledge(op+cfg.SlotCount))
		}
	}
	// Overwritten ops: their slot moved on; the disk no longer shows them,
	// and they may have been acknowledged.
	for op := uint64(1); op <= last-cfg.SlotCount; op++ {
		if k := j2.Knowledge(op); k != Unknown {
			t.Fatalf("overwritten op %d: %s", op, k)
		}
	}
}

func TestAppendIdempotent(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 4})
	e.format()
	j, _ := e.mustOpen()
	f := prepareFrame(cfg, 5, 0, 300)
	appendWait(e, j, f)
	before := e.dev.Stats()
	// The same identity with another view stamped: idempotent.
	again := bytes.Clone(f)
	wire.HeaderOf(again).SetView(9)
	appendWait(e, j, again)
	after := e.dev.Stats()
	if after.Writes != before.Writes || after.Syncs != before.Syncs+1 {
		t.Fatalf("idempotent append wrote: %+v -> %+v", before, after)
	}
	if got, _ := j.Frame(5); !bytes.Equal(got, f) {
		t.Fatal("idempotent append replaced the frame")
	}
	// Two back to back, while the first is in flight: both dones run, in
	// order.
	var order []int
	g := prepareFrame(cfg, 6, 0, 10)
	j.Append(g, func() { order = append(order, 1) })
	j.Append(g, func() { order = append(order, 2) })
	if j.InFlight() != 2 {
		t.Fatalf("in flight %d", j.InFlight())
	}
	e.drain()
	if len(order) != 2 || order[0] != 1 || order[1] != 2 || j.InFlight() != 0 {
		t.Fatalf("dones %v, in flight %d", order, j.InFlight())
	}
}

func TestAppendReplace(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 5})
	e.format()
	j, _ := e.mustOpen()
	x := prepareFrame(cfg, 3, 0, 200)
	y := prepareFrame(cfg, 3, 1, 900)
	if identityOf(x) == identityOf(y) {
		t.Fatal("variants share an identity")
	}
	appendWait(e, j, x)
	j.Truncate(2)
	if _, ok := j.Frame(3); ok || j.Knowledge(3) != Unknown {
		t.Fatalf("after truncate: %s", j.Knowledge(3))
	}
	if _, ok := j.Header(3); ok {
		t.Fatal("header of a truncated op")
	}
	appendWait(e, j, y)
	if got, _ := j.Frame(3); !bytes.Equal(got, y) || !j.Durable(3) {
		t.Fatal("replacement not held")
	}
	j2, r := e.mustOpen()
	if s := r.Slot(3); s.Class != ClassClean || s.Prepare.ID != identityOf(y) || !s.HeaderWritten {
		t.Fatalf("slot %+v", s)
	}
	if got, _ := j2.Frame(3); !bytes.Equal(got, y) {
		t.Fatal("recovered the replaced frame")
	}
}

// TestAppendSameSlotQueued: an append to a slot with a write in flight waits
// for it; both dones run, in order, and the disk ends with the later op.
func TestAppendSameSlotQueued(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 6})
	e.format()
	j, _ := e.mustOpen()
	a := prepareFrame(cfg, 2, 0, 50)
	b := prepareFrame(cfg, 2+cfg.SlotCount, 0, 60)
	var order []uint64
	j.Append(a, func() { order = append(order, 2) })
	j.Append(b, func() { order = append(order, 2+cfg.SlotCount) })
	if _, ok := j.Frame(2); ok {
		t.Fatal("memory still holds the overwritten op")
	}
	if got, ok := j.Frame(2 + cfg.SlotCount); !ok || !bytes.Equal(got, b) {
		t.Fatal("memory does not hold the newer op")
	}
	e.drain()
	if len(order) != 2 || order[0] != 2 || order[1] != 2+cfg.SlotCount {
		t.Fatalf("dones %v", order)
	}
	// The older op was acknowledged once, and its slot moved on.
	if k := j.Knowledge(2); k != Unknown {
		t.Fatalf("op 2: %s", k)
	}
	_, r := e.mustOpen()
	if s := r.Slot(2); s.Class != ClassClean || s.Op != 2+cfg.SlotCount {
		t.Fatalf("slot %+v", s)
	}
}

func TestAppendBoundsAndValidation(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 7})
	e.format()
	j, _ := e.mustOpen()
	nop := func() {}
	for op := uint64(1); op <= uint64(cfg.AppendsMax); op++ {
		j.Append(prepareFrame(cfg, op, 0, 10), nop)
	}
	expectPanic(t, "beyond AppendsMax", func() { j.Append(prepareFrame(cfg, 20, 0, 10), nop) })
	e.drain()

	other := cfg
	other.Cluster = wire.ClusterID("another")
	expectPanic(t, "another cluster", func() { j.Append(prepareFrame(other, 30, 0, 10), nop) })
	bad := prepareFrame(cfg, 31, 0, 10)
	bad[wire.HeaderSize] ^= 1
	expectPanic(t, "bad body", func() { j.Append(bad, nop) })
	unsealed := prepareFrame(cfg, 32, 0, 10)
	wire.HeaderOf(unsealed).SetChecksum(wire.U128{})
	expectPanic(t, "unsealed", func() { j.Append(unsealed, nop) })
	expectPanic(t, "too large", func() { j.Append(prepareFrame(cfg, 33, 0, cfg.FrameSizeMax), nop) })
	expectPanic(t, "op 0", func() { j.Append(prepareFrame(cfg, 0, 0, 10), nop) })
	expectPanic(t, "nil done", func() { j.Append(prepareFrame(cfg, 34, 0, 10), nil) })
	// Slot 1 holds op 1+S after this; op 1 would go back.
	appendWait(e, j, prepareFrame(cfg, 1+cfg.SlotCount, 0, 10))
	expectPanic(t, "op going back in its slot", func() { j.Append(prepareFrame(cfg, 1, 0, 10), nop) })
	expectPanic(t, "knowledge of op 0", func() { j.Knowledge(0) })
	if j.InFlight() != 0 {
		t.Fatalf("in flight %d after rejected appends", j.InFlight())
	}
}

// TestKnowledgeWhileWriting: an op being written is Held; other ops of its
// slot are Unknown while its header copy is being written (a crash could
// tear it), and newer ops Nackable before.
func TestKnowledgeWhileWriting(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 8})
	e.format()
	j, _ := e.mustOpen()
	appendWait(e, j, prepareFrame(cfg, 4, 0, 10))
	next := 4 + cfg.SlotCount
	fired := false
	j.Append(prepareFrame(cfg, next, 0, 10), func() { fired = true })
	sawHeaderFlux := false
	for !fired {
		s := j.slotAt(4)
		if j.Knowledge(next) != Held {
			t.Fatalf("op %d in flight: %s", next, j.Knowledge(next))
		}
		switch s.header.state {
		case diskValid:
			if k := j.Knowledge(4); k != HeaderOnly {
				t.Fatalf("op 4 under a valid header copy: %s", k)
			}
			if k := j.Knowledge(next + cfg.SlotCount); k != Nackable {
				t.Fatalf("newer op: %s", k)
			}
		case diskFlux:
			sawHeaderFlux = true
			if k := j.Knowledge(4); k != Unknown {
				t.Fatalf("op 4 while the header copy is written: %s", k)
			}
		}
		if !e.loop.Step() {
			t.Fatal("append never completed")
		}
	}
	if !sawHeaderFlux {
		t.Fatal("never saw the header write in flight")
	}
	if j.Knowledge(4) != Unknown || j.Knowledge(next) != Held || j.Knowledge(next+cfg.SlotCount) != Nackable {
		t.Fatal("knowledge after the append")
	}
}

// TestUnacknowledgedThenAcknowledge: a crash between the prepare's sync and
// the header write leaves a Clean slot whose header was not written; the
// caller acknowledges it by appending it again, which writes only the header.
func TestUnacknowledgedThenAcknowledge(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 9, crash: crashLost})
	e.format()
	j, _ := e.mustOpen()
	f := prepareFrame(cfg, 3, 0, 700)
	j.Append(f, func() { t.Fatal("done after the crash point") })
	for j.slotAt(3).prepare.state != diskValid {
		if !e.loop.Step() {
			t.Fatal("loop ran dry")
		}
	}
	e.crash()
	j2, r := e.mustOpen()
	if s := r.Slot(3); s.Class != ClassClean || s.HeaderWritten || s.Header.State != SectorEmpty {
		t.Fatalf("slot %+v", s)
	}
	if j2.Durable(3) || j2.Knowledge(3) != Held || r.Knowledge(3+cfg.SlotCount) != Nackable {
		t.Fatal("knowledge of the unacknowledged prepare")
	}
	before := e.dev.Stats()
	appendWait(e, j2, f)
	after := e.dev.Stats()
	if after.Writes != before.Writes+1 || !j2.Durable(3) {
		t.Fatalf("acknowledging wrote %d times", after.Writes-before.Writes)
	}
	_, r = e.mustOpen()
	if s := r.Slot(3); s.Class != ClassClean || !s.HeaderWritten {
		t.Fatalf("slot %+v", s)
	}
}

// TestCorruptThenRepair: corruption of an acknowledged prepare makes the
// slot Corrupt (header known, never nackable); a repair rewrites only the
// prepare.
func TestCorruptThenRepair(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 10})
	e.format()
	j, _ := e.mustOpen()
	f := prepareFrame(cfg, 6, 0, 2000)
	appendWait(e, j, f)
	e.dev.InjectCorruption(e.geo.prepareSector(6) + 2)
	j2, r := e.mustOpen()
	if s := r.Slot(6); s.Class != ClassCorrupt || s.Op != 6 || s.Prepare.State != SectorDamaged {
		t.Fatalf("slot %+v", s)
	}
	if k := j2.Knowledge(6); k != HeaderOnly {
		t.Fatalf("knowledge %s", k)
	}
	if h, ok := j2.Header(6); !ok || !bytes.Equal(h[:], f[:wire.HeaderSize]) {
		t.Fatal("header of the corrupt op")
	}
	if _, ok := j2.Frame(6); ok {
		t.Fatal("frame of a corrupt op")
	}
	before := e.dev.Stats()
	fired := 0
	j2.Repair(f, func() { fired++ })
	e.drain()
	if after := e.dev.Stats(); fired != 1 || after.Writes != before.Writes+1 || !j2.Durable(6) {
		t.Fatalf("repair: fired %d, writes %d", fired, after.Writes-before.Writes)
	}
	j3, r := e.mustOpen()
	if s := r.Slot(6); s.Class != ClassClean || !s.HeaderWritten {
		t.Fatalf("after repair: %+v", s)
	}
	if got, _ := j3.Frame(6); !bytes.Equal(got, f) {
		t.Fatal("repaired frame differs")
	}
}

// TestTruncateKnowledge: truncation withdraws the journal's word for an op
// (Unknown, never Nackable: it may have been acknowledged), and appending
// the same identity again restores it.
func TestTruncateKnowledge(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 11})
	e.format()
	j, _ := e.mustOpen()
	frames := make([][]byte, 6)
	for op := uint64(1); op <= 5; op++ {
		frames[op] = prepareFrame(cfg, op, 0, 40)
		appendWait(e, j, frames[op])
	}
	// An append still in flight when truncated still completes.
	fired := false
	six := prepareFrame(cfg, 6, 0, 40)
	j.Append(six, func() { fired = true })
	j.Truncate(3)
	for op := uint64(1); op <= 3; op++ {
		if j.Knowledge(op) != Held {
			t.Fatalf("op %d: %s", op, j.Knowledge(op))
		}
	}
	for op := uint64(4); op <= 6; op++ {
		if _, ok := j.Frame(op); ok {
			t.Fatalf("op %d still held", op)
		}
		if k := j.Knowledge(op); k == Held || k == HeaderOnly || (op < 6 && k != Unknown) {
			t.Fatalf("op %d after truncate: %s", op, k)
		}
	}
	e.drain()
	if !fired || j.Knowledge(6) != Unknown {
		t.Fatalf("in-flight append: fired %v, knowledge %s", fired, j.Knowledge(6))
	}
	appendWait(e, j, frames[4])
	if j.Knowledge(4) != Held || !j.Durable(4) {
		t.Fatal("re-appended op 4")
	}
	// The disk still holds the truncated ops: recovery reports them.
	_, r := e.mustOpen()
	if r.Knowledge(5) != Held || r.Knowledge(6) != Held {
		t.Fatalf("recovery of truncated ops: %s %s", r.Knowledge(5), r.Knowledge(6))
	}
}

// TestDeterministic: one seed, one run: the same events in the same order,
// the same digest.
func TestDeterministic(t *testing.T) {
	run := func() uint64 {
		cfg := testConfig()
		e := newEnv(t, cfg, envOptions{seed: 77, crash: crashMixed})
		e.loop.RecordTrace(true)
		e.format()
		j, _ := e.mustOpen()
		for op := uint64(1); op <= 20; op++ {
			for j.InFlight() >= cfg.AppendsMax {
				e.loop.Step()
			}
			j.Append(prepareFrame(cfg, op, 0, int(op)*37), func() {})
			if op%7 == 0 {
				s := j.State()
				s.View++
				j.WriteState(s, func() {})
			}
			e.loop.Step()
		}
		e.crash()
		_, r := e.mustOpen()
		e.loop.FoldDigest("head", 0, r.HeadOp)
		return e.loop.Digest()
	}
	if a, b := run(), run(); a != b {
		t.Fatalf("digests %016x and %016x", a, b)
	}
}
