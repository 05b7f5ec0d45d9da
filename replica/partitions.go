package replica

import (
	"errors"
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"

	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/transfer"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// The partition planes: one consensus group per live partition, on every
// replica (partition-plane.md "Groups"). Groups come and go with the
// committed metadata: after each commit that can change the partition set
// the replica diffs the state's partitions against the groups it runs, in
// group order, and builds or drops them (Iggy's partition_reconciler). A
// group is routed by the never-reused consensus group id the metadata
// minted (DEVIATIONS.md 46), so a frame of a deleted partition can never
// reach a later one that took its place in the namespace.
//
// Each group keeps its journal in memory (vsr.MemJournal) and its (view,
// log_view, commit_max) in a slot of the partition.Store. Completions of the
// memory journal run after the call that caused them returns, from the
// host's queue (later), which every entry point drains.

// partitionHost runs the replica's partition groups.
type partitionHost struct {
	r     *Replica
	store *partition.Store
	// offsets keeps the consumers' offsets durable, per group slot.
	offsets *partition.OffsetStore
	// segments keeps the committed batches, per group slot.
	segments *partition.SegmentLog
	// groups by id: looked up only; order holds them by ascending id, the
	// order they are ticked and reconciled in.
	groups map[uint64]*partitionGroup
	order  []*partitionGroup
	slots  []uint64 // slot -> the live group in it, 0 for none
	// freshBoot: this incarnation booted from a freshly formatted device,
	// so a group it creates has never run here: it starts Normal in view 0.
	// After a restart every group starts by probing for its view.
	freshBoot bool
	// balanced: the next index of each topic's Balanced round robin
	// (looked up only).
	balanced map[[2]uint32]uint64
	later    []func()
	draining bool

	// The host ticks a group only when one of its timers is due: now is the
	// host's tick count, due a min-heap of (tick, group) entries, each valid
	// while it is its group's scheduled entry (a group rescheduled leaves a
	// stale entry behind, skipped when popped). dirty lists the groups
	// touched since their timers were last read.
	now   uint64
	due   []dueEntry
	dirty []*partitionGroup

	// live: the groups the state has, during a reconcile (looked up only).
	live map[uint64]bool

	// amnesiac counts the groups that lost their memory journal at the
	// restart and have not caught up since (vsr.Group.Amnesiac).
	amnesiac int

	// Partition state transfer (partitiontransfer.go): the offers this
	// replica serves, the groups with a session or an install under way
	// (sessions), how many of the PartitionTransfersMax places are held,
	// and the groups waiting for one, in order.
	server        *transfer.Server
	sessions      []*partitionGroup
	transfersHeld int
	transferQueue []uint64
}

type dueEntry struct {
	at    uint64
	group uint64
}

// partitionGroup is one live partition's group on this replica.
type partitionGroup struct {
	ref     metadata.PartitionRef
	slot    int
	journal *partitionJournal
	group   *vsr.Group
	sink    partitionSink
	plane   *partition.Plane

	scheduled    uint64 // the tick of its valid heap entry
	hasScheduled bool
	isDirty      bool
	amnesiac     bool // counted in partitionHost.amnesiac
	transfer     partitionTransfer
}

// laterMax bounds the completions one drain may run (each journal append of
// a group produces one): far above what any single event can cause.
const laterMax = 1 << 20

func newPartitionHost(r *Replica, store *partition.Store, offsets *partition.OffsetStore, segments *partition.SegmentLog, fresh bool) *partitionHost {
	h := &partitionHost{r: r, store: store, offsets: offsets, segments: segments, groups: make(map[uint64]*partitionGroup),
		slots: make([]uint64, store.Slots()), freshBoot: fresh, balanced: make(map[[2]uint32]uint64),
		server: transfer.NewServer(transfer.ChunkLen(r.cfg.Profile.FrameSizeMax), partitionOffersMax)}
	segments.SetFlushed(h.flushed)
	return h
}

// flushed purges a group's memory journal of the ops its segment log made
// durable, keeping the last EvictedRing of them for repair (Iggy's evicted
// ring, partition-plane.md "Journal"); a repair of an older op is answered
// RangeEvicted (DEVIATIONS.md 55).
func (h *partitionHost) flushed(slot int, op uint64) {
	id := h.slots[slot]
	g, ok := h.groups[id]
	ring := h.r.cfg.evictedRing()
	if id == 0 || !ok || g.journal.dropped || op <= ring {
		return
	}
	through := op - ring
	if through < g.journal.RetainedFrom() || through > g.journal.Head() || through > g.group.CommitMin() {
		return
	}
	g.journal.Purge(through)
	h.r.probe("partition plane: journal purged of flushed ops beyond the evicted ring")
}

// enter readies a group for a call from the host: its clock at the host's
// tick, and its timers read again once the call's work is done.
func (h *partitionHost) enter(g *partitionGroup) {
	g.group.SetNow(h.now)
	if !g.isDirty {
		g.isDirty = true
		h.dirty = append(h.dirty, g)
	}
}

// deferFor returns the completion queue of group g's memory journal: a
// completion runs once the current entry point's work is done, entering
// its group first.
func (h *partitionHost) deferFor(g *partitionGroup) func(func()) {
	return func(f func()) {
		h.later = append(h.later, func() {
			if h.groups[g.ref.Group] != g {
				return // dropped meanwhile
			}
			h.enter(g)
			f()
		})
	}
}

// drain runs the queued completions, and those they queue, in order, then
// schedules every group touched.
func (h *partitionHost) drain() {
	if h.draining {
		return
	}
	h.draining = true
	for i := 0; i < len(h.later); i++ {
		if i >= laterMax {
			panic(fmt.Sprintf("replica %d: %d partition completions in one step", h.r.cfg.Replica, i))
		}
		f := h.later[i]
		h.later[i] = nil
		f()
	}
	h.later = h.later[:0]
	for i, g := range h.dirty {
		h.dirty[i] = nil
		g.isDirty = false
		if h.groups[g.ref.Group] == g {
			h.schedule(g)
		}
	}
	h.dirty = h.dirty[:0]
	h.draining = false
}

// schedule (re)files a group under its earliest timer.
func (h *partitionHost) schedule(g *partitionGroup) {
	at, ok := g.group.NextDue()
	if !ok {
		g.hasScheduled = false
		return
	}
	if at <= h.now {
		panic(fmt.Sprintf("replica %d: group %d has a timer due at tick %d, now %d", h.r.cfg.Replica, g.ref.Group, at, h.now))
	}
	if g.hasScheduled && g.scheduled == at {
		return
	}
	g.scheduled, g.hasScheduled = at, true
	h.push(dueEntry{at: at, group: g.ref.Group})
	if len(h.due) > 8*len(h.groups)+64 {
		h.compact()
	}
}

// compact rebuilds the heap from the valid entries alone (one per scheduled
// group), bounding the stale ones rescheduling leaves behind.
func (h *partitionHost) compact() {
	h.due = h.due[:0]
	for _, g := range h.order {
		if h.groups[g.ref.Group] == g && g.hasScheduled {
			h.push(dueEntry{at: g.scheduled, group: g.ref.Group})
		}
	}
}

func (e dueEntry) less(o dueEntry) bool { return e.at < o.at || e.at == o.at && e.group < o.group }

func (h *partitionHost) push(e dueEntry) {
	h.due = append(h.due, e)
	for i := len(h.due) - 1; i > 0; {
		parent := (i - 1) / 2
		if !h.due[i].less(h.due[parent]) {
			break
		}
		h.due[i], h.due[parent] = h.due[parent], h.due[i]
		i = parent
	}
}

func (h *partitionHost) pop() dueEntry {
	top := h.due[0]
	last := len(h.due) - 1
	h.due[0] = h.due[last]
	h.due = h.due[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.due) && h.due[l].less(h.due[m]) {
			m = l
		}
		if r < len(h.due) && h.due[r].less(h.due[m]) {
			m = r
		}
		if m == i {
			break
		}
		h.due[i], h.due[m] = h.due[m], h.due[i]
		i = m
	}
	return top
}

