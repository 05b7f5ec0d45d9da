package journal

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"pgregory.net/rapid"
)

// issue is one Append of one identity of an op, as the model records it.
type issue struct {
	id    wire.U128
	frame []byte
	done  bool
}

// model is what the caller knows: every append issued (per op, in order),
// which dones ran, every state asked for and which dones ran.
type model struct {
	cfg       Config
	issues    map[uint64][]*issue
	maxIssued uint64 // highest op ever appended
	next      uint64 // the caller's next op
	faulted   map[uint64]bool

	states        []wire.VsrState // asked for, in order (views strictly increase)
	stateDone     int             // states[:stateDone] had their done run
	epoch         int             // bumped at every crash: older dones must never run
	appendsFired  int             // in this epoch
	appendsIssued int             // in this epoch
	repairs       int
}

// allowed returns the identities recovery may show for op: every one
// issued if no done ran, else the last one whose done ran and every one
// issued after it.
func (m *model) allowed(op uint64) []*issue {
	is := m.issues[op]
	last := -1
	for i, x := range is {
		if x.done {
			last = i
		}
	}
	if last < 0 {
		return is
	}
	return is[last:]
}

func (m *model) acknowledged(op uint64) bool {
	for _, x := range m.issues[op] {
		if x.done {
			return true
		}
	}
	return false
}

// slotLatest reports whether op is the highest op ever issued to its slot.
func (m *model) slotLatest(op uint64) bool {
	for o := op + m.cfg.SlotCount; o <= m.maxIssued; o += m.cfg.SlotCount {
		if len(m.issues[o]) > 0 {
			return false
		}
	}
	return true
}

// checkKnowledge checks what the journal (or a recovery) says of op against
// the model: never Nackable once acknowledged; what is held or header-only
// is an allowed identity, byte for byte.
func (m *model) checkKnowledge(t *rapid.T, where string, op uint64, k Knowledge, frame func(uint64) ([]byte, bool), header func(uint64) (wire.Header, bool)) {
	if m.acknowledged(op) && (k == Nackable || k == HeaderUnacked) {
		t.Fatalf("%s: acknowledged op %d is %s", where, op, k)
	}
	switch k {
	case Held:
		f, ok := frame(op)
		if !ok || !m.matches(op, f, len(f)) {
			t.Fatalf("%s: op %d held with bytes never appended", where, op)
		}
	case HeaderOnly:
		h, ok := header(op)
		if !ok || !m.matches(op, h[:], wire.HeaderSize) {
			t.Fatalf("%s: op %d header-only with a header never appended", where, op)
		}
	}
}

func (m *model) matches(op uint64, b []byte, n int) bool {
	for _, x := range m.allowed(op) {
		if len(x.frame) >= n && bytes.Equal(b, x.frame[:n]) {
			return true
		}
	}
	return false
}

