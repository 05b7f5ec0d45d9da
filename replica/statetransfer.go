package replica

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/transfer"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// stallTicks is how long a state-transfer request waits for its answer
// before it is sent again: Iggy's repair retry interval (1 s).
const stallTicks = 100

// stateTransfer is the metadata plane's receiving side: at most one session
// (fetch), the peers tried since the need arose, and an install waiting for
// the checkpoint store or for Normal status.
type stateTransfer struct {
	fetch   *transfer.Fetch
	tried   uint64 // peers whose sessions refused or failed since the last trigger
	pending *install
	busy    bool // an install's checkpoint write or superblock write is in flight
}

// install is a verified offer, decoded, ready to become this replica's.
type install struct {
	cp    transfer.Checkpoint
	state *metadata.State
	table *clients.Table
	ict2  []byte
}

// needStateTransfer: a peer answered a repair with RangeEvicted above
// commit_min + 1 (vsr.Deps.StateTransfer). Unless a session is open or an
// install is under way, ask that peer for its checkpoint.
func (r *Replica) needStateTransfer(peer uint8, _ uint64) {
	t := &r.transfer
	if t.fetch != nil || t.pending != nil || t.busy {
		return
	}
	t.tried = 0
	r.probe("state transfer started")
	r.startFetch(peer)
}

func (r *Replica) startFetch(peer uint8) {
	cfg := transfer.FetchConfig{Cluster: r.cfg.Cluster(), Group: wire.MetadataGroup, Replica: r.cfg.Replica, Replicas: r.cfg.ReplicaCount,
		ChunkLen: uint32(transfer.ChunkLen(r.cfg.Profile.FrameSizeMax)), StallTicks: stallTicks,
		PayloadMax: uint64(r.cfg.checkpointConfig().PayloadMax())}
	nonce := wire.U128{Lo: r.env.Rand.Uint64(), Hi: r.env.Rand.Uint64() | 1}
	f, req := transfer.NewFetch(cfg, peer, nonce, r.metadata.StateTransferNeed())
	r.transfer.fetch = f
	r.bus.Send(peer, req)
}

// abandon ends the session with its peer and tries the next peer not tried
// since the need arose; when every peer was tried, the next RangeEvicted
// starts over.
func (r *Replica) abandon() {
	t := &r.transfer
	peer := t.fetch.Peer
	t.fetch = nil
	t.tried |= 1 << peer
	for step := uint8(1); step < r.cfg.ReplicaCount; step++ {
		next := (peer + step) % r.cfg.ReplicaCount
		if next != r.cfg.Replica && t.tried&(1<<next) == 0 {
			r.probe("state transfer started over with another replica")
			r.startFetch(next)
			return
		}
	}
	r.probe("state transfer gave up: every peer refused or failed")
}

// deliverStateTransfer handles the metadata plane's state-transfer frames
// (commands 22-25) and reports whether frame was one.
func (r *Replica) deliverStateTransfer(from uint8, frame []byte) bool {
	switch wire.HeaderOf(frame).Command() {
	case wire.CommandRequestStateTransfer, wire.CommandStateTransferTarget, wire.CommandRequestStateChunk, wire.CommandStateChunk:
	default:
		return false
	}
	if group, _ := wire.GroupOf(frame); group != wire.MetadataGroup {
		if r.parts != nil {
			r.parts.deliverPartitionTransfer(from, group, frame)
		}
		return true
	}
	h := wire.HeaderOf(frame)
	switch h.Command() {
	case wire.CommandRequestStateTransfer:
		r.serveStateTransfer(from, h)
	case wire.CommandRequestStateChunk:
		r.serveStateChunk(from, h)
	case wire.CommandStateTransferTarget:
		f := r.transfer.fetch
		if f == nil {
			return true
		}
		if f.Fetching() {
			if f.Unknown(from, frame) {
				r.probe("state transfer retried: the offer expired")
				r.abandon()
			}
			return true
		}
		o, req, why := f.OnTarget(from, frame)
		if o == transfer.Refused {
			r.env.Sink.Event(Event{Kind: EventOfferRefused, Replica: r.cfg.Replica, Op: f.Need, Frame: frame, Probe: why,
				ArtifactMax: uint64(r.cfg.checkpointConfig().PayloadMax())})
		}
		r.fetchStep(o, req, why)
	case wire.CommandStateChunk:
		if f := r.transfer.fetch; f != nil {
			o, req, why := f.OnChunk(from, frame)
			r.fetchStep(o, req, why)
		}
	default:
		return false
	}
	return true
}

