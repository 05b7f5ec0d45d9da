package network_test

import (
	"math/bits"
	"testing"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/replica/wire/wiresample"
	"pgregory.net/rapid"
)

const ms = int64(1_000_000)

// faultKnobs says which faults a property's random world may use.
type faultKnobs struct {
	clogs, partitions, resets, downs, closes bool
}

// drawOptions draws delays and the enabled faults.
func drawOptions(t *rapid.T, k faultKnobs) network.Options {
	o := quietOptions()
	o.DelayMinNs = rapid.Int64Range(0, 2*ms).Draw(t, "delay_min_ns")
	o.DelayMeanNs = rapid.Int64Range(0, 20*ms).Draw(t, "delay_mean_ns")
	o.ConnectDelayMinNs = rapid.Int64Range(0, 2*ms).Draw(t, "connect_min_ns")
	o.ConnectDelayMeanNs = rapid.Int64Range(0, 5*ms).Draw(t, "connect_mean_ns")
	o.TCPTimeoutMinNs = rapid.Int64Range(10*ms, 2000*ms).Draw(t, "tcp_timeout_min_ns")
	o.TCPTimeoutMeanNs = rapid.Int64Range(0, 2000*ms).Draw(t, "tcp_timeout_mean_ns")
	if k.clogs {
		o.ClogProbability = rapid.SampledFrom([]float64{0.001, 0.01, 0.1}).Draw(t, "clog_probability")
		o.ClogDurationMeanNs = rapid.Int64Range(0, 300*ms).Draw(t, "clog_mean_ns")
	}
	if k.partitions {
		// Random partitions in every mode; scripted ones (drive) cover none.
		o.PartitionMode = network.PartitionMode(rapid.IntRange(1, 3).Draw(t, "partition_mode"))
		o.PartitionSymmetry = network.PartitionSymmetry(rapid.IntRange(0, 1).Draw(t, "partition_symmetry"))
		o.PartitionProbability = rapid.SampledFrom([]float64{0.1, 0.5, 1}).Draw(t, "partition_probability")
		o.UnpartitionProbability = rapid.SampledFrom([]float64{0.1, 0.5, 1}).Draw(t, "unpartition_probability")
		o.PartitionStabilityMinTicks = rapid.Int64Range(0, 30).Draw(t, "partition_min_ticks")
		o.UnpartitionStabilityMinTicks = rapid.Int64Range(0, 10).Draw(t, "unpartition_min_ticks")
	}
	if k.resets {
		o.ResetProbability = rapid.SampledFrom([]float64{0, 0.01, 0.1}).Draw(t, "reset_probability")
	}
	return o
}

// upNode draws a node that is up, or false if none is.
func (w *world) upNode(t *rapid.T, label string) (network.NodeID, bool) {
	var up []network.NodeID
	for i := range w.nodes {
		if w.net.Up(network.NodeID(i)) {
			up = append(up, network.NodeID(i))
		}
	}
	if len(up) == 0 {
		return 0, false
	}
	return rapid.SampledFrom(up).Draw(t, label), true
}