// reconcile builds the groups of partitions the state has and this replica
// does not run, and drops those it runs that the state no longer has.
func (h *partitionHost) reconcile() {
	live := h.r.state.Partitions()
	// The live set as the state has it, for slotFor: a commit can mint
	// several groups, and one built first must not take the slot of one
	// built after it.
	h.live = make(map[uint64]bool, len(live))
	for _, ref := range live {
		h.live[ref.Group] = true
	}
	keep := make([]*partitionGroup, 0, len(live))
	i := 0
	for _, ref := range live {
		for i < len(h.order) && h.order[i].ref.Group < ref.Group {
			h.drop(h.order[i])
			i++
		}
		if i < len(h.order) && h.order[i].ref.Group == ref.Group {
			keep = append(keep, h.order[i])
			i++
			continue
		}
		if g := h.build(ref); g != nil {
			keep = append(keep, g)
		}
	}
	for ; i < len(h.order); i++ {
		h.drop(h.order[i])
	}
	h.order = keep
	h.drain()
}

// build starts the group of a partition the state just gained.
func (h *partitionHost) build(ref metadata.PartitionRef) *partitionGroup {
	if ref.Group == 0 || ref.Group >= wire.MetadataGroup {
		panic(fmt.Sprintf("replica %d: partition group id %d", h.r.cfg.Replica, ref.Group))
	}
	slot, dead, ok := h.slotFor(ref.Group)
	switch {
	case dead:
		h.r.probe("partition plane: group not rebuilt: its slot was reused, so it was deleted")
		return nil
	case !ok:
		h.r.probe("partition plane: group not built: every superblock slot is taken")
		return nil
	}
	h.slots[slot] = ref.Group
	state, held, recovered := h.store.Recover(slot, ref.Group)
	if !recovered {
		state = wire.VsrState{}
	}
	g := &partitionGroup{ref: ref, slot: slot}
	g.sink = partitionSink{h: h, group: ref.Group}
	// held carries over: a restarted group that held prepares before keeps
	// saying so in every state it writes, or a later crash would rebuild it
	// as one that lost nothing (VOPR seed 598).
	g.journal = &partitionJournal{MemJournal: vsr.NewMemJournal(h.deferFor(g)), h: h, g: g, state: state, held: held}
	g.plane = partition.NewPlane(uint64(ref.Partition), g.journal, func() uint64 { return g.group.CommitMin() })
	// The consumers' durable offsets: what this slot's records hold of the
	// group (a restart), then every offset a commit applies (DEVIATIONS.md
	// 52).
	stored, found := h.offsets.Recover(slot, ref.Group)
	g.plane.SeedOffsets(stored)
	h.reportDisk(EventOffsetsRecovered, ref.Group, DiskReport{Slot: slot, Offsets: offsetEntries(stored), Torn: found.Torn, Corrupt: found.Corrupt})
	if len(stored) > 0 {
		h.r.probe("partition plane: consumer offsets recovered from their records")
	}
	if found.Torn > 0 {
		h.r.probe("partition plane: consumer offset record torn: the intact copy kept")
	}
	if found.Corrupt > 0 {
		h.r.probe("partition plane: consumer offset record corrupt: lost")
	}
	// The segment log: what it kept (a restart) is visible at once and
	// checked against the log as it commits again; every batch committed
	// past it is written (DEVIATIONS.md 53).
	seg := h.segments.Recover(slot, ref.Group)
	h.reportDisk(EventSegmentRecovered, ref.Group, DiskReport{Slot: slot, Segment: seg})
	g.plane.SeedSegment(seg.Batches)
	if len(seg.Batches) > 0 {
		h.r.probe("partition plane: committed batches recovered from the segment log")
	}
	if seg.Damaged {
		h.r.probe("partition plane: segment log ends in a damaged unit: written again from there")
	}
	g.plane.SetSegment(segmentSink{h: h, g: g})
	g.plane.SetOffsetSink(func(consumer uint32, offset uint64, deleted bool) {
		if !h.writeOffset(g.slot, ref.Group, consumer, offset, deleted, func() {}) {
			h.r.probe("partition plane: consumer offset kept in memory only: the partition's records are full")
		}
	})
	cfg := h.r.cfg.vsrConfig()
	cfg.Group = ref.Group
	cfg.PipelineMax, cfg.RequestQueueMax = h.r.cfg.Profile.PartitionPipelineMax, 2*h.r.cfg.Profile.PartitionPipelineMax
	cfg.MemoryJournal = true
	g.group = vsr.New(cfg, vsr.Deps{
		Out:        h.r,
		Journal:    g.journal,
		Machine:    g,
		Sink:       g.sink,
		Rand:       h.r.env.Rand,
		RealtimeUs: h.r.env.RealtimeUs,
		Plane:      g.plane,
		StateTransfer: func(peer uint8, retained uint64) {
			h.needPartitionTransfer(g, peer, retained)
		},
	}, vsr.Recovered{State: state, Head: 0, Tick: h.now,
		// A group acts only once its first state is durable (Unwritten), so
		// a group without a state here never acted here: it starts Normal
		// in view 0, like a group every replica just built (a later view
		// reaches it by the protocol). A group that held a prepare may have
		// acknowledged ops its lost memory journal held: it rejoins
		// quorum-invisible until caught up (a group that never held one
		// lost nothing, and votes at once).
		Fresh: !recovered, Unwritten: !recovered, Amnesiac: held})
	h.groups[ref.Group] = g
	if !g.isDirty {
		g.isDirty = true
		h.dirty = append(h.dirty, g)
	}
	if g.group.Amnesiac() {
		g.amnesiac = true
		h.amnesiac++
	}
	h.r.env.Sink.Event(Event{Kind: EventPartitionBuilt, Replica: h.r.cfg.Replica, PartitionGroup: ref.Group})
	if recovered {
		h.r.probe("partition plane: group rebuilt from its superblock")
	}
	return g
}