// fetchStep acts on a session's step. why, the session's reason for a
// refusal or a retry, is for tests and logs; a replica reports the step by
// its probe alone (a Continue with a reason is a checksum retry).
func (r *Replica) fetchStep(o transfer.Outcome, req []byte, why string) {
	f := r.transfer.fetch
	if f.Probe != "" {
		r.probe(f.Probe)
		f.Probe = ""
	}
	switch o {
	case transfer.Ignored:
		return
	case transfer.Continue:
		if why != "" {
			r.probe("state transfer retried: an artifact failed its checksum")
		}
	case transfer.Refused:
		r.probe("state transfer refused")
		r.abandon()
		return
	case transfer.Failed:
		r.probe("state transfer failed: its retries are used up")
		r.abandon()
		return
	case transfer.Complete:
		r.transfer.fetch = nil
		r.prepareInstall(f)
		return
	}
	if req != nil {
		r.bus.Send(f.Peer, req)
	}
}

// serveStateTransfer answers a RequestStateTransfer with an offer of the
// durable checkpoint, or a header-only refusal when there is none.
func (r *Replica) serveStateTransfer(from uint8, h *wire.Header) {
	var x wire.RequestStateTransferHeader
	x.Decode(h)
	if x.Group != wire.MetadataGroup || x.Nonce.IsZero() {
		return
	}
	t := wire.StateTransferTargetHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), View: r.metadata.View(), Replica: r.cfg.Replica},
		Nonce: x.Nonce, Group: wire.MetadataGroup, CommitMax: r.metadata.CommitMax()}
	if r.offer.CommitOp == 0 || r.metadata.Status() == vsr.StatusRecovering {
		r.probe("state transfer refused: no checkpoint to offer")
		r.bus.Send(from, wire.BuildFrame(&t, nil))
		return
	}
	r.server.Open(x.Nonce, r.offer)
	t.CommitOp, t.Available = r.offer.CommitOp, 1
	r.probe("state transfer offered")
	r.bus.Send(from, wire.BuildFrame(&t, r.offer.Manifest()))
}

// serveStateChunk answers a RequestStateChunk from the offer its nonce
// names; an unknown nonce gets a transient refusal, a request past an
// artifact's end nothing.
func (r *Replica) serveStateChunk(from uint8, h *wire.Header) {
	var x wire.RequestStateChunkHeader
	x.Decode(h)
	if x.Group != wire.MetadataGroup {
		return
	}
	body, known, ok := r.server.Chunk(x.Nonce, x.Artifact, x.Offset, x.Len)
	if !known {
		t := wire.StateTransferTargetHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), View: r.metadata.View(), Replica: r.cfg.Replica},
			Nonce: x.Nonce, Group: wire.MetadataGroup, UnavailableTransient: 1, CommitMax: r.metadata.CommitMax()}
		r.bus.Send(from, wire.BuildFrame(&t, nil))
		return
	}
	if !ok {
		return
	}
	c := wire.StateChunkHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), Replica: r.cfg.Replica},
		Nonce: x.Nonce, Offset: x.Offset, Group: wire.MetadataGroup, Artifact: x.Artifact}
	r.bus.Send(from, wire.BuildFrame(&c, body))
}

