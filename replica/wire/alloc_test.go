package wire_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/replica/wire/wiresample"
)

// TestDecodeDoesNotAllocate: validating and decoding a valid
// frame costs no allocation, on every command 5-29. It runs outside package
// wire because wiresample, which has a frame of every command, imports wire.
// Every valid sample frame is measured, so the bodies a receiver verifies
// (a SendMessages batch, a DVC/SV suffix, a manifest) are measured too;
// TestDecodeDoesNotAllocateLargest (bench_test.go) adds a full suffix.
func TestDecodeDoesNotAllocate(t *testing.T) {
	seen := map[wire.Command]bool{}
	for i, frame := range wiresample.Frames() {
		h := wire.HeaderOf(frame)
		c := h.Command()
		if !c.IsReplicaPlane() || wire.Validate(frame) != nil {
			continue // the sample's deliberately invalid frames
		}
		seen[c] = true
		// The typed view is made outside the measurement: a receiver keeps
		// one per command, and only Validate and Decode are on the hot path.
		x := wire.TypedFor(c)
		if x == nil {
			t.Fatalf("frame %d: no typed header for %v", i, c)
		}
		allocs := testing.AllocsPerRun(100, func() {
			if err := wire.Validate(frame); err != nil {
				t.Fatal(err)
			}
			x.Decode(h)
		})
		if allocs != 0 {
			t.Errorf("frame %d (%v): %v allocations per validate+decode", i, c, allocs)
		}
	}
	for c := wire.CommandRequest; c <= wire.CommandMax; c++ {
		if !seen[c] {
			t.Errorf("no valid sample frame of %v: its decode is not measured", c)
		}
	}
}