// slotFor picks the superblock slot of group, or says the group is dead
// for good.
//
// The slot that holds the group's records is its own, unless that slot has
// since been taken by another group: a slot is taken only once its tenants
// are dead for good, so a replaying replica that finds its group's slot
// reused knows the group was deleted before it crashed, and does not build
// it (dead). Otherwise a new group takes the lowest slot that no live group
// uses, no write is in flight to, and whose records are of dead groups
// only: ids are never reused and minted in order, so a group at or below
// the state's highest id that is not live was deleted, while a record of a
// higher id belongs to a group a replaying replica has not rebuilt yet.
func (h *partitionHost) slotFor(group uint64) (slot int, dead, ok bool) {
	highest := h.r.state.HighestGroupID()
	taken := func(slot int, except uint64) bool {
		for _, g := range h.store.Tenants(slot) {
			if g != 0 && g != except && (g > highest || h.live[g]) {
				return true
			}
		}
		return h.slots[slot] != 0
	}
	for slot := range h.slots {
		if !h.store.Holds(slot, group) {
			continue
		}
		if taken(slot, group) {
			return 0, true, false
		}
		if h.store.Busy(slot) || h.segments.Busy(slot) || h.offsets.Busy(slot) {
			panic(fmt.Sprintf("replica %d: group %d's own slot %d has a write in flight before the group exists",
				h.r.cfg.Replica, group, slot))
		}
		return slot, false, true
	}
	for slot := range h.slots {
		if !h.store.Busy(slot) && !h.segments.Busy(slot) && !h.offsets.Busy(slot) && !taken(slot, 0) {
			return slot, false, true
		}
	}
	return 0, false, false
}

