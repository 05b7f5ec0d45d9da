package transfer

import (
	"fmt"

	"github.com/iggy-vopr/vopr/canary/bug"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// Outcome is what a step of a Fetch came to.
type Outcome uint8

// The outcomes of a Fetch's steps.
const (
	// Continue: the session goes on (a request may have been sent).
	Continue Outcome = iota
	// Ignored: the frame was not for this session, or not the one awaited.
	Ignored
	// Refused: the server has nothing to offer (or nothing this replica
	// needs); try another peer.
	Refused
	// Failed: the retries are used up; start over with a new nonce, from
	// another peer if one offers.
	Failed
	// Complete: every artifact arrived and verified; Offer holds them.
	Complete
)

// Plane is which plane's state a Fetch pulls: it decides which offers the
// session accepts.
type Plane uint8

// The planes of a Fetch.
const (
	// PlaneMetadata: a snapshot and a client table (wire.md 8.1-8.3).
	PlaneMetadata Plane = iota
	// PlanePartition: segment logs, then one consumer-offsets artifact
	// (wire.md 8.1, 8.4, 8.5).
	PlanePartition
)

// FetchConfig shapes a receiver's session.
type FetchConfig struct {
	Plane      Plane // the zero value is the metadata plane
	Cluster    wire.U128
	Group      uint64
	Replica    uint8
	Replicas   uint8
	ChunkLen   uint32 // the len each RequestStateChunk asks for
	StallTicks int    // ticks without an answer before a request is sent again
	// PayloadMax bounds each artifact (the receiver's checkpoint area, or
	// PartitionArtifactMax).
	PayloadMax uint64
	// TotalMax, when nonzero, bounds the sum of a partition offer's
	// artifacts (what the receiver can hold of one partition).
	TotalMax uint64
}

// Fetch is a receiver's state-transfer session with one server, sans-I/O:
// the caller feeds it frames and ticks and sends what it returns.
// RequestStateTransfer, then the server's StateTransferTarget, then the
// artifacts in manifest order, one RequestStateChunk in flight (lockstep),
// each artifact verified whole against its entry (wire.md 5.11-5.14, 8.1).
type Fetch struct {
	cfg   FetchConfig
	Nonce wire.U128
	Peer  uint8
	// Need: the offer must be of an op above it (the receiver's
	// commit_min), or it is of no use.
	Need uint64

	targeted bool
	Offer    Offer
	cur      int // the first artifact not yet complete
	got      []byte

	waitTicks     int
	StallRetries  int
	DecodeRetries int
	last          []byte // the request to send again on a stall
	// Probe, when set, names a rare path the last step took (the caller
	// reports it and clears it).
	Probe string
	// Transient reports that the last Refused of a PlanePartition session
	// was a transient one (unavailable_transient = 1, wire.md 5.12: "not
	// right now"): the same peer may offer later, so the partition arm
	// need not write it off. The metadata arm does not read the field, as
	// Iggy's does not, so a metadata session never sets it.
	Transient bool
}

// NewFetch opens a session with peer under nonce and returns it with the
// RequestStateTransfer to send.
func NewFetch(cfg FetchConfig, peer uint8, nonce wire.U128, need uint64) (*Fetch, []byte) {
	if nonce.IsZero() || peer >= cfg.Replicas || peer == cfg.Replica || cfg.ChunkLen == 0 || cfg.StallTicks < 1 || cfg.Plane > PlanePartition {
		panic(fmt.Sprintf("transfer: fetch from %d (nonce %s) with %+v", peer, nonce, cfg))
	}
	f := &Fetch{cfg: cfg, Nonce: nonce, Peer: peer, Need: need}
	x := wire.RequestStateTransferHeader{Prefix: f.prefix(), Nonce: nonce, Group: cfg.Group}
	f.last = wire.BuildFrame(&x, nil)
	return f, f.last
}

func (f *Fetch) prefix() wire.Prefix {
	return wire.Prefix{Cluster: f.cfg.Cluster, Replica: f.cfg.Replica}
}

// Fetching reports whether the offer arrived and artifacts are being pulled.
func (f *Fetch) Fetching() bool { return f.targeted }

// OnTarget takes a StateTransferTarget. A metadata offer must name exactly
// a snapshot and a client table (the metadata receiver's kinds, wire.md
// correction 0.9), pass the coherence check (commit_op at or above the
// snapshot's frontier, the client table's frontier at or below commit_op),
// carry the snapshot op's identity, fit the artifact bound and be of an op
// above Need. A partition offer must name segment logs with strictly
// ascending frontiers, then the consumer offsets of commit_op with its
// identity, each artifact within PayloadMax and all within TotalMax when it
// is set, and be of an op above Need; it records the timestamps of the
// manifest. Anything else counts as a refusal. Returns the first chunk
// request to send on Continue.
func (f *Fetch) OnTarget(from uint8, frame []byte) (Outcome, []byte, string) {
	var x wire.StateTransferTargetHeader
	x.Decode(wire.HeaderOf(frame))
	if from != f.Peer || x.Nonce != f.Nonce || x.Group != f.cfg.Group || f.targeted {
		return Ignored, nil, ""
	}
	f.Transient = false
	if x.Available == 0 {
		if f.cfg.Plane == PlanePartition && x.UnavailableTransient == 1 {
			f.Transient = true
			return Refused, nil, "the server cannot offer right now"
		}
		return Refused, nil, "the server has no checkpoint to offer"
	}
	body := frame[wire.HeaderSize:]
	entries, err := wire.DecodeManifest(body)
	if err != nil {
		return Refused, nil, fmt.Sprintf("manifest: %v", err)
	}
	ids := wire.ManifestIdentities(body)
	if f.cfg.Plane == PlanePartition {
		if why := f.partitionManifest(x.CommitOp, entries, ids); why != "" {
			return Refused, nil, why
		}
		f.targeted = true
		f.Offer = Offer{CommitOp: x.CommitOp, Entries: entries, Identities: ids, Timestamps: wire.ManifestTimestamps(body),
			Artifacts: make([][]byte, len(entries))}
		f.cur, f.got = 0, nil
		return f.next()
	}
	switch {
	case len(entries) != 2 || entries[0].Kind != wire.ArtifactMetadataSnapshot || entries[1].Kind != wire.ArtifactClientTable:
		return Refused, nil, fmt.Sprintf("an offer of %d artifacts, not a snapshot and a client table", len(entries))
	case x.CommitOp < entries[0].Frontier || entries[1].Frontier > x.CommitOp:
		return Refused, nil, fmt.Sprintf("incoherent: commit_op %d, snapshot at %d, client table at %d", x.CommitOp, entries[0].Frontier, entries[1].Frontier)
	case entries[0].Frontier != x.CommitOp || ids[0].IsZero():
		return Refused, nil, fmt.Sprintf("the snapshot at %d is not of commit_op %d with its identity", entries[0].Frontier, x.CommitOp)
	case entries[0].Len > f.cfg.PayloadMax || entries[1].Len > f.cfg.PayloadMax:
		return Refused, nil, fmt.Sprintf("artifacts of %d and %d bytes, at most %d", entries[0].Len, entries[1].Len, f.cfg.PayloadMax)
	case x.CommitOp <= f.Need:
		return Refused, nil, fmt.Sprintf("an offer at op %d, this replica has applied %d", x.CommitOp, f.Need)
	}
	f.targeted = true
	f.Offer = Offer{CommitOp: x.CommitOp, Entries: entries, Identities: ids, Artifacts: make([][]byte, len(entries))}
	f.cur, f.got = 0, nil
	return f.next()
}

// partitionManifest checks a partition offer's manifest and returns why it
// is refused, or "": at least one entry; the last the consumer offsets
// (kind 3) of commit_op with its identity; every other a segment log (kind
// 2), their frontiers strictly ascending; each artifact within PayloadMax
// and, when TotalMax is set, their sum within it; commit_op above Need.
func (f *Fetch) partitionManifest(commitOp uint64, entries []wire.ManifestEntry, ids []wire.U128) string {
	n := len(entries)
	if n == 0 {
		return "an offer of no artifacts, not segments and consumer offsets"
	}
	if last := entries[n-1]; last.Kind != wire.ArtifactConsumerOffsets || last.Frontier != commitOp || ids[n-1].IsZero() {
		return fmt.Sprintf("the last artifact (kind %d at %d) is not the consumer offsets of commit_op %d with its identity",
			last.Kind, last.Frontier, commitOp)
	}
	total := uint64(0)
	for i, e := range entries {
		if i < n-1 && e.Kind != wire.ArtifactSegmentLog {
			return fmt.Sprintf("artifact %d of kind %d, not a segment log", i, e.Kind)
		}
		if i > 0 && i < n-1 && e.Frontier <= entries[i-1].Frontier {
			return fmt.Sprintf("segment %d at offset %d after %d: frontiers not strictly ascending", i, e.Frontier, entries[i-1].Frontier)
		}
		if e.Len > f.cfg.PayloadMax {
			return fmt.Sprintf("artifact %d of %d bytes, at most %d", i, e.Len, f.cfg.PayloadMax)
		}
		// Compared before adding: 65536 artifacts near 2^64 bytes would wrap.
		if f.cfg.TotalMax != 0 && e.Len > f.cfg.TotalMax-total {
			return fmt.Sprintf("artifacts of more than %d bytes in all, at most %d", total, f.cfg.TotalMax)
		}
		total += e.Len
	}
	if commitOp <= f.Need {
		return fmt.Sprintf("an offer at op %d, this replica has applied %d", commitOp, f.Need)
	}
	return ""
}

// next asks for the next bytes of the current artifact, or completes.
func (f *Fetch) next() (Outcome, []byte, string) {
	for f.cur < len(f.Offer.Entries) && f.Offer.Entries[f.cur].Len == 0 {
		f.Offer.Artifacts[f.cur] = []byte{}
		f.cur++
	}
	if f.cur == len(f.Offer.Entries) {
		return Complete, nil, ""
	}
	x := wire.RequestStateChunkHeader{Prefix: f.prefix(), Nonce: f.Nonce, Offset: uint64(len(f.got)), Group: f.cfg.Group,
		Len: f.cfg.ChunkLen, Artifact: uint32(f.cur)}
	f.last = wire.BuildFrame(&x, nil)
	f.waitTicks = 0
	return Continue, f.last, ""
}

// OnChunk takes a StateChunk: accepted only for the current artifact, at
// exactly the length received so far, non-empty and within the declared
// length; anything else is ignored (lockstep). A completed artifact that
// fails its entry's length and checksum is pulled again from offset 0, up
// to DecodeRetriesMax times.
func (f *Fetch) OnChunk(from uint8, frame []byte) (Outcome, []byte, string) {
	var x wire.StateChunkHeader
	x.Decode(wire.HeaderOf(frame))
	body := frame[wire.HeaderSize:]
	if !f.targeted || from != f.Peer || x.Nonce != f.Nonce || x.Group != f.cfg.Group || int(x.Artifact) != f.cur ||
		x.Offset != uint64(len(f.got)) || len(body) == 0 || x.Offset+uint64(len(body)) > f.Offer.Entries[f.cur].Len {
		return Ignored, nil, ""
	}
	f.got = append(f.got, body...)
	f.waitTicks = 0
	if uint64(len(f.got)) < f.Offer.Entries[f.cur].Len {
		return f.next()
	}
	err := wire.VerifyArtifact(f.Offer.Entries[f.cur], f.got)
	if bug.InstallUnchecked && err != nil {
		f.Probe = "canary: an artifact taken unchecked" // canary_install_unchecked: the whole-artifact check skipped
		err = nil
	}
	if err != nil {
		f.DecodeRetries++
		f.got = nil
		if f.DecodeRetries > DecodeRetriesMax {
			return Failed, nil, fmt.Sprintf("artifact %d failed its checksum %d times: %v", f.cur, f.DecodeRetries, err)
		}
		o, req, _ := f.next()
		return o, req, fmt.Sprintf("artifact %d failed its checksum: %v", f.cur, err)
	}
	f.Offer.Artifacts[f.cur] = f.got
	f.cur++
	f.got = nil
	return f.next()
}

// Unknown takes a transient refusal of a chunk request (the server lost
// the offer): the session must start over.
func (f *Fetch) Unknown(from uint8, frame []byte) bool {
	var x wire.StateTransferTargetHeader
	x.Decode(wire.HeaderOf(frame))
	return f.targeted && from == f.Peer && x.Nonce == f.Nonce && x.Available == 0
}

// Tick counts a tick without an answer: after StallTicks the last request
// is sent again (returned), and after StallRetriesMax of those the session
// has Failed.
func (f *Fetch) Tick() (Outcome, []byte) {
	f.waitTicks++
	if f.waitTicks < f.cfg.StallTicks {
		return Continue, nil
	}
	f.waitTicks = 0
	f.StallRetries++
	if f.StallRetries > StallRetriesMax {
		return Failed, nil
	}
	return Continue, f.last
}
