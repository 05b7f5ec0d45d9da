package vsr

import "github.com/iggy-vopr/vopr/replica/wire"

// catchUp is a StartView the replica cannot adopt yet: its journal's ring
// cannot hold the view's log (the head is above the durable checkpoint plus
// the ring, Journal.AdmitsThrough), so adopting it would make durable a
// log_view whose log the journal does not record, and a restart would vote
// that log_view with a shorter head, which a merge trusts to truncate (VOPR
// seed 7000112 with -journal-slots 18: a backup went Normal in log_view 14
// with head op 22 and a ring that reached op 18, and after a restart voted
// log_view 14 with head op 18). Meanwhile the replica stays Recovering in
// the view and catches up on the view's committed ops: it applies them
// (every committed op is canonical in every later view), repairs them from
// the view's primary or takes a state transfer, and checkpoints, until a
// durable checkpoint frees the ring for the view's log.
//
// A StartView without headers whose commit covers its op is held the same
// way (untilApplied): the replica holds that log only by applying it, so
// it adopts the view once it has applied the head (VOPR seed 3965681371).
type catchUp struct {
	view    uint32
	op      uint64
	commit  uint64
	entries []wire.Header
	// untilApplied: the view's log is known by no header, only as
	// committed ops; it is adopted once commit_min reaches op.
	untilApplied bool
}

// startCatchUp keeps the StartView of view (head op, commit) for later and
// applies what the replica can of its committed ops; untilApplied holds it
// until the replica has applied op as well.
func (g *Group) startCatchUp(view uint32, op, commit uint64, entries []wire.Header, untilApplied bool) {
	if untilApplied {
		g.probe("StartView without headers, its ops committed: the replica catches up before adopting it")
	} else {
		g.probe("StartView beyond the journal's ring: the replica catches up before adopting it")
	}
	if g.status != StatusRecovering {
		g.view = max(g.view, view)
		g.startRecoveryProbe()
	} else {
		g.setStatus(StatusRecovering, max(g.view, view))
	}
	g.recovery.attempts = 0 // the probe was answered: no election
	g.catchUp = &catchUp{view: view, op: op, commit: commit, entries: append([]wire.Header(nil), entries...),
		untilApplied: untilApplied}
	// What the replica knew canonical was of its own, older view's log,
	// whose uncommitted ops a later view may have replaced: only the
	// committed ops' headers of the StartView are canonical in every view
	// from now on, and the hash chain down from them.
	for o := g.commitMin + 1; o <= max(g.op, op); o++ {
		delete(g.canon, o)
	}
	for _, h := range entries {
		var p wire.PrepareHeader
		p.Decode(&h)
		if p.Op > g.commitMin && p.Op <= commit && !wire.IsBlank(&h) {
			g.canon[p.Op] = h
			g.timestampMax = max(g.timestampMax, p.Timestamp)
		}
	}
	g.learnCommit(commit)
	g.extendCanonDown()
	g.commitJournal()
	g.requestRepair()
}

// CatchingUp reports whether the replica holds a StartView it is catching
// up to (see catchUp): a state transfer may install then, as in Normal
// status, since no merge of this replica's reasons about its commit_min.
func (g *Group) CatchingUp() bool { return g.catchUp != nil }

// resumeCatchUp adopts the held StartView once the ring can hold its log
// (and, untilApplied, once the replica applied its head).
func (g *Group) resumeCatchUp() {
	c := g.catchUp
	if c == nil || g.status != StatusRecovering || c.view < g.view {
		return
	}
	if !g.caughtUpTo(c) {
		g.requestRepair()
		g.commitJournal()
		return
	}
	g.probe("StartView adopted after catching up")
	g.installView(c.view, c.op, c.commit, c.entries)
}

// caughtUpTo reports whether the held StartView c can be adopted now.
func (g *Group) caughtUpTo(c *catchUp) bool {
	return c.op <= g.deps.Journal.AdmitsThrough() && (!c.untilApplied || g.commitMin >= c.op)
}

// resumeAppliedCatchUp adopts a held StartView without headers once the
// commit walk (a repair, or a state transfer's install) applied its head:
// nothing else would (ringFreed runs only when a checkpoint frees slots),
// and the replica would wait for the next probe's answer. installView
// then finds op within the ring, so it does not hold the view again.
func (g *Group) resumeAppliedCatchUp() {
	if c := g.catchUp; c != nil && c.untilApplied && g.caughtUpTo(c) {
		g.resumeCatchUp()
	}
}
