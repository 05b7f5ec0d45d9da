package replica

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/bus"
	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/transfer"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
)

// Replica is one replica process.
type Replica struct {
	cfg Config
	env Env

	bus      *bus.Bus
	journal  *journal.Journal
	metadata *vsr.Group

	table *clients.Table
	state *metadata.State
	alloc *metadata.GroupAllocator

	// conns maps a client to the connection its latest request came on, so
	// that the reply of its op goes back there. Only looked up, never iterated.
	conns map[wire.U128]ConnID
	// byConn is the reverse, for forgetting a closed connection.
	byConn map[ConnID]wire.U128

	fwd   forwarding
	parts *partitionHost

	checkpoints *transfer.Store
	// dueCheckpoint is a checkpoint that came due while the store was busy.
	dueCheckpoint *dueCheckpoint
	mj            *metadataJournal
	// offer is what a state transfer from this replica carries: its durable
	// checkpoint (Offer.CommitOp 0: none yet).
	offer    transfer.Offer
	server   *transfer.Server
	transfer stateTransfer
	// replayTo is the head of the metadata log this incarnation recovered:
	// the ops up to it may have been applied before the restart, and their
	// effects on the partition planes (a group deleted, its superblock slot
	// reused by a later group) are not known until they are applied again.
	replayTo uint64
}

// Format writes a fresh replica's durable state onto dev (the journal's
// empty slots and superblock), as `tigerbeetle format` does when a cluster
// is created, then runs done.
func Format(cfg Config, dev storage.Device, done func(error)) {
	cfg.check()
	journal.Format(dev, cfg.JournalConfig(), done)
}

// Open recovers a replica from its device and runs done with it. fresh says
// the device was just formatted and the cluster is starting: the replica
// starts Normal in view 0 instead of probing for the current view.
func Open(cfg Config, env Env, fresh bool, done func(*Replica, error)) {
	cfg.check()
	if env.Peers == nil || env.Clients == nil || env.Device == nil || env.Sink == nil || env.Rand == nil || env.RealtimeUs == nil {
		panic("replica: missing dependency")
	}
	jcfg := cfg.JournalConfig()
	journal.Open(env.Device, jcfg, func(j *journal.Journal, rec *journal.Recovery, err error) {
		if err != nil {
			done(nil, fmt.Errorf("replica %d: opening the journal: %w", cfg.Replica, err))
			return
		}
		openCheckpoint(cfg, env.Device, rec, func(cp *transfer.Checkpoint, area int) {
			partition.OpenStore(env.Device, cfg.storeConfig(), func(store *partition.Store) {
				partition.OpenOffsetStore(env.Device, cfg.offsetsFirst(), cfg.Profile.PartitionSlots, cfg.Profile.PartitionStoreIOsMax,
					func(offsets *partition.OffsetStore) {
						partition.OpenSegmentLog(env.Device, cfg.SegmentConfig(), func(segments *partition.SegmentLog) {
							r := open(cfg, env, fresh, j, rec, cp, area, store, offsets, segments)
							done(r, nil)
						})
					})
			})
		})
	})
}

// openCheckpoint reads the checkpoint the superblock records, if any, and
// runs done with it (nil: none recorded, or no area holds it intact) and
// its area.
func openCheckpoint(cfg Config, dev storage.Device, rec *journal.Recovery, done func(*transfer.Checkpoint, int)) {
	if rec.State.CheckpointOp == 0 {
		done(nil, -1)
		return
	}
	transfer.Open(dev, cfg.checkpointConfig(), rec.State.CheckpointOp, rec.State.CheckpointChecksum, func(cp transfer.Checkpoint, area int, err error) {
		if err != nil {
			done(nil, -1)
			return
		}
		done(&cp, area)
	})
}

