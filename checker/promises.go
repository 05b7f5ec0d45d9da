package checker

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/vsr"
)

// The quiet cluster's consensus promises, in every group (the metadata
// plane's and each partition's). Once the liveness phase heals the core,
// no frame between core replicas is lost, so each step of the protocol
// that a replica was told enough to take is due: a replica told of a newer
// view joins it, one that heard a view-change quorum of StartViewChanges
// votes, a backup acknowledges the next prepare of its log, and a primary
// resends each prepare a backup has not acknowledged. A stall has a first
// step that was due and not taken; the checker names it there, with the
// frames that made it due, instead of leaving the run to end as "the core
// did not converge" (issue 28).

// Names of the quiet cluster's consensus promises.
const (
	// NewerViewIgnored: a core replica that was not Recovering was told of
	// a newer view by a StartViewChange or a DoViewChange (consensus.md 5,
	// "SVC / DVC": a higher view starts a view change) and stayed in its
	// older view.
	NewerViewIgnored = "a newer view ignored"
	// NoDoViewChange: a core replica in ViewChange status heard
	// StartViewChanges of its view from f = (n-1)/2 others and did not
	// send its DoViewChange.
	NoDoViewChange = "a StartViewChange quorum without a DoViewChange"
	// PrepareNotAcked: a Normal backup that had acknowledged op N-1 of its
	// view was given op N of that view, chained to it, and did not
	// acknowledge it.
	PrepareNotAcked = "a backup did not acknowledge the next prepare of its log"
	// PrepareNotRetransmitted: a Normal primary held a prepare a Normal
	// core backup had not acknowledged, short of a replication quorum, and
	// did not send it to that backup again.
	PrepareNotRetransmitted = "a prepare not retransmitted to a backup that has not acknowledged it"
	// StartViewNotAdopted: a core replica was given a StartView of its
	// view or a newer one, with the view's log, by that view's primary,
	// and neither went Normal in it nor moved to a newer view.
	StartViewNotAdopted = "a StartView not adopted"
	// ViewNotDurable: a core replica's superblock still records an older
	// view (or log_view) than the one it is in, long after it moved: its
	// state write never completed, and persist-before-send keeps it from
	// saying anything of its view.
	ViewNotDurable = "a view not made durable"
	// CommitNotFollowed: a Normal backup told by its view's primary that
	// ops up to C are committed (a Commit heartbeat) did not commit them:
	// the commit walk, with the repair of what it lacks, stopped short.
	CommitNotFollowed = "a backup did not commit what its primary committed"
	// CheckpointNotRecorded: a core replica applied an op at a multiple
	// of the checkpoint interval and its superblock records no checkpoint
	// at or above it (the ring above its last checkpoint fills, and the
	// primary can prepare nothing more).
	CheckpointNotRecorded = "a checkpoint not recorded"
	// ViewSkipped: a replica moved of its own accord (a timeout: no frame
	// of the view reached it) to a view more than one above both its own
	// and every view it was told of: a suspicion, an escalation or an
	// election is to the next view (consensus.md 5).
	ViewSkipped = "a view change skipped a view"
	// NeverOpened: a core replica of the quiet cluster reported no status
	// of its metadata group in its present life: its restart never opened
	// its disk (recovery hung; one that fails says so, OpenRefused).
	NeverOpened = "a replica never opened its disk"
)

// The graces, in ticks, past the moment a promise became due. A frame is
// handled in the tick it arrives; what it starts may wait for the disk
// (persist-before-send: a state write, a journal write and its sync, each
// with the seed's latency, whose tail is exponential) and for a timer.
const (
	// joinGraceTicks: joining a view is a status change, made in the
	// handler of the frame that told of it.
	joinGraceTicks = 3
	// voteGraceTicks: the vote waits for the new view's state write, and a
	// vote sent before the quiet cluster (and lost) is resent every
	// DoViewChange timeout (50 ticks).
	voteGraceTicks = 400
	// ackGraceTicks: the acknowledgement waits for the prepare's journal
	// write and its sync, behind the writes queued before it.
	ackGraceTicks = 600
	// adoptGraceTicks: adopting a StartView repairs the bodies the
	// replica lacks, reconciles its journal and writes its state; a log
	// beyond its ring waits for a state transfer first.
	adoptGraceTicks = 3000
	// openGraceTicks: opening a disk reads the superblock and the journal
	// ring (and formats a fresh one), each I/O with the seed's latency.
	openGraceTicks = 3000
	// durableGraceTicks: a state write is one superblock write and sync.
	durableGraceTicks = 300
	// commitGraceTicks: the commit walk repairs what the backup lacks
	// (a round trip, a re-request after 100 idle ticks), or a state
	// transfer where its peers evicted it.
	commitGraceTicks = 3000
	// checkpointGraceTicks: a checkpoint is a snapshot write, then a state
	// write; one that comes due during a write waits for it.
	checkpointGraceTicks = 1000
	// retransmitGraceTicks: the prepare timeout backs off to 25 << 4 ticks
	// plus up to half of that again (600 ticks); the frame then travels.
	retransmitGraceTicks = 1000
)

