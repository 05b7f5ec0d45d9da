package journal

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// writeStateWait writes state and runs the loop until its done ran.
func writeStateWait(e *env, j *Journal, state wire.VsrState) {
	e.t.Helper()
	done := false
	j.WriteState(state, func() { done = true })
	e.drain()
	if !done {
		e.t.Fatalf("the write of state %+v never completed", state)
	}
}

// TestReopenedHeadSkipsALeftover scripts what VOPR seed 3449264250 showed
// (DEVIATIONS.md 74): log_view 2 adopts view 1's op 1 and forgets its op 2,
// and the reconcile's write of op 2's prepare chunk is misdirected, so the
// slot keeps view 1's op 2 above the recorded head. After a restart the
// journal's head is the recorded op 1, not the leftover: a state write in
// the same log_view (a view change's) records op 1 again, never view 1's
// op 2, whose slot may then rot without Open writing its stale header back
// as possibly acknowledged. The slot still counts for HeadOp (nothing of it
// may be nacked on a shorter head). An op above the recorded head stamped
// in the log_view does raise the head, as before.
func TestReopenedHeadSkipsALeftover(t *testing.T) {
	cfg := testConfig()
	state := func(view, logView uint32) wire.VsrState {
		return wire.VsrState{Cluster: cfg.Cluster, ReplicaID: cfg.Replica, ReplicaCount: cfg.ReplicaCount, View: view, LogView: logView}
	}
	f1, f2 := prepareFrame(cfg, 1, 0, 100), prepareFrame(cfg, 2, 0, 100) // view 1
	// setUp leaves log_view 2 recorded with head op 1 and view 1's op 2 in
	// its slot, and returns the reopened journal.
	setUp := func(t *testing.T) (*env, *Journal, *Recovery) {
		e := newEnv(t, cfg, envOptions{seed: 74})
		e.format()
		j, _ := e.mustOpen()
		appendWait(e, j, f1)
		appendWait(e, j, f2)
		reconcileWait(e, j, 1, []wire.Header{*wire.HeaderOf(f1)})
		writeStateWait(e, j, state(2, 2))
		e.writeRaw(e.geo.prepareSector(2), e.recordSectors(f2)) // the misdirected clear left it
		j, r := e.mustOpen()
		if r.HeadOp != 2 || r.Head.Op != 1 || r.Knowledge(2) != Held {
			t.Fatalf("recovered HeadOp %d, recorded head %d, op 2 %s; want 2, 1, held", r.HeadOp, r.Head.Op, r.Knowledge(2))
		}
		return e, j, r
	}

	t.Run("leftover", func(t *testing.T) {
		e, j, _ := setUp(t)
		if h := j.Head(); h.Op != 1 || h.Header.Checksum() != identityOf(f1) {
			t.Fatalf("the reopened journal's head is op %d (%s), want the recorded op 1 (%s)", h.Op, h.Header.Checksum(), identityOf(f1))
		}
		writeStateWait(e, j, state(3, 2)) // a view change: same log_view
		_, r := e.mustOpen()
		if r.Head.Op != 1 || r.Head.Header.Checksum() != identityOf(f1) {
			t.Fatalf("log_view 2's recorded head became op %d (%s, view %d): the leftover", r.Head.Op, r.Head.Header.Checksum(), r.Head.Header.View())
		}
		// The leftover's chunk rots: nothing may write its header back.
		e.dev.InjectLatent(e.geo.prepareSector(2))
		_, r = e.mustOpen()
		if s := r.Slot(2); s.HeadRestored || r.Knowledge(2) == HeaderOnly {
			t.Fatalf("slot 2 after the rot: %+v, op 2 %s: view 1's header restored as possibly acknowledged", s, r.Knowledge(2))
		}
	})

	t.Run("the log_view's own op", func(t *testing.T) {
		e, j, _ := setUp(t)
		g2 := prepareFrame(cfg, 2, 1, 100) // view 2: the log_view's op 2
		appendWait(e, j, g2)
		e.crash()
		j, _ = e.mustOpen()
		if h := j.Head(); h.Op != 2 || h.Header.Checksum() != identityOf(g2) {
			t.Fatalf("the reopened journal's head is op %d (%s), want the log_view's op 2 (%s)", h.Op, h.Header.Checksum(), identityOf(g2))
		}
	})
}

// TestEmptyLogViewHeadIsKnown: a log_view persisted with an empty log
// records head op 0, and the recovery reports it Known (the empty log's
// head has no header), so the replica can tell a leftover above it
// (DEVIATIONS.md 74); a header recorded with op 0 is still refused.
func TestEmptyLogViewHeadIsKnown(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 75})
	e.format()
	j, _ := e.mustOpen()
	writeStateWait(e, j, wire.VsrState{Cluster: cfg.Cluster, ReplicaID: cfg.Replica, ReplicaCount: cfg.ReplicaCount, View: 1, LogView: 1})
	_, r := e.mustOpen()
	if r.State.LogView != 1 || r.Head.Op != 0 || !r.Head.Known() {
		t.Fatalf("log_view %d recorded head op %d, known %v; want log_view 1, op 0, known", r.State.LogView, r.Head.Op, r.Head.Known())
	}
	if h := (LogHead{Op: 3}); h.Known() {
		t.Fatal("a head op 3 without a header is known")
	}
	chunk := make([]byte, int(e.geo.superblockChunkSectors)*e.geo.sectorBytes)
	e.geo.encodeSuperblockChunk(chunk, 5, r.State, r.Formatted, LogHead{Op: 0, Header: *wire.HeaderOf(prepareFrame(cfg, 1, 0, 0))})
	if c := decodeSuperblockChunk(cfg, chunk, nil); c.Valid {
		t.Fatal("a log head of op 0 with a header decoded")
	}
}