// drive runs a random sequence of actions on w: dials, sends (frames from
// next), time advancing, and, as k allows, node failures, closes and
// scripted partitions, clogs and resets.
func (w *world) drive(t *rapid.T, k faultKnobs, next func() []byte) {
	// Start connected: every node dials every replica, then time passes.
	for from := range w.nodes {
		for to := range w.replicas() {
			if from != to {
				w.dial(network.NodeID(from), network.NodeID(to))
			}
		}
	}
	w.run(w.loop.Now() + 50*ms)
	steps := rapid.IntRange(1, 200).Draw(t, "steps")
	for range steps {
		switch rapid.IntRange(0, 13).Draw(t, "action") {
		case 0, 1:
			from, ok := w.upNode(t, "dial_from")
			if !ok {
				continue
			}
			to := network.NodeID(rapid.IntRange(0, w.nodes-1).Draw(t, "dial_to"))
			if to != from {
				w.dial(from, to)
			}
		case 2, 3, 4, 5, 6:
			// Mostly on a connection the sender believes open; sometimes
			// on any it knows (closed, reset), which Send must refuse.
			usable := w.usable(rapid.IntRange(0, 4).Draw(t, "any_conn") == 0)
			if len(usable) == 0 {
				continue
			}
			u := rapid.SampledFrom(usable).Draw(t, "send_on")
			for range rapid.IntRange(1, 8).Draw(t, "burst") {
				if !w.send(u.c, u.from, next()) {
					break
				}
			}
		case 7, 8, 9:
			w.run(w.loop.Now() + rapid.Int64Range(0, 200*ms).Draw(t, "advance_ns"))
		case 10:
			if !k.downs {
				continue
			}
			id := network.NodeID(rapid.IntRange(0, w.nodes-1).Draw(t, "toggle_node"))
			w.setUp(id, !w.net.Up(id))
		case 11:
			if !k.closes || len(w.tracks) == 0 {
				continue
			}
			c := network.ConnID(rapid.IntRange(1, len(w.tracks)).Draw(t, "close_conn"))
			tr := w.track(c)
			by := tr.ends[rapid.IntRange(0, 1).Draw(t, "close_end")]
			if w.net.Up(by) && w.knows(c, by) {
				w.close(c, by)
			}
		case 12:
			switch {
			case k.partitions && w.replicas() >= 2 && rapid.Bool().Draw(t, "scripted_partition"):
				var side []network.NodeID
				for i := range w.replicas() - 1 {
					if rapid.Bool().Draw(t, "in_side") {
						side = append(side, network.NodeID(i))
					}
				}
				if len(side) > 0 {
					w.net.Partition(side, rapid.Bool().Draw(t, "one_way"))
				}
			case k.clogs:
				from := network.NodeID(rapid.IntRange(0, w.nodes-1).Draw(t, "clog_from"))
				to := network.NodeID(rapid.IntRange(0, w.nodes-1).Draw(t, "clog_to"))
				w.net.Clog(from, to, w.loop.Now()+rapid.Int64Range(0, 500*ms).Draw(t, "clog_ns"))
			}
		case 13:
			if k.resets && len(w.tracks) > 0 {
				w.reset(network.ConnID(rapid.IntRange(1, len(w.tracks)).Draw(t, "reset_conn")))
			}
		}
	}
}

// end is a connection end: a node's handle on a connection.
type end struct {
	c    network.ConnID
	from network.NodeID
}

// usable returns, in id order, the ends whose node is up and knows the
// connection; unless anyKnown, only those it believes open (connected or
// accepted, no Closed seen, not closed by it).
func (w *world) usable(anyKnown bool) []end {
	var out []end
	for i, tr := range w.tracks {
		c := network.ConnID(i + 1)
		for e, node := range tr.ends {
			if !w.net.Up(node) || !w.knows(c, node) {
				continue
			}
			open := (e == 0 && tr.opened || e == 1 && tr.accepted) && tr.closedAt[e] < 0 && !tr.closedBy[e]
			if open || anyKnown {
				out = append(out, end{c, node})
			}
		}
	}
	return out
}

func (w *world) replicas() int {
	n := 0
	for n < w.nodes && w.isReplica[n] {
		n++
	}
	return n
}

// seqFrames returns a generator of distinct sealed frames.
func seqFrames() func() []byte {
	seq := uint64(0)
	return func() []byte {
		seq++
		return commitFrame(seq, uint8(seq%3))
	}
}

func drawWorld(t *rapid.T, k faultKnobs) *world {
	o := drawOptions(t, k)
	replicas := rapid.IntRange(2, 5).Draw(t, "replicas")
	clients := rapid.IntRange(0, 2).Draw(t, "clients")
	return newWorld(t, rapid.Uint64().Draw(t, "seed"), o, replicas, clients)
}

// untouched reports whether nothing could have lost a frame of tr: it
// opened, no end closed or saw Closed, and no end's node failed since.
func (w *world) untouched(c network.ConnID) bool {
	tr := w.track(c)
	return tr.opened && tr.accepted && tr.resetAtNs < 0 && !tr.closedBy[0] && !tr.closedBy[1] &&
		tr.closedAt[0] < 0 && tr.closedAt[1] < 0 && w.knows(c, tr.ends[0]) && w.knows(c, tr.ends[1])
}