// promiseGroup is the checker's view of one consensus group for these
// promises: each replica's status and view as it last reported them (valid
// in the incarnation it reported them in), and the obligations open.
type promiseGroup struct {
	id      uint64
	status  []vsr.Status
	view    []uint32
	inc     []uint64 // the incarnation the status is of
	known   []bool
	sinceNs []int64 // when the replica entered its (status, view)

	// join[r]: the newest view r was told of (0: none due), and since when.
	join      []uint32
	joinNs    []int64
	joinFrom  []uint8
	joinCmd   []uint8
	svcFrom   map[viewReplica]uint64 // (view, receiver) -> senders of a StartViewChange of view
	svcQuorum map[viewReplica]int64  // since when f of them were heard
	voted     map[viewReplica]bool   // r's DoViewChange of view was delivered to some replica
	withheld  map[viewReplica]bool   // r said it withholds its vote of view (an amnesiac)

	// acked[(view, backup)]: the highest op the backup acknowledged in
	// the view, its identity, and the incarnation that sent it.
	acked map[viewReplica]ackedOp
	// ackDue[r]: the prepare r was given that chains to its last
	// acknowledgement (op 0: none due).
	ackDue []ackDue
	// committed[r]: the highest op r committed in this life (or at most
	// its head at a state transfer's install).
	committed   []uint64
	committedID []wirespec.U128 // the identity of committed[r] (zero after an install)

	// pipeline[p]: the prepares primary p holds in its view, not yet at a
	// replication quorum.
	pipeline []*pipelineOf
	// quorums: the prepares that reached a quorum at their primary, by
	// (view, op). Looked up only.
	quorums map[viewOp]quorumOf
	// svDue[r]: the newest StartView r was given that it owes adopting
	// (view 0: none); rsvInc[r]: the incarnation of r's last
	// RequestStartView (a probe answer echoes it), and rsvLife[r] the life
	// of r that sent it (promises_probe.go).
	svDue   []svDue
	rsvInc  []wirespec.U128
	rsvLife []uint64
	// durableView[r]: the view and log_view r's superblock was last seen
	// to record (the metadata group only).
	durableView    []uint32
	durableLogView []uint32
	// told[r]: the newest view of a frame of the group delivered to r in
	// this life (a view above it, r moved to of its own accord).
	told []uint32
	// commitDue[r]: the highest commit r's primary told it of in its view
	// (op 0: none due).
	commitDue []commitDue
	// cpDue[r]: the last checkpoint op r applied, and when (the metadata
	// group only); cpSeen[r]: the checkpoint its superblock was last seen
	// to record.
	cpDue  []viewOp
	cpAtNs []int64
	cpSeen []uint64
	// nextOp[p], nextNs[p]: the op p was to commit next when a tick last
	// looked, and since when.
	nextOp []uint64
	nextNs []int64
}

type commitDue struct {
	view   uint32
	op     uint64
	sinceN int64
}

type svDue struct {
	view   uint32
	op     uint64
	from   uint8
	sinceN int64
}

type viewOp struct {
	view uint32
	op   uint64
}

// quorumOf is a prepare that reached a replication quorum at its primary:
// its own acknowledgement and a quorum's, counted by the checker.
type quorumOf struct {
	primary uint8
	inc     uint64
	id      wirespec.U128
	acks    uint64
	atNs    int64
}

type viewReplica struct {
	view    uint32
	replica uint8
}

type ackedOp struct {
	op   uint64
	id   wirespec.U128
	inc  uint64
	atNs int64
}

type ackDue struct {
	view   uint32
	op     uint64
	id     wirespec.U128
	parent uint64 // the op below, acknowledged or committed
	from   uint8
	sinceN int64
}

// pipelineOf is a primary's prepares of one view not yet at a quorum.
type pipelineOf struct {
	primary uint8
	inc     uint64 // the primary's incarnation
	view    uint32
	ops     map[uint64]*pendingPrepare // looked up only; ordered() sorts
}

type pendingPrepare struct {
	id     wirespec.U128
	acks   uint64
	fromNs int64
	lastNs []int64 // per backup: the last delivery of this prepare (of this view) to it
	ownAck bool
	// staleNs, staleView: per backup, the last delivery of this prepare
	// stamped with another view (which a backup of this view drops).
	staleNs   []int64
	staleView []uint32
}

// promiseBook holds the groups the promises follow (the zero value is
// empty): by id, looked up only, and in the order first seen.
type promiseBook struct {
	groups map[uint64]*promiseGroup
	order  []uint64
	// tickNs: the tick, as the quiet cluster's checks were told it.
	tickNs int64
	// The last frame delivered: its addressee, group and time (a replica
	// that drops it as of a group it does not have says so at once).
	lastTo    uint8
	lastGroup uint64
	lastNs    int64
	// live: the partition groups the committed metadata holds, as of
	// liveAt committed ops (a deleted group's replicas drop it, and say
	// nothing of it per group). Looked up only.
	live   map[uint64]bool
	liveAt int
	// links answers whether two replicas hold an established connection
	// to each other at both ends (nil: always, as in unit tests); linkNs
	// [r][p] is since when they have, sampled each quiet tick (0: not
	// now). lastCmd and lastView are the last frame delivered's.
	links    func(r, p uint8) bool
	linkNs   [][]int64
	lastCmd  uint8
	lastView uint32
}

// SetLinks lets the checker ask whether replicas r and p hold an
// established connection to each other at both ends: the transport's
// state, not the protocol's. A promise whose fulfilment is a frame from one
// to the other is due only from the moment they can reach each other (a
// connection a reset or a refused frame closed at one end before the quiet
// cluster lets the other end send into it until the bus reconnects, every
// ReconnectTicks: VOPR seed 664490705 with -bad-frames=true, a vote held
// back 400 ticks with no connection to send it on).
func (c *Checker) SetLinks(linked func(r, p uint8) bool) { c.promises.links = linked }

// linked reports whether r and p can reach each other now.
func (c *Checker) linked(r, p uint8) bool {
	if r == p {
		return false
	}
	return c.promises.links == nil || c.promises.links(r, p)
}

// sampleLinks notes, once a tick, since when each pair of core replicas
// has been linked.
func (c *Checker) sampleLinks() {
	b := &c.promises
	if b.linkNs == nil {
		b.linkNs = make([][]int64, c.replicas)
		for r := range b.linkNs {
			b.linkNs[r] = make([]int64, c.replicas)
		}
	}
	for r := 0; r < c.replicas; r++ {
		for p := 0; p < c.replicas; p++ {
			switch {
			case !c.quiet.core[r] || !c.quiet.core[p] || !c.linked(uint8(r), uint8(p)):
				b.linkNs[r][p] = 0
			case b.linkNs[r][p] == 0:
				b.linkNs[r][p] = c.nowNs
			}
		}
	}
}

// linkSince is since when core replicas r and p have been linked without a
// break, as the quiet ticks saw it (false: not now, nothing between them is
// due).
func (c *Checker) linkSince(r, p uint8) (int64, bool) {
	b := &c.promises
	if b.links == nil {
		return 0, r != p
	}
	if b.linkNs == nil || int(r) >= len(b.linkNs) || int(p) >= len(b.linkNs) || b.linkNs[r][p] == 0 {
		return 0, false
	}
	return b.linkNs[r][p], true
}

