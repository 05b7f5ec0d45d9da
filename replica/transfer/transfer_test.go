package transfer

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

const testSector = 512

func testConfig() Config { return Config{FirstSector: 0, AreaSectors: 64, SectorSize: testSector} }

func testDevice(seed uint64, torn bool) (*kernel.Loop, *storage.SimDevice) {
	loop := kernel.NewLoop()
	opts := storage.Options{SectorSize: testSector, Layout: storage.NewLayout(Zone(testConfig().AreaSectors)), IOsMax: 8,
		WriteLatency: storage.Latency{MinNs: 1000, MeanNs: 5000}, SyncLatency: storage.Latency{MinNs: 1000, MeanNs: 5000}}
	if torn {
		opts.CrashTornProbability = 1
	}
	return loop, storage.NewSimDevice(loop, kernel.NewStreams(seed), 0, opts)
}

func drain(loop *kernel.Loop) {
	for loop.Step() {
	}
}

func checkpointAt(op uint64, fill byte, n int) Checkpoint {
	p := bytes.Repeat([]byte{fill}, n)
	return Checkpoint{Op: op, Identity: wire.U128{Lo: op, Hi: 0xc0}, Timestamp: 1000 + op, Payload: p, Checksum: wire.SnapshotChecksum(p)}
}

func open(t *testing.T, loop *kernel.Loop, dev storage.Device, cp Checkpoint) (Checkpoint, int, error) {
	t.Helper()
	var got Checkpoint
	area, err, fired := -1, error(nil), false
	Open(dev, testConfig(), cp.Op, cp.Checksum, func(c Checkpoint, a int, e error) { got, area, err, fired = c, a, e, true })
	drain(loop)
	if !fired {
		t.Fatal("Open never finished")
	}
	return got, area, err
}

// TestCheckpointAreasAlternate: each checkpoint goes to the area the
// durable one is not in, and Open finds whichever the superblock names.
func TestCheckpointAreasAlternate(t *testing.T) {
	loop, dev := testDevice(1, false)
	s := NewStore(dev, testConfig(), -1)
	var areas []int
	for i, cp := range []Checkpoint{checkpointAt(8, 'a', 3000), checkpointAt(16, 'b', 100), checkpointAt(24, 'c', 9000)} {
		s.Write(cp, func(area int) { areas = append(areas, area); s.Adopt(area) })
		drain(loop)
		got, area, err := open(t, loop, dev, cp)
		if err != nil || area != areas[i] || !bytes.Equal(got.Payload, cp.Payload) || got.Identity != cp.Identity || got.Timestamp != cp.Timestamp {
			t.Fatalf("checkpoint %d: area %d (written to %v), err %v", cp.Op, area, areas, err)
		}
	}
	if fmt.Sprint(areas) != "[0 1 0]" {
		t.Fatalf("areas %v, want [0 1 0]", areas)
	}
}

// TestCheckpointCrashLeavesTheOldOne: a crash in the middle of writing
// the next checkpoint (torn sectors) leaves the durable one readable, and
// the torn one is refused, not mistaken.
func TestCheckpointCrashLeavesTheOldOne(t *testing.T) {
	for seed := range uint64(20) {
		loop, dev := testDevice(seed, true)
		s := NewStore(dev, testConfig(), -1)
		old := checkpointAt(8, 'a', 5000)
		s.Write(old, func(area int) { s.Adopt(area) })
		drain(loop)
		next := checkpointAt(16, 'b', 20000)
		finished := false
		s.Write(next, func(int) { finished = true })
		for range int(seed % 2) {
			loop.Step()
		}
		if finished {
			t.Fatalf("seed %d: the write and its sync finished before the crash", seed)
		}
		dev.Crash()
		if _, _, err := open(t, loop, dev, old); err != nil {
			t.Fatalf("seed %d: the durable checkpoint is gone after a crash mid-write: %v", seed, err)
		}
		if got, _, err := open(t, loop, dev, next); err == nil && !bytes.Equal(got.Payload, next.Payload) {
			t.Fatalf("seed %d: a torn checkpoint was read as intact", seed)
		}
	}
}

