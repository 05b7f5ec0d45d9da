package diskread

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// Unit tests, one rule of docs/disk-format.md each: scripted bytes on a
// device the journal formatted, the reader's answer checked against what
// the document says, and against the journal's inspector on the same bytes.

// slotOf reads op's slot with the reader and with the journal's inspector,
// fails if they disagree, and returns the reader's.
func slotOf(t *testing.T, d *disk, op uint64) Slot {
	t.Helper()
	peek := d.dev.PeekDurable
	mine := ReadSlot(d.g, peek, op)
	if diff := slotDiff(mine, journal.NewInspector(d.cfg).Slot(op, peek)); diff != "" {
		t.Fatalf("op %d: %s", op, diff)
	}
	return mine
}

// expectSlot checks the class, op and flags of a slot.
func expectSlot(t *testing.T, s Slot, class Class, op uint64, written, repaired bool) {
	t.Helper()
	if s.Class != class || s.Op != op || s.Written != written || s.Repaired != repaired {
		t.Fatalf("slot %s op %d written %v repaired %v (header %s, prepare %s); want %s op %d written %v repaired %v",
			s.Class, s.Op, s.Written, s.Repaired, s.Header.State, s.Prepare.State, class, op, written, repaired)
	}
}

// holds checks both durability answers for (op, id) against want, and the
// journal's.
func holds(t *testing.T, d *disk, op uint64, id wire.U128, wantAcked, wantPrepare bool) {
	t.Helper()
	peek := d.dev.PeekDurable
	acked, prepare := HoldsAcknowledged(d.g, peek, op, id), HoldsPrepare(d.g, peek, op, id)
	js := journal.NewInspector(d.cfg).Slot(op, peek)
	jAcked, jPrepare := js.HoldsAcknowledged(op, id), js.Class == journal.ClassClean && js.Op == op && js.Prepare.ID == id
	if acked != wantAcked || prepare != wantPrepare || acked != jAcked || prepare != jPrepare {
		t.Fatalf("op %d %s: acknowledged %v prepare %v (journal %v %v), want %v %v", op, id, acked, prepare, jAcked, jPrepare, wantAcked, wantPrepare)
	}
}

// formatted returns a formatted device and its open journal.
func formatted(t *testing.T, cfg journal.Config) (*disk, *journal.Journal) {
	t.Helper()
	d := newDisk(t, cfg, 1, 0, 0)
	d.format()
	j, _ := d.mustOpen()
	return d, j
}

// TestLayoutAddresses: the reader's sectors are the storage layout's of
// journal.Zones (format 2, 3), at FirstSector 0 and elsewhere.
func TestLayoutAddresses(t *testing.T) {
	for _, cfg := range []journal.Config{testConfig(), func() journal.Config {
		c := testConfig()
		c.SectorSize, c.FrameSizeMax, c.SlotCount = 1024, 9000, 5
		return c
	}()} {
		d := newDisk(t, cfg, 1, 0, 0)
		for i := range 4 {
			if got, want := d.g.superblockCopySector(i), d.copySector(i); got != want {
				t.Fatalf("copy %d at %d, layout %d", i, got, want)
			}
		}
		for k := range cfg.SlotCount {
			if d.g.headerSector(k) != d.headerSector(k) || d.g.prepareSector(k) != d.prepareSector(k) {
				t.Fatalf("slot %d at %d/%d, layout %d/%d", k, d.g.headerSector(k), d.g.prepareSector(k), d.headerSector(k), d.prepareSector(k))
			}
		}
		if got := d.g.JournalSectors(); got != d.layout.Sectors() {
			t.Fatalf("journal of %d sectors, layout %d", got, d.layout.Sectors())
		}
		// Elsewhere on a device: every address shifts by FirstSector.
		g := d.g
		g.FirstSector = 1000
		if g.superblockCopySector(2) != 1000+d.copySector(2) || g.prepareSector(3) != 1000+d.prepareSector(3) {
			t.Fatal("FirstSector does not shift the journal")
		}
	}
}

// TestWrittenBytes: what the journal writes is byte for byte what format
// 4 and 10.1 describe: Format's markers and superblock copies, an append's
// header sector and prepare chunk.
func TestWrittenBytes(t *testing.T) {
	cfg := testConfig()
	d, j := formatted(t, cfg)
	for k := range cfg.SlotCount {
		for _, c := range []struct {
			kind   markerKind
			sector uint64
		}{{markerHeader, d.headerSector(k)}, {markerPrepare, d.prepareSector(k)}} {
			m := d.g.marker(c.kind, k)
			if want := sealRecord(m[:], seedSeal, cfg.SectorSize); !bytes.Equal(d.readRaw(c.sector, 1), want) {
				t.Fatalf("slot %d: the journal's marker of kind %d is not the document's", k, c.kind)
			}
		}
	}
	want := encodeCopy(d.g, journal.FormatSequence, stateOf(cfg, 0, 0, 0).Encode(), journal.InitialFormattedSlots(cfg), LogHead{})
	for i := range 4 {
		if !bytes.Equal(d.readRaw(d.copySector(i), 1), want) {
			t.Fatalf("superblock copy %d after Format is not the document's", i)
		}
	}
	frame := prepareFrame(cfg.Cluster, 3, 0, 1500)
	d.appendWait(j, frame)
	if !bytes.Equal(d.readRaw(d.headerSector(3), 1), sealRecord(frame[:wire.HeaderSize], seedSeal, cfg.SectorSize)) {
		t.Fatal("the header copy of op 3 is not the document's")
	}
	n := d.g.padded(len(frame) + sealBytes)
	if !bytes.Equal(d.readRaw(d.prepareSector(3), n/cfg.SectorSize), sealRecord(frame, seedSeal, n)) {
		t.Fatal("the prepare chunk of op 3 is not the document's")
	}
}