// anyLinkSince is since when r has been linked to some core peer (its
// earliest link that holds now): a broadcast reaches that one.
func (c *Checker) anyLinkSince(r uint8) (int64, bool) {
	since, ok := int64(0), false
	for p := 0; p < c.replicas; p++ {
		if s, linked := c.linkSince(r, uint8(p)); linked && (!ok || s < since) {
			since, ok = s, true
		}
	}
	return since, ok
}

// liveGroups returns the partition groups of the committed metadata.
func (c *Checker) liveGroups() map[uint64]bool {
	b := &c.promises
	if b.live != nil && b.liveAt == len(c.canon) {
		return b.live
	}
	b.live, b.liveAt = map[uint64]bool{}, len(c.canon)
	for _, st := range c.model.View().Streams {
		for _, t := range st.Topics {
			for _, p := range t.Partitions {
				b.live[p.Group] = true
			}
		}
	}
	return b.live
}

// unknownGroupProbe is the probe of a replica that dropped a frame of a
// partition group it does not have (not created there yet, or deleted).
const unknownGroupProbe = "partition plane: frame for an unknown group dropped"

// groupUnknown: replica r dropped the frame just delivered to it as of a
// group it does not have: nothing of that group is due from it.
func (c *Checker) groupUnknown(r uint8) {
	b := &c.promises
	if b.lastTo != r || b.lastNs != c.nowNs {
		return
	}
	if g := b.groups[b.lastGroup]; g != nil {
		g.known[r] = false
		g.join[r], g.ackDue[r], g.pipeline[r] = 0, ackDue{}, nil
	}
}

func (c *Checker) promiseGroupOf(id uint64) *promiseGroup {
	if c.promises.groups == nil {
		c.promises.groups = map[uint64]*promiseGroup{}
	}
	if g := c.promises.groups[id]; g != nil {
		return g
	}
	n := c.replicas
	g := &promiseGroup{id: id, status: make([]vsr.Status, n), view: make([]uint32, n), inc: make([]uint64, n),
		known: make([]bool, n), sinceNs: make([]int64, n), join: make([]uint32, n), joinNs: make([]int64, n),
		joinFrom: make([]uint8, n), joinCmd: make([]uint8, n),
		svcFrom: map[viewReplica]uint64{}, svcQuorum: map[viewReplica]int64{}, voted: map[viewReplica]bool{},
		withheld: map[viewReplica]bool{}, acked: map[viewReplica]ackedOp{}, ackDue: make([]ackDue, n), committed: make([]uint64, n), committedID: make([]wirespec.U128, n),
		pipeline: make([]*pipelineOf, n), quorums: map[viewOp]quorumOf{}, svDue: make([]svDue, n), rsvInc: make([]wirespec.U128, n), rsvLife: make([]uint64, n),
		durableView: make([]uint32, n), durableLogView: make([]uint32, n), told: make([]uint32, n),
		commitDue: make([]commitDue, n), cpDue: make([]viewOp, n), cpAtNs: make([]int64, n), cpSeen: make([]uint64, n),
		nextOp: make([]uint64, n), nextNs: make([]int64, n)}
	c.promises.groups[id] = g
	c.promises.order = append(c.promises.order, id)
	return g
}

// current reports whether r's reported status is of its present life.
func (c *Checker) current(g *promiseGroup, r uint8) bool {
	return g.known[r] && g.inc[r] == c.incarnations[r]
}

func (g *promiseGroup) normalIn(r uint8, view uint32) bool {
	return g.status[r] == vsr.StatusNormal && g.view[r] == view
}

// groupEvent follows every group's events (all phases: the status a
// replica reported before the quiet cluster is what it has in it).
func (c *Checker) groupEvent(r uint8, e vsr.Event) {
	if int(r) >= c.replicas {
		return
	}
	switch e.Kind {
	case vsr.EventCommitted:
		if g := c.promiseGroupOf(e.Group); c.current(g, r) && e.Op > g.committed[r] {
			g.committed[r], g.committedID[r] = e.Op, wirespec.Get128(e.Header[:], wirespec.OffChecksum)
			g.nextOp[r], g.nextNs[r] = e.Op+1, c.nowNs-(quietNextGraceTicks+1)*tickNsAssumed // next by a commit: due at once
			if g.id == wirespec.MetadataGroup && c.checkpointInterval > 0 && e.Op%c.checkpointInterval == 0 {
				g.cpDue[r], g.cpAtNs[r] = viewOp{op: e.Op}, c.nowNs
			}
		}
	case vsr.EventStatus:
		g := c.promiseGroupOf(e.Group)
		if !c.current(g, r) {
			// A new life: what the last one applied, was told and owed
			// is gone with its memory (VOPR seed 3530214869: replica 0
			// applied op 25, crashed before its checkpoint, and restored
			// the one at op 20; op 25's checkpoint is owed once it applies
			// op 25 again). Its first next op came by a restore.
			g.committed[r], g.committedID[r], g.told[r], g.svDue[r] = 0, wirespec.U128{}, 0, svDue{}
			g.cpDue[r], g.cpAtNs[r], g.cpSeen[r] = viewOp{}, 0, 0
			if c.incarnations[r] > 0 {
				g.nextOp[r] = restoredNext
			}
		}
		c.checkAbandoned(g, r, e)
		c.checkViewStep(g, r, e)
		if !c.current(g, r) || g.status[r] != e.Status || g.view[r] != e.View {
			g.sinceNs[r] = c.nowNs
			if e.Status == vsr.StatusViewChange {
				c.enteredViewChange(g, r, e.View)
			}
		}
		g.status[r], g.view[r], g.inc[r], g.known[r] = e.Status, e.View, c.incarnations[r], true
		g.pipeline[r] = nil
		g.ackDue[r] = ackDue{}
	case vsr.EventProbe:
		// A state transfer takes the replica past every op up to the one
		// installed (at or below its head, Op): none of them is owed an
		// acknowledgement (a partition plane's probes come prefixed).
		if strings.HasSuffix(e.Probe, "state transfer installed") {
			if g := c.promiseGroupOf(e.Group); c.current(g, r) && e.Op > g.committed[r] {
				g.committed[r], g.committedID[r] = e.Op, wirespec.U128{}
			}
		}
		// (A partition plane's probes come prefixed with its name.)
		if strings.HasSuffix(e.Probe, "amnesiac replica withholds its DoViewChange") {
			c.promiseGroupOf(e.Group).withheld[viewReplica{e.View, r}] = true
		}
	case vsr.EventPrepared:
		c.pipelineAdd(c.promiseGroupOf(e.Group), r, e.View, e.Op, wirespec.Get128(e.Header[:], wirespec.OffChecksum))
	case vsr.EventStartView:
		g := c.promiseGroupOf(e.Group)
		for i := range e.Headers {
			p := wirespec.ReadPrepare(e.Headers[i][:])
			if p.Op > e.Commit && p.Op <= e.Op {
				c.pipelineAdd(g, r, e.View, p.Op, p.Identity)
			}
		}
	case vsr.EventAcked:
		// A new primary acknowledges the ops of its StartView before it
		// reports the StartView: the entry starts here then.
		g := c.promiseGroupOf(e.Group)
		c.pipelineAdd(g, r, e.View, e.Op, wirespec.Get128(e.Header[:], wirespec.OffChecksum))
		pl := g.pipeline[r]
		if p := pl.ops[e.Op]; p != nil {
			p.ownAck = true
			c.promiseCount(g, pl, e.Op, p, r)
		}
	}
}

