package vsr

import (
	"github.com/iggy-vopr/vopr/replica/wire"
)

// recoveryState is a restarted replica's probe for the current view.
type recoveryState struct {
	incarnation wire.U128 // this boot's nonce, echoed by the StartView that answers
	attempts    int       // unanswered probes
}

// startRecovering: a restarted replica does not trust its stale state; it
// asks the cluster for the current view (consensus.md, "Recovery") and is
// invisible to quorums until it has it.
func (g *Group) startRecovering() {
	g.status = StatusRecovering
	g.recovery.incarnation = wire.U128{Lo: g.deps.Rand.Uint64() | 1, Hi: g.deps.Rand.Uint64()}
	g.recovery.attempts = 0
	g.emit(Event{Kind: EventStatus, Status: g.status, View: g.view, LogView: g.logView, Op: g.op, Commit: g.commitMax})
	g.rsvTimeout.start()
}

// startRecoveryProbe: a Normal or view-changing replica saw a newer view;
// it probes for it instead of trusting its own log.
func (g *Group) startRecoveryProbe() {
	if g.status == StatusRecovering {
		return
	}
	g.pipeline, g.requests = nil, nil
	g.normalTimeout.stop()
	g.commitTimeout.stop()
	g.prepareTimeout.stop()
	g.svcTimeout.stop()
	g.dvcTimeout.stop()
	g.viewChangeTimeout.stop()
	g.repair.reset()
	g.setStatus(StatusRecovering, g.view)
	g.recovery.attempts = 0
	g.rsvTimeout.start()
	// The view it saw is running now: ask at once (uncounted, so an
	// election still waits for every counted probe to go unanswered).
	g.sendRequestStartView()
}

// onRequestStartViewTimeout sends a probe; after ProbeAttemptsMax
// unanswered ones the replica starts an election (consensus.md correction 4).
func (g *Group) onRequestStartViewTimeout() {
	if g.status != StatusRecovering {
		g.rsvTimeout.stop()
		return
	}
	if g.recovery.attempts >= ProbeAttemptsMax {
		g.probe("probe unanswered: election")
		g.rsvTimeout.stop()
		g.startViewChange(g.view + 1)
		return
	}
	g.recovery.attempts++
	g.sendRequestStartView()
}

func (g *Group) sendRequestStartView() {
	rsv := wire.RequestStartViewHeader{Prefix: g.prefix(), Group: g.cfg.Group, Incarnation: g.recovery.incarnation}
	g.broadcast(wire.BuildFrame(&rsv, nil))
}

// onRequestStartView: only the Normal primary of the view answers, with a
// StartView to the prober that echoes its incarnation. The answer carries
// the suffix, unlike Iggy's empty probe answers (DEVIATIONS.md), so that the
// prober can check every op it applies against the view's headers.
func (g *Group) onRequestStartView(from uint8, h *wire.Header) {
	var x wire.RequestStartViewHeader
	x.Decode(h)
	if x.Group != g.cfg.Group {
		return
	}
	if g.status == StatusNormal && from == g.Primary() && x.View >= g.view && !g.IsPrimary() {
		// The primary itself is probing: it restarted and lost its state.
		g.probe("primary restarted: election")
		g.startViewChange(g.view + 1)
		return
	}
	if !g.IsPrimary() || g.logView != g.view || x.View > g.view {
		return
	}
	g.probe("probe answered")
	sv := wire.StartViewHeader{Prefix: g.prefix(), Op: g.op, Commit: g.commitMax, Group: g.cfg.Group,
		Incarnation: x.Incarnation}
	g.send(from, wire.BuildFrame(&sv, wire.EncodeSuffix(g.suffixHeaders())))
}