// TestFreshDevice: after Format every slot is Empty and the superblock is
// Format's (format 10.3, 11).
func TestFreshDevice(t *testing.T) {
	cfg := testConfig()
	d, _ := formatted(t, cfg)
	for op := uint64(1); op <= 2*cfg.SlotCount; op++ {
		expectSlot(t, slotOf(t, d, op), ClassEmpty, 0, false, false)
		holds(t, d, op, wire.U128{}, false, false)
	}
	sb, err := ReadSuperblock(d.g, d.dev.PeekDurable)
	if err != nil || sb.Sequence != 1 || sb.State != stateOf(cfg, 0, 0, 0) || sb.Formatted != cfg.SlotCount || sb.Head != (LogHead{}) {
		t.Fatalf("fresh superblock %+v, %v", sb, err)
	}
	if v, lv, err := DurableView(d.g, d.dev.PeekDurable); v != 0 || lv != 0 || err != nil {
		t.Fatalf("fresh view %d/%d, %v", v, lv, err)
	}
	if HoldsAcknowledged(d.g, d.dev.PeekDurable, 0, wire.U128{}) || HoldsPrepare(d.g, d.dev.PeekDurable, 0, wire.U128{}) {
		t.Fatal("op 0 held")
	}
}

// TestAcknowledgedAppend: an append's done leaves both copies valid: held
// as acknowledged with its identity only, at its op only (format 9).
func TestAcknowledgedAppend(t *testing.T) {
	cfg := testConfig()
	d, j := formatted(t, cfg)
	frame := prepareFrame(cfg.Cluster, 3, 0, 2000)
	id := identityOf(frame)
	d.appendWait(j, frame)
	expectSlot(t, slotOf(t, d, 3), ClassClean, 3, true, false)
	holds(t, d, 3, id, true, true)
	holds(t, d, 3, identityOf(prepareFrame(cfg.Cluster, 3, 1, 2000)), false, false)
	holds(t, d, 3+cfg.SlotCount, id, false, false)
	if got, ok := DurablePrepare(d.g, d.dev.PeekDurable, 3); !ok || got != id {
		t.Fatalf("durable prepare of op 3: %s %v", got, ok)
	}
	// The next slot shows nothing.
	if _, ok := DurablePrepare(d.g, d.dev.PeekDurable, 4); ok {
		t.Fatal("op 4 durable")
	}
}

// TestMarkerMustBeExact: a marker of another slot, of the other kind, of
// another replica or under the second seal is damage (format 4.2).
func TestMarkerMustBeExact(t *testing.T) {
	cfg := testConfig()
	other := cfg
	other.Replica = 2
	g2 := geometryOf(other)
	src := d0(t, cfg)
	cases := []struct {
		name   string
		header []byte // the header sector's new bytes
	}{
		{"another slot's", src.readRaw(src.headerSector(4), 1)},
		{"the prepare kind", func() []byte { m := geometryOf(cfg).marker(markerPrepare, 3); return sealRecord(m[:], seedSeal, 512) }()},
		{"another replica's", func() []byte { m := g2.marker(markerHeader, 3); return sealRecord(m[:], seedSeal, 512) }()},
		{"second seal", func() []byte {
			m := geometryOf(cfg).marker(markerHeader, 3)
			return sealRecord(m[:], seedSealUnacked, 512)
		}()},
		{"nonzero padding", func() []byte {
			m := geometryOf(cfg).marker(markerHeader, 3)
			b := sealRecord(m[:], seedSeal, 512)
			b[511] = 1
			return b
		}()},
	}
	for _, c := range cases {
		d, _ := formatted(t, cfg)
		d.writeRaw(d.headerSector(3), c.header)
		s := slotOf(t, d, 3)
		if s.Header.State != CopyDamaged {
			t.Fatalf("%s marker: header copy %s", c.name, s.Header.State)
		}
		expectSlot(t, s, ClassFaulty, 0, false, false)
		// The same bytes in the prepare chunk's first sector.
		d, _ = formatted(t, cfg)
		d.writeRaw(d.prepareSector(3), c.header)
		if c.name == "the prepare kind" {
			expectSlot(t, slotOf(t, d, 3), ClassEmpty, 0, false, false) // it is the prepare chunk's own marker
			continue
		}
		expectSlot(t, slotOf(t, d, 3), ClassTorn, 0, false, false)
	}
}

