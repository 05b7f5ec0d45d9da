package journal

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestWrittenOnly: a reconcile forgets ops 2 and 3, and its write of op 2's
// prepare chunk is misdirected, so the chunk keeps the old op 2 under the
// header copy's empty marker (VOPR seed 3449264250). After a restart the
// slot shows that op 2 alone was ever written there: WrittenOnly holds for
// its identity and not for another's. It fails wherever the slot shows
// another prepare of the op (a header copy of it), damage (a torn chunk),
// or a write in flight, and holds for a slot never written.
func TestWrittenOnly(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 12})
	e.format()
	j, _ := e.mustOpen()
	frames := map[uint64][]byte{}
	for op := uint64(1); op <= 4; op++ {
		frames[op] = prepareFrame(cfg, op, 0, 100)
		appendWait(e, j, frames[op])
	}
	reconcileWait(e, j, 1, []wire.Header{*wire.HeaderOf(frames[1])})
	e.writeRaw(e.geo.prepareSector(2), e.recordSectors(frames[2])) // the misdirected clear left it
	other2 := prepareFrame(cfg, 2, 1, 100)
	// Slot 3: another op 3's header copy landed, its prepare did not.
	other3 := prepareFrame(cfg, 3, 1, 100)
	e.writeRaw(e.geo.headerSector(3), e.recordSectors(other3[:wire.HeaderSize]))
	// Slot 4: its clear tore the chunk.
	e.writeRaw(e.geo.prepareSector(4), make([]byte, cfg.SectorSize))

	j, r := e.mustOpen()
	if s := r.Slot(2); s.Class != ClassClean || s.HeaderWritten || r.Knowledge(2) != Held {
		t.Fatalf("slot 2 is %+v (%s), want Clean(2) with the header copy's empty marker", s, r.Knowledge(2))
	}
	for _, c := range []struct {
		op    uint64
		frame []byte
		want  bool
	}{
		{2, frames[2], true}, {2, other2, false}, // the stale op 2 alone
		{3, frames[3], false}, {3, other3, true}, // another op 3's header copy over the cleared chunk
		{4, frames[4], false},                   // a damaged chunk proves nothing
		{5, prepareFrame(cfg, 5, 0, 100), true}, // never written
	} {
		if got := j.WrittenOnly(c.op, identityOf(c.frame)); got != c.want {
			t.Fatalf("WrittenOnly(%d, %s) = %v, want %v", c.op, identityOf(c.frame), got, c.want)
		}
	}
	// A write in flight to the slot may land: nothing is proven until it does.
	j.Append(other2, func() {})
	if j.WrittenOnly(2, identityOf(frames[2])) {
		t.Fatal("WrittenOnly holds with another op 2's append in flight")
	}
	e.drain()
	if j.WrittenOnly(2, identityOf(frames[2])) || !j.WrittenOnly(2, identityOf(other2)) {
		t.Fatal("after another op 2's append, WrittenOnly holds for the old one, or not for it")
	}
}
