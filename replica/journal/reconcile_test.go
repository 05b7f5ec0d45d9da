package journal

import (
	"bytes"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// reconcileWait runs Reconcile and the loop until its done.
func reconcileWait(e *env, j *Journal, head uint64, canonical []wire.Header) {
	e.t.Helper()
	fired := 0
	j.Reconcile(head, canonical, func() { fired++ })
	if fired != 0 {
		e.t.Fatal("Reconcile ran done inside the call")
	}
	e.drain()
	if fired != 1 {
		e.t.Fatalf("Reconcile's done ran %d times", fired)
	}
}

// TestReconcile: after a view adopts a log with head 3 whose op 2 differs
// from ours, ops 4 and 5 are durably forgotten (nackable after a restart)
// and op 2 is known by its canonical header alone; op 1 and op 3 stay held.
func TestReconcile(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 11})
	e.format()
	j, _ := e.mustOpen()
	frames := map[uint64][]byte{}
	for op := uint64(1); op <= 5; op++ {
		frames[op] = prepareFrame(cfg, op, 0, 100)
		appendWait(e, j, frames[op])
	}
	other2 := prepareFrame(cfg, 2, 1, 300)
	canonical := []wire.Header{*wire.HeaderOf(frames[3]), *wire.HeaderOf(other2), *wire.HeaderOf(frames[1])}
	reconcileWait(e, j, 3, canonical)

	check := func(what string, k func(uint64) Knowledge, frame func(uint64) ([]byte, bool), header func(uint64) (wire.Header, bool)) {
		t.Helper()
		for _, op := range []uint64{1, 3} {
			if f, ok := frame(op); !ok || !bytes.Equal(f, frames[op]) || k(op) != Held {
				t.Fatalf("%s: op %d not held (%s)", what, op, k(op))
			}
		}
		// Our op 2 was another prepare: the canonical one was never
		// acknowledged here, so it is known by header and nackable.
		if _, ok := frame(2); ok || k(2) != HeaderUnacked {
			t.Fatalf("%s: op 2 is %s", what, k(2))
		}
		if h, ok := header(2); !ok || h.Checksum() != identityOf(other2) {
			t.Fatalf("%s: op 2's header is not the canonical one", what)
		}
		for _, op := range []uint64{4, 5} {
			if _, ok := frame(op); ok || k(op) != Nackable {
				t.Fatalf("%s: op %d is %s after being forgotten", what, op, k(op))
			}
		}
	}
	check("in memory", j.Knowledge, j.Frame, j.Header)
	j2, r := e.mustOpen()
	check("after a restart", r.Knowledge, j2.Frame, j2.Header)

	// Repairing op 2 with the canonical body makes it held again.
	appendWait(e, j2, other2)
	if f, ok := j2.Frame(2); !ok || !bytes.Equal(f, other2) || !j2.Durable(2) {
		t.Fatal("the repaired op 2 is not held")
	}
	j3, _ := e.mustOpen()
	if f, ok := j3.Frame(2); !ok || !bytes.Equal(f, other2) {
		t.Fatal("the repaired op 2 did not survive a restart")
	}
}

// TestReconcileBehindAnAppend: a reconcile write queues behind an append in
// flight to the same slot and lands after it.
func TestReconcileBehindAnAppend(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 12})
	e.format()
	j, _ := e.mustOpen()
	appendWait(e, j, prepareFrame(cfg, 1, 0, 50))
	fired := 0
	j.Append(prepareFrame(cfg, 2, 0, 50), func() { fired++ })
	reconcileWait(e, j, 1, nil)
	if fired != 1 {
		t.Fatal("the append's done did not run")
	}
	_, r := e.mustOpen()
	if k := r.Knowledge(2); k != Nackable {
		t.Fatalf("op 2 after reconcile to head 1: %s", k)
	}
}

// TestReconcileWaitsForAHeldAppend: a canonical op the journal holds only
// because its append is in flight (a new primary's repair of an op it then
// adopts) is durable before the reconcile's done runs, since the caller
// persists the new log_view next: a crash right after the done, under
// every crash mode, finds the op held. (VOPR seeds 11918477101899531798
// and 11918477101899531114: a log_view whose log was shorter than the
// adopted one after such a crash dropped a committed op.)
func TestReconcileWaitsForAHeldAppend(t *testing.T) {
	for _, mode := range crashModes {
		cfg := testConfig()
		e := newEnv(t, cfg, envOptions{seed: 13, crash: mode})
		e.format()
		j, _ := e.mustOpen()
		appendWait(e, j, prepareFrame(cfg, 1, 0, 50))
		f2 := prepareFrame(cfg, 2, 0, 50)
		j.Append(f2, func() {})
		reconciled := false
		j.Reconcile(2, []wire.Header{*wire.HeaderOf(f2)}, func() { reconciled = true })
		for !reconciled && e.loop.Step() {
		}
		if !reconciled {
			t.Fatalf("%v: the reconcile never finished", mode)
		}
		e.crash()
		_, r := e.mustOpen()
		if k := r.Knowledge(2); k != Held {
			t.Fatalf("%v: op 2 after a crash right after the reconcile to head 2: %s, want held", mode, k)
		}
	}
}

