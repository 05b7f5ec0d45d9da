package replica

import (
	"cmp"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/transfer"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Partition state transfer (partition-plane.md "Repair and state
// transfer"; Iggy's core/partitions/src/state_transfer.rs). A partition
// group whose repair met RangeEvicted above commit_min + 1 (its peers
// flushed the ops it needs to their segment logs and purged them past the
// evicted ring) pulls the partition's state from the group's caught-up
// primary: the retained segments (kind 2, ascending base offset) and one
// ICO1 consumer-offsets artifact (kind 3), over the plane-agnostic
// manifest and chunk protocol the metadata plane uses (commands 22-25,
// routed by the header's group). The install makes the group's superblock
// record the op first (vsr.Group.Install), then swaps the plane's state in
// and lets the segment log and the offset records catch up; ordinary
// repair brings the ops above it. At most PartitionTransfersMax sessions
// and installs run at once per replica; the rest wait in order.

// segmentArtifactBytesDefault is where an offer starts a new segment
// artifact unless Config.SegmentArtifactBytes says otherwise: Iggy rotates
// segments at 1 GiB; ours are small so that a transfer pulls several
// artifacts (DEVIATIONS.md 64).
const segmentArtifactBytesDefault = 64 << 10

// partitionOffersMax bounds the partition offers this replica keeps at
// once: four sessions for each peer.
const partitionOffersMax = 4 * 32

// partitionTransfer is one partition group's receiving side.
type partitionTransfer struct {
	fetch   *transfer.Fetch
	tried   uint64 // peers whose sessions refused or failed since the need arose
	need    uint64 // the op the RangeEvicted named (what the peer still retains)
	peer    uint8  // the peer that named it
	waiting bool   // queued for one of the PartitionTransfersMax places
	holds   bool   // holds one of the places (a session or an install)
	pending *transfer.PartitionState
	busy    bool // the install's superblock write is in flight
}

// needPartitionTransfer: a peer answered group g's repair with RangeEvicted
// above commit_min + 1 (vsr.Deps.StateTransfer).
func (h *partitionHost) needPartitionTransfer(g *partitionGroup, peer uint8, retained uint64) {
	t := &g.transfer
	if h.groups[g.ref.Group] != g || t.fetch != nil || t.pending != nil || t.busy || t.waiting {
		return
	}
	t.tried, t.need, t.peer = 0, retained, peer
	if h.transfersHeld >= transfer.PartitionTransfersMax {
		t.waiting = true
		h.transferQueue = append(h.transferQueue, g.ref.Group)
		h.r.probe("partition state transfer waits: four are under way")
		return
	}
	h.r.probe("partition state transfer started")
	h.startPartitionFetch(g, peer) // it committed the ops it purged: its state is past the need
}

func (h *partitionHost) startPartitionFetch(g *partitionGroup, peer uint8) {
	r, t := h.r, &g.transfer
	if !t.holds {
		t.holds = true
		h.transfersHeld++
	}
	if h.transfersHeld > transfer.PartitionTransfersMax || h.transfersHeld < 1 {
		panic(fmt.Sprintf("replica %d: %d partition transfers under way, at most %d", r.cfg.Replica, h.transfersHeld, transfer.PartitionTransfersMax))
	}
	cfg := transfer.FetchConfig{Cluster: r.cfg.Cluster(), Group: g.ref.Group, Replica: r.cfg.Replica, Replicas: r.cfg.ReplicaCount,
		ChunkLen: uint32(transfer.ChunkLen(r.cfg.Profile.FrameSizeMax)), StallTicks: stallTicks,
		PayloadMax: transfer.PartitionArtifactMax, Plane: transfer.PlanePartition}
	nonce := wire.U128{Lo: r.env.Rand.Uint64(), Hi: r.env.Rand.Uint64() | 1}
	f, req := transfer.NewFetch(cfg, peer, nonce, g.group.StateTransferNeed())
	t.fetch = f
	h.addSession(g)
	r.bus.Send(peer, req)
}

// abandonPartition ends group g's session with its peer and tries the next
// peer not tried since the need arose; when every peer was tried, the
// group gives up its place (the next RangeEvicted starts over).
func (h *partitionHost) abandonPartition(g *partitionGroup) {
	t := &g.transfer
	peer := t.fetch.Peer
	t.fetch = nil
	t.tried |= 1 << peer
	for step := uint8(1); step < h.r.cfg.ReplicaCount; step++ {
		next := (peer + step) % h.r.cfg.ReplicaCount
		if next != h.r.cfg.Replica && t.tried&(1<<next) == 0 {
			h.r.probe("partition state transfer started over with another replica")
			h.startPartitionFetch(g, next)
			return
		}
	}
	h.r.probe("partition state transfer gave up: every peer refused or failed")
	h.releasePlace(g)
}

// releasePlace gives g's place to the next waiting group that still needs
// one.
func (h *partitionHost) releasePlace(g *partitionGroup) {
	t := &g.transfer
	if !t.holds {
		return
	}
	t.holds = false
	h.transfersHeld--
	if h.transfersHeld < 0 {
		panic(fmt.Sprintf("replica %d: %d partition transfers under way", h.r.cfg.Replica, h.transfersHeld))
	}
	for h.transfersHeld < transfer.PartitionTransfersMax && len(h.transferQueue) > 0 {
		id := h.transferQueue[0]
		h.transferQueue = h.transferQueue[1:]
		w, ok := h.groups[id]
		if !ok || !w.transfer.waiting {
			continue
		}
		w.transfer.waiting = false
		if w.group.CommitMin()+1 >= w.transfer.need {
			h.r.probe("partition state transfer no longer needed: the group caught up while it waited")
			continue
		}
		h.r.probe("partition state transfer started")
		h.enter(w)
		h.startPartitionFetch(w, w.transfer.peer)
	}
}

// addSession lists g among the groups whose transfer ticks.
func (h *partitionHost) addSession(g *partitionGroup) {
	for _, s := range h.sessions {
		if s == g {
			return
		}
	}
	h.sessions = append(h.sessions, g)
}

// deliverPartitionTransfer handles a state-transfer frame (commands 22-25)
// of partition group id.
func (h *partitionHost) deliverPartitionTransfer(from uint8, id uint64, frame []byte) {
	hd := wire.HeaderOf(frame)
	g := h.groups[id]
	switch hd.Command() {
	case wire.CommandRequestStateTransfer:
		h.servePartitionTransfer(from, g, hd)
		return
	case wire.CommandRequestStateChunk:
		h.servePartitionChunk(from, id, hd)
		return
	}
	if g == nil || g.transfer.fetch == nil {
		return
	}
	h.enter(g)
	defer h.drain()
	f := g.transfer.fetch
	switch hd.Command() {
	case wire.CommandStateTransferTarget:
		if f.Fetching() {
			if f.Unknown(from, frame) {
				h.r.probe("partition state transfer retried: the offer expired")
				h.abandonPartition(g)
			}
			return
		}
		o, req, why := f.OnTarget(from, frame)
		if o == transfer.Refused {
			h.r.env.Sink.Event(Event{Kind: EventOfferRefused, Replica: h.r.cfg.Replica, PartitionGroup: g.ref.Group, Op: f.Need,
				Frame: frame, Probe: why, ArtifactMax: transfer.PartitionArtifactMax})
		}
		h.partitionFetchStep(g, o, req, why)
	case wire.CommandStateChunk:
		o, req, why := f.OnChunk(from, frame)
		h.partitionFetchStep(g, o, req, why)
	}
}

// partitionFetchStep acts on a session's step (a Continue with a reason is
// a checksum retry, as on the metadata plane).
func (h *partitionHost) partitionFetchStep(g *partitionGroup, o transfer.Outcome, req []byte, why string) {
	f := g.transfer.fetch
	if f.Probe != "" {
		h.r.probe(f.Probe)
		f.Probe = ""
	}
	switch o {
	case transfer.Ignored:
		return
	case transfer.Continue:
		if why != "" {
			h.r.probe("partition state transfer retried: an artifact failed its checksum")
		}
	case transfer.Refused:
		if f.Transient {
			h.r.probe("partition state transfer refused: the server cannot offer right now")
		} else {
			h.r.probe("partition state transfer refused")
		}
		h.abandonPartition(g)
		return
	case transfer.Failed:
		h.r.probe("partition state transfer failed: its retries are used up")
		h.abandonPartition(g)
		return
	case transfer.Complete:
		h.preparePartitionInstall(g, f)
		return
	}
	if req != nil {
		h.r.bus.Send(f.Peer, req)
	}
}

// servePartitionTransfer answers a RequestStateTransfer of partition group
// g: an offer of its state at commit_min when this replica is Normal in the
// group, has committed something and applied every batch it holds, else a
// transient refusal (Iggy's NotCaughtUpPrimary and NothingCommitted). Iggy
// serves only from the group's caught-up primary; we serve from any such
// replica (DEVIATIONS.md 64): a primary elected with the log's headers whose
// bodies its backups purged after their flush needs a state itself, and
// would otherwise wait for ever (VOPR seed 5235 with -evicted-ring 1).
func (h *partitionHost) servePartitionTransfer(from uint8, g *partitionGroup, hd *wire.Header) {
	var x wire.RequestStateTransferHeader
	x.Decode(hd)
	if x.Nonce.IsZero() {
		return
	}
	r := h.r
	t := wire.StateTransferTargetHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), Replica: r.cfg.Replica},
		Nonce: x.Nonce, Group: x.Group}
	if g != nil {
		t.View, t.CommitMax = g.group.View(), g.group.CommitMax()
	}
	if g == nil || g.group.Status() != vsr.StatusNormal || g.group.CommitMin() == 0 || !g.plane.Settled() || g.transfer.busy {
		t.UnavailableTransient = 1
		r.probe("partition state transfer refused: nothing to offer right now")
		r.bus.Send(from, wire.BuildFrame(&t, nil))
		return
	}
	op, identity, timestamp := g.group.Applied()
	offer := transfer.NewPartitionOffer(transfer.PartitionState{CommitOp: op, Identity: identity, Timestamp: timestamp,
		Batches: g.plane.Batches(), Offsets: wire.ConsumerOffsets{NextOffset: g.plane.NextOffset(), Consumers: g.plane.Offsets()}},
		int(cmp.Or(r.cfg.SegmentArtifactBytes, segmentArtifactBytesDefault)))
	h.server.Open(x.Nonce, offer)
	t.CommitOp, t.Available = op, 1
	r.probe("partition state transfer offered")
	r.bus.Send(from, wire.BuildFrame(&t, offer.Manifest()))
}