// TestCheckpointDamageIsRefused: a flipped byte in the snapshot, or a
// superblock that names other bytes, finds no checkpoint.
func TestCheckpointDamageIsRefused(t *testing.T) {
	loop, dev := testDevice(2, false)
	s := NewStore(dev, testConfig(), -1)
	cp := checkpointAt(8, 'a', 2000)
	s.Write(cp, func(area int) { s.Adopt(area) })
	drain(loop)
	other := cp
	other.Checksum = wire.U128{Lo: 1}
	if _, _, err := open(t, loop, dev, other); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("a checkpoint of another checksum: %v", err)
	}
	buf := make([]byte, testSector)
	dev.Read(2, buf, func(error) {})
	drain(loop)
	buf[7] ^= 1
	dev.Write(2, buf, func(error) {})
	drain(loop)
	if _, _, err := open(t, loop, dev, cp); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("a rotted snapshot: %v", err)
	}
}

// pair runs a fetch against a server, frame by frame, with a hook that
// may drop, alter or reorder what the server sends.
type pair struct {
	t      *testing.T
	server *Server
	fetch  *Fetch
	offer  Offer
	nonce  wire.U128
	group  uint64
	// mangle sees each StateChunk before the fetch does.
	mangle func(n int, frame []byte) []byte
	chunks int
}

func newPair(t *testing.T, snapshot, table []byte, chunkLen int) (*pair, []byte) {
	cp := Checkpoint{Op: 40, Identity: wire.U128{Lo: 40, Hi: 1}, Payload: snapshot, Checksum: wire.SnapshotChecksum(snapshot)}
	p := &pair{t: t, server: NewServer(chunkLen, OffersMax), offer: NewMetadataOffer(cp, table), nonce: wire.U128{Lo: 7, Hi: 9},
		group: wire.MetadataGroup}
	cfg := FetchConfig{Group: wire.MetadataGroup, Replica: 1, Replicas: 3, ChunkLen: 1 << 20, StallTicks: 10, PayloadMax: 1 << 20}
	var req []byte
	p.fetch, req = NewFetch(cfg, 0, p.nonce, 5)
	return p, req
}

// serve answers one request frame as a replica's server would.
func (p *pair) serve(req []byte) []byte {
	h := wire.HeaderOf(req)
	switch h.Command() {
	case wire.CommandRequestStateTransfer:
		p.server.Open(p.nonce, p.offer)
		x := wire.StateTransferTargetHeader{Nonce: p.nonce, CommitOp: p.offer.CommitOp, Group: p.group, Available: 1}
		return wire.BuildFrame(&x, p.offer.Manifest())
	case wire.CommandRequestStateChunk:
		var x wire.RequestStateChunkHeader
		x.Decode(h)
		body, known, ok := p.server.Chunk(x.Nonce, x.Artifact, x.Offset, x.Len)
		if !known || !ok {
			return nil
		}
		c := wire.StateChunkHeader{Nonce: x.Nonce, Offset: x.Offset, Group: p.group, Artifact: x.Artifact}
		f := wire.BuildFrame(&c, body)
		if p.mangle != nil {
			f = p.mangle(p.chunks, f)
		}
		p.chunks++
		return f
	}
	p.t.Fatalf("a request of command %v", h.Command())
	return nil
}

// run drives the session to its end; it returns the final outcome.
func (p *pair) run(req []byte) Outcome {
	for range 10_000 {
		answer := p.serve(req)
		var o Outcome
		if answer == nil {
			o, req = p.fetch.Tick()
			for o == Continue && req == nil {
				o, req = p.fetch.Tick()
			}
			if o != Continue {
				return o
			}
			continue
		}
		if wire.HeaderOf(answer).Command() == wire.CommandStateTransferTarget {
			o, req, _ = p.fetch.OnTarget(0, answer)
		} else {
			o, req, _ = p.fetch.OnChunk(0, answer)
		}
		if o == Ignored {
			o, req = p.fetch.Tick()
			for o == Continue && req == nil {
				o, req = p.fetch.Tick()
			}
		}
		if o != Continue {
			return o
		}
	}
	p.t.Fatal("the session never ended")
	return Failed
}

