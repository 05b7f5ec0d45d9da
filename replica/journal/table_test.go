package journal

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Scripted contents for one slot's two copies, written raw onto a formatted
// device, then classified by Open.

// content writes one copy of slot: the header sector or the prepare chunk.
type content struct {
	name  string
	write func(e *env, slot uint64, header bool)
}

func (e *env) copySector(slot uint64, header bool) uint64 {
	if header {
		return e.geo.headerSector(slot)
	}
	return e.geo.prepareSector(slot)
}

// recordSectors returns record, sealed and padded to whole sectors.
func (e *env) recordSectors(record []byte) []byte {
	buf := make([]byte, e.geo.paddedBytes(len(record)+sealBytes))
	putRecord(buf, record)
	return buf
}

func markerContent() content {
	return content{"marker", func(e *env, slot uint64, header bool) {
		kind := markerKindPrepare
		if header {
			kind = markerKindHeader
		}
		var h wire.Header
		encodeMarker(&h, e.cfg, kind, slot)
		e.writeRaw(e.copySector(slot, header), e.recordSectors(h[:]))
	}}
}

// frameContent stores frame: its header alone in a header sector, the whole
// frame in a prepare chunk.
func frameContent(name string, frame []byte) content {
	return content{name, func(e *env, slot uint64, header bool) {
		if header {
			e.writeRaw(e.copySector(slot, true), e.recordSectors(frame[:wire.HeaderSize]))
		} else {
			e.writeRaw(e.copySector(slot, false), e.recordSectors(frame))
		}
	}}
}

// damageContents are the ways a copy can be damaged; each must read as
// SectorDamaged in either kind of copy. frame is a valid prepare of the slot.
func damageContents(cfg Config, slot uint64, frame []byte) []content {
	other := (slot + 1) % cfg.SlotCount
	otherOp := other
	if otherOp == 0 {
		otherOp = cfg.SlotCount
	}
	return []content{
		{"garbage", func(e *env, slot uint64, header bool) {
			b := make([]byte, e.cfg.SectorSize)
			for i := range b {
				b[i] = byte(i*7 + 3)
			}
			e.writeRaw(e.copySector(slot, header), b)
		}},
		{"zeros", func(e *env, slot uint64, header bool) {
			e.writeRaw(e.copySector(slot, header), make([]byte, e.cfg.SectorSize))
		}},
		{"latent", func(e *env, slot uint64, header bool) {
			frameContent("", frame).write(e, slot, header)
			e.dev.InjectLatent(e.copySector(slot, header))
		}},
		{"corrupt", func(e *env, slot uint64, header bool) {
			frameContent("", frame).write(e, slot, header)
			e.dev.InjectCorruption(e.copySector(slot, header))
		}},
		{"corrupt-tail", func(e *env, slot uint64, header bool) {
			// Damage in the last sector of a multi-sector prepare.
			frameContent("", frame).write(e, slot, header)
			n := uint64(e.geo.paddedBytes(len(frame)+sealBytes) / e.cfg.SectorSize)
			if header {
				n = 1
			}
			e.dev.InjectCorruption(e.copySector(slot, header) + n - 1)
		}},
		{"view flipped", func(e *env, slot uint64, header bool) {
			// The view is outside the identity: only the seal catches it.
			f := bytes.Clone(frame)
			wire.HeaderOf(f).SetView(wire.HeaderOf(f).View() ^ 4)
			buf := make([]byte, e.geo.paddedBytes(len(f)+sealBytes))
			putRecord(buf, frame)
			copy(buf, f[:wire.HeaderSize])
			if header {
				buf = make([]byte, e.cfg.SectorSize)
				putRecord(buf, frame[:wire.HeaderSize])
				copy(buf, f[:wire.HeaderSize])
			}
			e.writeRaw(e.copySector(slot, header), buf)
		}},
		{"padding", func(e *env, slot uint64, header bool) {
			rec := frame
			if header {
				rec = frame[:wire.HeaderSize]
			}
			buf := e.recordSectors(rec)
			buf[len(buf)-1] = 1
			e.writeRaw(e.copySector(slot, header), buf)
		}},
		{"unsealed record", func(e *env, slot uint64, header bool) {
			rec := frame
			if header {
				rec = frame[:wire.HeaderSize]
			}
			buf := make([]byte, e.geo.paddedBytes(len(rec)+sealBytes))
			copy(buf, rec)
			e.writeRaw(e.copySector(slot, header), buf)
		}},
		{"other slot's marker", func(e *env, slot uint64, header bool) {
			markerContent().write(e, other, header)
			// Copy the other slot's marker here (as a misdirected write
			// would land it).
			e.writeRaw(e.copySector(slot, header), e.readRaw(e.copySector(other, header), 1))
		}},
		{"other kind's marker", func(e *env, slot uint64, header bool) {
			kind := markerKindHeader
			if header {
				kind = markerKindPrepare
			}
			var h wire.Header
			encodeMarker(&h, e.cfg, kind, slot)
			e.writeRaw(e.copySector(slot, header), e.recordSectors(h[:]))
		}},
		{"other slot's prepare", func(e *env, slot uint64, header bool) {
			frameContent("", prepareFrame(cfg, otherOp, 0, 100)).write(e, slot, header)
		}},
		{"torn", func(e *env, slot uint64, header bool) {
			// Half new, half old: the first atoms of a valid record over a
			// marker.
			markerContent().write(e, slot, header)
			old := e.readRaw(e.copySector(slot, header), 1)
			rec := frame
			if header {
				rec = frame[:wire.HeaderSize]
			}
			buf := e.recordSectors(rec)
			copy(buf[64:e.cfg.SectorSize], old[64:])
			e.writeRaw(e.copySector(slot, header), buf)
		}},
	}
}