// TestReconcileBeyondThePool: a reconcile that records more canonical
// headers than the pool of write records holds (a replica that restarted
// with a hole in most of its slots) queues them all, on records beyond the
// pool, and ends with every header durable. (VOPR long run
// 11400220681770072258: "Reconcile needs more than AppendsMax = 280
// records".)
func TestReconcileBeyondThePool(t *testing.T) {
	cfg := testConfig()
	cfg.AppendsMax, cfg.IOsMax = 2, 4
	e := newEnv(t, cfg, envOptions{seed: 14})
	e.format()
	j, _ := e.mustOpen()
	var canonical []wire.Header
	for op := uint64(7); op >= 1; op-- {
		canonical = append(canonical, *wire.HeaderOf(prepareFrame(cfg, op, 0, 60)))
	}
	reconcileWait(e, j, 7, canonical)
	j.checkInvariants()
	_, r := e.mustOpen()
	for op := uint64(1); op <= 7; op++ {
		if k := r.Knowledge(op); k != HeaderUnacked {
			t.Fatalf("op %d after the reconcile: %s, want its canonical header (never acknowledged here)", op, k)
		}
	}
}

// TestReconcileCrash: a crash at any point of a reconcile (under every
// crash mode) leaves op 1 held; once the reconcile's done has run, op 3 is
// nackable and op 2 known by its canonical header (never acknowledged
// here), never held as before.
func TestReconcileCrash(t *testing.T) {
	cfg := testConfig()
	for cut := 1; cut < 40; cut++ {
		for _, mode := range crashModes {
			e := newEnv(t, cfg, envOptions{seed: uint64(cut), crash: mode})
			e.format()
			j, _ := e.mustOpen()
			for op := uint64(1); op <= 3; op++ {
				appendWait(e, j, prepareFrame(cfg, op, 0, 80))
			}
			other2 := prepareFrame(cfg, 2, 1, 80)
			fired := false
			j.Reconcile(2, []wire.Header{*wire.HeaderOf(other2)}, func() { fired = true })
			for i := 0; i < cut && e.loop.Step(); i++ {
			}
			e.crash()
			_, r := e.mustOpen()
			if k := r.Knowledge(1); k != Held {
				t.Fatalf("cut %d %s: op 1 is %s", cut, mode, k)
			}
			if !fired {
				continue
			}
			if k := r.Knowledge(2); k != HeaderUnacked {
				t.Fatalf("cut %d %s: op 2 is %s after the reconcile finished", cut, mode, k)
			}
			if k := r.Knowledge(3); k != Nackable {
				t.Fatalf("cut %d %s: op 3 is %s after the reconcile finished", cut, mode, k)
			}
		}
	}
}

// TestReconcileUnackedHeaders: a header Reconcile records over a slot that
// shows no acknowledgement of it is HeaderUnacked (known, nackable); over
// a slot whose header copy records that very prepare (maybe acknowledged,
// body lost) it stays HeaderOnly; an append of the op rewrites the record
// as an ordinary header copy before its done, and only then is it Durable.
func TestReconcileUnackedHeaders(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 13})
	e.format()
	j, _ := e.mustOpen()
	frames := map[uint64][]byte{}
	for op := uint64(1); op <= 3; op++ {
		frames[op] = prepareFrame(cfg, op, 0, 64)
	}
	appendWait(e, j, frames[1])
	appendWait(e, j, frames[2])
	e.dev.InjectCorruption(e.geo.prepareSector(2)) // op 2 was acknowledged; its body rots
	j, r := e.mustOpen()
	if k := r.Knowledge(2); k != HeaderOnly {
		t.Fatalf("op 2 with a rotten body: %s", k)
	}
	// A StartView gives ops 2 and 3: op 3 was never here at all.
	reconcileWait(e, j, 3, []wire.Header{*wire.HeaderOf(frames[3]), *wire.HeaderOf(frames[2])})
	for _, when := range []string{"in memory", "after a restart"} {
		k := j.Knowledge
		if when != "in memory" {
			j, r = e.mustOpen()
			k = r.Knowledge
			if !r.Slot(3).Header.Unacked || r.Slot(2).Header.Unacked {
				t.Fatalf("%s: unacked flags op 2 %v op 3 %v", when, r.Slot(2).Header.Unacked, r.Slot(3).Header.Unacked)
			}
		}
		if got := k(2); got != HeaderOnly {
			t.Fatalf("%s: op 2 (maybe acknowledged) is %s", when, got)
		}
		if got := k(3); got != HeaderUnacked {
			t.Fatalf("%s: op 3 (never acknowledged) is %s", when, got)
		}
		if h, ok := j.Header(3); !ok || h.Checksum() != identityOf(frames[3]) {
			t.Fatalf("%s: op 3's header is not the canonical one", when)
		}
	}
	// Repairing op 3 acknowledges nothing until its done: the record under
	// it is rewritten first.
	fired := false
	j.Append(frames[3], func() { fired = true })
	for !fired && e.loop.Step() {
		if !fired && j.Durable(3) {
			t.Fatal("op 3 durable before its append's done")
		}
	}
	if !fired || !j.Durable(3) {
		t.Fatal("op 3's append did not finish")
	}
	_, r = e.mustOpen()
	if r.Slot(3).Class != ClassClean || !r.Slot(3).HeaderWritten || r.Slot(3).Header.Unacked {
		t.Fatalf("op 3 after its append: %+v", r.Slot(3))
	}
}