// TestFetchPullsEveryArtifactInLockstep: small chunks, both artifacts
// arrive whole and verified, the identity rides the manifest.
func TestFetchPullsEveryArtifactInLockstep(t *testing.T) {
	snapshot, table := bytes.Repeat([]byte("snapshot"), 700), bytes.Repeat([]byte("table"), 90)
	p, req := newPair(t, snapshot, table, 333)
	if o := p.run(req); o != Complete {
		t.Fatalf("outcome %v", o)
	}
	if got := p.fetch.Offer; !bytes.Equal(got.Artifacts[0], snapshot) || !bytes.Equal(got.Artifacts[1], table) ||
		got.Identities[0] != (wire.U128{Lo: 40, Hi: 1}) || got.CommitOp != 40 {
		t.Fatalf("the artifacts or the identity came back wrong")
	}
	if want := (len(snapshot)+332)/333 + (len(table)+332)/333; p.chunks != want {
		t.Fatalf("%d chunks, want %d (one in flight, clamped by the server)", p.chunks, want)
	}
}

// TestFetchCatchesACorruptChunk: a StateChunk body flipped in flight (no
// seal covers it) is caught by the artifact's checksum and the artifact is
// pulled again; corrupting every pull fails the session after
// DecodeRetriesMax.
func TestFetchCatchesACorruptChunk(t *testing.T) {
	snapshot, table := bytes.Repeat([]byte("s"), 1000), []byte("ict2")
	p, req := newPair(t, snapshot, table, 256)
	p.mangle = func(n int, f []byte) []byte {
		if n == 1 {
			f[wire.HeaderSize+3] ^= 0x10
		}
		return f
	}
	if o := p.run(req); o != Complete || p.fetch.DecodeRetries != 1 || !bytes.Equal(p.fetch.Offer.Artifacts[0], snapshot) {
		t.Fatalf("outcome %v after %d retries", o, p.fetch.DecodeRetries)
	}
	p, req = newPair(t, snapshot, table, 256)
	p.mangle = func(n int, f []byte) []byte { f[wire.HeaderSize] ^= 1; return f }
	if o := p.run(req); o != Failed || p.fetch.DecodeRetries != DecodeRetriesMax+1 {
		t.Fatalf("always corrupt: outcome %v after %d retries", o, p.fetch.DecodeRetries)
	}
}

// TestFetchIgnoresChunksOutOfStep: a chunk at the wrong offset, of another
// artifact, empty, overrunning, or of another nonce changes nothing.
func TestFetchIgnoresChunksOutOfStep(t *testing.T) {
	p, req := newPair(t, bytes.Repeat([]byte("x"), 100), []byte("t"), 64)
	if o, _, _ := p.fetch.OnTarget(0, p.serve(req)); o != Continue {
		t.Fatalf("the offer: %v", o)
	}
	chunk := func(nonce wire.U128, artifact uint32, offset uint64, body []byte) []byte {
		c := wire.StateChunkHeader{Nonce: nonce, Offset: offset, Group: wire.MetadataGroup, Artifact: artifact}
		return wire.BuildFrame(&c, body)
	}
	for name, f := range map[string][]byte{
		"wrong offset":   chunk(p.nonce, 0, 10, []byte("x")),
		"other artifact": chunk(p.nonce, 1, 0, []byte("t")),
		"empty":          chunk(p.nonce, 0, 0, nil),
		"overrun":        chunk(p.nonce, 0, 0, bytes.Repeat([]byte("x"), 101)),
		"other nonce":    chunk(wire.U128{Lo: 1}, 0, 0, []byte("x")),
	} {
		if o, _, _ := p.fetch.OnChunk(0, f); o != Ignored {
			t.Errorf("%s: %v", name, o)
		}
	}
	if o, _, _ := p.fetch.OnChunk(2, chunk(p.nonce, 0, 0, []byte("x"))); o != Ignored {
		t.Errorf("a chunk from another peer: %v", o)
	}
}

// TestFetchStallsThenFails: with no answer the last request is sent again
// every StallTicks, and after StallRetriesMax the session fails.
func TestFetchStallsThenFails(t *testing.T) {
	p, _ := newPair(t, []byte("s"), []byte("t"), 64)
	resent := 0
	for tick := 0; ; tick++ {
		o, req := p.fetch.Tick()
		if req != nil {
			resent++
			if wire.HeaderOf(req).Command() != wire.CommandRequestStateTransfer {
				t.Fatalf("re-sent %v", wire.HeaderOf(req).Command())
			}
		}
		if o == Failed {
			if resent != StallRetriesMax || tick+1 != (StallRetriesMax+1)*10 {
				t.Fatalf("failed at tick %d after %d re-sends", tick+1, resent)
			}
			return
		}
	}
}