// drop stops a group whose partition was deleted; frames for it are dropped
// from now on.
func (h *partitionHost) drop(g *partitionGroup) {
	delete(h.groups, g.ref.Group)
	h.slots[g.slot] = 0
	h.caughtUp(g)
	h.dropTransfer(g)
	g.journal.dropped = true
	h.segments.Drop(g.slot)
	h.r.probe("partition plane: group dropped: its partition was deleted")
}

// segmentSink writes a group's committed batches to its segment log.
type segmentSink struct {
	h *partitionHost
	g *partitionGroup
}

func (s segmentSink) Append(op uint64, batch []byte) {
	s.h.segments.Append(s.g.slot, op, batch)
	if s.h.segments.Full(s.g.slot) {
		s.h.r.probe("partition plane: segment log full: batches kept in memory")
	}
}

func (s segmentSink) Reset(batches [][]byte) {
	s.h.r.probe("partition plane: segment log held a batch the log replaced: written again from offset 0")
	s.h.segments.Reset(s.g.slot, batches)
}

// FlushSegments writes every partition's buffered batches to its segment
// log, whatever the thresholds (as a clean shutdown does), then runs done.
func (h *partitionHost) flushSegments(done func()) {
	left := len(h.order) + 1
	finish := func() {
		left--
		if left == 0 {
			done()
		}
	}
	for _, g := range h.order {
		if h.groups[g.ref.Group] == g {
			h.segments.Flush(g.slot, finish)
		} else {
			left--
		}
	}
	finish()
}

// caughtUp uncounts a group that is no longer amnesiac (or is gone).
func (h *partitionHost) caughtUp(g *partitionGroup) {
	if g.amnesiac {
		g.amnesiac = false
		h.amnesiac--
	}
}

