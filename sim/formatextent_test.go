package sim

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker/diskread"
)

// The swarm draws a small format extent and a small flush-bytes threshold
// in some seeds, from a stream of their own (issue 26: no swarm ring had an
// op in slot 256 or above, so the journal never formatted a next extent,
// and no seed buffered 1 MiB, so a segment log never flushed on bytes):
// some seeds of 1..40 draw each and some do not, and a run that forces a
// two-slot extent ends with a superblock that records more formatted slots
// than its format did, which only the extension writes.
func TestSwarmFormatsExtentsAndFlushesOnBytes(t *testing.T) {
	extents, flushes := 0, 0
	for seed := uint64(1); seed <= 40; seed++ {
		o := Swarm(seed)
		if o.FormatExtentSlots > 0 {
			extents++
		}
		if o.FlushBytes > 0 {
			flushes++
		}
		if err := o.Check(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	if extents == 0 || extents == 40 || flushes == 0 || flushes == 40 {
		t.Fatalf("seeds 1..40: %d draw a format extent, %d a flush-bytes threshold", extents, flushes)
	}

	o := Swarm(2)
	o.FormatExtentSlots, o.FlushBytes = 2, 256
	var c *Cluster
	res := runVOPR(o, Outputs{}, func(cl *Cluster) { c = cl })
	if res.Outcome != Pass {
		t.Fatalf("seed 2 with a two-slot extent: %s %s", res.Outcome, res.Violation)
	}
	sb, err := diskread.ReadSuperblock(c.disks.Geometry(0), c.disks.Peek(0))
	if err != nil {
		t.Fatal(err)
	}
	if sb.Formatted <= 2 {
		t.Fatalf("replica 0's superblock records %d formatted slots, the format's two: no extent was added", sb.Formatted)
	}
}
