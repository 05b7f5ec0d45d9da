package diskread

import (
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestReconcileCrashEveryPoint crashes a Reconcile at every point (between
// any two loop events), under each crash fate, and recovers with the
// reader and with journal.Open: they must agree at every point. No storage
// fault is injected, so what the recoveries find is what a crash alone can
// leave; the test requires a crash to reach the outcomes format 7 lists for
// Reconcile's writes (Corrupt over the empty marker, and Faulty from a
// torn header write).
func TestReconcileCrashEveryPoint(t *testing.T) {
	cfg := testConfig()
	seen := map[string]int{}
	for _, fate := range [][2]float64{{1, 0}, {0, 0}, {0, 1}} {
		for k := 0; ; k++ {
			d := newDisk(t, cfg, uint64(k), fate[0], fate[1])
			d.format()
			j, _ := d.mustOpen()
			frames := map[uint64][]byte{}
			for op := uint64(1); op <= 5; op++ {
				frames[op] = prepareFrame(cfg.Cluster, op, 0, 600)
				d.appendWait(j, frames[op])
			}
			// Head 3: ops 4 and 5 are forgotten (markers), op 2 is recorded
			// by another identity's header (prepare marker, then the header
			// under the second seal).
			other2 := prepareFrame(cfg.Cluster, 2, 1, 900)
			fired := 0
			j.Reconcile(3, []wire.Header{*wire.HeaderOf(frames[1]), *wire.HeaderOf(other2), *wire.HeaderOf(frames[3])}, func() { fired++ })
			steps := 0
			for steps < k && d.loop.Step() {
				steps++
			}
			finished := d.loop.Pending() == 0
			d.dev.Crash()
			d.drain()
			where := fmt.Sprintf("fate %v, crash after %d events", fate, steps)
			res := crossRecover(t, d, where, d.dev.PeekDurable)
			if res.r == nil {
				t.Fatalf("%s: the journal does not open: %v %v", where, res.err, res.panicked)
			}
			for _, slot := range []uint64{2, 4, 5} {
				s := res.r.Slot(slot)
				seen[fmt.Sprintf("slot %d %s header=%s prepare=%s", slot, s.Class, s.Header.State, s.Prepare.State)]++
			}
			if finished {
				break
			}
		}
	}
	for _, want := range []string{
		"slot 2 corrupt header=valid prepare=empty",  // the header-only record, whole
		"slot 2 faulty header=damaged prepare=empty", // its header write torn
		"slot 4 faulty header=damaged prepare=empty", // a clear's header marker torn
		"slot 4 corrupt header=valid prepare=empty",  // a clear cut between its two writes
	} {
		if seen[want] == 0 {
			t.Errorf("never reached %q; reached %v", want, seen)
		}
	}
	t.Logf("outcomes: %v", seen)
}