// d0 is a formatted device for reading bytes off.
func d0(t *testing.T, cfg journal.Config) *disk {
	d, _ := formatted(t, cfg)
	return d
}

// TestTornHeaderCopy: a header write torn over the marker leaves the
// prepare durable but its acknowledgement unknown: Clean, repaired, not
// held as acknowledged, held as a prepare (format 7, 9).
func TestTornHeaderCopy(t *testing.T) {
	cfg := testConfig()
	d, j := formatted(t, cfg)
	marker := d.readRaw(d.headerSector(3), 1)
	frame := prepareFrame(cfg.Cluster, 3, 0, 700)
	d.appendWait(j, frame)
	torn := d.readRaw(d.headerSector(3), 1)
	copy(torn[256:], marker[256:]) // the seal's atoms never landed
	d.writeRaw(d.headerSector(3), torn)
	expectSlot(t, slotOf(t, d, 3), ClassClean, 3, true, true)
	holds(t, d, 3, identityOf(frame), false, true)
}

// TestTornPrepare: a prepare write torn over the marker is Torn(0); over an
// older op's prepare, under that op's header, it is Corrupt(h) alone and
// Torn(h) once a recovery's window passes the header (format 7, 8, 12).
func TestTornPrepare(t *testing.T) {
	cfg := testConfig()
	S := cfg.SlotCount
	d, j := formatted(t, cfg)
	marker := d.readRaw(d.prepareSector(3), 1)
	frame := prepareFrame(cfg.Cluster, 3, 0, 300)
	d.appendWait(j, frame)
	torn := d.readRaw(d.prepareSector(3), 1)
	copy(torn[:64], marker[:64])
	d.writeRaw(d.prepareSector(3), torn)
	// The header copy still holds op 3: a damaged prepare of op 3 itself.
	expectSlot(t, slotOf(t, d, 3), ClassCorrupt, 3, false, false)
	holds(t, d, 3, identityOf(frame), false, false)

	// A fresh slot whose first prepare write tore.
	d.writeRaw(d.prepareSector(5), append(append([]byte{}, torn[:64]...), marker[64:]...))
	expectSlot(t, slotOf(t, d, 5), ClassTorn, 0, false, false)

	// Ops 1..S+4 on a fresh device, op S+3's prepare torn over op 3's
	// before its header write: alone the slot is Corrupt(3); a recovery,
	// whose head is S+4, relabels it Torn(3).
	d, j = formatted(t, cfg)
	frames := map[uint64][]byte{}
	for op := uint64(1); op <= S+4; op++ {
		frames[op] = prepareFrame(cfg.Cluster, op, 0, 300)
		if op != S+3 {
			d.appendWait(j, frames[op])
		}
	}
	old := d.readRaw(d.prepareSector(3), 1)
	tornNew := sealRecord(frames[S+3], seedSeal, d.g.padded(len(frames[S+3])+sealBytes))[:512]
	copy(tornNew[128:], old[128:])
	d.writeRaw(d.prepareSector(3), tornNew)
	expectSlot(t, slotOf(t, d, S+3), ClassCorrupt, 3, false, false)
	r, err := Recover(d.g, d.dev.PeekDurable)
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Slot(3); s.Class != ClassTorn || s.Op != 3 || r.HeadOp != S+4 {
		t.Fatalf("recovered slot 3 %s op %d, head %d; want torn op 3, head %d", s.Class, s.Op, r.HeadOp, S+4)
	}
	if k := r.Knowledge(3); k != HeaderOnly {
		t.Fatalf("op 3 is %s, want header-only", k)
	}
	if k := r.Knowledge(S + 3); k != Unknown {
		t.Fatalf("op %d over a damaged prepare is %s, want unknown", S+3, k)
	}
	crossRecover(t, d, "torn prepare", d.dev.PeekDurable)
}