// cellCase is one cell of the classification table.
type cellCase struct {
	name          string
	header, chunk content
	class         Class
	op            uint64 // SlotReport.Op
	headerWritten bool
	repaired      bool
	held          []byte // the frame Open must hold in memory, or nil
	headerOnly    []byte // the frame whose header Header must return, or nil
	// knowledge of ops of the slot: laps 0..3 (op = slot + lap*S)
	knowledge [4]Knowledge
}

// TestClassificationTable scripts every cell of the table (and, for the
// damaged rows and columns, every kind of damage) and checks the class, the
// op, what is held, and the Knowledge of ops of the slot on four laps.
func TestClassificationTable(t *testing.T) {
	cfg := testConfig()
	const slot = 3
	S := cfg.SlotCount
	lap := func(k uint64) uint64 { return slot + k*S }
	// Ops of the slot: h on lap 1; older on lap 0, newer on lap 2.
	h := prepareFrame(cfg, lap(1), 0, 1500) // multi-sector
	hOther := prepareFrame(cfg, lap(1), 1, 20)
	older := prepareFrame(cfg, lap(0), 0, 100)
	newer := prepareFrame(cfg, lap(2), 0, 3000)
	U, H, O, N := Unknown, Held, HeaderOnly, Nackable

	E := markerContent()
	V := func(name string, f []byte) content { return frameContent(name, f) }
	var cases []cellCase
	// Row: header copy holds the empty marker.
	cases = append(cases,
		cellCase{name: "E/E", header: E, chunk: E, class: ClassEmpty, knowledge: [4]Knowledge{N, N, N, N}},
		cellCase{name: "E/V", header: E, chunk: V("h", h), class: ClassClean, op: lap(1), held: h, knowledge: [4]Knowledge{N, H, N, N}},
	)
	for _, d := range damageContents(cfg, slot, h) {
		// A damaged chunk under a stale header copy proves nothing: the
		// header write of the chunk's op may have been misdirected.
		cases = append(cases, cellCase{name: "E/X " + d.name, header: E, chunk: d, class: ClassTorn, knowledge: [4]Knowledge{U, U, U, U}})
	}
	// Row: header copy holds a valid header h (lap 1).
	cases = append(cases,
		cellCase{name: "V/E", header: V("h", h), chunk: E, class: ClassCorrupt, op: lap(1), headerOnly: h, knowledge: [4]Knowledge{U, O, N, N}},
		cellCase{name: "V/V same", header: V("h", h), chunk: V("h", h), class: ClassClean, op: lap(1), headerWritten: true, held: h, knowledge: [4]Knowledge{U, H, N, N}},
		cellCase{name: "V/V newer", header: V("h", h), chunk: V("newer", newer), class: ClassClean, op: lap(2), held: newer, headerOnly: h, knowledge: [4]Knowledge{U, O, H, N}},
		cellCase{name: "V/V older", header: V("h", h), chunk: V("older", older), class: ClassCorrupt, op: lap(1), headerOnly: h, knowledge: [4]Knowledge{U, O, N, N}},
		cellCase{name: "V/V conflict", header: V("h", h), chunk: V("h'", hOther), class: ClassConflict, op: lap(1), knowledge: [4]Knowledge{U, U, N, N}},
	)
	for _, d := range damageContents(cfg, slot, h) {
		// h is the head (nothing newer anywhere): the window's op.
		cases = append(cases, cellCase{name: "V/X " + d.name, header: V("h", h), chunk: d, class: ClassCorrupt, op: lap(1), headerOnly: h, knowledge: [4]Knowledge{U, O, U, U}})
	}
	// Row: header copy damaged.
	for _, d := range damageContents(cfg, slot, h) {
		cases = append(cases,
			cellCase{name: "X/E " + d.name, header: d, chunk: E, class: ClassFaulty, knowledge: [4]Knowledge{U, U, U, U}},
			// The header copy is rewritten by Open: then as V/V same.
			cellCase{name: "X/V " + d.name, header: d, chunk: V("h", h), class: ClassClean, op: lap(1), headerWritten: true, repaired: true, held: h, knowledge: [4]Knowledge{U, H, N, N}},
		)
		for _, d2 := range damageContents(cfg, slot, h) {
			cases = append(cases, cellCase{name: "X/X " + d.name + "/" + d2.name, header: d, chunk: d2, class: ClassFaulty, knowledge: [4]Knowledge{U, U, U, U}})
		}
	}

	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, cfg, envOptions{seed: uint64(100 + i)})
			e.format()
			// Order matters for the damage that injects a fault and then
			// writes: write each copy's content in turn.
			c.chunk.write(e, slot, false)
			c.header.write(e, slot, true)
			j, r := e.mustOpen()
			s := r.Slot(slot)
			if s.Class != c.class || s.Op != c.op || s.HeaderWritten != c.headerWritten || s.HeaderRepaired != c.repaired {
				t.Fatalf("slot %+v, want class %s op %d written %v repaired %v", s, c.class, c.op, c.headerWritten, c.repaired)
			}
			if c.repaired {
				// The rewritten header copy is durable and valid.
				_, r2 := e.mustOpen()
				if s2 := r2.Slot(slot); s2.Class != ClassClean || !s2.HeaderWritten || s2.HeaderRepaired || s2.Header.State != SectorValid {
					t.Fatalf("after the rewrite: %+v", s2)
				}
			}
			for k := range uint64(4) {
				op := lap(k)
				if got := r.Knowledge(op); got != c.knowledge[k] {
					t.Fatalf("recovery knowledge of op %d: %s, want %s", op, got, c.knowledge[k])
				}
				if got := j.Knowledge(op); got != c.knowledge[k] {
					t.Fatalf("journal knowledge of op %d: %s, want %s", op, got, c.knowledge[k])
				}
			}
			if c.held != nil {
				got, ok := j.Frame(opOf(wire.HeaderOf(c.held)))
				if !ok || !bytes.Equal(got, c.held) {
					t.Fatal("held frame differs")
				}
			}
			if c.headerOnly != nil {
				got, ok := j.Header(opOf(wire.HeaderOf(c.headerOnly)))
				if !ok || !bytes.Equal(got[:], c.headerOnly[:wire.HeaderSize]) {
					t.Fatal("header-only header differs")
				}
			}
			// Every other slot is untouched.
			for i, o := range r.Slots {
				if i != slot && o.Class != ClassEmpty {
					t.Fatalf("slot %d: %+v", i, o)
				}
			}
		})
	}
}