func (c *Checker) pipelineAdd(g *promiseGroup, p uint8, view uint32, op uint64, id wirespec.U128) {
	pl := g.pipeline[p]
	if pl == nil || pl.view != view {
		pl = &pipelineOf{primary: p, inc: c.incarnations[p], view: view, ops: map[uint64]*pendingPrepare{}}
		g.pipeline[p] = pl
	}
	if pl.ops[op] == nil {
		pl.ops[op] = &pendingPrepare{id: id, fromNs: c.nowNs, lastNs: make([]int64, c.replicas),
			staleNs: make([]int64, c.replicas), staleView: make([]uint32, c.replicas)}
	}
}

// promiseCount counts r's acknowledgement of op; a prepare at a quorum is
// committed, and no longer the primary's to resend.
func (c *Checker) promiseCount(g *promiseGroup, pl *pipelineOf, op uint64, p *pendingPrepare, r uint8) {
	p.acks |= 1 << r
	if p.ownAck && bits.OnesCount64(p.acks) >= quorumReplication(c.replicas) {
		delete(pl.ops, op)
		g.quorums[viewOp{pl.view, op}] = quorumOf{primary: pl.primary, inc: pl.inc, id: p.id, acks: p.acks, atNs: c.nowNs}
	}
}

// tallySuspicion counts a StartViewChange of view from replica from, as
// replica to hears it (consensus.md 5): a recovering replica ignores it, one
// in an older view joins view (its tally starts afresh, with this one), and
// one in view counts it only in view_change status (a Normal replica of the
// view, its view change over, ignores it). A StartViewChange heard in
// another view is no vote of this one (VOPR seed 424747: replica 0,
// recovering in view 24, ignored view 25's, then elected itself into view
// 25, which the others had left Normal, and owed no vote there).
func (c *Checker) tallySuspicion(g *promiseGroup, from, to uint8, view uint32) {
	if !c.current(g, to) || g.status[to] == vsr.StatusRecovering || g.view[to] > view {
		return
	}
	k := viewReplica{view, to}
	switch {
	case g.view[to] < view:
		g.svcFrom[k] = 1 << from
		delete(g.svcQuorum, k)
	case g.status[to] == vsr.StatusViewChange:
		g.svcFrom[k] |= 1 << from
	default:
		return
	}
	if _, ok := g.svcQuorum[k]; !ok && bits.OnesCount64(g.svcFrom[k]) >= (c.replicas-1)/2 {
		g.svcQuorum[k] = c.nowNs
	}
}

// enteredViewChange: replica r reported view_change status in view, from
// another status or view (or life). Its tally of the view starts afresh
// (startViewChange's vc.reset), unless the frame delivered to it just now
// was the StartViewChange of view that made it join, which tallySuspicion
// counted as the first.
func (c *Checker) enteredViewChange(g *promiseGroup, r uint8, view uint32) {
	b := &c.promises
	if b.lastTo == r && b.lastNs == c.nowNs && b.lastGroup == g.id && b.lastCmd == wirespec.StartViewChange && b.lastView == view {
		return
	}
	k := viewReplica{view, r}
	delete(g.svcFrom, k)
	delete(g.svcQuorum, k)
	if (c.replicas-1)/2 == 0 {
		g.svcQuorum[k] = c.nowNs // f = 0 (two replicas): it votes on entering
	}
}

