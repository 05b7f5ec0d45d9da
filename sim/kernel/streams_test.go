package kernel

import "testing"

func TestStreams(t *testing.T) {
	s := NewStreams(42)
	a1, a2, b := s.Stream("network.delay"), s.Stream("network.delay"), s.Stream("network.reset")
	other := NewStreams(43).Stream("network.delay")
	sameLabel, sameSeed, otherSeed := 0, 0, 0
	for range 64 {
		x, y, z, w := a1.Uint64(), a2.Uint64(), b.Uint64(), other.Uint64()
		if x == y {
			sameLabel++
		}
		if x == z {
			sameSeed++
		}
		if x == w {
			otherSeed++
		}
	}
	if sameLabel != 64 {
		t.Errorf("one label gave different sequences (%d of 64 equal)", sameLabel)
	}
	if sameSeed != 0 || otherSeed != 0 {
		t.Errorf("distinct streams collide: %d by label, %d by seed", sameSeed, otherSeed)
	}
}

// TestStreamsIsolation: drawing more from one label never shifts another.
func TestStreamsIsolation(t *testing.T) {
	s := NewStreams(7)
	quiet := s.Stream("storage")
	want := []uint64{quiet.Uint64(), quiet.Uint64(), quiet.Uint64()}
	s2 := NewStreams(7)
	busy := s2.Stream("network")
	for range 1000 {
		busy.Uint64()
	}
	again := s2.Stream("storage")
	for i, w := range want {
		if got := again.Uint64(); got != w {
			t.Fatalf("draw %d of storage = %x, want %x", i, got, w)
		}
	}
}
