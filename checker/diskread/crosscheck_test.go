package diskread

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/wire"
	"pgregory.net/rapid"
)

// The cross-check: the reader against replica/journal on the same bytes.
// Slots and superblocks against journal.Inspector (the checker's current
// oracle), whole recoveries against journal.Open.

// crossStats counts what the cross-check compared, for the test's log (and
// so that a test that compared nothing fails).
type crossStats struct {
	scenarios, slots, holds, states, recoveries int
	classes                                     map[string]int
	recoveryErrors                              map[string]int
	restored, unacked                           int
}

func newCrossStats() *crossStats {
	return &crossStats{classes: map[string]int{}, recoveryErrors: map[string]int{}}
}

// compareState fails unless the reader's superblock answer is the
// inspector's: the same view and log_view, or an error for an error of the
// same kind, or ErrSplitSequence where the journal panics.
func compareState(t tb, d *disk, where string, peek func(uint64, []byte)) {
	t.Helper()
	view, logView, err := DurableView(d.g, peek)
	var (
		state    wire.VsrState
		jerr     error
		panicked any
	)
	func() {
		defer func() { panicked = recover() }()
		state, jerr = journal.NewInspector(d.cfg).State(peek)
	}()
	switch {
	case panicked != nil:
		if !errors.Is(err, ErrSplitSequence) {
			t.Fatalf("%s: the journal's inspector panicked (%v), the reader says %v", where, panicked, err)
		}
	case jerr != nil:
		if !errors.Is(err, ErrNoQuorum) && !errors.Is(err, ErrMismatch) ||
			errors.Is(err, ErrNoQuorum) != errors.Is(jerr, journal.ErrSuperblockQuorum) {
			t.Fatalf("%s: the journal's inspector fails (%v), the reader says %d/%d, %v", where, jerr, view, logView, err)
		}
	default:
		if err != nil || view != state.View || logView != state.LogView {
			t.Fatalf("%s: the journal's inspector opens view %d/%d, the reader %d/%d, %v", where, state.View, state.LogView, view, logView, err)
		}
	}
}

// compareSlots fails unless the reader reads every op of [from, to] as
// the inspector does: the whole classification, and both durability
// answers for every identity the slot or the test knows of the op.
func compareSlots(t tb, d *disk, where string, peek func(uint64, []byte), from, to uint64, known func(op uint64) []wire.U128, st *crossStats) {
	t.Helper()
	in := journal.NewInspector(d.cfg)
	for op := max(from, 1); op <= to; op++ {
		js := in.Slot(op, peek)
		mine := ReadSlot(d.g, peek, op)
		if diff := slotDiff(mine, js); diff != "" {
			t.Fatalf("%s: op %d: %s", where, op, diff)
		}
		st.slots++
		st.classes[mine.Class.String()]++
		if mine.Header.Unacked {
			st.unacked++
		}
		ids := append([]wire.U128{js.Prepare.ID, js.Header.ID, {Lo: 1}}, known(op)...)
		for _, id := range ids {
			jAcked := js.HoldsAcknowledged(op, id)
			jPrepare := js.Class == journal.ClassClean && js.Op == op && js.Prepare.ID == id
			if HoldsAcknowledged(d.g, peek, op, id) != jAcked || HoldsPrepare(d.g, peek, op, id) != jPrepare {
				t.Fatalf("%s: op %d %s: the reader holds acknowledged %v prepare %v, the journal %v %v (%s)", where, op, id,
					HoldsAcknowledged(d.g, peek, op, id), HoldsPrepare(d.g, peek, op, id), jAcked, jPrepare, js.Class)
			}
			st.holds++
		}
		id, ok := DurablePrepare(d.g, peek, op)
		if jok := js.Class == journal.ClassClean && js.Op == op; ok != jok || ok && id != js.Prepare.ID {
			t.Fatalf("%s: op %d: durable prepare %s %v, the journal's %s %v", where, op, id, ok, js.Prepare.ID, jok)
		}
	}
}