// promiseDelivered follows the frames the promises are about. Before the
// quiet cluster nothing is due (frames are lost), but what was acknowledged
// and prepared then is what the quiet cluster starts from.
func (c *Checker) promiseDelivered(from, to uint8, f []byte) {
	if int(to) >= c.replicas || int(from) >= c.replicas {
		return
	}
	quiet := c.quiet != nil && c.quiet.core[to]
	view := wirespec.U32(f, wirespec.OffView)
	c.promises.lastTo, c.promises.lastNs, c.promises.lastGroup = to, c.nowNs, 0
	c.promises.lastCmd, c.promises.lastView = f[wirespec.OffCommand], view
	if id, ok := frameGroup(f); ok {
		g := c.promiseGroupOf(id)
		g.told[to] = max(g.told[to], view)
	}
	switch cmd := f[wirespec.OffCommand]; cmd {
	case wirespec.StartViewChange, wirespec.DoViewChange:
		off := 128
		if cmd == wirespec.DoViewChange {
			off = wirespec.OffVoteGroup
		}
		g := c.promiseGroupOf(wirespec.U64(f, off))
		c.promises.lastGroup = g.id
		g.told[to] = max(g.told[to], view)
		if cmd == wirespec.StartViewChange && from != to {
			// Counted in every phase, as the replica tallies it: the
			// vote it owes once the quiet cluster comes is resent.
			c.tallySuspicion(g, from, to, view)
		}
		if !quiet {
			return
		}
		if cmd == wirespec.DoViewChange {
			g.voted[viewReplica{view, from}] = true
		}
		if c.current(g, to) && g.status[to] != vsr.StatusRecovering && g.view[to] < view && g.join[to] < view {
			g.join[to], g.joinNs[to], g.joinFrom[to], g.joinCmd[to] = view, c.nowNs, from, cmd
		}
	case wirespec.Prepare:
		p := wirespec.ReadPrepare(f)
		g := c.promiseGroupOf(p.Group)
		c.promises.lastGroup = g.id
		g.told[to] = max(g.told[to], view)
		if !c.current(g, to) || g.status[to] != vsr.StatusNormal {
			return
		}
		if pl := g.pipeline[g.view[to]%uint32(c.replicas)]; pl != nil && pl.view == g.view[to] {
			if pp := pl.ops[p.Op]; pp != nil && pp.id == p.Identity {
				if view == pl.view {
					pp.lastNs[to] = c.nowNs
				} else {
					pp.staleNs[to], pp.staleView[to] = c.nowNs, view
				}
			}
		}
		if view != g.view[to] {
			return
		}
		// An acknowledgement goes to the view's primary: only a core one
		// is there to receive it.
		if !quiet || int(view)%c.replicas == int(to) || !c.quiet.core[int(view)%c.replicas] {
			return
		}
		// The backup holds every op below this one when it acknowledged
		// the one below in this view, or committed it (a commit needs the
		// body; its acknowledgement may have been lost before the quiet
		// cluster).
		a, ok := g.acked[viewReplica{view, to}]
		chained := ok && a.inc == c.incarnations[to] && a.op+1 == p.Op && a.id == p.Parent
		if !chained && g.committed[to]+1 == p.Op && g.committedID[to] == p.Parent && !p.Parent.IsZero() {
			chained, a = true, ackedOp{op: g.committed[to], id: g.committedID[to]}
		}
		// Owed only while the acknowledgement has a way back: a prepare
		// sent before the primary's end of the connection closed arrives,
		// and the answer is lost until the bus reconnects and the primary
		// resends it.
		if chained && g.ackDue[to].op < p.Op && p.Op > g.committed[to] && c.linked(to, uint8(int(view)%c.replicas)) {
			g.ackDue[to] = ackDue{view: view, op: p.Op, id: p.Identity, parent: a.op, from: from, sinceN: c.nowNs}
		}
	case wirespec.Commit:
		g := c.promiseGroupOf(wirespec.U64(f, wirespec.OffCommitGroup))
		c.promises.lastGroup = g.id
		g.told[to] = max(g.told[to], view)
		commit := wirespec.U64(f, wirespec.OffCommitCommit)
		if !quiet || int(view)%c.replicas != int(from) || !c.current(g, to) || !g.normalIn(to, view) ||
			commit <= c.committedAt(g, to) || g.commitDue[to].view == view && g.commitDue[to].op >= commit {
			return
		}
		if d := g.commitDue[to]; d.view == view && d.op > c.committedAt(g, to) {
			g.commitDue[to].op = commit // still behind the older one: since then
		} else {
			g.commitDue[to] = commitDue{view: view, op: commit, sinceN: c.nowNs}
		}
	case wirespec.RequestStartView:
		g := c.promiseGroupOf(wirespec.U64(f, 128))
		c.promises.lastGroup = g.id
		g.rsvInc[from], g.rsvLife[from] = wirespec.Get128(f, wirespec.OffSVIncarnate), c.incarnations[from]
	case wirespec.StartView:
		g := c.promiseGroupOf(wirespec.U64(f, wirespec.OffVoteGroup))
		c.promises.lastGroup = g.id
		g.told[to] = max(g.told[to], view)
		// Owed: a StartView of the view's primary with the view's log (an
		// empty body cannot anchor a log above the replica's commit: it
		// asks again), not a
		// probe answer to another incarnation, or to a probe of an
		// earlier life (the narrow guard of consensus.md correction 6
		// may refuse it: promises_probe.go).
		inc := wirespec.Get128(f, wirespec.OffSVIncarnate)
		op := wirespec.U64(f, wirespec.OffVoteOp)
		if !quiet || int(view)%c.replicas != int(from) || len(f) <= wirespec.HeaderSize && op > g.committed[to] ||
			!c.probeAnswerOwed(g, to, inc) || !c.current(g, to) || g.view[to] > view ||
			g.view[to] == view && g.status[to] == vsr.StatusNormal || g.svDue[to].view >= view {
			return
		}
		g.svDue[to] = svDue{view: view, op: op, from: from, sinceN: c.nowNs}
	case wirespec.PrepareOk:
		g := c.promiseGroupOf(wirespec.U64(f, wirespec.OffPrepareOkGroup))
		c.promises.lastGroup = g.id
		op := wirespec.U64(f, wirespec.OffPrepareOkOp)
		id := wirespec.Get128(f, wirespec.OffPrepareOkChecksum)
		k := viewReplica{view, from}
		if a, ok := g.acked[k]; !ok || op >= a.op {
			g.acked[k] = ackedOp{op: op, id: id, inc: c.incarnations[from], atNs: c.nowNs}
		}
		if d := g.ackDue[from]; d.view == view && d.op <= op {
			g.ackDue[from] = ackDue{}
		}
		if int(view)%c.replicas == int(to) {
			if pl := g.pipeline[to]; pl != nil && pl.view == view {
				if pp := pl.ops[op]; pp != nil && pp.id == id {
					c.promiseCount(g, pl, op, pp, from)
				}
			}
		}
	}
}