// tick advances the host by one tick and ticks the groups with a timer due
// then, in (tick, group) order: an idle group costs nothing here (only its
// own heartbeat timer, when it fires).
func (h *partitionHost) tick() {
	h.now++
	for len(h.due) > 0 && h.due[0].at <= h.now {
		e := h.pop()
		g := h.groups[e.group]
		if g == nil || !g.hasScheduled || g.scheduled != e.at {
			continue // stale: rescheduled or dropped since
		}
		if e.at != h.now {
			panic(fmt.Sprintf("replica %d: group %d's timer at tick %d missed until %d", h.r.cfg.Replica, e.group, e.at, h.now))
		}
		g.hasScheduled = false
		g.group.TickTo(h.now)
		h.enter(g)
	}
	h.tickTransfers()
	h.drain()
}

// deliver routes a consensus frame of a partition group.
func (h *partitionHost) deliver(peer uint8, group uint64, frame []byte) {
	g, ok := h.groups[group]
	if !ok {
		// Not created here yet (its CreateTopic has not committed here) or
		// deleted: dropped, as a frame of an unknown route; the sender's
		// timers resend what matters (DEVIATIONS.md 46).
		h.r.probe("partition plane: frame for an unknown group dropped")
		return
	}
	h.enter(g)
	g.group.Receive(peer, frame)
	h.drain()
}

// Commit implements vsr.StateMachine for a partition group: every replica
// applies the committed prepare to its plane; the group's primary answers
// the client if its connection is here (backups send no replies, and there
// is no client table on this plane: a retried send commits again).
func (g *partitionGroup) Commit(prepare []byte) {
	var p wire.PrepareHeader
	p.Decode(wire.HeaderOf(prepare))
	body := g.plane.Apply(&p, prepare[wire.HeaderSize:], g.ref.Stream, g.ref.Topic)
	h := g.journal.h
	if !g.group.IsPrimary() {
		return
	}
	reply := clients.BuildReply(p, body)
	sent := h.r.sendToClient(p.Client, reply)
	h.r.env.Sink.Event(Event{Kind: EventReply, Replica: h.r.cfg.Replica, Client: p.Client, Request: p.Request,
		Op: p.Op, Frame: reply, Sent: sent, PartitionGroup: g.ref.Group})
}

// admit is the partition primary's admission of a client request
// (partition-plane.md "Primary: admission and stamping"; client-ops.md
// 5.25): a session of the replicated client table, a body that decodes and
// verifies (else silence), a partition that resolves (else ResourceNotFound),
// and this replica the Normal primary of its group (else
// TransientNotAccepted). StoreConsumerOffset and DeleteConsumerOffset are
// not admitted yet (FeatureUnavailable).
func (h *partitionHost) admit(c ConnID, x *wire.RequestHeader, body []byte) {
	r := h.r
	if !r.metadataReplayed() {
		r.probe("partition plane: request refused: the metadata plane is replaying what it applied before its restart")
		r.answerStatus(c, x, codeTransientNotAccepted)
		return
	}
	e, ok := r.table.Lookup(x.Client)
	switch {
	case !ok:
		r.evictOn(c, x.Client, wire.EvictionNoSession)
		return
	case x.Session < e.Epoch:
		r.evictOn(c, x.Client, wire.EvictionSessionTooLow)
		return
	case x.Session > e.Epoch:
		r.probe("partition plane: request of a session ahead of the table dropped")
		return
	}
	if x.Operation != wire.OperationSendMessages {
		h.admitOffset(c, x, body, e.UserID)
		return
	}
	s, err := partition.DecodeSendMessages(body)
	if err != nil {
		r.probe("partition plane: SendMessages dropped at admission: " + ruleOf(err))
		return
	}
	ref, ok := h.resolve(&s)
	if !ok {
		r.answerStatus(c, x, codeResourceNotFound)
		return
	}
	g := h.groups[ref.Group]
	if g == nil || !g.group.IsPrimary() {
		r.answerStatus(c, x, codeTransientNotAccepted)
		return
	}
	r.bind(c, x.Client)
	h.enter(g)
	res := g.group.Propose(vsr.Proposal{Client: x.Client, Request: x.Request, RequestChecksum: x.RequestChecksum,
		Operation: x.Operation, UserID: e.UserID, Body: s.Batch})
	if res == vsr.Refused {
		r.probe("partition plane: SendMessages dropped: both queues full, or no stamp at the head")
	}
	if bug.PartitionReplyBeforeCommit && res == vsr.Proposed {
		h.canaryReplyAtPrepare(g, c)
	}
	h.drain()
}

