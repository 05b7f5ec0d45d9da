package sim

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/storage"
)

// TestMisdirectedLandingIsExcused: a misdirected write aimed at one journal
// slot that lands on another overwrites what a replica acknowledged there
// by no fault of its own, so the durability oracle must excuse both slots
// (the one the write missed and the one it hit). Without the second, the
// checker reported "acknowledged before durable" for a prepare its replica
// had synced long before (VOPR seed 154 with five replicas and one-way
// uniform-size partitions).
func TestMisdirectedLandingIsExcused(t *testing.T) {
	c := NewCluster(DefaultClusterOptions(1, 3, 1))
	submitStreams(c.Clients[0], "a", 12)
	if !c.RunUntil(60*second, func() bool { return clientsIdle(c) }) {
		dumpCluster(t, c)
		t.Fatal("the client did not finish")
	}
	top := c.Checker.Committed()
	if !c.RunUntil(10*second, func() bool { return c.CommittedEverywhere(top) }) {
		dumpCluster(t, c)
		t.Fatal("not every replica applied every op")
	}
	r := uint8(1)
	held := func() (held, lost []uint64) {
		for op := uint64(1); op <= top; op++ {
			id, acked := c.Checker.Acknowledged(r, op)
			if !acked {
				continue
			}
			if c.disks.HoldsAcknowledged(r, op, id) {
				held = append(held, op)
			} else {
				lost = append(lost, op)
			}
		}
		return held, lost
	}
	slotCount := c.disks.cfg[r].SlotCount
	before, lost := held()
	if len(before) < 4 || len(lost) != 0 || top+8 > slotCount {
		t.Fatalf("before any misdirect replica %d holds acknowledged ops %v and lost %v", r, before, lost)
	}
	for _, op := range before {
		if c.disks.Misdirected(r, op) {
			t.Fatalf("op %d is reported misdirected before any misdirect", op)
		}
	}

	// Rewrite the header copy of acknowledged slots with what it holds (a
	// write that lands where it is aimed changes nothing) until one write
	// misses its slot: it lands on another slot's header copy.
	dev := c.Replicas[r].Device()
	dev.SetFaults(storage.Faults{MisdirectProbability: 1})
	zone := c.Layout.ZoneIndex(journal.ZoneHeaders)
	copyBytes := make([]byte, c.Layout.Zone(zone).ChunkSectors*uint64(c.disks.cfg[r].SectorSize))
	// Aim only at slots of no acknowledged op (so none of them is excused
	// as a slot that missed a write); the landing chunk is drawn among those
	// the atlas grants the replica: keep aiming until one lands on an
	// acknowledged slot.
	const attemptsMax = 1000
	target := uint64(0)
	missed := 0
	for attempt := 0; attempt < attemptsMax && len(lost) == 0; attempt++ {
		op := top + 1 + uint64(attempt)%(slotCount-top)
		first := c.Layout.ChunkStart(zone, op%slotCount)
		dev.PeekDurable(first, copyBytes)
		done := false
		dev.Write(first, copyBytes, func(err error) {
			if err != nil {
				t.Fatalf("write: %v", err)
			}
			dev.Sync(func(error) { done = true })
		})
		if !c.RunUntil(second, func() bool { return done }) {
			t.Fatal("the write did not complete")
		}
		if dev.Missed(first, 1) {
			missed++
			target = op
		}
		_, lost = held()
	}
	dev.SetFaults(storage.Faults{})
	if len(lost) == 0 {
		t.Fatalf("%d writes to replica %d's header copies of ops %v, %d missed, none landed on an acknowledged slot", attemptsMax, r, before, missed)
	}
	for _, op := range lost {
		if !c.disks.Misdirected(r, op) {
			t.Errorf("op %d's header copy was overwritten by a misdirected write, but it is not excused", op)
		}
	}
	if !c.disks.Misdirected(r, target) {
		t.Errorf("a write aimed at slot %d missed it, but it is not excused", target%slotCount)
	}
}