// promisesTick checks the promises that came due more than their grace ago.
func (c *Checker) promisesTick(tickNs int64) {
	q := c.quiet
	c.promises.tickNs = tickNs
	if c.nowNs-q.startNs > openGraceTicks*tickNs {
		meta := c.promiseGroupOf(wirespec.MetadataGroup)
		for r := 0; r < c.replicas; r++ {
			// (A replica that never restarted opened its disk at boot.)
			if q.core[r] && c.incarnations[r] > 0 && !c.current(meta, uint8(r)) {
				c.fail(Violation{Name: NeverOpened, Liveness: true, Replicas: []uint8{uint8(r)},
					Detail: fmt.Sprintf("replica %d, in the core of the quiet cluster since %.6f s, has reported no status of its metadata group since its last restart, %d ticks on: its open of its disk never finished",
						r, float64(q.startNs)/1e9, openGraceTicks)})
				return
			}
		}
	}
	c.sampleLinks()
	live := c.liveGroups()
	for _, id := range c.promises.order {
		g := c.promises.groups[id]
		if id != wirespec.MetadataGroup && !live[id] {
			continue // deleted: its replicas dropped it (or never had it)
		}
		for r := 0; r < c.replicas && c.violation == nil; r++ {
			if !q.core[r] {
				continue
			}
			c.checkJoin(g, uint8(r), tickNs)
			c.checkVote(g, uint8(r), tickNs)
			c.checkAck(g, uint8(r), tickNs)
			c.checkRetransmit(g, uint8(r), tickNs)
			c.checkQuorumCommitted(g, uint8(r), tickNs)
			c.checkAdopted(g, uint8(r), tickNs)
			c.checkDurable(g, uint8(r), tickNs)
			c.checkCommitFollowed(g, uint8(r), tickNs)
			c.checkCheckpoint(g, uint8(r), tickNs)
		}
		if c.violation != nil {
			return
		}
	}
}

func groupName(id uint64) string {
	if id == wirespec.MetadataGroup {
		return "the metadata group"
	}
	return fmt.Sprintf("partition group %d", id)
}

func (c *Checker) checkJoin(g *promiseGroup, r uint8, tickNs int64) {
	v := g.join[r]
	if v == 0 {
		return
	}
	if !c.current(g, r) || g.view[r] >= v || g.status[r] == vsr.StatusRecovering {
		g.join[r] = 0
		return
	}
	if c.nowNs-g.joinNs[r] <= joinGraceTicks*tickNs {
		return
	}
	c.fail(Violation{Name: NewerViewIgnored, Liveness: true, Replicas: []uint8{r, g.joinFrom[r]},
		Detail: fmt.Sprintf("in %s, replica %d (%v in view %d) was given a %s of view %d from replica %d at %.6f s and is still in view %d: a replica that is not recovering starts a view change to any higher view it hears of",
			groupName(g.id), r, g.status[r], g.view[r], wirespec.CommandName(g.joinCmd[r]), v, g.joinFrom[r], float64(g.joinNs[r])/1e9, g.view[r])})
}

func (c *Checker) checkVote(g *promiseGroup, r uint8, tickNs int64) {
	if !c.current(g, r) || g.status[r] != vsr.StatusViewChange {
		return
	}
	v := g.view[r]
	k := viewReplica{v, r}
	at, ok := g.svcQuorum[k]
	if !ok || g.voted[k] || g.withheld[k] {
		return
	}
	// The vote is a broadcast: due once r can reach a core peer.
	linkNs, linked := c.anyLinkSince(r)
	if !linked {
		return
	}
	since := max(at, g.sinceNs[r], c.quiet.startNs, linkNs)
	if c.nowNs-since <= voteGraceTicks*tickNs {
		return
	}
	durable := ""
	if c.disks != nil && g.id == wirespec.MetadataGroup {
		if dv, dlv, err := c.disks.DurableView(r); err == nil {
			durable = fmt.Sprintf("; its superblock records view %d log_view %d", dv, dlv)
		}
	}
	heard := fmt.Sprintf("heard StartViewChanges of view %d from replicas %s by %.6f s (f = %d)", v, replicaSet(g.svcFrom[k], c.replicas), float64(at)/1e9, (c.replicas-1)/2)
	if (c.replicas-1)/2 == 0 {
		heard = "needs no StartViewChange to vote (f = 0)"
	}
	c.fail(Violation{Name: NoDoViewChange, Liveness: true, Replicas: []uint8{r},
		Detail: fmt.Sprintf("in %s, replica %d has been in view_change status in view %d since %.6f s and %s, and no DoViewChange of view %d from it has reached any replica, though it has been connected to a core peer since %.6f s%s",
			groupName(g.id), r, v, float64(g.sinceNs[r])/1e9, heard, v, float64(linkNs)/1e9, durable)})
}

func (c *Checker) checkAck(g *promiseGroup, r uint8, tickNs int64) {
	d := g.ackDue[r]
	if d.op == 0 {
		return
	}
	if !c.current(g, r) || !g.normalIn(r, d.view) || g.committed[r] >= d.op {
		// (An op the backup learned was committed needs no acknowledgement.)
		g.ackDue[r] = ackDue{}
		return
	}
	if c.nowNs-max(d.sinceN, c.quiet.startNs) <= ackGraceTicks*tickNs {
		return
	}
	c.fail(Violation{Name: PrepareNotAcked, Liveness: true, Replicas: []uint8{r}, Ops: []uint64{d.op},
		Detail: fmt.Sprintf("in %s, Normal backup %d of view %d, which acknowledged or committed op %d, was given op %d %s (whose parent is that op) by replica %d at %.6f s, and has neither acknowledged nor committed it",
			groupName(g.id), r, d.view, d.parent, d.op, d.id, d.from, float64(d.sinceN)/1e9)})
}

func (c *Checker) checkRetransmit(g *promiseGroup, p uint8, tickNs int64) {
	pl := g.pipeline[p]
	if pl == nil || !c.current(g, p) || !g.normalIn(p, pl.view) {
		return
	}
	ops := make([]uint64, 0, len(pl.ops))
	for op := range pl.ops {
		ops = append(ops, op)
	}
	slices.Sort(ops)
	committed := c.committedAt(g, p)
	for _, op := range ops {
		pp := pl.ops[op]
		if op <= committed {
			delete(pl.ops, op) // committed here (a state transfer installed it): nothing to resend
			continue
		}
		if !pp.ownAck {
			continue // it has no body to send yet (a merged op it repairs)
		}
		for b := 0; b < c.replicas; b++ {
			if uint8(b) == p || !c.quiet.core[b] || pp.acks&(1<<b) != 0 || !c.current(g, uint8(b)) || !g.normalIn(uint8(b), pl.view) {
				continue
			}
			linkNs, linked := c.linkSince(p, uint8(b))
			if !linked {
				continue // no way to send it: due once the bus reconnects them
			}
			since := max(pp.fromNs, pp.lastNs[b], g.sinceNs[p], g.sinceNs[b], c.quiet.startNs, linkNs)
			if c.nowNs-since <= retransmitGraceTicks*tickNs {
				continue
			}
			last := "never"
			if pp.lastNs[b] != 0 {
				last = fmt.Sprintf("last at %.6f s", float64(pp.lastNs[b])/1e9)
			}
			if pp.staleNs[b] > since {
				last += fmt.Sprintf(" (at %.6f s it was sent stamped with view %d, which a backup of view %d drops)", float64(pp.staleNs[b])/1e9, pp.staleView[b], pl.view)
			}
			c.fail(Violation{Name: PrepareNotRetransmitted, Liveness: true, Replicas: []uint8{p, uint8(b)}, Ops: []uint64{op},
				Detail: fmt.Sprintf("in %s, Normal primary %d of view %d holds op %d %s with acknowledgements from replicas %s (short of a replication quorum of %d), Normal backup %d has not acknowledged it, and the prepare of its view reached it %s in the quiet cluster: none in %d ticks",
					groupName(g.id), p, pl.view, op, pp.id, replicaSet(pp.acks, c.replicas), quorumReplication(c.replicas), b, last, retransmitGraceTicks)})
			return
		}
	}
}