// canaryReplyAtPrepare is canary_partition_reply_before_commit's bug: the
// reply of the prepare just built goes out before it commits.
func (h *partitionHost) canaryReplyAtPrepare(g *partitionGroup, c ConnID) {
	f, ok := g.journal.Frame(g.group.Op())
	if !ok {
		return
	}
	var p wire.PrepareHeader
	p.Decode(wire.HeaderOf(f))
	b, _ := wire.ReadBatchHeader(f[wire.HeaderSize:])
	h.r.probe("canary: partition reply before commit")
	h.r.env.Clients.Send(c, clients.BuildReply(p, partition.SendMessagesReply(g.ref.Stream, g.ref.Topic, g.ref.Partition, b.BaseOffset)))
}

// Read statuses (client-ops.md 2.7, 5.28).
const (
	codeUnauthenticated   uint32 = 40
	codeStreamIDNotFound  uint32 = 1009
	codeTopicIDNotFound   uint32 = 2010
	codePartitionNotFound uint32 = 3007
	// Consumer offsets (client-ops.md 5.26, 5.27).
	codeInvalidOffset          uint32 = 4100
	codeConsumerOffsetNotFound uint32 = 3021
	pollReplyBytesMaxSlack            = 4096
)

// poll serves a PollMessages (a non-replicated read) on whichever replica
// the client reached, from that replica's committed batches alone
// (partition-plane.md "Polls"): it needs a connection bound to the client's
// session (client-ops.md 5.28), resolves the partition (None reads
// partition 0; consumer groups come with their metadata operations), and
// answers with the records Plane.Poll selects. A group this replica does
// not run (not built yet) answers TransientNotAccepted.
func (h *partitionHost) poll(c ConnID, x *wire.RequestHeader, body []byte) {
	r := h.r
	if bound, ok := r.byConn[c]; !ok || bound != x.Client {
		r.answerStatus(c, x, codeUnauthenticated)
		return
	}
	q, err := partition.DecodePoll(body)
	if err != nil || q.ConsumerKind != partition.ConsumerSingle {
		h.pollReply(c, x, partition.PollReply(0, 0, nil))
		return
	}
	sk, ok := r.state.ResolveStream(q.Stream)
	if !ok {
		r.answerStatus(c, x, codeStreamIDNotFound)
		return
	}
	_, tk, ok := r.state.ResolveTopic(q.Stream, q.Topic)
	if !ok {
		r.answerStatus(c, x, codeTopicIDNotFound)
		return
	}
	parts, _ := r.state.TopicPartitions(sk, tk)
	var ref metadata.PartitionRef
	found := false
	for _, p := range parts {
		if p.Partition == q.Partition {
			ref, found = p, true
		}
	}
	if !found {
		r.answerStatus(c, x, codePartitionNotFound)
		return
	}
	g := h.groups[ref.Group]
	if g == nil {
		r.answerStatus(c, x, codeTransientNotAccepted)
		return
	}
	bytesMax := int(r.cfg.Profile.FrameSizeMax) - wire.HeaderSize - pollReplyBytesMaxSlack
	current, batches := g.plane.Poll(q.Strategy, q.Value, q.Count, bytesMax, partition.ConsumerKey(q.Consumer))
	h.pollReply(c, x, partition.PollReply(ref.Partition, current, batches))
	r.env.Sink.Event(Event{Kind: EventPoll, Replica: r.cfg.Replica, Client: x.Client, Request: x.Request,
		PartitionGroup: ref.Group})
}

// pollReply answers a read: not result-framed, op = the request's session,
// commit = the metadata commit_max (client-ops.md 5.28).
func (h *partitionHost) pollReply(c ConnID, x *wire.RequestHeader, body []byte) {
	r := h.r
	rep := wire.ReplyHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), View: r.metadata.View(), Replica: r.cfg.Replica},
		RequestChecksum: x.RequestChecksum, Client: x.Client, Op: x.Session, Commit: r.metadata.CommitMax(),
		Request: x.Request, Operation: wire.OperationNonReplicated}
	r.env.Clients.Send(c, wire.BuildFrame(&rep, body))
}

