package checker_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// fakeDisks is a hand-set durable image per replica: the prepares each
// disk holds as acknowledged, its durable view, and its misdirected slots.
type fakeDisks struct {
	held       map[slotKey]wire.U128
	view       map[uint8][2]uint32 // view, log_view
	misdirects map[slotKey]bool
	faultable  map[slotKey]bool
	checkpoint map[uint8]uint64 // the durable checkpoint op
	slots      uint64           // the journal ring (0: far above any op)
}

type slotKey struct {
	r  uint8
	op uint64
}

func newFakeDisks() *fakeDisks {
	return &fakeDisks{held: map[slotKey]wire.U128{}, view: map[uint8][2]uint32{}, misdirects: map[slotKey]bool{},
		faultable: map[slotKey]bool{}}
}

func (d *fakeDisks) HoldsAcknowledged(r uint8, op uint64, id wire.U128) bool {
	got, ok := d.held[slotKey{r, op}]
	return ok && got == id
}

func (d *fakeDisks) DurableCheckpoint(r uint8) (uint64, error) { return d.checkpoint[r], nil }

func (d *fakeDisks) JournalSlots(uint8) uint64 {
	if d.slots == 0 {
		return 1 << 20
	}
	return d.slots
}

func (d *fakeDisks) DurableView(r uint8) (uint32, uint32, error) {
	v := d.view[r]
	return v[0], v[1], nil
}

func (d *fakeDisks) Misdirected(r uint8, op uint64) bool { return d.misdirects[slotKey{r, op}] }

func (d *fakeDisks) HoldsPrepare(r uint8, op uint64, id wire.U128) bool {
	return d.HoldsAcknowledged(r, op, id)
}

func (d *fakeDisks) Faultable(r uint8, op uint64) bool { return d.faultable[slotKey{r, op}] }

func (d *fakeDisks) DurablePrepare(r uint8, op uint64) (wire.U128, bool) {
	id, ok := d.held[slotKey{r, op}]
	return id, ok
}

// persist makes every replica's disk hold view (as view and log_view) and
// every prepare of the log.
func (d *fakeDisks) persist(f *fakeCluster, view uint32) {
	for r := range f.n {
		d.view[uint8(r)] = [2]uint32{view, view}
		for _, p := range f.log {
			d.held[slotKey{uint8(r), p.op()}] = p.x.Checksum
		}
	}
}

// proposedOnDisks starts a history of three replicas and one registered
// client with fake disks attached, proposes one CreateStream, and makes
// every disk hold the log, in view 0.
func proposedOnDisks(t *testing.T) (*fakeCluster, *fakeDisks, *prep) {
	t.Helper()
	f, cls := started(t, 3, 1)
	d := newFakeDisks()
	f.c.SetDisks(d)
	p := f.propose(f.invoke(cls[0], createStream("a")))
	d.persist(f, 0)
	return f, d, p
}

// wantOutcome checks the history passes (want empty) or fails with the
// violation want, naming replica r and op.
func wantOutcome(t *testing.T, f *fakeCluster, want string, r uint8, op uint64) {
	t.Helper()
	if want == "" {
		wantPass(t, f)
		return
	}
	v := wantViolation(t, f, want)
	if !slices.Equal(v.Replicas, []uint8{r}) || !slices.Equal(v.Ops, []uint64{op}) {
		t.Fatalf("evidence %v %v, want replica %d op %d", v.Replicas, v.Ops, r, op)
	}
}

func prepareOk(view uint32, from uint8, p *prep) []byte {
	ok := wire.PrepareOkHeader{Prefix: wire.Prefix{View: view, Replica: from}, Parent: p.x.Parent,
		PrepareChecksum: p.x.Checksum, Op: p.op(), Timestamp: p.x.Timestamp, Request: p.x.Request, Operation: p.x.Operation,
		Group: wire.MetadataGroup}
	return wire.BuildFrame(&ok, nil)
}