// restoredNext marks a replica's next op to commit as not yet looked at in
// its present life, which began with a restore: due from the first look.
const restoredNext = ^uint64(0)

// quorumCommitGraceTicks: a primary applies an op once a quorum holds it,
// in the handler of the acknowledgement that made the quorum.
const quorumCommitGraceTicks = 50

// checkQuorumCommitted holds a Normal primary to committing its next op
// once its own acknowledgement and a quorum's were counted, before the
// quiet cluster too (liveness.go counts only those the quiet cluster
// delivers: a primary whose pipeline emptied sends no more prepares, and
// hears no more acknowledgements, of an op it sits on).
func (c *Checker) checkQuorumCommitted(g *promiseGroup, p uint8, tickNs int64) {
	if !c.current(g, p) || g.status[p] != vsr.StatusNormal || int(g.view[p])%c.replicas != int(p) {
		return
	}
	next := c.committedAt(g, p) + 1
	if g.nextOp[p] != next {
		// Next by other than a commit (a state transfer's install, a
		// restored checkpoint): due once the grace for that has passed.
		since := c.nowNs
		if g.nextOp[p] == 0 { // (restoredNext: due from now)
			since = c.nowNs - (quietNextGraceTicks+1)*tickNs // first look: due at once
		}
		g.nextOp[p], g.nextNs[p] = next, since
	}
	q, ok := g.quorums[viewOp{g.view[p], next}]
	if !ok || q.primary != p || q.inc != c.incarnations[p] {
		return
	}
	if c.nowNs-max(q.atNs, c.quiet.startNs, g.sinceNs[p]) <= quorumCommitGraceTicks*tickNs || c.nowNs-g.nextNs[p] <= quietNextGraceTicks*tickNs {
		return
	}
	c.fail(Violation{Name: QuorumNotCommitted, Liveness: true, Replicas: []uint8{p}, Ops: []uint64{next},
		Detail: fmt.Sprintf("in %s, replica %d, the Normal primary of view %d, has held its own and %d replicas' acknowledgements of op %d %s (replicas %s) since %.6f s, a replication quorum of %d, and has not committed it (it committed op %d)",
			groupName(g.id), p, g.view[p], bits.OnesCount64(q.acks)-1, next, q.id, replicaSet(q.acks, c.replicas), float64(q.atNs)/1e9, quorumReplication(c.replicas), next-1)})
}

// checkAbandoned: a replica that owed adopting a StartView and moved to a
// newer view that no frame told it of (its own election: a timeout) gave
// the StartView up, at that moment.
func (c *Checker) checkAbandoned(g *promiseGroup, r uint8, e vsr.Event) {
	d := g.svDue[r]
	if c.quiet == nil || d.view == 0 || !c.current(g, r) || e.View <= d.view || e.View <= g.told[r] ||
		g.view[r] == d.view && g.status[r] == vsr.StatusNormal || c.nowNs-d.sinceN <= joinGraceTicks*c.promises.tickNs {
		return
	}
	if linkNs, linked := c.linkSince(r, d.from); !linked || linkNs > d.sinceN {
		return // the StartView came on a connection closed at the primary's end: its repairs had no way
	}
	if _, missing := c.missingInCore(g, r, d.op); missing {
		return // the core cannot carry r there (promises_catchup.go): its probe may give up
	}
	c.fail(Violation{Name: StartViewNotAdopted, Liveness: true, Replicas: []uint8{r, d.from}, Ops: []uint64{d.op},
		Detail: fmt.Sprintf("in %s, replica %d (%v in view %d) was given a StartView of view %d (head op %d) by its primary %d at %.6f s, did not go Normal in it, and moved to view %d (%v) of its own accord (no frame of that view reached it)",
			groupName(g.id), r, g.status[r], g.view[r], d.view, d.op, d.from, float64(d.sinceN)/1e9, e.View, e.Status)})
}

// checkViewStep holds a replica's own view changes to one view at a time,
// in the quiet cluster only: before it, a replica may take a view from a
// frame the checker is not shown (one on a connection whose peer is not
// known yet), and adopting a StartView sets its view before it reports a
// status (VOPR seed 1926599512: a replica paused through a view change
// reported view 5, then view 14).
func (c *Checker) checkViewStep(g *promiseGroup, r uint8, e vsr.Event) {
	if c.quiet == nil || c.violation != nil || !c.current(g, r) || e.View <= max(g.view[r], g.told[r])+1 {
		return
	}
	c.fail(Violation{Name: ViewSkipped, Liveness: true, Replicas: []uint8{r},
		Detail: fmt.Sprintf("in %s, replica %d moved from view %d (%v) to view %d (%v), and no frame of a view above %d had reached it",
			groupName(g.id), r, g.view[r], g.status[r], e.View, e.Status, g.told[r])})
}