// TestRapidCrashRecovery drives random appends, replacements (truncate and
// append another identity), idempotent re-appends, state writes, crashes at
// random points under random crash fates, and random corruption or read
// errors in the journal's rings, and checks after every recovery (and at
// run time) that:
//   - no op whose done ran is ever Nackable;
//   - an acknowledged op that nothing newer replaced, in a slot never
//     faulted, is held, byte for byte;
//   - whatever is held or header-only is an identity that was appended,
//     allowed by the dones that ran;
//   - the recovered state is at least the last state whose done ran and at
//     most the last asked for; view never regresses;
//   - no done of a crashed journal ever runs, every other done runs once.
func TestRapidCrashRecovery(t *testing.T) {
	var classes [ClassFaulty + 1]int
	var knowledge [HeaderUnacked + 1]int
	acknowledgedAtCrash, repairs := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		cfg := testConfig()
		cfg.SlotCount = rapid.SampledFrom([]uint64{1, 2, 4, 8}).Draw(rt, "slots")
		cfg.FrameSizeMax = 2048
		cfg.AppendsMax = rapid.IntRange(1, 6).Draw(rt, "appends_max")
		cfg.IOsMax = cfg.AppendsMax + 2 + rapid.IntRange(0, 4).Draw(rt, "ios_spare")
		cfg.StateWritesMax = 4
		cfg.FormatExtentSlots = rapid.Uint64Range(0, cfg.SlotCount).Draw(rt, "format_extent")
		mode := rapid.SampledFrom([]crashMode{crashLost, crashKept, crashTorn, crashMixed}).Draw(rt, "crash_mode")
		e := newEnv(rt, cfg, envOptions{seed: rapid.Uint64().Draw(rt, "seed"), crash: mode})
		e.format()
		j, _ := e.mustOpen()
		m := &model{cfg: cfg, issues: map[uint64][]*issue{}, faulted: map[uint64]bool{}, next: 1}
		m.states = append(m.states, stateAt(cfg, 0))
		m.stateDone = 1
		S := cfg.SlotCount

		checkRuntime := func(where string) {
			j.checkInvariants()
			lo := uint64(1)
			if m.maxIssued > 3*S {
				lo = m.maxIssued - 3*S
			}
			for op := lo; op <= m.maxIssued+S; op++ {
				m.checkKnowledge(rt, where, op, j.Knowledge(op), j.Frame, j.Header)
			}
		}

		cycles := rapid.IntRange(1, 4).Draw(rt, "cycles")
		for cycle := range cycles {
			actions := rapid.IntRange(0, 30).Draw(rt, "actions")
			for range actions {
				switch rapid.IntRange(0, 9).Draw(rt, "action") {
				case 0, 1, 2, 3: // append the next op
					// As the replica does: a slot is reused only once the
					// durable checkpoint covers its op (Admits).
					op := m.next
					if j.InFlight() >= cfg.AppendsMax || j.Admits(op) != Admitted {
						continue
					}
					variant := rapid.Uint64Range(0, 2).Draw(rt, "variant")
					frame := prepareFrame(cfg, op, variant, rapid.IntRange(0, 1500).Draw(rt, "body"))
					x := &issue{id: identityOf(frame), frame: frame}
					m.issues[op] = append(m.issues[op], x)
					m.maxIssued = max(m.maxIssued, op)
					m.next++
					m.appendsIssued++
					epoch := m.epoch
					j.Append(frame, func() {
						if epoch != m.epoch {
							rt.Fatalf("a done of a crashed journal ran (op %d)", op)
						}
						if x.done {
							rt.Fatalf("done of op %d ran twice", op)
						}
						x.done = true
						m.appendsFired++
					})
				case 4: // truncate, so that the next appends replace
					floor := uint64(0)
					if m.maxIssued >= S {
						floor = m.maxIssued - (S - 1)
					}
					// The replica never truncates what a checkpoint covers.
					floor = max(floor, m.states[len(m.states)-1].CheckpointOp)
					if m.next-1 < floor {
						continue
					}
					after := rapid.Uint64Range(floor, m.next-1).Draw(rt, "truncate_after")
					j.Truncate(after)
					m.next = after + 1
				case 5: // append again what the journal holds (idempotent)
					if j.InFlight() >= cfg.AppendsMax || m.next == 1 {
						continue
					}
					op := rapid.Uint64Range(1, m.next-1).Draw(rt, "reappend")
					f, ok := j.Frame(op)
					if !ok {
						continue
					}
					frame := bytes.Clone(f)
					x := &issue{id: identityOf(frame), frame: frame}
					m.issues[op] = append(m.issues[op], x)
					m.appendsIssued++
					epoch := m.epoch
					j.Append(frame, func() {
						if epoch != m.epoch || x.done {
							rt.Fatalf("re-append of op %d: stale or double done", op)
						}
						x.done = true
						m.appendsFired++
					})
				case 6: // write a newer state
					if j.StateWritesWaiting() >= cfg.StateWritesMax {
						continue
					}
					s := stateAt(cfg, uint64(len(m.states)))
					// A checkpoint of ops issued so far, never going back.
					s.CheckpointOp = m.states[len(m.states)-1].CheckpointOp
					if m.next-1 > s.CheckpointOp {
						s.CheckpointOp = rapid.Uint64Range(s.CheckpointOp, m.next-1).Draw(rt, "checkpoint")
					}
					m.states = append(m.states, s)
					index := len(m.states) - 1
					epoch := m.epoch
					j.WriteState(s, func() {
						if epoch != m.epoch || index != m.stateDone {
							rt.Fatalf("state done %d out of order (next %d) or stale", index, m.stateDone)
						}
						if j.State().View < s.View {
							rt.Fatalf("state done %d ran before it was durable", index)
						}
						m.stateDone++
					})
				case 7: // repair an op known by its header only
					if j.InFlight() >= cfg.AppendsMax || m.maxIssued == 0 {
						continue
					}
					op := rapid.Uint64Range(1, m.maxIssued).Draw(rt, "repair")
					sl := j.slotAt(op % S)
					if j.Knowledge(op) != HeaderOnly || sl.mem.held() || sl.floorOp > op {
						continue
					}
					h, _ := j.Header(op)
					var frame []byte
					for _, x := range m.issues[op] {
						if x.id == h.Checksum() {
							frame = x.frame
						}
					}
					if frame == nil {
						rt.Fatalf("header-only op %d with an identity never appended", op)
					}
					x := &issue{id: h.Checksum(), frame: frame}
					m.issues[op] = append(m.issues[op], x)
					m.appendsIssued++
					m.repairs++
					epoch := m.epoch
					j.Repair(frame, func() {
						if epoch != m.epoch || x.done {
							rt.Fatalf("repair of op %d: stale or double done", op)
						}
						x.done = true
						m.appendsFired++
					})
				default: // let the device make progress
					for range rapid.IntRange(0, 20).Draw(rt, "steps") {
						if !e.loop.Step() {
							break
						}
					}
				}
				checkRuntime(fmt.Sprintf("cycle %d runtime", cycle))
			}

			// Crash at a random point, or drain and crash with nothing in
			// flight.
			if rapid.Bool().Draw(rt, "drain_first") {
				e.drain()
				if j.InFlight() != 0 || j.StateWritesWaiting() != 0 || m.appendsFired != m.appendsIssued {
					rt.Fatalf("drained with %d appends and %d state writes waiting", j.InFlight(), j.StateWritesWaiting())
				}
			}
			e.crash()
			m.epoch++
			m.appendsIssued, m.appendsFired = 0, 0
			// Damage in the rings (never in the superblock: the model allows
			// one bad copy, and damage stays until rewritten).
			for range rapid.IntRange(0, 2).Draw(rt, "faults") {
				slot := rapid.Uint64Range(0, S-1).Draw(rt, "fault_slot")
				sector := e.geo.headerSector(slot)
				if rapid.Bool().Draw(rt, "fault_in_prepare") {
					sector = e.geo.prepareSector(slot) + rapid.Uint64Range(0, e.geo.prepareChunkSectors-1).Draw(rt, "fault_sector")
				}
				if rapid.Bool().Draw(rt, "fault_latent") {
					e.dev.InjectLatent(sector)
				} else {
					e.dev.InjectCorruption(sector)
				}
				m.faulted[slot] = true
			}

			var r *Recovery
			j, r = e.mustOpen()
			j.checkInvariants()
			where := fmt.Sprintf("cycle %d recovery", cycle)
			// The superblock: at least the last done state, at most the
			// last asked for, and one of those asked for.
			// A state of one view may come back from an earlier epoch (an
			// unsynced write a crash kept, whose view a later epoch asked
			// again) with another checkpoint: the checkpoint is checked
			// only not to go back.
			sameBut := func(a, b wire.VsrState) bool { a.CheckpointOp, b.CheckpointOp = 0, 0; return a == b }
			if v := r.State.View; v < m.states[m.stateDone-1].View || int(v) >= len(m.states) || !sameBut(r.State, m.states[v]) ||
				r.State.CheckpointOp < m.states[m.stateDone-1].CheckpointOp {
				rt.Fatalf("%s: state %+v; done through view %d, asked through %d", where, r.State, m.states[m.stateDone-1].View, len(m.states)-1)
			}
			// Pending states that were not durable are forgotten; views keep
			// increasing from what was recovered.
			m.states = m.states[:r.State.View+1]
			m.states[r.State.View] = r.State
			m.stateDone = len(m.states)

			for op := uint64(1); op <= m.maxIssued+S; op++ {
				k := r.Knowledge(op)
				knowledge[k]++
				if jk := j.Knowledge(op); jk != k {
					rt.Fatalf("%s: op %d: recovery says %s, journal %s", where, op, k, jk)
				}
				if sl := r.Slot(op % S); k == HeaderOnly && sl.HeadRestored && r.Head.Op == op {
					// Open wrote that header into the slot: to the model,
					// a re-append of it, allowed from now on (the newest
					// issue), its body not promised.
					for _, x := range m.issues[op] {
						if x.id == r.Head.Header.Checksum() {
							m.issues[op] = append(m.issues[op], &issue{id: x.id, frame: x.frame})
							break
						}
					}
					// The header Open restored is the head the durable
					// superblock recorded with its log_view: the log of
					// that log_view, even where a replacement of the op
					// (truncated and appended again, as a view change does
					// before its log_view is durable) reached the slot
					// since (rapid seed 13831774895125750133).
					if h, ok := j.Header(op); !ok || h != r.Head.Header {
						rt.Fatalf("%s: op %d's restored header is not the recorded head's", where, op)
					}
				} else {
					m.checkKnowledge(rt, where, op, k, j.Frame, j.Header)
				}
				if !m.acknowledged(op) || !m.slotLatest(op) || m.faulted[op%S] {
					continue
				}
				// Acknowledged and nothing newer in the slot: held, unless
				// a replacement of the op was under way (then its prepare
				// write may have torn: header-only; or landed without its
				// header: a conflict, unknown).
				allowed := m.allowed(op)
				replaced := false
				for _, x := range allowed {
					replaced = replaced || x.id != allowed[0].id
				}
				if k != Held && !replaced {
					rt.Fatalf("%s: acknowledged op %d is %s (slot %+v)", where, op, k, r.Slot(op%S))
				}
			}
			for _, x := range m.issues {
				for _, i := range x {
					if i.done {
						acknowledgedAtCrash++
					}
				}
			}
			for i, s := range r.Slots {
				classes[s.Class]++
				if s.Class == ClassFaulty && !m.faulted[uint64(i)] {
					rt.Fatalf("%s: slot %d faulty without a fault", where, i)
				}
			}
			m.next = m.maxIssued + 1
		}
		repairs += m.repairs
	})
	t.Logf("slot classes after recovery: %v; knowledge: %v; acknowledged ops checked: %d; repairs: %d", classes, knowledge, acknowledgedAtCrash, repairs)
}
