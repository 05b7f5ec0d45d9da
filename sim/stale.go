package sim

import (
	"fmt"
	"math/rand/v2"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
)

// The stale-answer nemesis (Options.StaleAnswers) delivers an earlier
// incarnation's answer on its addressee's new connection: the path that
// consensus.md correction 6's incarnation guard exists for, and that no
// random fault reaches, since a crash resets every connection and the
// network loses what was in flight on them (DEVIATIONS 58).
//
// What it models is a sender whose per-peer send queue outlives a
// connection: a StartView built for a probe, still queued when its
// addressee crashed, goes out on the connection the restarted addressee
// opens. A round:
//
//  1. crash: a Normal backup (target) of the metadata plane is crashed and
//     restarted soon after (within the memory-loss bound).
//  2. hold: the first StartView answering one of its probes (a nonzero
//     incarnation) is held at its sender instead of sent; the target probes
//     again and joins the view from a later answer.
//  3. recrash: once the target is Normal in the held answer's view with its
//     head above the held answer's op (it journaled and acknowledged ops
//     the answer does not name), it is crashed and restarted again.
//  4. deliver: the held frame goes out first on the sender's next
//     connection to the restarted target. A correct replica ignores it
//     ("stale StartView ignored"): installing it would truncate ops its
//     earlier incarnation acknowledged.
//
// A round that does not reach its next stage within its deadline drops
// what it holds and starts over. The nemesis draws from its own stream.
type staleAnswer struct {
	v        *vopr
	rng      *rand.Rand
	stage    staleStage
	nextTick int64 // idle: when the next round starts
	deadline int64 // the current stage's deadline, in ticks
	target   uint8
	// The held answer: its sender, the connection it was held from, the
	// target's incarnation it was built for (the node's, in the harness),
	// its view and op.
	from        uint8
	conn        network.ConnID
	incarnation int
	view        uint32
	op          uint64
	frame       []byte
}

type staleStage uint8

const (
	staleIdle    staleStage = iota
	staleHold               // the target restarted: hold the first answer to its probes
	staleRejoin             // an answer held: wait for the target to move past it
	staleDeliver            // the target restarted again: deliver on the next connection
)

// Round timing, in ticks.
const (
	staleGapTicksMin     = 50
	staleGapTicksSpread  = 400
	staleStageTicksMax   = 3000
	staleRestartTicksMax = 30
	// The sender's crash after the delivery: before the target could
	// repair what a stale install would have truncated.
	staleSenderCrashTicksMax = 5
)

func newStaleAnswer(v *vopr) *staleAnswer {
	s := &staleAnswer{v: v, rng: v.c.Streams.Stream("vopr.stale")}
	s.nextTick = staleGapTicksMin + s.rng.Int64N(staleGapTicksSpread)
	return s
}

// tick advances the round.
func (s *staleAnswer) tick(nowNs int64) {
	tick := nowNs / kernel.TickNs
	if s.stage == staleIdle {
		if tick >= s.nextTick {
			s.begin(tick)
		}
		return
	}
	if tick > s.deadline {
		s.end(tick, true)
		return
	}
	if s.stage == staleRejoin {
		s.rejoin(tick)
	}
}

// begin crashes a Normal backup of the metadata plane's current view, or
// waits for the next gap if there is none.
func (s *staleAnswer) begin(tick int64) {
	var candidates []*ReplicaNode
	for _, n := range s.v.c.Replicas {
		r := n.Replica()
		if !n.Up() || n.Paused() || r == nil || s.v.memoryLossBeyondBound(n) {
			continue
		}
		g := r.Metadata()
		if g.Status() == vsr.StatusNormal && !g.IsPrimary() {
			candidates = append(candidates, n)
		}
	}
	if len(candidates) == 0 {
		s.nextTick = tick + staleGapTicksMin
		return
	}
	n := candidates[s.rng.IntN(len(candidates))]
	s.target = n.ID()
	s.crash(n)
	s.stage, s.deadline = staleHold, tick+staleStageTicksMax
	s.v.res.Probes["stale answer: target crashed"]++
	s.v.tr.process("nemesis", n.ID(), false, "stale answer: target crashed", 0)
}

func (s *staleAnswer) crash(n *ReplicaNode) {
	s.v.crashAndRestart(n, 1+s.rng.Int64N(staleRestartTicksMax))
}

