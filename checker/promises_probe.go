package checker

import "github.com/iggy-vopr/vopr/checker/wirespec"

// A probe's answer is owed only to the life that probed. A recovering
// replica's RequestStartView carries its boot's incarnation nonce, and the
// primary's answer echoes it; a StartView with another nonzero incarnation
// is an answer to an earlier life, which the narrow guard of consensus.md
// correction 6 refuses while the replica recovers in a view no newer, with
// a head above the answer's op (installing it would truncate ops its
// earlier life acknowledged). Such a frame reaches a replica only when a
// sender's queue outlives the connection it was built for: the
// stale-answer nemesis (sim/stale.go) replays one on the restarted
// replica's new connection. It owes nothing: the replica ignores it
// ("stale StartView ignored") and its own probes, or its election, carry
// it on.
//
// The incarnation the checker compares with is the one of the last
// RequestStartView delivered from the replica, and only while it is of the
// replica's present life: VOPR seed 3328441306 with -replicas 2
// -view-change-faults=true (stale answers on): replica 0, recovering in
// view 17, probed at 196.01 s and its answer (view 17, op 0) was held; it
// joined view 17 from a later answer, acknowledged op 1, crashed, and
// restarted recovering with op 1. Its new life's probe never reached the
// primary (itself restarting), so the last probe delivered was the earlier
// life's, whose nonce the replayed answer echoed at 203.42 s: the replica
// rightly ignored it, and its election to view 18 was named as a StartView
// abandoned.

// probeAnswerOwed reports whether a StartView with incarnation inc, given
// to replica r, is one r's present life asked for: an unsolicited one
// (zero incarnation), or the answer to a probe r sent in this life.
func (c *Checker) probeAnswerOwed(g *promiseGroup, r uint8, inc wirespec.U128) bool {
	return inc.IsZero() || inc == g.rsvInc[r] && g.rsvLife[r] == c.incarnations[r]
}
