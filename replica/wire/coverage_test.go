package wire_test

import (
	"bytes"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/replica/wire/wiresample"
	"pgregory.net/rapid"
)

// detected reports whether a receiver rejects frame.
func detected(frame []byte) bool { return wire.Validate(frame) != nil }

// TestPropertyProtectedRanges: every single-bit flip inside a frame's
// protected ranges is detected, on every valid sample frame.
func TestPropertyProtectedRanges(t *testing.T) {
	frames := wiresample.Frames()
	frames = frames[:len(frames)-2] // the two deliberately invalid frames
	rapid.Check(t, func(t *rapid.T) {
		frame := bytes.Clone(rapid.SampledFrom(frames).Draw(t, "frame"))
		ranges := wire.ProtectedRanges(frame, nil)
		if len(ranges) == 0 {
			c := wire.HeaderOf(frame).Command()
			if c.Sealed() {
				t.Fatalf("sealed %v has no protected range", c)
			}
			return
		}
		r := rapid.SampledFrom(ranges).Draw(t, "range")
		bit := rapid.IntRange(r.From*8, r.To*8-1).Draw(t, "bit")
		frame[bit/8] ^= 1 << (bit % 8)
		if !detected(frame) {
			t.Fatalf("%v: flip of bit %d (byte %d) not detected", wire.HeaderOf(frame).Command(), bit, bit/8)
		}
	})
}

// TestProtectedRangesExhaustive flips every protected bit of a few frames.
func TestProtectedRangesExhaustive(t *testing.T) {
	frames := wiresample.Frames()
	for _, i := range []int{4, 8, 9, 11, 13, 21} { // prepares, DVC, SV, StateTransferTarget
		for _, r := range wire.ProtectedRanges(frames[i], nil) {
			for bit := r.From * 8; bit < r.To*8; bit++ {
				frame := bytes.Clone(frames[i])
				frame[bit/8] ^= 1 << (bit % 8)
				if !detected(frame) {
					t.Fatalf("frame %d (%v): flip of bit %d not detected", i, wire.HeaderOf(frame).Command(), bit)
				}
			}
		}
	}
}