// crossRecover recovers the disk with the reader (from peek) and with
// journal.Open (from the device, its faults included), fails unless they
// agree, and returns what Open did. Open writes (header repairs, a
// restored head), so the reader goes first.
func crossRecover(t tb, d *disk, where string, peek func(uint64, []byte)) openResult {
	t.Helper()
	return crossRecoverStats(t, d, where, peek, newCrossStats())
}

func crossRecoverStats(t tb, d *disk, where string, peek func(uint64, []byte), st *crossStats) openResult {
	t.Helper()
	mine, err := Recover(d.g, peek)
	res := d.open()
	st.recoveries++
	switch {
	case res.panicked != nil:
		if !errors.Is(err, ErrSplitSequence) && !errors.Is(err, ErrHeadUnformatted) {
			t.Fatalf("%s: journal.Open panicked (%v), the reader recovers with %v", where, res.panicked, err)
		}
		st.recoveryErrors["panic"]++
		return res
	case res.err != nil:
		if errors.Is(err, ErrNoQuorum) != errors.Is(res.err, journal.ErrSuperblockQuorum) ||
			errors.Is(err, ErrMismatch) != errors.Is(res.err, journal.ErrSuperblockMismatch) || err == nil {
			t.Fatalf("%s: journal.Open fails (%v), the reader recovers with %v", where, res.err, err)
		}
		st.recoveryErrors["refused"]++
		return res
	case err != nil:
		t.Fatalf("%s: journal.Open recovers, the reader fails: %v", where, err)
	}
	r := res.r
	sb := mine.Superblock
	if sb.State != r.State || sb.Sequence != r.Sequence || sb.Formatted != r.Formatted || sb.Head.Op != r.Head.Op || sb.Head.Header != r.Head.Header {
		t.Fatalf("%s: superblock: the reader's sequence %d formatted %d head %d %+v, journal.Open's %d %d %d %+v", where,
			sb.Sequence, sb.Formatted, sb.Head.Op, sb.State, r.Sequence, r.Formatted, r.Head.Op, r.State)
	}
	for i, c := range sb.Copies {
		jc := r.Copies[i]
		if c.Valid != jc.Valid || c.Valid && (c.Sequence != jc.Sequence || c.State != jc.State || c.Formatted != jc.Formatted ||
			c.Head.Op != jc.Head.Op || c.Head.Header != jc.Head.Header) {
			t.Fatalf("%s: superblock copy %d: the reader's %+v, journal.Open's %+v", where, i, c, jc)
		}
	}
	if len(mine.Slots) != len(r.Slots) || mine.HeadOp != r.HeadOp || mine.HeaderOpMax != r.HeaderOpMax {
		t.Fatalf("%s: %d slots, head %d, header op max %d; journal.Open: %d, %d, %d", where,
			len(mine.Slots), mine.HeadOp, mine.HeaderOpMax, len(r.Slots), r.HeadOp, r.HeaderOpMax)
	}
	for k := range mine.Slots {
		if diff := slotDiff(mine.Slots[k].Slot, r.Slots[k]); diff != "" || mine.Slots[k].HeadRestored != r.Slots[k].HeadRestored {
			t.Fatalf("%s: recovered slot %d: %s; head restored %v, journal.Open %v", where, k, diff, mine.Slots[k].HeadRestored, r.Slots[k].HeadRestored)
		}
		if mine.Slots[k].HeadRestored {
			st.restored++
		}
	}
	for op := uint64(1); op <= mine.HeadOp+2*d.cfg.SlotCount; op++ {
		if a, b := mine.Knowledge(op), r.Knowledge(op); a.String() != b.String() {
			t.Fatalf("%s: op %d: the reader knows %s, journal.Open %s (slot %+v)", where, op, a, b, r.Slot(op%d.cfg.SlotCount))
		}
	}
	return res
}