// TestTornBelowWindow: a damaged prepare under a header older than the
// window's op for the slot is a torn write of a newer op: Torn(h), h still
// header-only, the window's op Unknown (the stale header copy may be a
// misdirected header write's, so it proves no newer op was never
// acknowledged).
func TestTornBelowWindow(t *testing.T) {
	cfg := testConfig()
	S := cfg.SlotCount
	e := newEnv(t, cfg, envOptions{seed: 200})
	e.format()
	j, _ := e.mustOpen()
	// Ops 1..S+4 and S+6 appended (appends complete in any order); slot 5
	// gets a torn prepare of op S+5 under the header of op 5.
	for op := uint64(1); op <= S+4; op++ {
		appendWait(e, j, prepareFrame(cfg, op, 0, 10))
	}
	appendWait(e, j, prepareFrame(cfg, S+6, 0, 10))
	torn := e.recordSectors(prepareFrame(cfg, S+5, 0, 10))
	torn[100] ^= 0xff
	e.writeRaw(e.geo.prepareSector(5), torn)
	_, r := e.mustOpen()
	s := r.Slot(5)
	if r.HeadOp != S+6 || s.Class != ClassTorn || s.Op != 5 {
		t.Fatalf("head %d, slot %+v", r.HeadOp, s)
	}
	if r.Knowledge(S+5) != Unknown || r.Knowledge(5) != HeaderOnly {
		t.Fatalf("knowledge %s %s", r.Knowledge(S+5), r.Knowledge(5))
	}
	// Slot 4 holds an op of the window: a damaged prepare there is Corrupt.
	e.dev.InjectCorruption(e.geo.prepareSector(4))
	_, r = e.mustOpen()
	if s := r.Slot(4); s.Class != ClassCorrupt || s.Op != S+4 {
		t.Fatalf("slot 4 %+v", s)
	}
	if r.Knowledge(S+4) != HeaderOnly || r.Knowledge(2*S+4) != Unknown {
		t.Fatal("knowledge of slot 4")
	}
}