// servePartitionChunk answers a RequestStateChunk from the partition offer
// its nonce names, as the metadata plane's serveStateChunk does.
func (h *partitionHost) servePartitionChunk(from uint8, id uint64, hd *wire.Header) {
	var x wire.RequestStateChunkHeader
	x.Decode(hd)
	r := h.r
	body, known, ok := h.server.Chunk(x.Nonce, x.Artifact, x.Offset, x.Len)
	if !known {
		t := wire.StateTransferTargetHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), Replica: r.cfg.Replica},
			Nonce: x.Nonce, Group: id, UnavailableTransient: 1}
		if g := h.groups[id]; g != nil {
			t.View, t.CommitMax = g.group.View(), g.group.CommitMax()
		}
		r.bus.Send(from, wire.BuildFrame(&t, nil))
		return
	}
	if !ok {
		return
	}
	c := wire.StateChunkHeader{Prefix: wire.Prefix{Cluster: r.cfg.Cluster(), Replica: r.cfg.Replica},
		Nonce: x.Nonce, Offset: x.Offset, Group: id, Artifact: x.Artifact}
	r.bus.Send(from, wire.BuildFrame(&c, body))
}

// preparePartitionInstall decodes a complete, verified offer. An offer
// that does not decode counts as a failed session.
func (h *partitionHost) preparePartitionInstall(g *partitionGroup, f *transfer.Fetch) {
	s, err := transfer.DecodePartitionOffer(f.Offer, uint64(g.ref.Partition))
	if err != nil {
		h.r.probe("partition state transfer failed: an artifact does not decode")
		h.abandonPartition(g)
		return
	}
	g.transfer.fetch = nil
	g.transfer.pending = &s
	h.tryPartitionInstall(g)
}