// TestFetchRefusesWhatItCannotUse: a header-only refusal, an offer at or
// below what the receiver applied, and an incoherent manifest are refusals.
func TestFetchRefusesWhatItCannotUse(t *testing.T) {
	p, _ := newPair(t, []byte("s"), []byte("t"), 64)
	x := wire.StateTransferTargetHeader{Nonce: p.nonce, Group: wire.MetadataGroup}
	if o, _, _ := p.fetch.OnTarget(0, wire.BuildFrame(&x, nil)); o != Refused {
		t.Fatalf("a refusal: %v", o)
	}
	stale := p.offer
	stale.CommitOp = 5
	stale.Entries = append([]wire.ManifestEntry(nil), stale.Entries...)
	stale.Entries[0].Frontier, stale.Entries[1].Frontier = 5, 5
	x = wire.StateTransferTargetHeader{Nonce: p.nonce, CommitOp: 5, Group: wire.MetadataGroup, Available: 1}
	if o, _, why := p.fetch.OnTarget(0, wire.BuildFrame(&x, stale.Manifest())); o != Refused || !strings.Contains(why, "has applied 5") {
		t.Fatalf("an offer at the op already applied: %v (%q)", o, why)
	}
	bad := p.offer
	bad.Entries = append([]wire.ManifestEntry(nil), bad.Entries...)
	bad.Entries[1].Frontier = 41
	x = wire.StateTransferTargetHeader{Nonce: p.nonce, CommitOp: 40, Group: wire.MetadataGroup, Available: 1}
	if o, _, why := p.fetch.OnTarget(0, wire.BuildFrame(&x, bad.Manifest())); o != Refused || !strings.Contains(why, "incoherent") {
		t.Fatalf("a client table above commit_op: %v (%q)", o, why)
	}
}

// TestServerExpiresIdleOffers: an offer nobody pulls from is dropped after
// OfferIdleTicksMax ticks; its nonce is then unknown.
func TestServerExpiresIdleOffers(t *testing.T) {
	s := NewServer(64, OffersMax)
	n := wire.U128{Lo: 3}
	s.Open(n, NewMetadataOffer(checkpointAt(8, 'a', 10), []byte("t")))
	for range OfferIdleTicksMax - 1 {
		s.Tick()
	}
	if _, known, ok := s.Chunk(n, 0, 0, 4); !known || !ok {
		t.Fatal("the offer expired early")
	}
	for range OfferIdleTicksMax {
		s.Tick()
	}
	if _, known, _ := s.Chunk(n, 0, 0, 4); known || s.Offers() != 0 {
		t.Fatal("an idle offer outlived its expiry")
	}
}

// testPartitionGroup is the consensus group of the partition fetches.
const testPartitionGroup = 1 << 40

func partitionFetchConfig() FetchConfig {
	return FetchConfig{Plane: PlanePartition, Group: testPartitionGroup, Replica: 1, Replicas: 3, ChunkLen: 1 << 20,
		StallTicks: 10, PayloadMax: PartitionArtifactMax, TotalMax: 1 << 20}
}

// newPartitionPair runs a PlanePartition fetch, of a receiver that has
// applied need, against a partition server offering o.
func newPartitionPair(t *testing.T, o Offer, chunkLen int, need uint64) (*pair, []byte) {
	p := &pair{t: t, server: NewServer(chunkLen, PartitionTransfersMax), offer: o, nonce: wire.U128{Lo: 8, Hi: 9},
		group: testPartitionGroup}
	var req []byte
	p.fetch, req = NewFetch(partitionFetchConfig(), 0, p.nonce, need)
	return p, req
}