func startViewChange(view uint32, from uint8) []byte {
	x := wire.StartViewChangeHeader{Prefix: wire.Prefix{View: view, Replica: from}, Group: wire.MetadataGroup}
	return wire.BuildFrame(&x, nil)
}

// doViewChange builds replica from's DoViewChange for view over the fake's
// log, from its head down to commit+1: every op present, except those in
// nack, which go out as blanks with the nack bit.
func doViewChange(f *fakeCluster, view, logView uint32, from uint8, commit uint64, nack ...uint64) []byte {
	head := uint64(len(f.log))
	var entries []wire.Header
	var nackBits, present wire.U128
	for op := head; op > commit; op-- {
		i := len(entries)
		if slices.Contains(nack, op) {
			entries = append(entries, wire.BlankEntry(op))
			nackBits = nackBits.WithBit(i)
			continue
		}
		entries = append(entries, f.log[op-1].header)
		present = present.WithBit(i)
	}
	x := wire.DoViewChangeHeader{Prefix: wire.Prefix{View: view, Replica: from}, Op: head, Commit: commit,
		Group: wire.MetadataGroup, LogView: logView, NackBitset: nackBits, PresentBitset: present}
	return wire.BuildFrame(&x, wire.EncodeSuffix(entries))
}

// TestAckedBeforeDurable: an acknowledgement of a prepare its disk does
// not hold is "acknowledged before durable", and of one whose slot durably
// holds another prepare of the op "acknowledged another prepare" (an
// identity mismatch, not a late write); a misdirected write excuses both.
func TestAckedBeforeDurable(t *testing.T) {
	for _, tc := range []struct {
		name      string
		durable   bool
		other     bool // the disk holds another prepare of the op
		misdirect bool
		want      string
	}{
		{"durable", true, false, false, ""},
		{"not durable", false, false, false, checker.AckedBeforeDurable},
		{"another prepare durable", false, true, false, checker.AckedOtherPrepare},
		{"not durable, write misdirected", false, false, true, ""},
		{"another prepare durable, write misdirected", false, true, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, d, p := proposedOnDisks(t)
			if !tc.durable {
				delete(d.held, slotKey{1, p.op()})
			}
			if tc.other {
				d.held[slotKey{1, p.op()}] = wire.U128{Lo: 0xdead}
			}
			if tc.misdirect {
				d.misdirects[slotKey{1, p.op()}] = true
			}
			f.c.Sent(f.tick(), 1, -1, prepareOk(0, 1, p))
			wantOutcome(t, f, tc.want, 1, p.op())
		})
	}
}

// TestOwnAckBeforeDurable: a primary's count of its own acknowledgement
// promises what a PrepareOk does.
func TestOwnAckBeforeDurable(t *testing.T) {
	for _, durable := range []bool{true, false} {
		f, d, p := proposedOnDisks(t)
		if !durable {
			delete(d.held, slotKey{0, p.op()})
		}
		f.group(0, vsr.Event{Kind: vsr.EventAcked, View: 0, Op: p.op(), Header: p.header})
		if durable {
			wantPass(t, f)
			if id, ok := f.c.Acknowledged(0, p.op()); !ok || id != p.x.Checksum {
				t.Fatalf("Acknowledged(0, %d) = %s, %v", p.op(), id, ok)
			}
			continue
		}
		wantViolation(t, f, checker.AckedBeforeDurable)
	}
}

// TestOwnAckImpliesTheDurableView: a primary's own acknowledgement in a
// view implies that view as its log_view, durable, as a PrepareOk does
// (VOPR seed 2430102557: a new primary counted its own acks before its
// log_view was written, and a crash brought it back with an older one).
func TestOwnAckImpliesTheDurableView(t *testing.T) {
	for _, tc := range []struct {
		name    string
		durable [2]uint32 // the durable view and log_view of replica 0
		want    string
	}{
		{"the view durable", [2]uint32{3, 3}, ""},
		{"the log_view behind", [2]uint32{3, 1}, checker.SentBeforeDurable},
		{"the view behind", [2]uint32{2, 2}, checker.SentBeforeDurable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, d, p := proposedOnDisks(t)
			d.view[0] = tc.durable
			f.group(0, vsr.Event{Kind: vsr.EventAcked, View: 3, Op: p.op(), Header: p.header})
			if tc.want == "" {
				wantPass(t, f)
				return
			}
			wantViolation(t, f, tc.want)
		})
	}
}