// admitOffset is the partition primary's admission of a StoreConsumerOffset
// (161) or DeleteConsumerOffset (162) of an individual consumer
// (client-ops.md 5.26, 5.27; consumer groups come with their metadata
// operations): a body that decodes and names its partition (else
// ResourceNotFound), the group's Normal primary (else TransientNotAccepted),
// then InvalidOffset for a store beyond the partition's current offset or on
// an empty one, ConsumerOffsetNotFound for a delete of no stored offset.
// NoAck applies it here and answers at once, nothing replicated (Iggy's
// leader-local fast path); Quorum replicates it and applies it at commit.
func (h *partitionHost) admitOffset(c ConnID, x *wire.RequestHeader, body []byte, user uint32) {
	r := h.r
	store := x.Operation == wire.OperationStoreConsumerOffset
	q, err := partition.DecodeOffsetRequest(body, store)
	if err != nil || q.ConsumerKind != partition.ConsumerSingle || !q.HasPartition {
		r.answerStatus(c, x, codeResourceNotFound)
		return
	}
	sk, tk, ok := r.state.ResolveTopic(q.Stream, q.Topic)
	var ref metadata.PartitionRef
	found := false
	if ok {
		parts, _ := r.state.TopicPartitions(sk, tk)
		for _, p := range parts {
			if p.Partition == q.Partition {
				ref, found = p, true
			}
		}
	}
	if !found {
		r.answerStatus(c, x, codeResourceNotFound)
		return
	}
	g := h.groups[ref.Group]
	if g == nil || !g.group.IsPrimary() {
		r.answerStatus(c, x, codeTransientNotAccepted)
		return
	}
	key := partition.ConsumerKey(q.Consumer)
	switch {
	case store && (g.plane.NextOffset() == 0 || q.Offset >= g.plane.NextOffset()):
		r.answerStatus(c, x, codeInvalidOffset)
		return
	case !store:
		if _, ok := g.plane.StoredOffset(key); !ok {
			r.answerStatus(c, x, codeConsumerOffsetNotFound)
			return
		}
	}
	if q.Ack == partition.AckNone {
		// Applied and made durable by the primary alone, answered once its
		// record is durable (Iggy persists it, then replies).
		if store {
			g.plane.StoreOffset(key, q.Offset)
		} else {
			g.plane.DeleteOffset(key)
		}
		rep := wire.ReplyHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), Replica: r.cfg.Replica},
			RequestChecksum: x.RequestChecksum, Client: x.Client, Request: x.Request, Operation: x.Operation}
		reply := func() { r.env.Clients.Send(c, wire.BuildFrame(&rep, partition.OffsetReply())) }
		if !h.writeOffset(g.slot, ref.Group, key, q.Offset, !store, reply) {
			r.probe("partition plane: consumer offset kept in memory only: the partition's records are full")
			reply()
		}
		r.probe("partition plane: consumer offset applied leader-locally (NoAck)")
		return
	}
	r.bind(c, x.Client)
	h.enter(g)
	if g.group.Propose(vsr.Proposal{Client: x.Client, Request: x.Request, RequestChecksum: x.RequestChecksum,
		Operation: x.Operation, UserID: user, Body: body}) == vsr.Refused {
		r.probe("partition plane: consumer offset dropped: both queues full")
	}
	h.drain()
}

// resolve finds the partition a send goes to (client-ops.md 1.5).
func (h *partitionHost) resolve(s *partition.SendMessages) (metadata.PartitionRef, bool) {
	sk, tk, ok := h.r.state.ResolveTopic(s.Stream, s.Topic)
	if !ok {
		return metadata.PartitionRef{}, false
	}
	parts, _ := h.r.state.TopicPartitions(sk, tk)
	if len(parts) == 0 {
		return metadata.PartitionRef{}, false
	}
	switch s.Partitioning.Kind {
	case partition.PartitionID:
		for _, p := range parts {
			if p.Partition == s.Partitioning.Partition {
				return p, true
			}
		}
		return metadata.PartitionRef{}, false
	case partition.MessagesKey:
		return parts[partition.KeyIndex(s.Partitioning.Key, len(parts))], true
	}
	// Balanced: a per-process round robin, not replicated (client-ops.md
	// 10.8): two replicas may pick different partitions for one send.
	key := [2]uint32{sk, tk}
	i := h.balanced[key] % uint64(len(parts))
	h.balanced[key]++
	return parts[i], true
}

// ruleOf names the rule an admission error broke, for a probe.
func ruleOf(err error) string {
	for _, rule := range []error{partition.ErrShort, partition.ErrMetadataLength, partition.ErrPartitioning,
		partition.ErrMessagesCount, partition.ErrBatch} {
		if errors.Is(err, rule) {
			return rule.Error()
		}
	}
	return "identifier"
}