// open builds the replica once its journal and partition store are read.
func open(cfg Config, env Env, fresh bool, j *journal.Journal, rec *journal.Recovery, cp *transfer.Checkpoint, area int,
	store *partition.Store, offsets *partition.OffsetStore, segments *partition.SegmentLog) *Replica {
	r := &Replica{
		cfg:     cfg,
		env:     env,
		journal: j,
		table:   clients.New(cfg.Profile.ClientTableMax),
		state:   metadata.NewStateWithLimits(cfg.MetadataLimits()),
		conns:   make(map[wire.U128]ConnID),
		byConn:  make(map[ConnID]wire.U128),
		fwd:     forwarding{origins: make(map[wire.U128]origin)},
	}
	r.checkpoints = transfer.NewStore(env.Device, cfg.checkpointConfig(), area)
	var restored vsr.CheckpointRef
	if cp != nil {
		r.restore(cp)
		restored = vsr.CheckpointRef{Op: cp.Op, Identity: cp.Identity, Timestamp: cp.Timestamp}
	} else if rec.State.CheckpointOp > 0 {
		// DEVIATIONS.md 61: a replica whose checkpoint rotted applies from
		// op 1 what its ring and its peers still hold, and takes that
		// checkpoint or a later one by state transfer for the rest.
		r.probe("checkpoint unreadable at recovery: the state is rebuilt below it")
	}
	r.alloc = metadata.NewGroupAllocator(r.state.HighestGroupID())
	r.bus = bus.New(cfg.busConfig(), env.Peers, env.Rand, r)
	mj := &metadataJournal{j: j, alloc: r.alloc, probe: r.probe}
	r.mj = mj
	r.server = transfer.NewServer(transfer.ChunkLen(cfg.Profile.FrameSizeMax), transfer.OffersMax)
	// The ops a restored checkpoint covers are not served: a replica behind
	// it takes the checkpoint instead (DEVIATIONS.md 62). A replica that
	// could not read its checkpoint back has none to offer, so it serves
	// what its ring still holds (a slot a newer op took answers nothing):
	// refusing those ops too left peers whose checkpoints are older than
	// its own with nobody to bring them the ops between (VOPR seed
	// 2170667463: a primary at commit_min 0 whose recorded checkpoint was
	// op 52 refused ops 40-52 to both backups, and their offers at op 39
	// were below what it needed).
	mj.retainedFrom = rec.State.CheckpointOp + 1
	if cp == nil && rec.State.CheckpointOp > 0 {
		mj.retainedFrom = max(rec.HeadOp+1, cfg.Profile.JournalSlots) - cfg.Profile.JournalSlots + 1
	}
	for op := max(rec.HeadOp, cfg.Profile.JournalSlots) - cfg.Profile.JournalSlots + 1; op <= rec.HeadOp; op++ { // the ring's ops
		if f, ok := j.Frame(op); ok {
			mj.observe(f)
		}
	}
	for _, c := range rec.Copies {
		if !c.Valid {
			r.probe("superblock copy damaged at recovery")
		}
	}
	if rec.State.View != 0 || rec.HeadOp != 0 {
		r.probe("replica recovered from a used journal")
	}
	// The partition host exists before the metadata group: a single
	// replica commits its log while the group is built, and commits of
	// topics and partitions build partition groups.
	r.parts = newPartitionHost(r, store, offsets, segments, fresh)
	if cp != nil {
		r.parts.reconcile() // the partitions the restored state lists
	}
	r.metadata = vsr.New(cfg.vsrConfig(), vsr.Deps{
		Out:           r,
		Journal:       mj,
		Machine:       r,
		Sink:          groupSink{r},
		Rand:          env.Rand,
		RealtimeUs:    env.RealtimeUs,
		StateTransfer: r.needStateTransfer,
	}, vsr.Recovered{State: rec.State, Head: headOf(rec, cfg, fresh), Fresh: fresh,
		LogHead: rec.Head.Op, LogHeadKnown: rec.Head.Known(), Checkpoint: restored})
	r.replayTo = max(headOf(rec, cfg, fresh), rec.State.CommitMax)
	r.reportRecovery(rec, headOf(rec, cfg, fresh))
	return r
}

// reportRecovery reports what the journal's recovery concluded: its head
// op, the head the log starts from, and its knowledge of every op of the
// ring's window on either side of the head op.
func (r *Replica) reportRecovery(rec *journal.Recovery, head uint64) {
	slots := r.cfg.Profile.JournalSlots
	first := max(rec.HeadOp, slots) - slots + 1
	jr := JournalReport{HeadOp: rec.HeadOp, Head: head, FirstOp: first}
	for op := first; op < rec.HeadOp+slots; op++ {
		jr.Knowledge = append(jr.Knowledge, rec.Knowledge(op).String())
	}
	r.env.Sink.Event(Event{Kind: EventJournalRecovered, Replica: r.cfg.Replica, Journal: jr})
}

// metadataReplayed reports whether the metadata plane has applied again
// what this incarnation may have applied before its restart (its recovered
// head, or everything committed when a view change cut the log below it).
// Until then a partition group built from an older state may be one the
// log deleted, whose superblock slot a later group has since overwritten
// (so it looks never written, and starts in view 0 as a fresh group): it
// must not prepare anything (VOPR seed 89392774: a restarted primary at
// checkpoint op 24 rebuilt group 1, deleted by op 25, and prepared a second
// op 1 in its view 0).
func (r *Replica) metadataReplayed() bool {
	if r.metadata.Status() != vsr.StatusNormal {
		return false
	}
	return r.metadata.CommitMin() >= r.replayTo || r.metadata.CommitMin() == r.metadata.CommitMax()
}

// Config returns the replica's configuration.
func (r *Replica) Config() Config { return r.cfg }

// Metadata returns the metadata plane's consensus group (for inspection).
func (r *Replica) Metadata() *vsr.Group { return r.metadata }

// State returns the metadata state machine (for inspection).
func (r *Replica) State() *metadata.State { return r.state }

// Clients returns the client table (for inspection).
func (r *Replica) Clients() *clients.Table { return r.table }

// Bus returns the message bus (for inspection).
func (r *Replica) Bus() *bus.Bus { return r.bus }

// PartitionGroup returns the consensus group of a live partition (for
// inspection).
func (r *Replica) PartitionGroup(id uint64) (*vsr.Group, bool) {
	g, ok := r.parts.groups[id]
	if !ok {
		return nil, false
	}
	return g.group, true
}