func TestSentBeforeDurable(t *testing.T) {
	for _, tc := range []struct {
		name         string
		frame        func(f *fakeCluster) []byte
		view, logDur uint32 // the durable view and log_view of replica 2
		want         string
	}{
		{"SVC in a durable view", func(*fakeCluster) []byte { return startViewChange(4, 2) }, 4, 1, ""},
		{"SVC ahead of the disk", func(*fakeCluster) []byte { return startViewChange(4, 2) }, 3, 1, checker.SentBeforeDurable},
		{"DVC with a durable log_view", func(f *fakeCluster) []byte { return doViewChange(f, 4, 2, 2, 0) }, 4, 2, ""},
		{"DVC ahead of the disk's log_view", func(f *fakeCluster) []byte { return doViewChange(f, 4, 2, 2, 0) }, 4, 1, checker.SentBeforeDurable},
		{"DVC ahead of the disk's view", func(f *fakeCluster) []byte { return doViewChange(f, 4, 2, 2, 0) }, 3, 2, checker.SentBeforeDurable},
		{"a frame that implies no view", func(*fakeCluster) []byte {
			x := wire.RequestStartViewHeader{Prefix: wire.Prefix{View: 9, Replica: 2}, Group: wire.MetadataGroup}
			return wire.BuildFrame(&x, nil)
		}, 0, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := started(t, 3, 1)
			d := newFakeDisks()
			d.persist(f, 0)
			d.view[2] = [2]uint32{tc.view, tc.logDur}
			f.c.SetDisks(d)
			f.c.Sent(f.tick(), 2, -1, tc.frame(f))
			if tc.want == "" {
				wantPass(t, f)
				return
			}
			v := wantViolation(t, f, tc.want)
			if !slices.Equal(v.Replicas, []uint8{2}) {
				t.Fatalf("evidence %v", v.Replicas)
			}
		})
	}
}

// TestNackOfAcknowledged: a replica that acknowledged a prepare may not nack
// it once it is committed as that prepare, whenever the commit is learnt;
// it may nack an op it never acknowledged, and an acknowledged op that is
// never committed (a view change may truncate it). Each row runs twice: a
// nack bit, and a vote whose head is below the op (an implicit nack, which
// the merge may truncate just as well), whose violation names the head it
// voted and the acknowledgement it breaks.
func TestNackOfAcknowledged(t *testing.T) {
	for _, tc := range []struct {
		name         string
		ack          bool
		commitBefore bool // the op is committed before the nack, else after
		commit       bool // the op is committed at all
		misdirect    bool
		forget       bool // the replica then adopts a log ending below the op
		want         string
	}{
		{"never acknowledged", false, false, true, false, false, ""},
		{"acknowledged, committed before the nack", true, true, true, false, false, checker.NackOfAcknowledged},
		{"acknowledged, committed after the nack", true, false, true, false, false, checker.NackOfAcknowledged},
		{"acknowledged, never committed", true, false, false, false, false, ""},
		{"acknowledged, slot misdirected", true, true, true, true, false, ""},
		{"acknowledged, then forgotten by a reconcile", true, false, true, false, true, ""},
	} {
		for _, implicit := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, implicit %v", tc.name, implicit), func(t *testing.T) {
				f, d, p := proposedOnDisks(t)
				if tc.misdirect {
					d.misdirects[slotKey{1, p.op()}] = true
				}
				if tc.ack {
					f.c.Sent(f.tick(), 1, -1, prepareOk(0, 1, p))
				}
				if tc.forget {
					f.group(1, vsr.Event{Kind: vsr.EventReconciled, View: 1, Op: p.op() - 1})
				}
				if tc.commitBefore {
					f.commit(0)
				}
				d.view[1] = [2]uint32{1, 0}
				vote := doViewChange(f, 1, 0, 1, p.op()-1, p.op())
				if implicit {
					vote = doViewChangeBelow(f, 1, 0, 1, p.op()-1, p.op()-1)
				}
				f.c.Sent(f.tick(), 1, -1, vote)
				if tc.commit && !tc.commitBefore {
					f.commit(0)
				}
				wantOutcome(t, f, tc.want, 1, p.op())
				v := f.c.Violation()
				if v != nil && implicit && !strings.Contains(v.Detail, fmt.Sprintf("voted head op %d, below op %d", p.op()-1, p.op())) {
					t.Fatalf("the violation does not name the head it voted: %s", v.Detail)
				}
				if v != nil && !strings.Contains(v.Detail, "in view 0 (at ") {
					t.Fatalf("the violation does not name the acknowledgement: %s", v.Detail)
				}
			})
		}
	}
}