// partitionJournal is a group's memory journal, whose state goes to the
// group's superblock slot with one more fact: whether the group has ever
// had a non-empty log here (held): held a prepare, or adopted a log with
// ops. A group that never did has nothing to lose at a crash, so after a
// restart it is not amnesiac and votes at once; one that did may have
// acknowledged what its lost memory held, or would vote an empty log under
// a log_view whose log was not. The fact is durable before the group acts
// on its log: the first append's completion (and Durable) waits for the
// state write that records it, and a state written with a non-empty log
// records it too.
type partitionJournal struct {
	*vsr.MemJournal
	h       *partitionHost
	g       *partitionGroup
	dropped bool // the group was deleted: its late completions do nothing

	held     bool          // durable: the group has held a prepare
	state    wire.VsrState // the last state asked for (what a held write carries)
	writing  bool          // a store write is in flight
	pending  *stateWrite   // the state write waiting for it, if any
	wantHeld bool          // a write must record held
	waiters  []func()      // append completions waiting for held to be durable
}

type stateWrite struct {
	state wire.VsrState
	done  func()
}

// Append journals frame in memory; its completion waits until held is
// durable.
func (j *partitionJournal) Append(frame []byte, done func()) {
	j.MemJournal.Append(frame, func() { j.afterHeld(done) })
}

// afterHeld runs done once held is durable: at once if it is, else once
// the store write recording it is done.
func (j *partitionJournal) afterHeld(done func()) {
	if j.held {
		done()
		return
	}
	j.waiters = append(j.waiters, done)
	j.wantHeld = true
	j.kick()
}

// Reconcile adopts a canonical log; when the log is not empty, its
// completion (after which the group goes Normal in the log's view) waits
// until held is durable. A group whose superblock already holds that
// log_view writes no new one, and a crash before held was recorded would
// rebuild it as a group that lost nothing, voting the log_view with an
// empty log (VOPR seed 358).
func (j *partitionJournal) Reconcile(head uint64, canonical []wire.Header, done func()) {
	j.MemJournal.Reconcile(head, canonical, func() {
		if head == 0 {
			done()
			return
		}
		j.afterHeld(done)
	})
}

// Durable: held in memory, and held recorded.
func (j *partitionJournal) Durable(op uint64) bool { return j.held && j.MemJournal.Durable(op) }

// WriteState makes the group's state durable in its slot (vsr has one in
// flight at a time).
func (j *partitionJournal) WriteState(s wire.VsrState, done func()) {
	if j.dropped {
		return
	}
	if j.pending != nil {
		panic(fmt.Sprintf("replica: group %d wrote its state twice at once", j.g.ref.Group))
	}
	j.state = s
	j.pending = &stateWrite{state: s, done: done}
	// A state written while the log is not empty (a log_view adopted with
	// ops, even ops whose bodies never came) also records held: a vote of
	// that log_view after a crash would otherwise claim an empty log for it
	// (VOPR seed 1213: two such votes truncated a committed op).
	if g := j.g.group; g != nil && g.Op() > 0 {
		j.wantHeld = true
	}
	j.kick()
}

// kick issues the next store write: the pending state, and held if wanted.
func (j *partitionJournal) kick() {
	if j.writing || j.dropped || j.pending == nil && (!j.wantHeld || j.held) {
		return
	}
	w, held := j.pending, j.held || j.wantHeld
	j.pending, j.writing = nil, true
	state := j.state
	if w != nil {
		state = w.state
	}
	j.h.store.Write(j.g.slot, j.g.ref.Group, state, held, func() {
		j.writing = false
		if j.dropped {
			return
		}
		j.h.enter(j.g)
		if held && !j.held {
			j.held = true
			waiters := j.waiters
			j.waiters = nil
			for _, f := range waiters {
				f()
			}
		}
		if w != nil {
			w.done()
		}
		j.kick()
		j.h.drain()
	})
}

// partitionSink forwards a partition group's events, its probes named as
// the partition plane's.
type partitionSink struct {
	h     *partitionHost
	group uint64
}

func (s partitionSink) Event(e vsr.Event) {
	if e.Kind == vsr.EventProbe {
		if g := s.h.groups[s.group]; g != nil && g.amnesiac && !g.group.Amnesiac() {
			s.h.caughtUp(g)
		}
		e.Probe = "partition plane: " + e.Probe
	}
	s.h.r.env.Sink.Event(Event{Kind: EventGroup, Replica: s.h.r.cfg.Replica, Group: e})
}