// TestFetchPullsAPartitionOffer: a PlanePartition fetch pulls every
// segment and the consumer offsets in lockstep, the timestamp and identity
// of commit_op ride the manifest, and the offer decodes to the state the
// server offered.
func TestFetchPullsAPartitionOffer(t *testing.T) {
	s := testPartitionState(3, 1, 4, 2, 2)
	o := NewPartitionOffer(s, 2*len(s.Batches[0]))
	if len(o.Entries) < 4 {
		t.Fatalf("%d artifacts, want several segments", len(o.Entries))
	}
	p, req := newPartitionPair(t, o, 97, 12)
	if out := p.run(req); out != Complete {
		t.Fatalf("outcome %v", out)
	}
	got := p.fetch.Offer
	if !slices.Equal(got.Timestamps, o.Timestamps) || !slices.Equal(got.Identities, o.Identities) || got.CommitOp != s.CommitOp {
		t.Fatalf("timestamps %v, identities %v, commit_op %d", got.Timestamps, got.Identities, got.CommitOp)
	}
	back, err := DecodePartitionOffer(got, testPartition)
	if err != nil || !equalStates(back, s) {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	want := 0
	for _, a := range o.Artifacts {
		want += (len(a) + 96) / 97
	}
	if p.chunks != want {
		t.Fatalf("%d chunks, want %d", p.chunks, want)
	}
	// An empty partition is one artifact.
	p, req = newPartitionPair(t, NewPartitionOffer(testPartitionState(), 1), 64, 0)
	if out := p.run(req); out != Complete || len(p.fetch.Offer.Artifacts) != 1 || p.fetch.Offer.Timestamps[0] != s.Timestamp {
		t.Fatalf("an empty partition: %v", out)
	}
}

// TestFetchRefusesBadPartitionManifests: each rule of a partition offer's
// manifest refuses on its own, with a reason that names it.
func TestFetchRefusesBadPartitionManifests(t *testing.T) {
	s := testPartitionState(2, 2, 2)
	base := NewPartitionOffer(s, 1) // segments at 0, 2, 4; consumer offsets at 90
	cases := []struct {
		name     string
		commitOp uint64
		mutate   func(o *Offer)
		want     string
	}{
		{"no artifacts", 90, func(o *Offer) { *o = Offer{Timestamps: []uint64{}} }, "an offer of no artifacts"},
		{"the last not consumer offsets", 90, func(o *Offer) { o.Entries[3].Kind = wire.ArtifactSegmentLog }, "the last artifact (kind 2 at 90)"},
		{"consumer offsets of another op", 91, func(o *Offer) {}, "not the consumer offsets of commit_op 91"},
		{"consumer offsets without identity", 90, func(o *Offer) { o.Identities[3] = wire.U128{} }, "with its identity"},
		{"a metadata artifact", 90, func(o *Offer) { o.Entries[1].Kind = wire.ArtifactClientTable }, "artifact 1 of kind 1, not a segment log"},
		{"two consumer offsets", 90, func(o *Offer) { o.Entries[0].Kind = wire.ArtifactConsumerOffsets }, "artifact 0 of kind 3, not a segment log"},
		{"frontiers equal", 90, func(o *Offer) { o.Entries[2].Frontier = 2 }, "segment 2 at offset 2 after 2: frontiers not strictly ascending"},
		{"frontiers descending", 90, func(o *Offer) { o.Entries[1].Frontier = 5 }, "segment 2 at offset 4 after 5"},
		{"an artifact too large", 90, func(o *Offer) { o.Entries[1].Len = PartitionArtifactMax + 1 }, fmt.Sprintf("artifact 1 of %d bytes", PartitionArtifactMax+1)},
		{"too much in all", 90, func(o *Offer) { o.Entries[0].Len, o.Entries[2].Len = 600_000, 600_000 }, "at most 1048576"},
		{"the total reached, then more", 90, func(o *Offer) {
			o.Entries[0].Len, o.Entries[1].Len = 1<<20, PartitionArtifactMax
		}, "at most 1048576"},
		{"at the op applied", 90, func(o *Offer) {}, "an offer at op 90, this replica has applied 90"},
		{"a metadata offer", 90, func(o *Offer) {
			*o = NewMetadataOffer(Checkpoint{Op: 90, Identity: wire.U128{Lo: 1}}, []byte("t"))
		}, "the last artifact (kind 1 at 90)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := cloneOffer(base)
			c.mutate(&o)
			need := uint64(12)
			if strings.HasPrefix(c.name, "at the op") {
				need = 90
			}
			p, _ := newPartitionPair(t, o, 64, need)
			x := wire.StateTransferTargetHeader{Nonce: p.nonce, CommitOp: c.commitOp, Group: testPartitionGroup, Available: 1}
			out, req, why := p.fetch.OnTarget(0, wire.BuildFrame(&x, o.Manifest()))
			if out != Refused || req != nil || !strings.Contains(why, c.want) || p.fetch.Fetching() || p.fetch.Transient {
				t.Fatalf("outcome %v (%q), want a refusal naming %q", out, why, c.want)
			}
		})
	}
	// The base offer itself is taken.
	p, _ := newPartitionPair(t, base, 64, 12)
	x := wire.StateTransferTargetHeader{Nonce: p.nonce, CommitOp: 90, Group: testPartitionGroup, Available: 1}
	if out, _, why := p.fetch.OnTarget(0, wire.BuildFrame(&x, base.Manifest())); out != Continue {
		t.Fatalf("the base offer: %v (%q)", out, why)
	}
}