// tryPartitionInstall installs a pending state once the group is Normal, or
// Recovering while it catches up to a StartView it holds (vsr.Group.CatchingUp:
// one without headers, whose committed ops its primary evicted, VOPR seed
// 3965681371): the superblock records the op first (a crash after it
// restarts the group needing that op or a later one), then the plane's state
// is swapped in at once and the segment log and offset records catch up.
func (h *partitionHost) tryPartitionInstall(g *partitionGroup) {
	t := &g.transfer
	s := t.pending
	if s == nil || t.busy {
		return
	}
	if s.CommitOp <= g.group.StateTransferNeed() {
		t.pending = nil
		h.r.probe("partition state transfer no longer needed: the group caught up")
		h.releasePlace(g)
		return
	}
	if g.group.Status() != vsr.StatusNormal && !g.group.CatchingUp() {
		return
	}
	t.pending, t.busy = nil, true
	ref := vsr.CheckpointRef{Op: s.CommitOp, Identity: s.Identity, Timestamp: s.Timestamp}
	// The install's record is the op's identity: every server's state at one
	// op holds the same batches (a NoAck offset, applied by one primary
	// alone, may differ, so the offsets are not part of it).
	g.group.Install(ref, s.Identity, func() {
		switch g.plane.Install(s.Batches, s.Offsets.Consumers) {
		case partition.InstallReset:
			h.r.probe("partition state transfer: the segment log held a replaced batch and is written again")
		case partition.InstallBelowSegment:
			h.r.probe("partition state transfer: the segment log already holds batches above the installed op")
		}
		h.r.env.Sink.Event(Event{Kind: EventPartitionInstalled, Replica: h.r.cfg.Replica, PartitionGroup: g.ref.Group, Op: s.CommitOp,
			Frame: segmentLogBytes(s.Batches), Offsets: wire.EncodeConsumerOffsets(s.Offsets)})
	}, func(installed bool) {
		t.busy = false
		if installed {
			h.r.probe("partition state transfer completed")
		} else {
			h.r.probe("partition state transfer no longer needed: the group caught up")
		}
		h.releasePlace(g)
	})
}