// TestCommittedOpLost: a replica whose disk no longer holds a committed op
// it acknowledged lost a write, unless its disk may fault that slot or a
// write to it was misdirected; an op it never acknowledged, or acknowledged
// as a prepare that was not committed, is not its to keep.
func TestCommittedOpLost(t *testing.T) {
	for _, tc := range []struct {
		name              string
		ack, lose         bool
		faultable, missed bool
		forget            bool // the replica then adopts a log ending below the op
		covered           bool // its durable checkpoint covers the op (the ring may reuse the slot)
		want              string
	}{
		{"kept", true, false, false, false, false, false, ""},
		{"lost", true, true, false, false, false, false, checker.CommittedOpLost},
		{"lost on a slot the atlas lets it fault", true, true, true, false, false, false, ""},
		{"lost after a misdirected write", true, true, false, true, false, false, ""},
		{"never acknowledged", false, true, false, false, false, false, ""},
		{"acknowledged, then forgotten by a reconcile", true, true, false, false, true, false, ""},
		{"overwritten once a checkpoint covers it", true, true, false, false, false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, d, p := proposedOnDisks(t)
			if tc.ack {
				f.c.Sent(f.tick(), 2, -1, prepareOk(0, 2, p))
			}
			if tc.forget {
				// Replica 2 adopts a log that ends below the op (a view it
				// leads that never starts); the others commit the op later.
				f.group(2, vsr.Event{Kind: vsr.EventReconciled, View: 1, Op: p.op() - 1})
			}
			f.commitAll()
			k := slotKey{2, p.op()}
			if tc.lose {
				delete(d.held, k)
			}
			d.faultable[k], d.misdirects[k] = tc.faultable, tc.missed
			if tc.covered {
				d.checkpoint = map[uint8]uint64{2: p.op()}
			}
			f.c.AuditDurability(f.tick())
			wantOutcome(t, f, tc.want, 2, p.op())
		})
	}
}

