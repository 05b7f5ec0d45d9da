package kernel

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/zeebo/xxh3"
)

// Streams derives independent PCG streams from one seed, one per label.
// Every component, and every labelled fault site (in the manner of
// FoundationDB's BUGGIFY sites), draws from its own stream, so adding a site
// or changing how often one draws never shifts the draws of another.
//
// The fault streams (labels under network., storage. and vopr.: the
// network's delays and faults, the disks' latencies and faults, the
// harness's process faults and nemeses) can be reseeded mid-run
// (Reseed): vopr branch replays a seed to a moment and gives its faults
// another future from there, while the workload's and the replicas' own
// streams go on as they were.
type Streams struct {
	seed   uint64
	faults *faultStreams // nil in a zero Streams: nothing to reseed
}

// faultStreams notes every fault stream handed out, so Reseed reaches
// them in place, and the salt that later ones start from.
type faultStreams struct {
	labels  []string
	sources []*rand.PCG
	salt    uint64 // 0 until Reseed
}

// faultStreamsMax bounds the registry: a run hands out a few dozen fault
// streams (eight for the network, a dozen per disk, four nemeses); more
// means a stream is asked for per event, which Stream's contract forbids.
const faultStreamsMax = 4096

// NewStreams returns the streams of a run seeded with seed.
func NewStreams(seed uint64) Streams { return Streams{seed: seed, faults: &faultStreams{}} }

// Seed returns the run's seed.
func (s Streams) Seed() uint64 { return s.seed }

// Stream returns a fresh generator for label. Two calls with one label give
// two generators with the same sequence: a component asks once and keeps it.
// The label is hashed with two different seeds into PCG's two state words, so
// nearby seeds and similar labels start far apart.
func (s Streams) Stream(label string) *rand.Rand {
	return rand.New(s.Source(label))
}

// Source returns the PCG source behind Stream(label).
func (s Streams) Source(label string) *rand.PCG {
	if s.faults == nil || !FaultLabel(label) {
		return rand.NewPCG(stateWords(label, s.seed))
	}
	f := s.faults
	if len(f.sources) == faultStreamsMax {
		panic(fmt.Sprintf("kernel: more than %d fault streams (the last %q)", faultStreamsMax, label))
	}
	src := rand.NewPCG(stateWords(label, salted(s.seed, f.salt)))
	f.labels, f.sources = append(f.labels, label), append(f.sources, src)
	return src
}

// FaultLabel reports whether label names a fault stream, one Reseed moves.
func FaultLabel(label string) bool {
	return strings.HasPrefix(label, "network.") || strings.HasPrefix(label, "storage.") || strings.HasPrefix(label, "vopr.")
}

// Reseed moves every fault stream, those handed out so far (in place: the
// generators their owners keep now draw another sequence) and those handed
// out later, to the sequence of its label under seed and salt. A run
// reseeds once at most, with a salt other than 0 (0 is the unsalted run).
// The other streams are untouched.
func (s Streams) Reseed(salt uint64) {
	if salt == 0 {
		panic("kernel: Reseed with salt 0, the unsalted sequence")
	}
	if s.faults == nil {
		panic("kernel: Reseed on a zero Streams")
	}
	f := s.faults
	if f.salt != 0 {
		panic(fmt.Sprintf("kernel: Reseed(%d) after Reseed(%d)", salt, f.salt))
	}
	f.salt = salt
	for i, src := range f.sources {
		src.Seed(stateWords(f.labels[i], salted(s.seed, salt)))
	}
}

// Reseeded returns the salt of the run's Reseed, 0 before it.
func (s Streams) Reseeded() uint64 {
	if s.faults == nil {
		return 0
	}
	return s.faults.salt
}

// FaultStreams returns the labels of the fault streams handed out so far,
// in the order they were.
func (s Streams) FaultStreams() []string {
	if s.faults == nil {
		return nil
	}
	return append([]string(nil), s.faults.labels...)
}

// stateWords hashes label with two different seeds into PCG's two words.
func stateWords(label string, seed uint64) (hi, lo uint64) {
	return xxh3.HashStringSeed(label, seed), xxh3.HashStringSeed(label, seed^0x9e3779b97f4a7c15)
}

// salted is the seed a salted fault stream hashes with: salt 0 leaves the
// seed as it is, so an unreseeded run draws exactly what it always did.
func salted(seed, salt uint64) uint64 {
	if salt == 0 {
		return seed
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], seed)
	binary.LittleEndian.PutUint64(b[8:], salt)
	return xxh3.Hash(b[:])
}