// TestPropertyFIFO: under random delays, clogs, partitions (random and
// scripted), resets, node failures and closes, every connection direction
// delivers a prefix of what was sent, in order, byte for byte; nothing is
// delivered across a cut, on a clogged path, to a down node, to an earlier
// incarnation of a node or after the receiver closed (checked at every
// callback); every frame is accounted for; and a connection nothing touched
// delivers everything once faults stop.
func TestPropertyFIFO(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := faultKnobs{clogs: true, partitions: true, resets: true, downs: true, closes: true}
		w := drawWorld(t, k)
		w.drive(t, k, seqFrames())
		w.checkFIFO()
		w.checkCounters()
		w.quiesce()
		w.checkFIFO()
		w.checkCounters()
		if st := w.net.Stats(); st.FramesInFlight != 0 {
			t.Fatalf("%d frames still in flight after quiescence", st.FramesInFlight)
		}
		for i, tr := range w.tracks {
			if !w.untouched(network.ConnID(i + 1)) {
				continue
			}
			for s := range 2 {
				if len(tr.got[s]) != len(tr.sent[s]) {
					t.Fatalf("conn %d dir %d: untouched, yet %d of %d frames delivered", i+1, s, len(tr.got[s]), len(tr.sent[s]))
				}
			}
		}
	})
}

// TestPropertyResetLosesInFlight: a reset loses exactly the frames in flight
// (everything sent before it and not yet delivered), never delivers any of
// them later, and refuses every send after it; both open ends see Closed.
func TestPropertyResetLosesInFlight(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := faultKnobs{clogs: true, resets: true}
		w := drawWorld(t, k)
		w.drive(t, k, seqFrames())
		w.quiesce()
		w.checkFIFO()
		w.checkCounters()
		var lost uint64
		for i, tr := range w.tracks {
			for s := range 2 {
				lost += uint64(len(tr.sent[s]) - len(tr.got[s]))
			}
			if tr.resetAtNs < 0 {
				continue
			}
			for s := range 2 {
				if len(tr.got[s]) != tr.gotBeforeReset[s] {
					t.Fatalf("conn %d dir %d: %d frames delivered after the reset", i+1, s, len(tr.got[s])-tr.gotBeforeReset[s])
				}
				if len(tr.sent[s]) != tr.sentBeforeReset[s] {
					t.Fatalf("conn %d dir %d: a send after the reset was accepted", i+1, s)
				}
			}
			if tr.opened {
				for e := range 2 {
					if (e == 0 || tr.accepted) && tr.closedAt[e] < 0 {
						t.Fatalf("conn %d: end %d did not see Closed after the reset", i+1, e)
					}
				}
			}
		}
		st := w.net.Stats()
		if st.FramesLost[network.LostReset] != lost || st.Lost() != lost {
			t.Fatalf("lost %v, want %d, all by reset", st.FramesLost, lost)
		}
	})
}

// TestPropertyClogNeverDrops: clogs (random and scripted) delay frames but
// never drop or reorder them: once clogs end, every frame arrives in order.
func TestPropertyClogNeverDrops(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := faultKnobs{clogs: true}
		w := drawWorld(t, k)
		w.drive(t, k, seqFrames())
		w.quiesce()
		w.checkFIFO()
		w.checkCounters()
		for i, tr := range w.tracks {
			for s := range 2 {
				if len(tr.got[s]) != len(tr.sent[s]) {
					t.Fatalf("conn %d dir %d: %d of %d frames delivered", i+1, s, len(tr.got[s]), len(tr.sent[s]))
				}
			}
		}
		if st := w.net.Stats(); st.Lost() != 0 {
			t.Fatalf("lost %v under clogs only", st.FramesLost)
		}
	})
}

// TestPropertyCorruption: a corrupted frame differs from the one sent in
// exactly one bit, inside its protected ranges, and the receiver's checks
// (wire.Validate, which verifies a SendMessages prepare's batch too) reject it;
// frames without protected ranges (client, handshake, unsealed prepare)
// arrive intact; the corruption counter matches.
func TestPropertyCorruption(t *testing.T) {
	samples := wiresample.Frames()
	samples = samples[:len(samples)-2] // the two deliberately invalid frames
	rapid.Check(t, func(t *rapid.T) {
		k := faultKnobs{clogs: true}
		o := drawOptions(t, k)
		o.CorruptProbability = rapid.Float64Range(0.1, 1).Draw(t, "corrupt_probability")
		w := newWorld(t, rapid.Uint64().Draw(t, "seed"), o, 3, 1)
		w.drive(t, k, func() []byte {
			return rapid.SampledFrom(samples).Draw(t, "frame")
		})
		w.quiesce()
		var corrupted uint64
		for i, tr := range w.tracks {
			for s := range 2 {
				if len(tr.got[s]) != len(tr.sent[s]) {
					t.Fatalf("conn %d dir %d: %d of %d delivered", i+1, s, len(tr.got[s]), len(tr.sent[s]))
				}
				for j, got := range tr.got[s] {
					sent := tr.sent[s][j]
					flipped := flippedBits(sent, got)
					if len(flipped) == 0 {
						continue
					}
					corrupted++
					if len(flipped) != 1 {
						t.Fatalf("conn %d dir %d frame %d: %d bits flipped", i+1, s, j, len(flipped))
					}
					if !inRanges(wire.ProtectedRanges(sent, nil), flipped[0]) {
						t.Fatalf("%v: bit %d flipped outside the protected ranges", wire.HeaderOf(sent).Command(), flipped[0])
					}
					if !detected(got) {
						t.Fatalf("%v: flip of bit %d not detected by the receiver", wire.HeaderOf(sent).Command(), flipped[0])
					}
				}
			}
		}
		if st := w.net.Stats(); st.FramesCorrupted != corrupted {
			t.Fatalf("stats count %d corruptions, %d frames differ", st.FramesCorrupted, corrupted)
		}
	})
}

