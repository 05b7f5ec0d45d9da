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

// FetchConfig shapes a receiver's session.
type FetchConfig struct {
	Cluster    wire.U128
	Group      uint64
	Replica    uint8
	Replicas   uint8
	ChunkLen   uint32 // the len each RequestStateChunk asks for
	StallTicks int    // ticks without an answer before a request is sent again
	// PayloadMax bounds each artifact (the receiver's checkpoint area).
	PayloadMax uint64
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
}

// NewFetch opens a session with peer under nonce and returns it with the
// RequestStateTransfer to send.
func NewFetch(cfg FetchConfig, peer uint8, nonce wire.U128, need uint64) (*Fetch, []byte) {
	if nonce.IsZero() || peer >= cfg.Replicas || peer == cfg.Replica || cfg.ChunkLen == 0 || cfg.StallTicks < 1 {
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

// OnTarget takes a StateTransferTarget. An offer must name exactly a
// snapshot and a client table (the metadata receiver's kinds, wire.md
// correction 0.9), pass the coherence check (commit_op at or above the
// snapshot's frontier, the client table's frontier at or below commit_op),
// carry the snapshot op's identity, fit the artifact bound and be of an op
// above Need; otherwise it counts as a refusal. Returns the first chunk
// request to send on Continue.
func (f *Fetch) OnTarget(from uint8, frame []byte) (Outcome, []byte, string) {
	var x wire.StateTransferTargetHeader
	x.Decode(wire.HeaderOf(frame))
	if from != f.Peer || x.Nonce != f.Nonce || x.Group != f.cfg.Group || f.targeted {
		return Ignored, nil, ""
	}
	if x.Available == 0 {
		return Refused, nil, "the server has no checkpoint to offer"
	}
	body := frame[wire.HeaderSize:]
	entries, err := wire.DecodeManifest(body)
	if err != nil {
		return Refused, nil, fmt.Sprintf("manifest: %v", err)
	}
	ids := wire.ManifestIdentities(body)
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