// TestSecondSeal: Reconcile records the header of an op this replica never
// acknowledged under the second seal: valid, but not an acknowledgement
// (format 4.1, 5, 7, 8; DEVIATIONS 29). Under it a prepare of the same
// identity is Clean, not written; the prepare chunk never carries it.
func TestSecondSeal(t *testing.T) {
	cfg := testConfig()
	d, j := formatted(t, cfg)
	frames := map[uint64][]byte{}
	for op := uint64(1); op <= 3; op++ {
		frames[op] = prepareFrame(cfg.Cluster, op, 0, 200)
		d.appendWait(j, frames[op])
	}
	canonical2 := prepareFrame(cfg.Cluster, 2, 1, 400)
	fired := 0
	j.Reconcile(3, []wire.Header{*wire.HeaderOf(frames[1]), *wire.HeaderOf(canonical2), *wire.HeaderOf(frames[3])}, func() { fired++ })
	d.drain()
	if fired != 1 {
		t.Fatal("reconcile did not finish")
	}
	s := slotOf(t, d, 2)
	if !s.Header.Unacked || s.Header.ID != identityOf(canonical2) || s.Prepare.State != CopyEmpty {
		t.Fatalf("reconciled slot 2: header %+v, prepare %s", s.Header.State, s.Prepare.State)
	}
	expectSlot(t, s, ClassCorrupt, 2, false, false)
	holds(t, d, 2, identityOf(canonical2), false, false)
	holds(t, d, 2, identityOf(frames[2]), false, false)
	r, err := Recover(d.g, d.dev.PeekDurable)
	if err != nil || r.Knowledge(2) != HeaderUnacked {
		t.Fatalf("op 2 after the reconcile: %v %v", r.Knowledge(2), err)
	}
	j = crossRecover(t, d, "second seal", d.dev.PeekDurable).j

	// The canonical prepare's body lands, its header write not yet: Clean,
	// not written, so held as a prepare but not as acknowledged.
	n := d.g.padded(len(canonical2) + sealBytes)
	d.writeRaw(d.prepareSector(2), sealRecord(canonical2, seedSeal, n))
	expectSlot(t, slotOf(t, d, 2), ClassClean, 2, false, false)
	holds(t, d, 2, identityOf(canonical2), false, true)

	// The append of it rewrites the header copy under the ordinary seal.
	d.appendWait(j, canonical2)
	expectSlot(t, slotOf(t, d, 2), ClassClean, 2, true, false)
	holds(t, d, 2, identityOf(canonical2), true, true)

	// The second seal on a prepare chunk is damage.
	d.writeRaw(d.prepareSector(2), sealRecord(canonical2, seedSealUnacked, n))
	if s := slotOf(t, d, 2); s.Prepare.State != CopyDamaged {
		t.Fatalf("a prepare under the second seal is %s", s.Prepare.State)
	}
}

// TestHeaderAgainstPrepare: the cells of format 7 where both copies are
// valid: Conflict, an older prepare under a newer header (Corrupt), a
// newer prepare over an older header (Clean, not written).
func TestHeaderAgainstPrepare(t *testing.T) {
	cfg := testConfig()
	S := cfg.SlotCount
	header := func(f []byte) []byte { return sealRecord(f[:wire.HeaderSize], seedSeal, cfg.SectorSize) }
	chunk := func(d *disk, f []byte) []byte { return sealRecord(f, seedSeal, d.g.padded(len(f)+sealBytes)) }
	a, b := prepareFrame(cfg.Cluster, 3, 0, 100), prepareFrame(cfg.Cluster, 3, 1, 900)
	newer := prepareFrame(cfg.Cluster, 3+S, 0, 100)

	d, _ := formatted(t, cfg)
	d.writeRaw(d.prepareSector(3), chunk(d, b))
	d.writeRaw(d.headerSector(3), header(a))
	expectSlot(t, slotOf(t, d, 3), ClassConflict, 3, false, false)
	holds(t, d, 3, identityOf(a), false, false)
	holds(t, d, 3, identityOf(b), false, false)

	d.writeRaw(d.prepareSector(3), chunk(d, a))
	d.writeRaw(d.headerSector(3), header(newer))
	expectSlot(t, slotOf(t, d, 3), ClassCorrupt, 3+S, false, false)
	holds(t, d, 3, identityOf(a), false, false)

	d.writeRaw(d.prepareSector(3), chunk(d, newer))
	d.writeRaw(d.headerSector(3), header(a))
	expectSlot(t, slotOf(t, d, 3), ClassClean, 3+S, false, false)
	holds(t, d, 3+S, identityOf(newer), false, true)
	holds(t, d, 3, identityOf(a), false, false)
}