func flippedBits(a, b []byte) []int {
	if len(a) != len(b) {
		panic("lengths differ")
	}
	var out []int
	for i := range a {
		x := a[i] ^ b[i]
		for x != 0 {
			j := bits.TrailingZeros8(x)
			out = append(out, i*8+j)
			x &^= 1 << j
		}
	}
	return out
}

func inRanges(rs []wire.Range, bit int) bool {
	for _, r := range rs {
		if bit >= r.From*8 && bit < r.To*8 {
			return true
		}
	}
	return false
}

// TestPropertyDownNode: a down node receives nothing and gets no callback
// (checked at every callback, as is that no connection of an earlier
// incarnation reaches a restarted node); a dial to a node that is down, or
// to a client, is refused; frames lost to a failure are counted as such.
func TestPropertyDownNode(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := faultKnobs{clogs: true, downs: true}
		w := drawWorld(t, k)
		w.drive(t, k, seqFrames())
		w.quiesce()
		w.checkFIFO()
		w.checkCounters()
		for i, tr := range w.tracks {
			dialerAlive := w.downStamp[tr.ends[0]] <= tr.dialStamp
			if (tr.targetDown || !w.isReplica[tr.ends[1]]) && dialerAlive && !tr.failed {
				t.Fatalf("conn %d: dial to a down node or a client was not refused", i+1)
			}
			if dialerAlive && !tr.opened && !tr.failed {
				t.Fatalf("conn %d: dial neither connected nor failed", i+1)
			}
		}
		st := w.net.Stats()
		if st.Lost() != st.FramesLost[network.LostDown] {
			t.Fatalf("losses %v other than by node failure", st.FramesLost)
		}
	})
}

// TestPropertyOrderlyClose: after Close, the frames the closer sent are all
// delivered, then the peer sees Closed; the closer hears nothing more
// (checked at every callback); frames towards the closer are delivered or
// lost as closed, never after the close.
func TestPropertyOrderlyClose(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := faultKnobs{clogs: true, closes: true}
		w := drawWorld(t, k)
		closedSeen := map[network.ConnID]int{} // index in the log of the peer's Closed
		w.hook = func(r rec, _ []byte) {
			if r.Kind == "closed" {
				closedSeen[r.Conn] = len(w.log) - 1
			}
			if r.Kind == "received" {
				if _, ok := closedSeen[r.Conn]; ok {
					t.Fatalf("frame received after Closed: %v", r)
				}
			}
		}
		w.drive(t, k, seqFrames())
		w.quiesce()
		w.checkFIFO()
		w.checkCounters()
		for i, tr := range w.tracks {
			for e := range 2 {
				if !tr.closedBy[e] || !tr.opened || tr.closedBy[1-e] {
					continue
				}
				if len(tr.got[e]) != len(tr.sent[e]) {
					t.Fatalf("conn %d: closer's %d frames, %d delivered", i+1, len(tr.sent[e]), len(tr.got[e]))
				}
				if tr.closedAt[1-e] < 0 {
					t.Fatalf("conn %d: the peer never saw Closed", i+1)
				}
			}
		}
		st := w.net.Stats()
		if st.Lost() != st.FramesLost[network.LostClosed] {
			t.Fatalf("losses %v other than by close", st.FramesLost)
		}
	})
}