func (c *Checker) checkAdopted(g *promiseGroup, r uint8, tickNs int64) {
	d := g.svDue[r]
	if d.view == 0 {
		return
	}
	if !c.current(g, r) || g.view[r] > d.view || g.view[r] == d.view && g.status[r] == vsr.StatusNormal {
		g.svDue[r] = svDue{}
		return
	}
	// Adopting repairs what r lacks from the primary: due once they can
	// reach each other.
	linkNs, linked := c.linkSince(r, d.from)
	if !linked || c.nowNs-max(d.sinceN, c.quiet.startNs, linkNs) <= adoptGraceTicks*tickNs {
		return
	}
	if op, missing := c.missingInCore(g, r, d.op); missing {
		// Not owed while the core cannot carry r there (promises_catchup.go).
		c.note("%s", missingNote(g, r, d, op))
		g.svDue[r] = svDue{}
		return
	}
	c.fail(Violation{Name: StartViewNotAdopted, Liveness: true, Replicas: []uint8{r, d.from}, Ops: []uint64{d.op},
		Detail: fmt.Sprintf("in %s, replica %d (%v in view %d) was given a StartView of view %d (head op %d) by its primary %d at %.6f s, and %d ticks later is neither Normal in it nor in a newer view",
			groupName(g.id), r, g.status[r], g.view[r], d.view, d.op, d.from, float64(d.sinceN)/1e9, adoptGraceTicks)})
}

// checkDurable holds a core replica of the metadata group to making the
// view it is in durable (the checker reads its superblock with its own
// reader, only once the grace has passed).
func (c *Checker) checkDurable(g *promiseGroup, r uint8, tickNs int64) {
	if g.id != wirespec.MetadataGroup || c.disks == nil || !c.current(g, r) || g.status[r] == vsr.StatusRecovering {
		return
	}
	v := g.view[r]
	if g.durableView[r] >= v || c.nowNs-max(g.sinceNs[r], c.quiet.startNs) <= durableGraceTicks*tickNs {
		return
	}
	dv, dlv, err := c.disks.DurableView(r)
	if err != nil {
		return // the superblock is not readable now (a write in flight): read again next tick
	}
	g.durableView[r], g.durableLogView[r] = dv, dlv
	if dv >= v {
		return
	}
	c.fail(Violation{Name: ViewNotDurable, Liveness: true, Replicas: []uint8{r},
		Detail: fmt.Sprintf("in %s, replica %d has been %v in view %d since %.6f s, and its superblock still records view %d log_view %d",
			groupName(g.id), r, g.status[r], v, float64(g.sinceNs[r])/1e9, dv, dlv)})
}

// committedAt is the highest op r committed in this life, in the metadata
// group also through a checkpoint it restored or a state it installed.
func (c *Checker) committedAt(g *promiseGroup, r uint8) uint64 {
	if g.id == wirespec.MetadataGroup {
		return max(g.committed[r], c.next[r]-1)
	}
	return g.committed[r]
}

func (c *Checker) checkCommitFollowed(g *promiseGroup, r uint8, tickNs int64) {
	d := g.commitDue[r]
	if d.op == 0 {
		return
	}
	if !c.current(g, r) || !g.normalIn(r, d.view) || c.committedAt(g, r) >= d.op {
		g.commitDue[r] = commitDue{}
		return
	}
	// The commit walk repairs what r lacks from its primary (who holds
	// every committed op): due once they can reach each other.
	linkNs, linked := c.linkSince(r, uint8(int(d.view)%c.replicas))
	if !linked || c.nowNs-max(d.sinceN, c.quiet.startNs, linkNs) <= commitGraceTicks*tickNs {
		return
	}
	c.fail(Violation{Name: CommitNotFollowed, Liveness: true, Replicas: []uint8{r, uint8(int(d.view) % c.replicas)}, Ops: []uint64{c.committedAt(g, r) + 1},
		Detail: fmt.Sprintf("in %s, Normal backup %d of view %d was told by its primary %d since %.6f s that ops up to %d are committed, and %d ticks later has committed only up to op %d",
			groupName(g.id), r, d.view, int(d.view)%c.replicas, float64(d.sinceN)/1e9, d.op, commitGraceTicks, c.committedAt(g, r))})
}

func (c *Checker) checkCheckpoint(g *promiseGroup, r uint8, tickNs int64) {
	due := g.cpDue[r].op
	if g.id != wirespec.MetadataGroup || c.disks == nil || due == 0 || g.cpSeen[r] >= due || !c.current(g, r) ||
		c.nowNs-max(g.cpAtNs[r], c.quiet.startNs) <= checkpointGraceTicks*tickNs {
		return
	}
	cp, err := c.disks.DurableCheckpoint(r)
	if err != nil {
		return // not readable now (a write in flight): read again next tick
	}
	g.cpSeen[r] = cp
	if cp >= due {
		return
	}
	c.fail(Violation{Name: CheckpointNotRecorded, Liveness: true, Replicas: []uint8{r}, Ops: []uint64{due},
		Detail: fmt.Sprintf("replica %d applied op %d, a multiple of the checkpoint interval %d, at %.6f s, and its superblock still records the checkpoint at op %d",
			r, due, c.checkpointInterval, float64(g.cpAtNs[r])/1e9, cp)})
}

// frameGroup reads the consensus group a replica's frame names (wire.md 5's
// offsets), false for a command that names none.
func frameGroup(f []byte) (uint64, bool) {
	var off int
	switch f[wirespec.OffCommand] {
	case wirespec.Prepare, wirespec.RepairPrepare:
		return wirespec.ReadPrepare(f).Group, true
	case wirespec.PrepareOk:
		off = wirespec.OffPrepareOkGroup
	case wirespec.Commit:
		off = wirespec.OffCommitGroup
	case wirespec.StartViewChange, wirespec.RequestStartView:
		off = 128
	case wirespec.DoViewChange, wirespec.StartView:
		off = wirespec.OffVoteGroup
	case wirespec.RequestPrepares:
		off = wirespec.OffRPGroup
	case wirespec.RepairDone, wirespec.RangeEvicted:
		off = wirespec.OffRRGroup
	case wirespec.RequestStateTransfer:
		off = wirespec.OffRSTGroup
	case wirespec.StateTransferTarget:
		off = wirespec.OffSTTGroup
	case wirespec.RequestStateChunk:
		off = wirespec.OffRSCGroup
	case wirespec.StateChunk:
		off = wirespec.OffSCGroup
	default:
		return 0, false
	}
	return wirespec.U64(f, off), true
}
