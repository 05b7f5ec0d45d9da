package kernel

import (
	"fmt"
	"testing"
)

func TestClockRealtime(t *testing.T) {
	c := NewClock(-3_000_000_000, 50_000) // 3 s behind, 50 ppm fast
	if got := c.RealtimeNs(0); got != EpochNs-3_000_000_000 {
		t.Fatalf("realtime at 0 = %d", got)
	}
	hour := int64(3600) * 1_000_000_000
	if got, want := c.RealtimeNs(hour), EpochNs-3_000_000_000+hour+hour/20_000; got != want {
		t.Fatalf("realtime after an hour = %d, want %d (180 ms of drift)", got, want)
	}
	if c.MonotonicNs(hour) != hour {
		t.Fatal("drift touched the monotonic clock")
	}
	prev := c.RealtimeNs(0)
	for now := int64(1); now < 10_000_000_000; now = now*3 + 1 {
		if r := c.RealtimeNs(now); r <= prev {
			t.Fatalf("realtime went back at %d", now)
		} else {
			prev = r
		}
	}
}

func TestTickerPauseResume(t *testing.T) {
	l := NewLoop()
	var at []int64
	tk := NewTicker(l, 3, func() { at = append(at, l.Now()) })
	l.RunUntil(35_000_000, 0)
	if len(at) != 3 || at[0] != TickNs || at[2] != 3*TickNs {
		t.Fatalf("ticks at %v", at)
	}
	tk.Pause()
	l.RunUntil(95_000_000, 0)
	if len(at) != 3 {
		t.Fatalf("ticked while paused: %v", at)
	}
	tk.Resume()
	tk.Resume() // idempotent: no second tick stream
	l.RunUntil(125_000_000, 0)
	if len(at) != 6 || at[3] != 100_000_000 || at[5] != 120_000_000 || tk.Ticks() != 6 {
		t.Fatalf("after resume ticks at %v", at)
	}
}

func TestDrawClock(t *testing.T) {
	s := NewStreams(5)
	a := DrawClock(s.Stream("clock.0"), 2_000_000_000, 100_000)
	b := DrawClock(s.Stream("clock.0"), 2_000_000_000, 100_000)
	c := DrawClock(s.Stream("clock.1"), 2_000_000_000, 100_000)
	if a != b {
		t.Fatalf("one stream, two clocks: %+v %+v", a, b)
	}
	if a == c {
		t.Fatalf("two nodes drew the same clock %+v", a)
	}
	for i := range 1000 {
		k := DrawClock(s.Stream(fmt.Sprint("bounds.", i)), 2_000_000_000, 100_000)
		if k.OffsetNs() < -2_000_000_000 || k.OffsetNs() > 2_000_000_000 || k.DriftPPB() < -100_000 || k.DriftPPB() > 100_000 {
			t.Fatalf("clock %+v outside its bounds", k)
		}
	}
	if z := DrawClock(s.Stream("zero"), 0, 0); z.OffsetNs() != 0 || z.DriftPPB() != 0 {
		t.Fatalf("zero bounds gave %+v", z)
	}
}
