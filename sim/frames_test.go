package sim

import (
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// Outputs.Frames sees the frames between replicas without changing the
// run: the digest is that of a plain run; every frame is delivered after it
// was sent, and nearly every send time is known (only a corrupted header or
// a frame the stale-answer nemesis held goes without). Two runs: every
// fault turned up, and swarm seed 1 (six replicas, the stale-answer
// nemesis on).
func TestFramesOutputKeepsTheDigest(t *testing.T) {
	for _, o := range []Options{faultyTraceOptions(faultyTraceSeed), Swarm(1)} {
		framesKeepTheDigest(t, o)
	}
}

func framesKeepTheDigest(t *testing.T, o Options) {
	plain := RunWith(o, Outputs{})
	var frames, known, corruptOrHeld int
	commands := map[string]int{}
	tapped := RunWith(o, Outputs{Frames: func(f PeerFrame) {
		frames++
		if f.From == f.To || int(f.From) >= o.Replicas || int(f.To) >= o.Replicas {
			t.Fatalf("a frame from %d to %d: not between two replicas of %d", f.From, f.To, o.Replicas)
		}
		if len(f.Frame) < wire.HeaderSize {
			t.Fatalf("a frame of %d bytes, shorter than a header", len(f.Frame))
		}
		commands[wire.HeaderOf(f.Frame).Command().SnakeName()]++
		switch {
		case f.SentNs < 0:
			corruptOrHeld++
		case f.SentNs > f.AtNs:
			t.Fatalf("a %s frame delivered at %d ns, sent after, at %d", wire.HeaderOf(f.Frame).Command().SnakeName(), f.AtNs, f.SentNs)
		default:
			known++
		}
	}})
	if tapped.Digest != plain.Digest || tapped.Summary() != plain.Summary() {
		t.Fatalf("with Frames:\n%s\nwithout:\n%s", tapped.Summary(), plain.Summary())
	}
	if frames == 0 || commands["prepare"] == 0 || commands["prepare_ok"] == 0 {
		t.Fatalf("%d frames seen, by command %v: want prepares and prepare_oks", frames, commands)
	}
	// Corrupted frames are a few in a thousand here (faultyTraceOptions).
	if known < frames*95/100 {
		t.Fatalf("send times known for %d of %d frames (%d without): want nearly all", known, frames, corruptOrHeld)
	}
	t.Logf("%d frames, %d without a send time, by command %v", frames, corruptOrHeld, commands)
}

// frameTap matches a delivery to the oldest send of the same header on its
// connection direction, drops what was sent before it (lost: the direction
// delivers in order), and leaves a corrupted header unmatched.
func TestFrameTapMatchesSendsInOrder(t *testing.T) {
	frame := func(sum uint64) []byte {
		f := make([]byte, wire.HeaderSize)
		var x wire.PrepareOkHeader
		x.Command = wire.CommandPrepareOk
		x.Encode(wire.HeaderOf(f))
		wire.HeaderOf(f).SetChecksum(wire.U128From64(sum))
		return f
	}
	var got []int64
	tap := newFrameTap(func(f PeerFrame) { got = append(got, f.SentNs) })
	tap.sent(10, 0, 7, frame(1))
	tap.sent(20, 0, 7, frame(2))
	tap.sent(30, 0, 7, frame(2))
	tap.sent(40, 1, 7, frame(3))         // the other direction
	tap.delivered(50, 7, 0, 1, frame(2)) // frame 1 was lost
	tap.delivered(60, 7, 0, 1, frame(9)) // corrupted: matches nothing
	tap.delivered(70, 7, 0, 1, frame(2))
	tap.delivered(80, 7, 0, 1, frame(1)) // already dropped as lost
	tap.delivered(90, 7, 1, 0, frame(3))
	want := []int64{20, -1, 30, -1, 40}
	if len(got) != len(want) {
		t.Fatalf("send times %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("send times %v, want %v", got, want)
		}
	}
}

// Result.ViolationAtNs is when the checker found the violation, not the
// end of the run, and a passing run has none.
func TestViolationAtNs(t *testing.T) {
	o := Swarm(21)
	o.NoFaults()
	o.Replicas, o.Clients, o.Requests, o.Lite = 3, 3, 60, true
	if r := runVOPR(o, Outputs{}, nil); r.Outcome != Pass || r.ViolationAtNs != 0 {
		t.Fatalf("a pass: %s, violation at %d ns", r.Outcome, r.ViolationAtNs)
	}
	const at = 300 * kernel.TickNs
	r := runVOPR(o, Outputs{}, func(c *Cluster) {
		c.Loop.At(at, strikeAt{c}, 0)
	})
	if r.Outcome != Correctness || r.ViolationAtNs != at {
		t.Fatalf("%s: %s: violation at %d ns, want %d", r.Outcome, r.Violation, r.ViolationAtNs, at)
	}
}

// strikeAt records a replica panic with the checker when it fires.
type strikeAt struct{ c *Cluster }

func (s strikeAt) Fire(nowNs int64, _ uint64) (string, int32, uint64) {
	s.c.Checker.Panic(nowNs, 1, "struck by the test")
	return "test.strike", 1, 0
}