// TestHeaderRunReadFault: a latent error in one header sector fails the
// run it is read in; Open reads the run sector by sector and only that slot
// is damaged.
func TestHeaderRunReadFault(t *testing.T) {
	cfg := testConfig()
	cfg.SlotCount = 200 // several runs
	e := newEnv(t, cfg, envOptions{seed: 201})
	e.format()
	j, _ := e.mustOpen()
	for op := uint64(1); op <= 150; op++ {
		appendWait(e, j, prepareFrame(cfg, op, 0, 10))
	}
	for _, op := range []uint64{70, 130} {
		e.dev.InjectLatent(e.geo.headerSector(op))
	}
	_, r := e.mustOpen()
	for i, s := range r.Slots {
		op := uint64(i)
		switch {
		case op == 70 || op == 130:
			if s.Class != ClassClean || s.Header.State != SectorDamaged || !s.HeaderRepaired {
				t.Fatalf("slot %d: %+v", i, s)
			}
		case op >= 1 && op <= 150:
			if s.Class != ClassClean || !s.HeaderWritten {
				t.Fatalf("slot %d: %+v", i, s)
			}
		default:
			if s.Class != ClassEmpty {
				t.Fatalf("slot %d: %+v", i, s)
			}
		}
	}
	if got := fmt.Sprint(r.Knowledge(70), r.Knowledge(70+200), r.Knowledge(71+200)); got != "held nackable nackable" {
		t.Fatalf("knowledge %s", got)
	}
}

// TestAckHeadReachesATornSlotAboveTheHead: ops 1..3 are durable; slot 4's
// prepare chunk is damaged under an empty header copy. That reads as a torn
// write, but a misdirected header write of an acknowledged op 4 leaves the
// same image, so op 4 is Unknown and the head a vote may claim reaches it
// (a vote of head 3 would nack op 4). Slot 5, empty, stops it.
func TestAckHeadReachesATornSlotAboveTheHead(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 202})
	e.format()
	j, _ := e.mustOpen()
	for op := uint64(1); op <= 3; op++ {
		appendWait(e, j, prepareFrame(cfg, op, 0, 10))
	}
	e.dev.InjectCorruption(e.geo.prepareSector(4))
	_, r := e.mustOpen()
	if r.HeadOp != 3 || r.Slot(4).Class != ClassTorn || r.Knowledge(4) != Unknown {
		t.Fatalf("head %d, slot 4 %+v (%s)", r.HeadOp, r.Slot(4), r.Knowledge(4))
	}
	if got := r.AckHead(cfg.SlotCount); got != 4 {
		t.Fatalf("AckHead %d, want 4", got)
	}
}