// TestCrossCheck drives a journal through random appends, replacements,
// idempotent re-appends, repairs, reconciles (the second seal), state
// writes and formatted-extent growth, crashes at random points under
// random crash fates, then random damage (latent errors, corruption,
// misdirect-like stale and foreign copies, superblock copies too), and
// compares the reader with the journal after every action (both durable
// and visible images, every op near the log, the superblock) and after
// every crash (a whole recovery against journal.Open).
func TestCrossCheck(t *testing.T) {
	st := newCrossStats()
	start := time.Now()
	// Batches of rapid's default 100 checks each, for a few seconds' worth.
	for batch := range crossBatches {
		t.Run(fmt.Sprintf("batch%d", batch), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { crossScenario(rt, st) })
		})
	}
	// Every kind of slot, the second seal and both kinds of failed
	// recovery must have been compared, or the scenarios are too tame.
	for _, c := range []string{"empty", "clean", "corrupt", "torn", "conflict", "faulty"} {
		if st.classes[c] == 0 {
			t.Errorf("no %s slot compared: %v", c, st.classes)
		}
	}
	if st.unacked == 0 || st.recoveries < st.scenarios || st.recoveryErrors["refused"] == 0 {
		t.Errorf("compared too little: %+v", st)
	}
	t.Logf("%d scenarios in %v: %d slot readings, %d durability answers, %d superblock readings, %d recoveries (%v failed in both); "+
		"classes %v; %d unacked header copies seen, %d heads restored",
		st.scenarios, time.Since(start).Round(time.Millisecond), st.slots, st.holds, st.states, st.recoveries, st.recoveryErrors,
		st.classes, st.unacked, st.restored)
}

// crossBatches is how many rapid runs TestCrossCheck makes.
const crossBatches = 6

