package kernel

import (
	"slices"
	"testing"
)

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

// TestReseedMovesFaultStreamsOnly: after Reseed, a fault stream handed out
// before (and one handed out after) draws another sequence than the
// unsalted run's, the same for the same salt; other streams go on as if
// nothing happened.
func TestReseedMovesFaultStreamsOnly(t *testing.T) {
	draws := func(salt uint64) (before, after, other []uint64) {
		s := NewStreams(99)
		net, work := s.Stream("network.delay"), s.Stream("workload.mix")
		for range 3 { // the prefix: identical whatever the salt
			before = append(before, net.Uint64())
			other = append(other, work.Uint64())
		}
		if salt != 0 {
			s.Reseed(salt)
		}
		late := s.Stream("storage.0.fault.latent")
		for range 8 {
			before = append(before, net.Uint64())
			after = append(after, late.Uint64())
			other = append(other, work.Uint64())
		}
		return before, after, other
	}
	b0, a0, o0 := draws(0)
	b1, a1, o1 := draws(1)
	b1again, a1again, _ := draws(1)
	b2, _, _ := draws(2)
	if !slices.Equal(b0[:3], b1[:3]) {
		t.Fatalf("the prefix before Reseed differs: %x vs %x", b0[:3], b1[:3])
	}
	if slices.Equal(b0[3:], b1[3:]) || slices.Equal(a0, a1) || slices.Equal(b1[3:], b2[3:]) {
		t.Fatalf("Reseed left a fault stream's sequence alone: %x %x %x", b0[3:], b1[3:], b2[3:])
	}
	if !slices.Equal(b1, b1again) || !slices.Equal(a1, a1again) {
		t.Fatalf("one salt gave two sequences")
	}
	if !slices.Equal(o0, o1) {
		t.Fatalf("Reseed moved a stream that is not a fault stream: %x vs %x", o0, o1)
	}
	s := NewStreams(5)
	s.Stream("vopr.process")
	s.Stream("replica.0.0")
	if got := s.FaultStreams(); !slices.Equal(got, []string{"vopr.process"}) {
		t.Fatalf("FaultStreams = %q", got)
	}
}

// TestReseedRules: salt 0 and a second Reseed are refused.
func TestReseedRules(t *testing.T) {
	for name, f := range map[string]func(){
		"salt 0":       func() { NewStreams(1).Reseed(0) },
		"twice":        func() { s := NewStreams(1); s.Reseed(1); s.Reseed(2) },
		"zero Streams": func() { Streams{}.Reseed(1) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Reseed did not panic", name)
				}
			}()
			f()
		}()
	}
}