// PartitionJournalHolds reports whether the memory journal of partition
// group id holds op, and the lowest op it can still serve (RetainedFrom).
func (r *Replica) PartitionJournalHolds(id, op uint64) (held bool, retainedFrom uint64) {
	g, ok := r.parts.groups[id]
	if !ok {
		return false, 0
	}
	_, held = g.journal.Frame(op)
	return held, g.journal.RetainedFrom()
}

// PartitionPlane returns the partition state of a live partition (for
// inspection).
func (r *Replica) PartitionPlane(id uint64) (*partition.Plane, bool) {
	g, ok := r.parts.groups[id]
	if !ok {
		return nil, false
	}
	return g.plane, true
}

// PartitionMemoryLost reports whether some partition group of the replica
// lost its memory journal at the last restart and has not caught up since
// (the simulator bounds how many replicas may be so at once).
func (r *Replica) PartitionMemoryLost() bool { return r.parts.amnesiac > 0 }

// PartitionGroups returns the ids of the partition groups the replica runs,
// ascending.
func (r *Replica) PartitionGroups() []uint64 {
	ids := make([]uint64, len(r.parts.order))
	for i, g := range r.parts.order {
		ids[i] = g.ref.Group
	}
	return ids
}

// FlushSegments writes every partition's committed batches still buffered
// to its segment log, as a clean shutdown does, then runs done (later,
// never inside the call).
func (r *Replica) FlushSegments(done func()) { r.parts.flushSegments(done) }

// Journal returns the durable journal (for inspection).
func (r *Replica) Journal() *journal.Journal { return r.journal }

// Tick advances the replica by one tick (10 ms).
func (r *Replica) Tick() {
	r.bus.Tick()
	r.metadata.Tick()
	r.tickStateTransfer()
	r.parts.tick()
	if len(r.fwd.parked) > 0 {
		r.tickForwards()
	}
}

// Peer connection events, from the replica port's transport.

// PeerConnected: a dial of ours completed.
func (r *Replica) PeerConnected(c bus.ConnID) { r.bus.Connected(c) }

// PeerDialFailed: a dial of ours was refused.
func (r *Replica) PeerDialFailed(c bus.ConnID) { r.bus.DialFailed(c) }

// PeerAccepted: an inbound connection on the replica port.
func (r *Replica) PeerAccepted(c bus.ConnID) { r.bus.Accepted(c) }

// PeerReceived: a frame on a replica-port connection.
func (r *Replica) PeerReceived(c bus.ConnID, frame []byte) { r.bus.Received(c, frame) }

// PeerClosed: a replica-port connection is gone.
func (r *Replica) PeerClosed(c bus.ConnID) { r.bus.Closed(c) }

// Deliver implements bus.Handler: a consensus frame from an established
// peer, routed by group.
func (r *Replica) Deliver(peer uint8, frame []byte) {
	switch h := wire.HeaderOf(frame); h.Command() {
	case wire.CommandForwardRegister:
		r.onForwardRegister(peer, h)
		return
	case wire.CommandForwardLogout:
		r.onForwardLogout(peer, h)
		return
	case wire.CommandForwardRegisterResult:
		r.onForwardRegisterResult(h)
		return
	case wire.CommandForwardLogoutResult:
		r.onForwardLogoutResult(h)
		return
	}
	// State transfer first: its frames name a group too, and a partition
	// group's go to the partition host's sessions, not to its consensus.
	if r.deliverStateTransfer(peer, frame) {
		return
	}
	if group, ok := wire.GroupOf(frame); ok && group != wire.MetadataGroup {
		r.parts.deliver(peer, group, frame)
		return
	}
	r.metadata.Receive(peer, frame)
}

// Send implements vsr.Outbox over the bus.
func (r *Replica) Send(to uint8, frame []byte) { r.bus.Send(to, frame) }

// groupSink forwards the group's events.
type groupSink struct{ r *Replica }

func (s groupSink) Event(e vsr.Event) {
	s.r.env.Sink.Event(Event{Kind: EventGroup, Replica: s.r.cfg.Replica, Group: e})
	if e.Kind == vsr.EventStatus {
		s.r.cancelForwards()
	}
}

func (r *Replica) probe(name string) {
	r.env.Sink.Event(Event{Kind: EventProbe, Replica: r.cfg.Replica, Probe: name})
}

// headOf is the head op a recovered replica reports. A fresh replica has
// prepared nothing (a slot unreadable at its first boot is damage, not an op).
// A single replica has no one to nack to: an unreadable slot above its head
// is a write that tore before it was acknowledged (faults other than crash
// tears need a quorum to spread over, so the atlas grants one replica none).
func headOf(rec *journal.Recovery, cfg Config, fresh bool) uint64 {
	switch {
	case fresh:
		if rec.HeadOp != 0 {
			panic(fmt.Sprintf("replica %d: a fresh journal shows op %d", cfg.Replica, rec.HeadOp))
		}
		return 0
	case cfg.ReplicaCount == 1:
		return rec.HeadOp
	}
	return recoveredHead(rec, cfg.Profile.JournalSlots)
}