// crossScenario is one scenario of TestCrossCheck.
func crossScenario(rt *rapid.T, st *crossStats) {
	st.scenarios++
	cfg := testConfig()
	cfg.SectorSize = rapid.SampledFrom([]int{512, 1024}).Draw(rt, "sector")
	cfg.SlotCount = rapid.SampledFrom([]uint64{1, 2, 4, 8}).Draw(rt, "slots")
	cfg.FrameSizeMax = 2500
	cfg.AppendsMax = rapid.IntRange(1, 6).Draw(rt, "appends_max")
	cfg.IOsMax = cfg.AppendsMax + 2 + rapid.IntRange(0, 4).Draw(rt, "ios_spare")
	cfg.StateWritesMax = 4
	cfg.FormatExtentSlots = rapid.Uint64Range(0, cfg.SlotCount).Draw(rt, "format_extent")
	fate := rapid.SampledFrom([][2]float64{{1, 0}, {0, 0}, {0, 1}, {0.3, 0.4}}).Draw(rt, "crash_fate")
	d := newDisk(rt, cfg, rapid.Uint64().Draw(rt, "seed"), fate[0], fate[1])
	d.format()
	j, _ := d.mustOpen()
	S := cfg.SlotCount

	frames := map[uint64][][]byte{} // every frame built for an op
	var maxIssued uint64
	next := uint64(1)
	last := j.State() // the latest state asked for
	reconciling := false
	type snapshot struct {
		sector uint64
		data   []byte
	}
	var snapshots []snapshot
	known := func(op uint64) []wire.U128 {
		var ids []wire.U128
		for _, f := range frames[op] {
			ids = append(ids, identityOf(f))
		}
		return ids
	}
	frameWith := func(op uint64, id wire.U128) []byte {
		for _, f := range frames[op] {
			if identityOf(f) == id {
				return f
			}
		}
		return nil
	}
	newFrame := func(op uint64) []byte {
		f := prepareFrame(cfg.Cluster, op, uint64(len(frames[op])), rapid.IntRange(0, cfg.FrameSizeMax-wire.HeaderSize).Draw(rt, "body"))
		frames[op] = append(frames[op], f)
		return f
	}
	// latestInSlot: op is the highest op issued to its slot, so the journal
	// may still write it (ops in a slot never go back).
	latestInSlot := func(op uint64) bool { return op+S > maxIssued }
	compare := func(where string) {
		from := uint64(1)
		if maxIssued > 2*S {
			from = maxIssued - 2*S
		}
		durable := withFaults(d.dev, d.dev.PeekDurable)
		compareSlots(rt, d, where+" (durable)", durable, from, maxIssued+S, known, st)
		compareState(rt, d, where+" (durable)", durable)
		st.states++
		// Now and then also the image as sim/disks.go passes it (the
		// durable bytes without the fault flags), or the visible one (what
		// a crash that kept every completed write would leave).
		switch rapid.IntRange(0, 5).Draw(rt, "other_image") {
		case 0:
			compareSlots(rt, d, where+" (durable, no flags)", d.dev.PeekDurable, from, maxIssued+S, known, st)
			compareState(rt, d, where+" (durable, no flags)", d.dev.PeekDurable)
			st.states++
		case 1:
			visible := withFaults(d.dev, d.dev.PeekVisible)
			compareSlots(rt, d, where+" (visible)", visible, from, maxIssued+S, known, st)
			compareState(rt, d, where+" (visible)", visible)
			st.states++
		}
	}

	cycles := rapid.IntRange(1, 6).Draw(rt, "cycles")
	for cycle := range cycles {
		for action := range rapid.IntRange(0, 25).Draw(rt, "actions") {
			where := fmt.Sprintf("cycle %d action %d", cycle, action)
			switch rapid.IntRange(0, 11).Draw(rt, "action") {
			case 0, 1, 2, 3: // append the next op
				if j.InFlight() >= cfg.AppendsMax {
					continue
				}
				op := next
				var f []byte
				if fs := frames[op]; len(fs) > 0 && rapid.Bool().Draw(rt, "same_again") {
					f = fs[rapid.IntRange(0, len(fs)-1).Draw(rt, "which")]
				} else {
					f = newFrame(op)
				}
				j.Append(f, func() {})
				maxIssued = max(maxIssued, op)
				next++
			case 4: // truncate, so that the next appends replace
				floor := uint64(0)
				if maxIssued >= S {
					floor = maxIssued - (S - 1)
				}
				if next-1 < floor {
					continue
				}
				after := rapid.Uint64Range(floor, next-1).Draw(rt, "truncate_after")
				j.Truncate(after)
				next = after + 1
			case 5: // append again what the journal holds
				if j.InFlight() >= cfg.AppendsMax || next == 1 {
					continue
				}
				op := rapid.Uint64Range(1, next-1).Draw(rt, "reappend")
				if f, ok := j.Frame(op); ok && latestInSlot(op) {
					j.Append(append([]byte(nil), f...), func() {})
				}
			case 6: // a newer state
				if j.StateWritesWaiting() >= cfg.StateWritesMax {
					continue
				}
				s := last
				s.View += uint32(rapid.IntRange(0, 2).Draw(rt, "view_step"))
				s.LogView += uint32(rapid.IntRange(0, int(s.View-s.LogView)).Draw(rt, "log_view_step"))
				s.CommitMax += uint64(rapid.IntRange(0, 2).Draw(rt, "commit_step"))
				last = s
				j.WriteState(s, func() {})
			case 7: // adopt a canonical log (forgets above head, records headers)
				floor := uint64(0)
				if maxIssued >= S {
					floor = maxIssued - (S - 1)
				}
				if reconciling || next-1 < floor {
					continue
				}
				head := rapid.Uint64Range(floor, next-1).Draw(rt, "reconcile_head")
				var canonical []wire.Header
				for op := max(1, floor); op <= head; op++ {
					if !latestInSlot(op) || !rapid.Bool().Draw(rt, "canonical") {
						continue
					}
					var f []byte
					if fs := frames[op]; len(fs) > 0 && rapid.Bool().Draw(rt, "canonical_known") {
						f = fs[rapid.IntRange(0, len(fs)-1).Draw(rt, "canonical_which")]
					} else {
						f = newFrame(op)
					}
					canonical = append(canonical, *wire.HeaderOf(f))
				}
				reconciling = true
				j.Reconcile(head, canonical, func() { reconciling = false })
				next = head + 1
			case 8: // repair an op known by header only
				if j.InFlight() >= cfg.AppendsMax || maxIssued == 0 {
					continue
				}
				op := rapid.Uint64Range(1, maxIssued).Draw(rt, "repair")
				k := j.Knowledge(op)
				if !latestInSlot(op) || k != journal.HeaderOnly && k != journal.HeaderUnacked {
					continue
				}
				h, _ := j.Header(op)
				if f := frameWith(op, h.Checksum()); f != nil {
					j.Repair(f, func() {})
				}
			case 9: // remember a copy's durable bytes, to put back stale later
				k := rapid.Uint64Range(0, S-1).Draw(rt, "snapshot_slot")
				sector := d.headerSector(k)
				switch rapid.IntRange(0, 2).Draw(rt, "snapshot_of") {
				case 1:
					sector = d.prepareSector(k) + rapid.Uint64Range(0, uint64(d.prepareChunkSectors()-1)).Draw(rt, "snapshot_sector")
				case 2:
					sector = d.copySector(rapid.IntRange(0, 3).Draw(rt, "snapshot_copy"))
				}
				snapshots = append(snapshots, snapshot{sector, d.readRaw(sector, 1)})
			default: // let the device make progress
				for range rapid.IntRange(0, 20).Draw(rt, "steps") {
					if !d.loop.Step() {
						break
					}
				}
			}
			compare(where)
		}

		// Crash at a random point, or drain and crash idle.
		if rapid.Bool().Draw(rt, "drain_first") {
			d.drain()
		}
		d.dev.Crash()
		d.drain()
		reconciling = false
		compare(fmt.Sprintf("cycle %d after the crash", cycle))

		// Damage: latent errors, corruption, a stale copy put back (a
		// misdirected write that left it), another slot's copy (one that
		// landed here), in the rings and, rarely, the superblock.
		for range rapid.IntRange(0, 4).Draw(rt, "faults") {
			k := rapid.Uint64Range(0, S-1).Draw(rt, "fault_slot")
			sector := d.headerSector(k)
			other := d.headerSector(rapid.Uint64Range(0, S-1).Draw(rt, "fault_other"))
			switch rapid.IntRange(0, 6).Draw(rt, "fault_where") {
			case 1, 2:
				off := rapid.Uint64Range(0, uint64(d.prepareChunkSectors()-1)).Draw(rt, "fault_sector")
				sector = d.prepareSector(k) + off
				other = d.prepareSector(rapid.Uint64Range(0, S-1).Draw(rt, "fault_other_chunk")) + off
			case 3, 4:
				i := rapid.IntRange(0, 3).Draw(rt, "fault_copy")
				sector, other = d.copySector(i), d.copySector((i+1)%4)
			}
			switch rapid.IntRange(0, 3).Draw(rt, "fault_kind") {
			case 0:
				d.dev.InjectLatent(sector)
			case 1:
				d.dev.InjectCorruption(sector)
			case 2:
				if len(snapshots) > 0 {
					s := snapshots[rapid.IntRange(0, len(snapshots)-1).Draw(rt, "stale")]
					d.writeRaw(s.sector, s.data)
				}
			case 3:
				d.writeRaw(sector, d.readRaw(other, 1))
			}
		}
		where := fmt.Sprintf("cycle %d recovery", cycle)
		compare(where)
		res := crossRecoverStats(rt, d, where, withFaults(d.dev, d.dev.PeekDurable), st)
		if res.j == nil {
			return // refused or panicked, in both: nothing more to drive
		}
		j = res.j
		compare(where + " (after Open's repairs)")
		last = res.r.State
		next = maxIssued + 1
	}
}