// segmentLogBytes is the segment log of batches (wire.md 8.4).
func segmentLogBytes(batches [][]byte) []byte {
	n := 0
	for _, b := range batches {
		n += len(b)
	}
	out := make([]byte, 0, n)
	for _, b := range batches {
		out = append(out, b...)
	}
	return out
}

// tickTransfers ages the partition offers, re-sends stalled requests and
// retries installs that waited for Normal status.
func (h *partitionHost) tickTransfers() {
	h.server.Tick()
	kept := h.sessions[:0]
	for _, g := range h.sessions {
		if h.groups[g.ref.Group] != g {
			continue
		}
		t := &g.transfer
		if f := t.fetch; f != nil {
			h.enter(g)
			switch o, req := f.Tick(); {
			case o == transfer.Failed:
				h.r.probe("partition state transfer failed: its retries are used up")
				h.abandonPartition(g)
			case req != nil:
				h.r.probe("partition state transfer retried: a request went unanswered")
				h.r.bus.Send(f.Peer, req)
			}
		}
		if t.pending != nil {
			h.enter(g)
			h.tryPartitionInstall(g)
		}
		if t.fetch != nil || t.pending != nil || t.busy {
			kept = append(kept, g)
		}
	}
	clear(h.sessions[len(kept):])
	h.sessions = kept
}

// dropTransfer ends whatever transfer a deleted group had under way.
func (h *partitionHost) dropTransfer(g *partitionGroup) {
	g.transfer.fetch, g.transfer.pending, g.transfer.waiting = nil, nil, false
	h.releasePlace(g)
}

// PartitionTransferInstalling reports whether a partition install's
// superblock write is in flight (a crash now leaves the group needing the
// op again, or the install).
func (r *Replica) PartitionTransferInstalling() bool {
	if r.parts == nil {
		return false
	}
	for _, g := range r.parts.sessions {
		if g.transfer.busy {
			return true
		}
	}
	return false
}
