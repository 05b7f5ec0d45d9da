package kernel

import (
	"math/rand/v2"

	"github.com/zeebo/xxh3"
)

// Streams derives independent PCG streams from one seed, one per label.
// Every component, and every labelled fault site (in the manner of
// FoundationDB's BUGGIFY sites), draws from its own stream, so adding a site
// or changing how often one draws never shifts the draws of another.
type Streams struct {
	seed uint64
}

// NewStreams returns the streams of a run seeded with seed.
func NewStreams(seed uint64) Streams { return Streams{seed: seed} }

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
	hi := xxh3.HashStringSeed(label, s.seed)
	lo := xxh3.HashStringSeed(label, s.seed^0x9e3779b97f4a7c15)
	return rand.NewPCG(hi, lo)
}