// TestDamagedCopies: each kind of damage of format 5 and 6 makes a copy
// Damaged: faulty over a marker, clean and repaired over a valid prepare.
func TestDamagedCopies(t *testing.T) {
	cfg := testConfig()
	frame := prepareFrame(cfg.Cluster, 3, 0, 1800) // four sectors and the seal
	n := 0
	for _, c := range []struct {
		name string
		bad  func(record []byte) []byte // the damaged copy's bytes
	}{
		{"view flipped", func(rec []byte) []byte {
			b := sealRecord(rec, seedSeal, padTo(len(rec)))
			binary.LittleEndian.PutUint32(b[52:], binary.LittleEndian.Uint32(b[52:])^4) // outside the identity
			return b
		}},
		{"unsealed", func(rec []byte) []byte { b := make([]byte, padTo(len(rec))); copy(b, rec); return b }},
		{"padding", func(rec []byte) []byte { b := sealRecord(rec, seedSeal, padTo(len(rec))); b[len(b)-1] = 7; return b }},
		{"identity", func(rec []byte) []byte {
			r := bytes.Clone(rec)
			r[200] ^= 1 // the request field, inside the identity; resealed
			return sealRecord(r, seedSeal, padTo(len(r)))
		}},
		{"zero body seal", func(rec []byte) []byte {
			r := bytes.Clone(rec)
			h := wire.HeaderOf(r)
			h.SetChecksumBody(wire.U128{})
			h.SealPrepare()
			return sealRecord(r, seedSeal, padTo(len(r)))
		}},
		{"other cluster", func(rec []byte) []byte {
			r := bytes.Clone(rec)
			h := wire.HeaderOf(r)
			binary.LittleEndian.PutUint64(h[atCluster:], 99)
			h.SealPrepare()
			return sealRecord(r, seedSeal, padTo(len(r)))
		}},
		{"zeros", func(rec []byte) []byte { return make([]byte, padTo(len(rec))) }},
	} {
		for _, inHeader := range []bool{true, false} {
			d, j := formatted(t, cfg)
			d.appendWait(j, frame)
			if inHeader {
				d.writeRaw(d.headerSector(3), c.bad(frame[:wire.HeaderSize]))
				expectSlot(t, slotOf(t, d, 3), ClassClean, 3, true, true)
			} else {
				d.writeRaw(d.prepareSector(3), c.bad(frame))
				expectSlot(t, slotOf(t, d, 3), ClassCorrupt, 3, false, false)
			}
			n++
		}
	}
	// What only wire.Validate sees (format 6): a body that does not match
	// checksum_body, an undefined operation. In a header copy, which has no
	// body and whose operation byte is not checked (format 5), the same
	// header is good.
	for _, c := range []struct {
		name  string
		frame func() []byte
	}{
		{"body seal mismatch", func() []byte {
			f := bytes.Clone(frame)
			f[len(f)-1] ^= 1
			return f
		}},
		{"undefined operation", func() []byte {
			f := bytes.Clone(frame)
			h := wire.HeaderOf(f)
			h[208] = 0xfe
			h.SealPrepare()
			return f
		}},
	} {
		d, j := formatted(t, cfg)
		d.appendWait(j, frame)
		f := c.frame()
		d.writeRaw(d.prepareSector(3), sealRecord(f, seedSeal, d.g.padded(len(f)+sealBytes)))
		d.writeRaw(d.headerSector(3), sealRecord(f[:wire.HeaderSize], seedSeal, cfg.SectorSize))
		s := slotOf(t, d, 3)
		if s.Prepare.State != CopyDamaged || s.Header.State != CopyValid || s.Class != ClassCorrupt {
			t.Fatalf("%s: prepare %s, header %s, class %s", c.name, s.Prepare.State, s.Header.State, s.Class)
		}
		n++
	}
	// A body byte flipped is damage the seal and the body seal both see;
	// bytes of the chunk beyond the padded frame are never read.
	d, j := formatted(t, cfg)
	d.appendWait(j, frame)
	last := d.prepareSector(3) + uint64(d.g.padded(len(frame)+sealBytes)/cfg.SectorSize)
	d.writeRaw(last, bytes.Repeat([]byte{0xee}, cfg.SectorSize))
	expectSlot(t, slotOf(t, d, 3), ClassClean, 3, true, false)
	d.dev.InjectCorruption(d.prepareSector(3) + 2)
	if s := ReadSlot(d.g, withFaults(d.dev, d.dev.PeekDurable), 3); s.Class != ClassCorrupt || s.Prepare.State != CopyDamaged {
		t.Fatalf("a corrupt body sector: %s, prepare %s", s.Class, s.Prepare.State)
	}
	// A damaged header over a damaged prepare is faulty.
	d.dev.InjectLatent(d.headerSector(3))
	if s := ReadSlot(d.g, withFaults(d.dev, d.dev.PeekDurable), 3); s.Class != ClassFaulty {
		t.Fatalf("both copies damaged: %s", s.Class)
	}
	if n != 16 {
		t.Fatalf("%d damage cases ran", n)
	}
}

// padTo is the padded size of a record of n bytes and its seal at 512-byte
// sectors.
func padTo(n int) int { return (n + sealBytes + 511) / 512 * 512 }

// TestHeaderSizeAboveFrameSizeMax: a header whose size exceeds the
// geometry's FrameSizeMax is not a good header (format 5, rule 2), in
// either copy.
func TestHeaderSizeAboveFrameSizeMax(t *testing.T) {
	cfg := testConfig()
	d, j := formatted(t, cfg)
	frame := prepareFrame(cfg.Cluster, 3, 0, 3000)
	d.appendWait(j, frame)
	small := cfg
	small.FrameSizeMax = 3000
	s := ReadSlot(geometryOf(small), d.dev.PeekDurable, 3)
	if s.Header.State != CopyDamaged || s.Prepare.State != CopyDamaged {
		t.Fatalf("a 3256-byte frame under FrameSizeMax 3000: header %s, prepare %s", s.Header.State, s.Prepare.State)
	}
	// (The prepare chunks are sized by FrameSizeMax too, so the journal's
	// inspector of the smaller geometry reads other sectors: no
	// comparison here.)
}

