package kernel

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// probe is an event that records its firings.
type probe struct {
	fired *[]firing
	kind  string
}

type firing struct {
	atNs int64
	arg  uint64
}

func (p *probe) Fire(nowNs int64, arg uint64) (string, int32, uint64) {
	*p.fired = append(*p.fired, firing{nowNs, arg})
	return p.kind, int32(arg % 7), arg
}

// TestPropertyLoopOrder: events fire in (time, scheduling order), virtual
// time never goes back, and every event fires exactly once.
func TestPropertyLoopOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		l := NewLoop()
		var fired []firing
		p := &probe{fired: &fired, kind: "probe"}
		type want struct {
			atNs int64
			seq  int
		}
		var schedule []want
		n := rapid.IntRange(0, 200).Draw(t, "n")
		for i := range n {
			at := rapid.Int64Range(0, 50).Draw(t, "at")
			l.At(at, p, uint64(i))
			schedule = append(schedule, want{at, i})
		}
		slices.SortStableFunc(schedule, func(a, b want) int { return int(a.atNs - b.atNs) })
		for l.Step() {
		}
		if len(fired) != n {
			t.Fatalf("%d firings of %d events", len(fired), n)
		}
		for i, f := range fired {
			if f.atNs != schedule[i].atNs || f.arg != uint64(schedule[i].seq) {
				t.Fatalf("firing %d = %+v, want %+v", i, f, schedule[i])
			}
		}
		if l.Processed() != uint64(n) || l.Pending() != 0 {
			t.Fatalf("processed %d pending %d", l.Processed(), l.Pending())
		}
	})
}

// chain schedules itself again from inside Fire, as components do.
type chain struct {
	loop  *Loop
	left  int
	every int64
}

func (c *chain) Fire(nowNs int64, arg uint64) (string, int32, uint64) {
	if c.left > 0 {
		c.left--
		c.loop.After(c.every, c, arg+1)
	}
	return "chain", 0, arg
}

func TestRunUntil(t *testing.T) {
	l := NewLoop()
	c := &chain{loop: l, left: 100, every: 10}
	l.At(5, c, 0)
	if !l.RunUntil(55, 0) {
		t.Fatal("stopped by a bound it does not have")
	}
	if l.Now() != 55 || l.Processed() != 6 {
		t.Fatalf("now %d processed %d, want 55 and 6 (at 5, 15, ..., 55)", l.Now(), l.Processed())
	}
	if next, ok := l.NextAt(); !ok || next != 65 {
		t.Fatalf("next at %d %v", next, ok)
	}
	if l.RunUntil(1000, 3) || l.Processed() != 9 {
		t.Fatalf("eventsMax 3: processed %d", l.Processed())
	}
}

func TestSchedulingInThePastPanics(t *testing.T) {
	l := NewLoop()
	l.RunUntil(100, 0)
	defer func() {
		if recover() == nil {
			t.Fatal("At(50) at time 100 did not panic")
		}
	}()
	l.At(50, &chain{loop: l}, 0)
}

// run drives a small deterministic workload and returns its digest and trace.
func run(seed uint64, record bool) (uint64, []TraceEntry) {
	l := NewLoop()
	l.RecordTrace(record)
	rng := NewStreams(seed).Stream("workload")
	var fired []firing
	p := &probe{fired: &fired, kind: "probe"}
	for i := range 300 {
		l.At(rng.Int64N(1_000_000), p, rng.Uint64()%1000+uint64(i))
	}
	l.RunUntil(2_000_000, 0)
	return l.Digest(), l.Trace()
}

func TestDigestDeterminism(t *testing.T) {
	a, ta := run(1, true)
	b, tb := run(1, true)
	c, tc := run(2, true)
	if a != b || FirstDivergence(ta, tb) != -1 {
		t.Fatalf("same seed, digests %x %x, divergence at %d", a, b, FirstDivergence(ta, tb))
	}
	if a == c || FirstDivergence(ta, tc) == -1 {
		t.Fatalf("different seeds, same digest %x", a)
	}
	if d, _ := run(1, false); d != a {
		t.Fatalf("recording changed the digest: %x vs %x", d, a)
	}
	// A single changed event is named.
	tb[17].Hash ^= 1
	if i := FirstDivergence(ta, tb); i != 17 {
		t.Fatalf("divergence at %d, want 17", i)
	}
	if i := FirstDivergence(ta, ta[:10]); i != 10 {
		t.Fatalf("prefix divergence at %d, want 10", i)
	}
}

// TestLoopSteadyStateDoesNotAllocate: once the queue has grown, scheduling and
// firing allocate nothing.
func TestLoopSteadyStateDoesNotAllocate(t *testing.T) {
	l := NewLoop()
	c := &chain{loop: l, left: 1 << 30, every: 3}
	for i := range 64 {
		l.At(int64(i), c, 0)
	}
	l.RunUntil(1000, 0)
	allocs := testing.AllocsPerRun(100, func() { l.RunUntil(l.Now()+100, 0) })
	if allocs != 0 {
		t.Fatalf("%v allocations per 100ns of a 64-chain loop", allocs)
	}
}

func BenchmarkLoopEvents(b *testing.B) {
	l := NewLoop()
	c := &chain{loop: l, left: 1 << 62, every: 1000}
	for i := range 1024 {
		l.At(int64(i), c, 0)
	}
	b.ReportAllocs()
	for b.Loop() {
		l.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// TestDescribeDivergence: the message names the diverging event on both
// sides, and a trace that ends early reads as its end instead of an index
// out of range.
func TestDescribeDivergence(t *testing.T) {
	e := func(seq uint64, hash uint64) TraceEntry {
		return TraceEntry{AtNs: int64(seq) * 10, Seq: seq, Kind: "probe", Node: 1, Hash: hash}
	}
	full := []TraceEntry{e(1, 1), e(2, 2), e(3, 3)}
	changed := []TraceEntry{e(1, 1), e(2, 9), e(3, 3)}
	cases := []struct {
		name string
		a, b []TraceEntry
		want string
	}{
		{"identical", full, full, ""},
		{"both empty", nil, nil, ""},
		{"one event differs", full, changed,
			"first divergence at event 1: " + full[1].String() + " vs " + changed[1].String()},
		{"second is a prefix", full, full[:2],
			"first divergence at event 2: " + full[2].String() + " vs end of trace (2 events)"},
		{"first is a prefix", full[:1], full,
			"first divergence at event 1: end of trace (1 events) vs " + full[1].String()},
		{"first is empty", nil, full,
			"first divergence at event 0: end of trace (0 events) vs " + full[0].String()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DescribeDivergence(c.a, c.b); got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}