// TestReconcileUnackedAppendCrash: a crash at any point of the append that
// repairs an op recorded as unacknowledged never leaves it nackable once
// its done ran (held, its header written); before that it is still known
// unacknowledged, held, or unknown (a header write that landed or tore
// looks maybe acknowledged: conservative), never plain Nackable.
func TestReconcileUnackedAppendCrash(t *testing.T) {
	cfg := testConfig()
	for cut := 0; cut < 20; cut++ {
		for _, mode := range crashModes {
			e := newEnv(t, cfg, envOptions{seed: uint64(100 + cut), crash: mode})
			e.format()
			j, _ := e.mustOpen()
			f1, f2 := prepareFrame(cfg, 1, 0, 64), prepareFrame(cfg, 2, 0, 64)
			appendWait(e, j, f1)
			reconcileWait(e, j, 2, []wire.Header{*wire.HeaderOf(f2)})
			fired := false
			j.Append(f2, func() { fired = true })
			for i := 0; i < cut && e.loop.Step(); i++ {
			}
			e.crash()
			_, r := e.mustOpen()
			k := r.Knowledge(2)
			switch {
			case fired && (k != Held || !r.Slot(2).HeaderWritten):
				t.Fatalf("cut %d %s: op 2 after its done: %s %+v", cut, mode, k, r.Slot(2))
			case !fired && k != HeaderUnacked && k != Held && k != Unknown:
				t.Fatalf("cut %d %s: op 2 before its done: %s", cut, mode, k)
			}
		}
	}
}

// TestRecoveryRestoresTheLogHead: a backup adopts a log whose head, op 4,
// it knows by header alone (a StartView's suffix; ops 2 and 3 unknown), and
// persists log_view 1. The head's header sector then rots. A restart must
// still know op 4 under log_view 1, by header, possibly acknowledged: a
// vote of log_view 1 with head op 1 would let a merge drop ops the view
// committed (VOPR seed 9342398579007997777). Without the superblock's
// record of the head, the recovery ends at op 1.
func TestRecoveryRestoresTheLogHead(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 12})
	e.format()
	j, _ := e.mustOpen()
	f1 := prepareFrame(cfg, 1, 0, 100)
	appendWait(e, j, f1)
	f4 := prepareFrame(cfg, 4, 1, 100)
	reconcileWait(e, j, 4, []wire.Header{*wire.HeaderOf(f4)})
	state := wire.VsrState{Cluster: cfg.Cluster, ReplicaID: cfg.Replica, ReplicaCount: cfg.ReplicaCount, View: 1, LogView: 1}
	done := false
	j.WriteState(state, func() { done = true })
	e.drain()
	if !done || j.Head().Op != 4 {
		t.Fatalf("state written %v, head %d", done, j.Head().Op)
	}
	e.dev.InjectLatent(e.geo.headerSector(4 % cfg.SlotCount))

	j2, r := e.mustOpen()
	if r.HeadOp != 4 || r.Head.Op != 4 || !r.Slot(4%cfg.SlotCount).HeadRestored {
		t.Fatalf("recovered head op %d (superblock head %d), slot %+v", r.HeadOp, r.Head.Op, r.Slot(4%cfg.SlotCount))
	}
	for _, k := range []Knowledge{r.Knowledge(4), j2.Knowledge(4)} {
		if k != HeaderOnly {
			t.Fatalf("op 4 is %s, want %s", k, HeaderOnly)
		}
	}
	if h, ok := j2.Header(4); !ok || h.Checksum() != identityOf(f4) {
		t.Fatal("op 4's header is not the adopted one")
	}
	if k := r.Knowledge(2); k != Nackable {
		t.Fatalf("op 2, never written here, is %s", k)
	}
	// Open wrote the header back: a second restart finds it in the slot.
	_, r3 := e.mustOpen()
	if s := r3.Slot(4 % cfg.SlotCount); s.HeadRestored || s.Class != ClassCorrupt || s.Op != 4 {
		t.Fatalf("after a second restart, slot %+v", s)
	}
}