// TestSuperblockRules: the validity rules of format 10.2 and the choice of
// 10.3, each copy scripted, against the journal's inspector and Open.
func TestSuperblockRules(t *testing.T) {
	cfg := testConfig()
	base := stateOf(cfg, 5, 4, 9)
	good := func(g Geometry, seq uint64) []byte {
		return encodeCopy(g, seq, base.Encode(), cfg.SlotCount, LogHead{})
	}
	type want struct {
		seq  uint64
		err  error
		view uint32
	}
	withRecord := func(g Geometry, seq uint64, edit func(b []byte)) []byte {
		b := good(g, seq)
		edit(b)
		// Reseal the record so that only the edited rule can fail.
		n := wire.SuperblockRecordMin + wire.VsrStateSize - 8
		binary.LittleEndian.PutUint64(b[n:], xxhOf(b[:n]))
		return b
	}
	g := geometryOf(cfg)
	other := stateOf(cfg, 9, 9, 9)
	head := LogHead{Op: 6}
	copy(head.Header[:], prepareFrame(cfg.Cluster, 6, 0, 10)[:wire.HeaderSize])
	cases := []struct {
		name   string
		copies [4][]byte // nil: leave Format's (sequence 1, view 0)
		want   want
	}{
		{"all good", [4][]byte{good(g, 7), good(g, 7), good(g, 7), good(g, 7)}, want{7, nil, 5}},
		{"a torn update", [4][]byte{good(g, 8), good(g, 7), good(g, 7), good(g, 7)}, want{8, nil, 5}},
		{"higher sequence, bad record checksum", [4][]byte{func() []byte { b := good(g, 10); b[30] ^= 1; return b }(), good(g, 7), good(g, 7), good(g, 7)}, want{7, nil, 5}},
		{"higher sequence, bad trailer seal", [4][]byte{func() []byte { b := good(g, 10); b[102+100] ^= 1; return b }(), good(g, 7), good(g, 7), good(g, 7)}, want{7, nil, 5}},
		{"higher sequence, bad trailer magic", [4][]byte{func() []byte { b := encodeCopy(g, 10, base.Encode(), cfg.SlotCount, LogHead{}); b[102] ^= 1; return b }(), good(g, 7), good(g, 7), good(g, 7)}, want{7, nil, 5}},
		{"higher sequence, nonzero padding", [4][]byte{func() []byte { b := good(g, 10); b[511] = 1; return b }(), good(g, 7), good(g, 7), good(g, 7)}, want{7, nil, 5}},
		{"higher sequence, formatted 0", [4][]byte{encodeCopy(g, 10, base.Encode(), 0, LogHead{}), good(g, 7), good(g, 7), good(g, 7)}, want{7, nil, 5}},
		{"higher sequence, formatted beyond the ring", [4][]byte{encodeCopy(g, 10, base.Encode(), cfg.SlotCount+1, LogHead{}), good(g, 7), good(g, 7), good(g, 7)}, want{7, nil, 5}},
		{"higher sequence, head header of another op", [4][]byte{encodeCopy(g, 10, base.Encode(), 1, LogHead{Op: 5, Header: head.Header}), good(g, 7), good(g, 7), good(g, 7)}, want{7, nil, 5}},
		{"higher sequence, reserved nonzero", [4][]byte{withRecord(g, 10, func(b []byte) { b[6] = 1 }), good(g, 7), good(g, 7), good(g, 7)}, want{7, nil, 5}},
		{"higher sequence, parent_checksum nonzero", [4][]byte{withRecord(g, 10, func(b []byte) { b[16] = 1 }), good(g, 7), good(g, 7), good(g, 7)}, want{7, nil, 5}},
		{"higher sequence, log_view above view", [4][]byte{withRecord(g, 10, func(b []byte) { b[28+22] = 200 }), good(g, 7), good(g, 7), good(g, 7)}, want{7, nil, 5}},
		{"a known head is fine", [4][]byte{encodeCopy(g, 8, other.Encode(), 2, head), good(g, 7), good(g, 7), good(g, 7)}, want{8, nil, 9}},
		{"an unknown head of any op is fine", [4][]byte{encodeCopy(g, 8, other.Encode(), 2, LogHead{Op: 77}), good(g, 7), good(g, 7), good(g, 7)}, want{8, nil, 9}},
		{"legacy 58-byte state", [4][]byte{encodeCopy(g, 8, other.Encode()[:wire.VsrStateLegacySize], 2, LogHead{}), good(g, 7), nil, nil}, want{8, nil, 9}},
		{"one copy far ahead", [4][]byte{good(g, 9), good(g, 7), good(g, 7), good(g, 7)}, want{err: ErrNoQuorum}},
		{"a single valid copy", [4][]byte{good(g, 7), make([]byte, 512), make([]byte, 512), make([]byte, 512)}, want{err: ErrNoQuorum}},
		{"no valid copy", [4][]byte{make([]byte, 512), make([]byte, 512), make([]byte, 512), make([]byte, 512)}, want{err: ErrNoQuorum}},
		{"another replica's copy", [4][]byte{good(g, 7), good(g, 7), good(g, 7), encodeCopy(g, 3, stateOf(journal.Config{Cluster: cfg.Cluster, Replica: 2, ReplicaCount: 3}, 1, 1, 1).Encode(), 1, LogHead{})}, want{err: ErrMismatch}},
		{"two states under one sequence", [4][]byte{good(g, 8), encodeCopy(g, 8, other.Encode(), cfg.SlotCount, LogHead{}), good(g, 7), good(g, 7)}, want{err: ErrSplitSequence}},
		{"two extents under one sequence", [4][]byte{good(g, 8), encodeCopy(g, 8, base.Encode(), 3, LogHead{}), good(g, 7), good(g, 7)}, want{err: ErrSplitSequence}},
	}
	for _, c := range cases {
		d, _ := formatted(t, cfg)
		for i, b := range c.copies {
			if b != nil {
				d.writeRaw(d.copySector(i), b)
			}
		}
		v, lv, err := DurableView(d.g, d.dev.PeekDurable)
		sb, _ := ReadSuperblock(d.g, d.dev.PeekDurable)
		switch {
		case c.want.err != nil && !errors.Is(err, c.want.err):
			t.Fatalf("%s: error %v, want %v", c.name, err, c.want.err)
		case c.want.err == nil && (err != nil || sb.Sequence != c.want.seq || v != c.want.view || lv > v):
			t.Fatalf("%s: sequence %d view %d/%d %v, want sequence %d view %d", c.name, sb.Sequence, v, lv, err, c.want.seq, c.want.view)
		}
		compareState(t, d, c.name, d.dev.PeekDurable)
		crossRecover(t, d, c.name, d.dev.PeekDurable)
	}
}

