package transfer

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Limits of the state-transfer sessions (consensus.md 5, wire.md 11).
const (
	// ChunkLenMax is STATE_CHUNK_LEN: no StateChunk carries more.
	ChunkLenMax = 256 << 10
	// OfferIdleTicksMax is how long an offer nobody pulls from stays.
	OfferIdleTicksMax = 1000
	// OffersMax bounds the offers the metadata plane's server keeps at
	// once; the oldest goes.
	OffersMax = 8
	// StallRetriesMax and DecodeRetriesMax are Iggy's limits: a receiver
	// re-sends a request that went unanswered, and re-pulls an artifact
	// that failed its checksum, this many times before it starts over.
	StallRetriesMax  = 5
	DecodeRetriesMax = 5
)

// ChunkLen is the payload a server puts in one StateChunk:
// clamp(max_message_size - 256, 1, 256 KiB) (wire.md 5.14).
func ChunkLen(frameSizeMax uint32) int {
	return min(max(int(frameSizeMax)-wire.HeaderSize, 1), ChunkLenMax)
}

// Offer is what a server offers: artifacts in manifest order, each with
// its manifest entry and the prepare identity of its frontier op.
type Offer struct {
	CommitOp   uint64
	Entries    []wire.ManifestEntry
	Identities []wire.U128
	// Timestamps holds the prepare timestamp of each entry's frontier op
	// (zero for an artifact whose frontier is not an op). A partition offer
	// carries them so that its receiver, as a later primary, never stamps a
	// prepare below op CommitOp's; a metadata offer leaves it nil.
	Timestamps []uint64
	Artifacts  [][]byte
}

// NewMetadataOffer builds the offer of a metadata checkpoint: the snapshot
// payload (kind 0, frontier its op) and the client table at that op (kind
// 1, ICT2), commit_op the checkpoint's op (wire.md 8.1).
func NewMetadataOffer(cp Checkpoint, clientTable []byte) Offer {
	return Offer{
		CommitOp: cp.Op,
		Entries: []wire.ManifestEntry{
			{Kind: wire.ArtifactMetadataSnapshot, Frontier: cp.Op, Len: uint64(len(cp.Payload)), Checksum: checksum64(cp.Payload)},
			{Kind: wire.ArtifactClientTable, Frontier: cp.Op, Len: uint64(len(clientTable)), Checksum: checksum64(clientTable)},
		},
		Identities: []wire.U128{cp.Identity, {}},
		Artifacts:  [][]byte{cp.Payload, clientTable},
	}
}

// Manifest is the offer's ISM1 body: entry_len 49 (identities and
// timestamps) when the offer carries Timestamps, else entry_len 41
// (identities), so that a metadata offer's manifest is what it always was.
func (o *Offer) Manifest() []byte {
	if o.Timestamps != nil {
		return wire.EncodeManifestStamped(o.Entries, o.Identities, o.Timestamps)
	}
	return wire.EncodeManifestIdentified(o.Entries, o.Identities)
}

// Server keeps the offers a replica made, by nonce, so that the chunks of
// one session all come from the bytes its offer named, whatever the replica
// checkpoints meanwhile.
type Server struct {
	chunkLen  int
	offersMax int
	offers    []*served // oldest first
}

type served struct {
	nonce     wire.U128
	offer     Offer
	idleTicks int
}

// NewServer returns a server whose chunks carry at most chunkLen bytes and
// which keeps at most offersMax offers open: OffersMax for the metadata
// plane, PartitionTransfersMax for a replica's partition plane.
func NewServer(chunkLen, offersMax int) *Server {
	if chunkLen < 1 || chunkLen > ChunkLenMax {
		panic(fmt.Sprintf("transfer: chunk length %d", chunkLen))
	}
	if offersMax < 1 {
		panic(fmt.Sprintf("transfer: a server of %d offers", offersMax))
	}
	return &Server{chunkLen: chunkLen, offersMax: offersMax}
}

// Open records an offer under nonce, replacing one of the same nonce; at
// the server's offer limit the oldest goes.
func (s *Server) Open(nonce wire.U128, o Offer) {
	s.drop(nonce)
	if len(s.offers) == s.offersMax {
		s.offers = s.offers[1:]
	}
	s.offers = append(s.offers, &served{nonce: nonce, offer: o})
}

func (s *Server) drop(nonce wire.U128) {
	for i, o := range s.offers {
		if o.nonce == nonce {
			s.offers = append(s.offers[:i], s.offers[i+1:]...)
			return
		}
	}
}

// Chunk answers a RequestStateChunk: the bytes [offset, offset+L) of the
// artifact, L = min(len, chunk length, artifact length - offset). known is
// false for a nonce with no offer (expired or never made: the answer is a
// transient refusal); ok is false for a request past the end of the
// artifact or outside the manifest, which gets no reply (wire.md 5.14).
func (s *Server) Chunk(nonce wire.U128, artifact uint32, offset uint64, length uint32) (body []byte, known, ok bool) {
	for _, o := range s.offers {
		if o.nonce != nonce {
			continue
		}
		o.idleTicks = 0
		if int(artifact) >= len(o.offer.Artifacts) || length == 0 {
			return nil, true, false
		}
		a := o.offer.Artifacts[artifact]
		if offset >= uint64(len(a)) {
			return nil, true, false
		}
		n := min(uint64(length), uint64(s.chunkLen), uint64(len(a))-offset)
		return a[offset : offset+n], true, true
	}
	return nil, false, false
}

// Tick ages the offers and drops those idle for OfferIdleTicksMax.
func (s *Server) Tick() {
	kept := s.offers[:0]
	for _, o := range s.offers {
		o.idleTicks++
		if o.idleTicks < OfferIdleTicksMax {
			kept = append(kept, o)
		}
	}
	for i := len(kept); i < len(s.offers); i++ {
		s.offers[i] = nil
	}
	s.offers = kept
}

// Offers returns how many offers are open.
func (s *Server) Offers() int { return len(s.offers) }