// prepareInstall decodes a complete, verified offer. Artifacts that pass
// their checksums but do not decode are the server's bug or ours: the
// session counts as failed and starts over elsewhere.
func (r *Replica) prepareInstall(f *transfer.Fetch) {
	o := f.Offer
	payload, ict2 := o.Artifacts[0], o.Artifacts[1]
	state, meta, err := metadata.DecodeSnapshot(payload, r.cfg.MetadataLimits())
	if err == nil && meta.SequenceNumber != o.CommitOp {
		err = fmt.Errorf("a snapshot of op %d offered as op %d", meta.SequenceNumber, o.CommitOp)
	}
	var table *clients.Table
	if err == nil {
		table, err = clients.Decode(ict2, r.cfg.Profile.ClientTableMax)
	}
	if err != nil {
		r.probe("state transfer failed: an artifact does not decode")
		r.transfer.fetch = f
		r.abandon()
		return
	}
	r.transfer.pending = &install{cp: transfer.Checkpoint{Op: o.CommitOp, Identity: o.Identities[0], Timestamp: meta.CreatedAt,
		Payload: payload, Checksum: wire.SnapshotChecksum(payload)}, state: state, table: table, ict2: ict2}
	r.tryInstall()
}

// tryInstall makes a pending install durable, when the checkpoint store is
// free and the group is Normal or catching up to a StartView it holds (a
// view change's merge reasons about commit_min, which the install moves): the snapshot is written as this
// replica's checkpoint, the superblock records it, and then the state is
// swapped in at once (vsr.Group.Install). A crash before the superblock
// write leaves the old checkpoint, after it the new one.
func (r *Replica) tryInstall() {
	t := &r.transfer
	in := t.pending
	if in == nil || t.busy {
		return
	}
	if in.cp.Op <= r.metadata.StateTransferNeed() {
		t.pending = nil
		r.probe("state transfer no longer needed: the replica caught up")
		return
	}
	if r.checkpoints.Busy() || r.metadata.Status() != vsr.StatusNormal && !r.metadata.CatchingUp() {
		return
	}
	t.pending, t.busy = nil, true
	r.checkpoints.Write(in.cp, func(area int) {
		if in.cp.Op <= r.metadata.StateTransferNeed() {
			r.checkpoints.Release()
			t.busy = false
			r.probe("state transfer no longer needed: the replica caught up")
			return
		}
		ref := vsr.CheckpointRef{Op: in.cp.Op, Identity: in.cp.Identity, Timestamp: in.cp.Timestamp}
		r.metadata.Install(ref, in.cp.Checksum, func() {
			r.state, r.table = in.state, in.table
			r.alloc.Observe(in.state.HighestGroupID())
			r.parts.reconcile()
			r.env.Sink.Event(Event{Kind: EventInstalled, Replica: r.cfg.Replica, Op: in.cp.Op, Frame: in.cp.Payload, Disk: DiskReport{ClientTable: in.ict2}})
		}, func(installed bool) {
			t.busy = false
			r.adoptCheckpoint(in.cp, area, in.ict2)
			if installed {
				r.probe("state transfer completed")
			} else {
				r.probe("state transfer no longer needed: the replica caught up")
			}
		})
	})
}

// StateTransferInstalling reports whether an install's checkpoint write or
// superblock write is in flight (a crash now leaves the old checkpoint or
// the new one).
func (r *Replica) StateTransferInstalling() bool { return r.transfer.busy }

// tickStateTransfer ages the offers, re-sends a stalled request and retries
// an install that waited.
func (r *Replica) tickStateTransfer() {
	r.server.Tick()
	if f := r.transfer.fetch; f != nil {
		switch o, req := f.Tick(); {
		case o == transfer.Failed:
			r.probe("state transfer failed: its retries are used up")
			r.abandon()
		case req != nil:
			r.probe("state transfer retried: a request went unanswered")
			r.bus.Send(f.Peer, req)
		}
	}
	if r.transfer.pending != nil {
		r.tryInstall()
	}
	r.writeDueCheckpoint()
}
