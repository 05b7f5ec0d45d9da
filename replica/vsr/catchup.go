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
type catchUp struct {
	view    uint32
	op      uint64
	commit  uint64
	entries []wire.Header
}

// startCatchUp keeps the StartView of view (head op, commit) for later and
// applies what the replica can of its committed ops.
func (g *Group) startCatchUp(view uint32, op, commit uint64, entries []wire.Header) {
	g.probe("StartView beyond the journal's ring: the replica catches up before adopting it")
	if g.status != StatusRecovering {
		g.view = max(g.view, view)
		g.startRecoveryProbe()
	} else {
		g.setStatus(StatusRecovering, max(g.view, view))
	}
	g.recovery.attempts = 0 // the probe was answered: no election
	g.catchUp = &catchUp{view: view, op: op, commit: commit, entries: append([]wire.Header(nil), entries...)}
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

// resumeCatchUp adopts the held StartView once the ring can hold its log.
func (g *Group) resumeCatchUp() {
	c := g.catchUp
	if c == nil || g.status != StatusRecovering || c.view < g.view {
		return
	}
	if c.op > g.deps.Journal.AdmitsThrough() {
		g.requestRepair()
		g.commitJournal()
		return
	}
	g.probe("StartView adopted after catching up")
	g.installView(c.view, c.op, c.commit, c.entries)
}