// TestLogShorterThanView: once a replica went Normal with a log_view and a
// head (its reconcile made that log durable), every DoViewChange it sends
// with that log_view reaches that head; a shorter one is a log_view made
// durable before its log, unless a write to a slot in between was
// misdirected. A vote of another log_view is not held to it.
func TestLogShorterThanView(t *testing.T) {
	for _, tc := range []struct {
		name      string
		logView   uint32 // of the vote
		short     bool   // the vote ends one op below the adopted head
		misdirect bool
		want      string
	}{
		{"reaches the adopted head", 2, false, false, ""},
		{"ends below it", 2, true, false, checker.LogShorterThanView},
		{"ends below it after a misdirected write", 2, true, true, ""},
		{"a vote of an older log_view", 1, true, false, ""},
		{"ends where a later view's reconcile cut it", 2, true, false, "reconciled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, d, _ := proposedOnDisks(t)
			head := uint64(len(f.log))
			f.group(1, vsr.Event{Kind: vsr.EventStatus, Status: vsr.StatusNormal, View: 2, LogView: 2, Op: head})
			if tc.misdirect {
				d.misdirects[slotKey{1, head}] = true
			}
			want := tc.want
			if want == "reconciled" {
				// The merge of view 3 truncated op head; replica 1 crashed
				// before persisting log_view 3.
				f.group(1, vsr.Event{Kind: vsr.EventReconciled, View: 3, Op: head - 1})
				want = ""
			}
			op := head
			if tc.short {
				op--
			}
			d.view[1] = [2]uint32{3, 2}
			x := wire.DoViewChangeHeader{Prefix: wire.Prefix{View: 3, Replica: 1}, Op: op, Commit: op,
				Group: wire.MetadataGroup, LogView: tc.logView}
			f.c.Sent(f.tick(), 1, -1, wire.BuildFrame(&x, nil))
			wantOutcome(t, f, want, 1, head)
		})
	}
}

// doViewChangeBelow is a DoViewChange whose log ends at head, below the
// cluster's log, with no nack bits: the ops above head go unreported.
func doViewChangeBelow(f *fakeCluster, view, logView uint32, from uint8, commit, head uint64) []byte {
	var entries []wire.Header
	var present wire.U128
	for op := head; op > commit; op-- {
		present = present.WithBit(len(entries))
		entries = append(entries, f.log[op-1].header)
	}
	x := wire.DoViewChangeHeader{Prefix: wire.Prefix{View: view, Replica: from}, Op: head, Commit: commit,
		Group: wire.MetadataGroup, LogView: logView, PresentBitset: present}
	return wire.BuildFrame(&x, wire.EncodeSuffix(entries))
}

// TestReconcileBelowAnAckOfItsOwnView: a replica that adopts a log of view
// V ending below an op it acknowledged in V takes the acknowledgement back
// (a StartView of its earlier incarnation installed: consensus.md
// correction 6). A reconcile of a later view below the op is the merge's
// right: the acknowledgement is void.
func TestReconcileBelowAnAckOfItsOwnView(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ackView uint32
		logView uint32
		want    string
	}{
		{"the same view", 0, 0, checker.AckedOpTruncated},
		{"a later view", 0, 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, p := proposedOnDisks(t)
			f.c.Sent(f.tick(), 1, -1, prepareOk(tc.ackView, 1, p))
			f.group(1, vsr.Event{Kind: vsr.EventReconciled, View: tc.logView, Op: p.op() - 1})
			wantOutcome(t, f, tc.want, 1, p.op())
		})
	}
}

// TestSlotReusedEarly: an acknowledgement of an op whose journal slot held
// an op the replica's durable checkpoint does not cover is "journal slot
// reused early" (a restart would replay that op from a slot that lost it);
// once the checkpoint covers it, the reuse is the ring's normal wrap.
func TestSlotReusedEarly(t *testing.T) {
	for _, tc := range []struct {
		name    string
		covered bool
		want    string
	}{
		{"covered by the durable checkpoint", true, ""},
		{"above the durable checkpoint", false, checker.SlotReusedEarly},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, d, p := proposedOnDisks(t)
			if p.op() < 2 {
				t.Fatalf("the proposal is op %d: no slot below it to reuse", p.op())
			}
			d.slots = p.op() - 1 // the op's slot held op 1
			if tc.covered {
				d.checkpoint = map[uint8]uint64{1: 1}
			}
			f.c.Sent(f.tick(), 1, -1, prepareOk(0, 1, p))
			if tc.want == "" {
				wantPass(t, f)
				return
			}
			v := wantViolation(t, f, tc.want)
			if !slices.Equal(v.Replicas, []uint8{1}) || !slices.Equal(v.Ops, []uint64{p.op(), 1}) {
				t.Fatalf("evidence %v %v, want replica 1, ops %d and 1", v.Replicas, v.Ops, p.op())
			}
		})
	}
}