// xxhOf is the wire record's trailer: the plain XXH3 of what precedes it.
func xxhOf(b []byte) uint64 { return xxh3.Hash(b) }

// TestSuperblockTieTakesTheHigherHead: copies of one sequence and state
// with two log heads: the higher head is the recovery's (format 10.3 step
// 4), as journal.Open takes it.
func TestSuperblockTieTakesTheHigherHead(t *testing.T) {
	cfg := testConfig()
	d, j := formatted(t, cfg)
	frames := map[uint64][]byte{}
	for op := uint64(1); op <= 4; op++ {
		frames[op] = prepareFrame(cfg.Cluster, op, 0, 100)
		d.appendWait(j, frames[op])
	}
	s := stateOf(cfg, 2, 2, 1)
	var h3, h4 LogHead
	h3.Op, h4.Op = 3, 4
	copy(h3.Header[:], frames[3])
	copy(h4.Header[:], frames[4])
	d.writeRaw(d.copySector(0), encodeCopy(d.g, 5, s.Encode(), cfg.SlotCount, h3))
	d.writeRaw(d.copySector(1), encodeCopy(d.g, 5, s.Encode(), cfg.SlotCount, h4))
	d.writeRaw(d.copySector(2), encodeCopy(d.g, 5, s.Encode(), cfg.SlotCount, h3))
	sb, err := ReadSuperblock(d.g, d.dev.PeekDurable)
	if err != nil || sb.Head != h4 || sb.Sequence != 5 {
		t.Fatalf("tie: head op %d sequence %d, %v; want op 4, sequence 5", sb.Head.Op, sb.Sequence, err)
	}
	crossRecover(t, d, "tie", d.dev.PeekDurable)
}

// TestRecoverRestoresTheHead: the superblock's log head is restored into a
// slot that no longer shows it, and the op is then known by header (format
// 12 step 5, DEVIATIONS 50).
func TestRecoverRestoresTheHead(t *testing.T) {
	cfg := testConfig()
	d, j := formatted(t, cfg)
	for op := uint64(1); op <= 5; op++ {
		d.appendWait(j, prepareFrame(cfg.Cluster, op, 0, 100))
	}
	d.writeState(j, stateOf(cfg, 1, 1, 3))
	sb, err := ReadSuperblock(d.g, d.dev.PeekDurable)
	if err != nil || sb.Head.Op != 5 || !sb.Head.Known() {
		t.Fatalf("the state's log head: %+v, %v", sb.Head, err)
	}
	d.dev.InjectLatent(d.headerSector(5))
	d.dev.InjectCorruption(d.prepareSector(5))
	peek := withFaults(d.dev, d.dev.PeekDurable)
	r, err := Recover(d.g, peek)
	if err != nil {
		t.Fatal(err)
	}
	if s := r.Slot(5); s.Class != ClassFaulty || !s.HeadRestored || r.Knowledge(5) != HeaderOnly || r.HeaderOpMax != 5 {
		t.Fatalf("slot 5 %s restored %v, op 5 %s, header op max %d", s.Class, s.HeadRestored, r.Knowledge(5), r.HeaderOpMax)
	}
	crossRecover(t, d, "restored head", peek)

	// A head beyond the formatted extent is one the journal panics on.
	d, _ = formatted(t, cfg)
	for i := range 4 {
		d.writeRaw(d.copySector(i), encodeCopy(d.g, 2, stateOf(cfg, 1, 1, 0).Encode(), 2, sb.Head))
	}
	if _, err := Recover(d.g, d.dev.PeekDurable); !errors.Is(err, ErrHeadUnformatted) {
		t.Fatalf("a head in an unformatted slot: %v", err)
	}
	if res := d.open(); res.panicked == nil {
		t.Fatalf("journal.Open of a head in an unformatted slot: %v, no panic", res.err)
	}
}