// TestFetchTransientRefusal: a partition fetch tells a transient refusal
// ("not right now") from a plain one, and the last refusal decides; a
// metadata fetch reads neither, keeping its reason.
func TestFetchTransientRefusal(t *testing.T) {
	p, _ := newPartitionPair(t, NewPartitionOffer(testPartitionState(1), 1), 64, 0)
	refusal := func(transient uint8, group uint64) []byte {
		x := wire.StateTransferTargetHeader{Nonce: p.nonce, Group: group, UnavailableTransient: transient}
		return wire.BuildFrame(&x, nil)
	}
	steps := []struct {
		transient uint8
		want      bool
		why       string
	}{
		{1, true, "the server cannot offer right now"},
		{0, false, "the server has no checkpoint to offer"},
		{1, true, "the server cannot offer right now"},
	}
	for i, st := range steps {
		out, _, why := p.fetch.OnTarget(0, refusal(st.transient, testPartitionGroup))
		if out != Refused || p.fetch.Transient != st.want || why != st.why {
			t.Fatalf("step %d: %v, transient %v (%q)", i, out, p.fetch.Transient, why)
		}
	}
	// A bad manifest is not transient either.
	x := wire.StateTransferTargetHeader{Nonce: p.nonce, CommitOp: 90, Group: testPartitionGroup, Available: 1}
	if out, _, _ := p.fetch.OnTarget(0, wire.BuildFrame(&x, []byte("ISM1"))); out != Refused || p.fetch.Transient {
		t.Fatalf("a bad manifest after a transient refusal: %v, transient %v", out, p.fetch.Transient)
	}
	m, _ := newPair(t, []byte("s"), []byte("t"), 64)
	y := wire.StateTransferTargetHeader{Nonce: m.nonce, Group: wire.MetadataGroup, UnavailableTransient: 1}
	if out, _, why := m.fetch.OnTarget(0, wire.BuildFrame(&y, nil)); out != Refused || m.fetch.Transient || why != "the server has no checkpoint to offer" {
		t.Fatalf("a metadata fetch: %v, transient %v (%q)", out, m.fetch.Transient, why)
	}
}

// TestMetadataManifestUnchanged: a metadata offer carries no timestamps
// and its manifest is the identified form (entry_len 41) it always was.
func TestMetadataManifestUnchanged(t *testing.T) {
	o := NewMetadataOffer(checkpointAt(8, 'a', 10), []byte("t"))
	if m := o.Manifest(); o.Timestamps != nil || m[8] != wire.ManifestEntryLenIdentified ||
		!bytes.Equal(m, wire.EncodeManifestIdentified(o.Entries, o.Identities)) {
		t.Fatalf("a metadata manifest of entry_len %d", m[8])
	}
}

// TestServerOffersMax: a server keeps at most its offer limit; the oldest
// goes first.
func TestServerOffersMax(t *testing.T) {
	s := NewServer(64, PartitionTransfersMax)
	o := NewPartitionOffer(testPartitionState(1), 1)
	for i := range uint64(PartitionTransfersMax + 1) {
		s.Open(wire.U128{Lo: i + 1}, o)
	}
	if _, known, _ := s.Chunk(wire.U128{Lo: 1}, 0, 0, 4); known || s.Offers() != PartitionTransfersMax {
		t.Fatalf("%d offers open, the oldest known %v", s.Offers(), known)
	}
	if _, known, ok := s.Chunk(wire.U128{Lo: 2}, 0, 0, 4); !known || !ok {
		t.Fatal("the second offer went")
	}
	mustPanic(t, "a server of no offers", func() { NewServer(64, 0) })
}
