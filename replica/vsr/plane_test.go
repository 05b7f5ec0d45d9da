package vsr

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// testPlane stamps each prepare's body with its op (one byte), as a
// partition primary stamps base_offset, and admits at a backup only the
// stamp of the op on top of its head, unless refuse says otherwise.
type testPlane struct {
	r       *replica
	refuse  bool // Admit refuses everything (a backup whose next offset disagrees)
	noStamp bool // Stamp refuses (a primary missing a body below its head)
}

func (p *testPlane) Stamp(x *wire.PrepareHeader, body []byte) ([]byte, bool) {
	if p.noStamp {
		return nil, false
	}
	return append(append([]byte(nil), body...), byte(x.Op)), true
}

// Intact: the body's last byte is the op it was stamped with.
func (p *testPlane) Intact(frame []byte) bool {
	var x wire.PrepareHeader
	x.Decode(wire.HeaderOf(frame))
	body := frame[wire.HeaderSize:]
	return len(body) > 0 && body[len(body)-1] == byte(x.Op)
}

func (p *testPlane) Admit(frame []byte) bool {
	var x wire.PrepareHeader
	x.Decode(wire.HeaderOf(frame))
	body := frame[wire.HeaderSize:]
	return !p.refuse && len(body) > 0 && body[len(body)-1] == byte(p.r.group.Op()+1) && x.Op == p.r.group.Op()+1
}

// TestPlaneRefusesAStampedPrepare: a backup whose plane refuses a prepare's
// stamp does not journal, forward or acknowledge it (partition-plane.md
// "Backup"); the op commits only on a quorum of replicas that admitted it,
// and not at all when too few do.
func TestPlaneRefusesAStampedPrepare(t *testing.T) {
	planes := map[uint8]*testPlane{}
	c := newCluster(t, 3, 51)
	c.plane = func(r *replica) Plane {
		p := &testPlane{r: r}
		planes[r.id] = p
		return p
	}
	for _, r := range c.replicas { // restart fresh with the planes in place
		r.start(true)
	}
	r0, r1, r2 := c.replicas[0], c.replicas[1], c.replicas[2]
	acks := map[uint8]int{}
	c.observe = func(m message) {
		if wire.HeaderOf(m.frame).Command() == wire.CommandPrepareOk {
			acks[m.from]++
		}
	}
	// Repair would bring the op to r2 with its identity checked instead
	// (the canonical prepare, not the primary's live stream): keep it out.
	c.drop = func(m message) bool {
		return m.from == 2 && wire.HeaderOf(m.frame).Command() == wire.CommandRequestPrepares
	}
	planes[2].refuse = true
	proposeAt(t, r0, 1)
	c.settle()
	c.tick(0, 80)
	if r0.group.CommitMin() != 1 || r1.group.CommitMin() != 1 {
		t.Fatalf("op 1 not committed on the two replicas that admitted it: r0 %d, r1 %d", r0.group.CommitMin(), r1.group.CommitMin())
	}
	if _, held := r2.journal.Frame(1); held || r2.group.Op() != 0 || acks[2] != 0 {
		t.Fatalf("the refusing backup journaled (%v), took (op %d) or acknowledged (%d) the prepare", held, r2.group.Op(), acks[2])
	}
	if c.probes["prepare refused by the plane: stamp not this replica's next"] == 0 {
		t.Fatal("no refusal reported")
	}
	planes[1].refuse = true
	proposeAt(t, r0, 2)
	c.settle()
	c.tick(0, 80)
	if r0.group.CommitMax() != 1 || r0.group.PipelineLen() != 1 {
		t.Fatalf("op 2 committed (commit_max %d) with only the primary holding it", r0.group.CommitMax())
	}
	planes[0].noStamp = true
	if res := r0.group.Propose(Proposal{Client: wire.U128From64(9), Request: 3, Operation: wire.OperationSendMessages}); res != Refused {
		t.Fatalf("a proposal the plane cannot stamp was %v", res)
	}
	if r0.group.Op() != 2 {
		t.Fatalf("a refused stamp still prepared op %d", r0.group.Op())
	}
}

// TestPlaneDropsACorruptBody: a partition prepare's identity covers its
// header alone, so a repaired prepare whose body a bit flip on the wire
// changed passes every identity and chain check. The plane's Intact check
// drops it; the repair asks again and journals the intact copy (the
// replica would otherwise commit the corrupt body: a partition primary's
// peers would apply another batch than it did).
func TestPlaneDropsACorruptBody(t *testing.T) {
	c := newCluster(t, 3, 71)
	c.plane = func(r *replica) Plane { return &testPlane{r: r} }
	for _, r := range c.replicas {
		r.start(true)
	}
	r0, r2 := c.replicas[0], c.replicas[2]
	c.drop = func(m message) bool {
		return m.to == 2 && wire.HeaderOf(m.frame).Command() == wire.CommandPrepare
	}
	corrupted := 0
	c.mutate = func(m message) []byte {
		if m.to != 2 || wire.HeaderOf(m.frame).Command() != wire.CommandRepairPrepare || corrupted > 0 {
			return m.frame
		}
		corrupted++
		f := append([]byte(nil), m.frame...)
		f[len(f)-1] ^= 0x40
		return f
	}
	proposeAt(t, r0, 1)
	c.settle()
	c.tick(0, 80)
	if !c.runUntil(200_000, func() bool { return r2.group.CommitMin() == 1 }) {
		c.dump()
		t.Fatalf("r2 never committed op 1 (probes %v)", c.probes)
	}
	if corrupted == 0 || c.probes["repaired prepare dropped: its body is corrupt"] == 0 {
		t.Fatalf("no corrupt repair was dropped (corrupted %d, probes %v)", corrupted, c.probes)
	}
	want, _ := r0.journal.Frame(1)
	got, _ := r2.journal.Frame(1)
	if string(got) != string(want) {
		t.Fatal("r2 journaled another body than the primary's under op 1's identity")
	}
}