// rejoin waits for the target to be Normal in the held answer's view with
// its head above the answer's op, then crashes it again.
func (s *staleAnswer) rejoin(tick int64) {
	n := s.v.c.Replicas[s.target]
	r := n.Replica()
	if !n.Up() || n.incarnation != s.incarnation {
		s.end(tick, true) // a random crash came first
		return
	}
	if r == nil || n.Paused() {
		return
	}
	g := r.Metadata()
	if g.View() != s.view {
		s.end(tick, true)
		return
	}
	if g.Status() != vsr.StatusNormal || g.Op() <= s.op || s.v.memoryLossBeyondBound(n) {
		return
	}
	s.crash(n)
	s.stage, s.deadline = staleDeliver, tick+staleStageTicksMax
	s.v.res.Probes["stale answer: target crashed past the held answer"]++
	s.v.tr.process("nemesis", n.ID(), false, fmt.Sprintf("stale answer: target crashed at op %d", g.Op()), 0)
}

// send sees every frame a replica hands the network for a peer; it
// reports whether the nemesis took the frame (held it instead of sending).
func (s *staleAnswer) send(from uint8, c network.ConnID, frame []byte) bool {
	if s.stage != staleHold && s.stage != staleDeliver {
		return false
	}
	to, ok := s.v.c.Net.Peer(c, network.NodeID(from))
	if !ok || uint8(to) != s.target {
		return false
	}
	n := s.v.c.Replicas[s.target]
	switch s.stage {
	case staleHold:
		h := wire.HeaderOf(frame)
		if h.Command() != wire.CommandStartView || !n.Up() || !s.v.faulted {
			return false
		}
		var x wire.StartViewHeader
		x.Decode(h)
		if x.Group != wire.MetadataGroup || x.Incarnation.IsZero() {
			return false
		}
		s.from, s.conn, s.incarnation = from, c, n.incarnation
		s.view, s.op = x.View, x.Op
		s.frame = append([]byte(nil), frame...)
		s.stage, s.deadline = staleRejoin, s.v.c.Loop.Now()/kernel.TickNs+staleStageTicksMax
		s.v.res.Probes["stale answer: a probe's StartView held at its sender"]++
		s.v.tr.process("nemesis", from, false, fmt.Sprintf("stale answer: StartView of view %d op %d for replica %d held", x.View, x.Op, s.target), 0)
		return true
	case staleDeliver:
		if from != s.from || c == s.conn || !n.Up() || n.incarnation == s.incarnation {
			return false
		}
		switch wire.HeaderOf(frame).Command() {
		case wire.CommandReplicaHello, wire.CommandReplicaChallenge, wire.CommandReplicaFinish:
			return false // the handshake goes first on a connection
		}
		s.v.c.Net.Send(c, network.NodeID(from), s.frame)
		s.v.res.Probes["stale answer: an earlier incarnation's StartView sent on the new connection"]++
		s.v.tr.process("nemesis", from, false, "stale answer: held StartView sent on the new connection", 0)
		// Half the rounds crash the sender just after: a view change
		// then comes while the target would still be truncated, had it
		// installed the stale answer, and its vote shows it.
		if s.rng.IntN(2) == 0 {
			sender := s.v.c.Replicas[from]
			delay := 1 + s.rng.Int64N(staleSenderCrashTicksMax)
			s.v.c.Loop.After(delay*kernel.TickNs, staleSenderCrash{s, sender}, uint64(sender.incarnation))
		}
		s.end(s.v.c.Loop.Now()/kernel.TickNs, false)
	}
	return false
}

// end closes the round, finished or abandoned, and draws the gap to the
// next.
func (s *staleAnswer) end(tick int64, abandoned bool) {
	if abandoned {
		s.v.res.Probes["stale answer: round abandoned"]++
		s.v.tr.process("nemesis", s.target, false, "stale answer: round abandoned", 0)
	}
	s.stage, s.frame = staleIdle, nil
	s.nextTick = tick + staleGapTicksMin + s.rng.Int64N(staleGapTicksSpread)
}

// staleSenderCrash crashes the held answer's sender soon after it went
// out (within the memory-loss bound), and restarts it as a random crash is.
type staleSenderCrash struct {
	s *staleAnswer
	n *ReplicaNode
}

func (e staleSenderCrash) Fire(nowNs int64, incarnation uint64) (string, int32, uint64) {
	v := e.s.v
	if !e.n.Up() || uint64(e.n.incarnation) != incarnation || !v.faulted || v.memoryLossBeyondBound(e.n) {
		return "", 0, 0
	}
	v.crashAndRestart(e.n, v.drawTicks(v.o.RestartDelayMeanTicks))
	v.tr.process("nemesis", e.n.ID(), false, "stale answer: the sender crashed after the delivery", 0)
	v.res.Probes["stale answer: the sender crashed after the delivery"]++
	return "vopr.crash", int32(e.n.ID()), 0
}
