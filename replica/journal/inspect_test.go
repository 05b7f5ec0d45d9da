package journal

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestInspectDurable: the durability oracle's view of a journal. An append
// holds its prepare durably, as acknowledged, exactly when its done has run:
// not while its writes are in flight or only in the write cache, and a
// crash before done leaves nothing that InspectSlot calls acknowledged. The
// superblock state it reads is the one a restart opens with.
func TestInspectDurable(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 3})
	e.format()
	j, _ := e.mustOpen()
	durable := Peek(e.dev.PeekDurable)
	visible := Peek(e.dev.PeekVisible)

	// A fresh slot is empty, durably and visibly.
	if r := InspectSlot(cfg, 1, durable); r.Class != ClassEmpty {
		t.Fatalf("formatted slot 1: %+v", r)
	}

	// op 1, with a body spanning several sectors of its chunk.
	f1 := prepareFrame(cfg, 1, 0, 2000)
	id1 := identityOf(f1)
	done := false
	j.Append(f1, func() { done = true })
	var sawVisibleOnly bool
	for !done && e.loop.Step() {
		d := InspectSlot(cfg, 1, durable)
		if !done && d.HoldsAcknowledged(1, id1) {
			t.Fatalf("op 1 durable as acknowledged before its done: %+v", d)
		}
		if v := InspectSlot(cfg, 1, visible); v.Class == ClassClean && !d.HoldsAcknowledged(1, id1) {
			sawVisibleOnly = true // written, not yet synced
		}
	}
	if !done {
		t.Fatal("append of op 1 never finished")
	}
	if !sawVisibleOnly {
		t.Fatal("op 1's prepare was never visible before it was durable: the test saw no write cache")
	}
	if r := InspectSlot(cfg, 1, durable); !r.HoldsAcknowledged(1, id1) {
		t.Fatalf("op 1 after its done: %+v, want acknowledged with %s", r, id1)
	}
	if r := InspectSlot(cfg, 1, durable); r.HoldsAcknowledged(1, wire.U128{Lo: 1}) || r.HoldsAcknowledged(1+cfg.SlotCount, id1) {
		t.Fatalf("op 1 holds another identity or op: %+v", r)
	}

	// op 2 crashes mid-append: whatever survives, it is not acknowledged,
	// and InspectSlot agrees with what Open then finds.
	f2 := prepareFrame(cfg, 2, 0, 100)
	done = false
	j.Append(f2, func() { done = true })
	for i := 0; i < 2 && !done; i++ {
		e.loop.Step()
	}
	if done {
		t.Fatal("op 2's append finished in two steps; the test wants it in flight")
	}
	e.crash()
	before := InspectSlot(cfg, 2, durable)
	if before.HoldsAcknowledged(2, identityOf(f2)) {
		t.Fatalf("op 2 acknowledged after a crash before its done: %+v", before)
	}
	_, rec := e.mustOpen()
	if got := rec.Slot(2 % cfg.SlotCount); got.Class != before.Class || got.Op != before.Op {
		t.Fatalf("Open found slot 2 %s op %d, InspectSlot %s op %d", got.Class, got.Op, before.Class, before.Op)
	}

	// The superblock: what Open reads.
	state, err := InspectState(cfg, durable)
	if err != nil || state != rec.State {
		t.Fatalf("InspectState %+v, %v; Open found %+v", state, err, rec.State)
	}
}

// TestInspectStateFollowsWrites: InspectState always finds a state while a
// write is in flight, and the written one once the write's done has run.
func TestInspectStateFollowsWrites(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 4})
	e.format()
	j, _ := e.mustOpen()
	durable := Peek(e.dev.PeekDurable)
	want := j.State()
	want.View, want.LogView = 3, 2
	done := false
	j.WriteState(want, func() { done = true })
	for !done && e.loop.Step() {
		// A restart may open with the new state before done (once enough
		// copies are durable), which is safe; it must always open.
		if _, err := InspectState(cfg, durable); err != nil {
			t.Fatalf("InspectState mid-write: %v", err)
		}
	}
	s, err := InspectState(cfg, durable)
	if err != nil || s != want {
		t.Fatalf("after done: %+v, %v; want %+v", s, err, want)
	}
}