// TestFormattedExtent: a restart reads only the formatted slots and calls
// the rest Empty; one slot read alone is read from its bytes (format 11).
func TestFormattedExtent(t *testing.T) {
	cfg := testConfig()
	cfg.FormatExtentSlots = 2
	d, j := formatted(t, cfg)
	if s := slotOf(t, d, 5); s.Class != ClassFaulty {
		t.Fatalf("an unformatted slot's garbage, read alone: %s", s.Class)
	}
	r, err := Recover(d.g, d.dev.PeekDurable)
	if err != nil || len(r.Slots) != 2 || r.Slot(5).Class != ClassEmpty || r.Knowledge(5) != Nackable {
		t.Fatalf("recovery of a 2-slot extent: %v slots, slot 5 %s, %v", len(r.Slots), r.Slot(5).Class, err)
	}
	j = crossRecover(t, d, "extent", d.dev.PeekDurable).j
	// The journal formats slot 5's extent before it writes there.
	frame := prepareFrame(cfg.Cluster, 5, 0, 100)
	d.appendWait(j, frame)
	holds(t, d, 5, identityOf(frame), true, true)
	if sb, err := ReadSuperblock(d.g, d.dev.PeekDurable); err != nil || sb.Formatted != 6 {
		t.Fatalf("formatted after the append: %d, %v", sb.Formatted, err)
	}
}

// TestUnackedHeaderInAConflict: an unacked header copy over a prepare of
// the same op with another identity (a replacement whose header write
// never landed) is a Conflict: the op is plainly Nackable, its header not
// vouched for (format 8, rule 8).
func TestUnackedHeaderInAConflict(t *testing.T) {
	cfg := testConfig()
	d, j := formatted(t, cfg)
	a, b := prepareFrame(cfg.Cluster, 2, 0, 300), prepareFrame(cfg.Cluster, 2, 1, 300)
	d.appendWait(j, prepareFrame(cfg.Cluster, 1, 0, 100))
	d.writeRaw(d.headerSector(2), sealRecord(a[:wire.HeaderSize], seedSealUnacked, cfg.SectorSize))
	d.writeRaw(d.prepareSector(2), sealRecord(b, seedSeal, d.g.padded(len(b)+sealBytes)))
	expectSlot(t, slotOf(t, d, 2), ClassConflict, 2, false, false)
	r, err := Recover(d.g, d.dev.PeekDurable)
	if err != nil || r.Knowledge(2) != Nackable {
		t.Fatalf("op 2 under an unacked header in a conflict: %v, %v", r.Knowledge(2), err)
	}
	crossRecover(t, d, "unacked conflict", d.dev.PeekDurable)
}

// TestNoHeadRestoreAtOrBelowTheCheckpoint: a log head the durable
// checkpoint covers is not restored, even into a slot that lost it: the
// ring may have reused its slot (format 12, step 5). Above the checkpoint
// it is, even once the ring wrapped.
func TestNoHeadRestoreAtOrBelowTheCheckpoint(t *testing.T) {
	cfg := testConfig()
	S := cfg.SlotCount
	for _, covered := range []bool{true, false} {
		d, j := formatted(t, cfg)
		for op := uint64(1); op <= S+2; op++ {
			d.appendWait(j, prepareFrame(cfg.Cluster, op, 0, 100))
		}
		head := S + 2
		st := stateOf(cfg, 1, 1, 3)
		if covered {
			st.CheckpointOp = head
		} else {
			st.CheckpointOp = 2
		}
		d.writeState(j, st) // records head op S+2
		slot := head % S
		d.dev.InjectLatent(d.headerSector(slot))
		d.dev.InjectLatent(d.prepareSector(slot))
		peek := withFaults(d.dev, d.dev.PeekDurable)
		r, err := Recover(d.g, peek)
		if err != nil || r.Superblock.Head.Op != head || r.HeadOp != head || r.Slot(slot).HeadRestored == covered {
			t.Fatalf("covered %v: head %d, disk head %d, slot %d restored %v, %v", covered, r.Superblock.Head.Op, r.HeadOp, slot, r.Slot(slot).HeadRestored, err)
		}
		crossRecover(t, d, fmt.Sprintf("wrapped, covered %v", covered), peek)
	}
}
