package storage

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// replicasMax bounds a cluster's replicas: an atlas entry is a bit mask of
// replicas in one uint64.
const replicasMax = 64

// QuorumReplication returns the replication quorum of a cluster of n
// replicas, as TigerBeetle (and the protocol spec) define it: 2 for n == 2,
// else min(ceil(n/2), 3). Every piece of committed data is held by at least
// this many replicas, so if at most QuorumReplication(n)-1 replicas can lose a
// given chunk, one clean copy always survives.
func QuorumReplication(n int) int {
	if n < 1 || n > replicasMax {
		panic(fmt.Sprintf("storage: quorum of %d replicas, want 1..%d", n, replicasMax))
	}
	if n == 2 {
		return 2
	}
	return min((n+1)/2, 3)
}

// AtlasOptions shapes an atlas beyond the layout and the replica count.
type AtlasOptions struct {
	// Clean names zones that no replica may fault at all (TigerBeetle keeps
	// the superblock to crash tears only; a two-replica cluster may want no
	// faults in a zone that has no other redundancy). A zone linked to a
	// clean zone is clean too.
	Clean []string
	// Linked pairs zones with the same number of chunks whose chunk i is one
	// piece of data and must share one set of faulting replicas: a journal
	// slot's header and its prepare. Without the link, one replica could lose
	// op k's header and another its prepare, and a quorum of the two would
	// hold no clean copy of op k. The second zone of a pair copies the first's
	// sets; a zone may follow at most one zone, and a followed zone may not
	// itself follow another.
	Linked [][2]string
	// Shared names zones whose chunks hold one datum each replica places
	// where its own history says: the generations of a checkpoint, which
	// alternate between two areas, so replica 0's newest may sit in area 0
	// and replica 1's in area 1. Drawn chunk by chunk, such a zone could
	// let every replica lose its own newest copy, each in a chunk the
	// others keep clean, and the datum would be gone beyond the bound (VOPR
	// seed 3965681137: both replicas of a two-replica cluster lost the
	// checkpoint their rings had wrapped past). Every chunk of a shared zone
	// takes the set of its first, so at most QuorumReplication(n)-1
	// replicas may fault the zone at all, each of them (by the whole-zone
	// rule) one chunk of it only.
	Shared []string
}

// Atlas says, for every chunk of a layout, which replicas of the cluster may
// ever fault it: at most QuorumReplication(n)-1 of them (with n == 1 none),
// so every replication quorum keeps a clean copy of every chunk and data loss
// beyond the atlas is not a protocol bug. The harness builds one atlas for
// the whole cluster and hands it to every replica's SimDevice. Read errors,
// corruption and misdirected writes land only on chunks the atlas grants to
// the replica; crash tears do not consult it (they are the crash model, which
// the protocol must survive on any replica).
//
// Construction: each chunk of each non-clean zone draws a uniformly random
// set of exactly QuorumReplication(n)-1 replicas; then, in every zone of two
// or more chunks, a replica granted every chunk loses one of them (drawn), so
// that no replica can have a whole zone go bad at once (which would be a
// whole-disk failure, not a sector failure). An Atlas is immutable.
type Atlas struct {
	layout   *Layout
	replicas int
	leaders  []int      // leaders[z]: the zone whose sets zone z shares (z itself if none)
	clean    []bool     // clean[z]: zone z may not be faulted
	shared   []bool     // shared[z]: at most QuorumReplication(n)-1 replicas may fault zone z at all
	masks    [][]uint64 // masks[z][c]: bit r set when replica r may fault chunk c of zone z
}

// NewAtlas draws an atlas for a cluster of replicas replicas over layout,
// from rng. It panics on options that name unknown zones or link zones of
// different sizes (the harness's programming errors).
func NewAtlas(layout *Layout, replicas int, rng *rand.Rand, opts AtlasOptions) *Atlas {
	perChunk := QuorumReplication(replicas) - 1 // also validates replicas
	zones := layout.ZoneCount()
	a := &Atlas{
		layout:   layout,
		replicas: replicas,
		leaders:  make([]int, zones),
		clean:    make([]bool, zones),
		masks:    make([][]uint64, zones),
	}
	for z := range a.leaders {
		a.leaders[z] = z
	}
	for _, pair := range opts.Linked {
		leader, follower := a.zoneNamed(pair[0]), a.zoneNamed(pair[1])
		if leader == follower {
			panic(fmt.Sprintf("storage: zone %q linked to itself", pair[0]))
		}
		if a.leaders[leader] != leader || a.leaders[follower] != follower {
			panic(fmt.Sprintf("storage: link %q -> %q: a zone follows at most one, and a followed zone follows none", pair[0], pair[1]))
		}
		for z := range a.leaders {
			if a.leaders[z] == follower && z != follower {
				panic(fmt.Sprintf("storage: link %q -> %q: %q is already followed", pair[0], pair[1], pair[1]))
			}
		}
		if layout.Zone(leader).Chunks != layout.Zone(follower).Chunks {
			panic(fmt.Sprintf("storage: linked zones %q and %q differ in chunks", pair[0], pair[1]))
		}
		a.leaders[follower] = leader
	}
	shared := make([]bool, zones)
	a.shared = shared
	for _, name := range opts.Shared {
		z := a.zoneNamed(name)
		if a.leaders[z] != z {
			panic(fmt.Sprintf("storage: shared zone %q follows another", name))
		}
		shared[z] = true
	}
	for _, name := range opts.Clean {
		a.clean[a.leaders[a.zoneNamed(name)]] = true
	}
	for z := range a.clean {
		a.clean[z] = a.clean[a.leaders[z]]
	}
	// Leaders draw in zone order; followers share their leader's sets.
	for z := range zones {
		if a.leaders[z] != z {
			continue
		}
		masks := make([]uint64, layout.Zone(z).Chunks)
		a.masks[z] = masks
		if a.clean[z] || perChunk == 0 {
			continue
		}
		for c := range masks {
			masks[c] = drawReplicaSet(rng, replicas, perChunk)
		}
		if len(masks) < 2 {
			continue
		}
		if shared[z] {
			// Each replica of the set keeps one chunk clean, chosen by its
			// index: no draw, so the zones after keep their draws.
			for c := range masks {
				masks[c] = masks[0]
			}
			for r := range replicas {
				if bit := uint64(1) << r; masks[0]&bit != 0 {
					masks[r%len(masks)] &^= bit
				}
			}
			continue
		}
		for r := range replicas {
			bit := uint64(1) << r
			whole := true
			for _, m := range masks {
				if m&bit == 0 {
					whole = false
					break
				}
			}
			if whole {
				masks[rng.IntN(len(masks))] &^= bit
			}
		}
	}
	for z := range zones {
		a.masks[z] = a.masks[a.leaders[z]]
	}
	if err := a.Check(); err != nil {
		panic(err)
	}
	return a
}

// drawReplicaSet returns a uniformly random set of k of the replicas
// 0..n-1, as a bit mask.
func drawReplicaSet(rng *rand.Rand, n, k int) uint64 {
	var mask uint64
	for picked := range k {
		skip := rng.IntN(n - picked) // pick the skip-th replica not yet picked
		for r := range n {
			if mask&(1<<r) != 0 {
				continue
			}
			if skip == 0 {
				mask |= 1 << r
				break
			}
			skip--
		}
	}
	return mask
}

func (a *Atlas) zoneNamed(name string) int {
	z := a.layout.ZoneIndex(name)
	if z < 0 {
		panic(fmt.Sprintf("storage: atlas names zone %q, which the layout lacks", name))
	}
	return z
}

// Layout returns the layout the atlas covers.
func (a *Atlas) Layout() *Layout { return a.layout }

// Replicas returns the cluster's replica count.
func (a *Atlas) Replicas() int { return a.replicas }

// Mask returns the set of replicas that may fault chunk c of zone z, as a bit
// mask (bit r for replica r).
func (a *Atlas) Mask(z int, c uint64) uint64 { return a.masks[z][c] }

// Granted reports whether replica may fault chunk c of zone z.
func (a *Atlas) Granted(replica int32, z int, c uint64) bool {
	return replica >= 0 && int(replica) < a.replicas && a.masks[z][c]&(1<<replica) != 0
}

// Check verifies the atlas's invariants and returns the first violation: every
// chunk is granted only to replicas of the cluster and to at most
// QuorumReplication(n)-1 of them; clean zones grant nothing; linked zones
// grant identical sets; no replica is granted every chunk of a zone of two or
// more chunks; a shared zone is granted to at most QuorumReplication(n)-1
// replicas in all.
func (a *Atlas) Check() error {
	perChunkMax := QuorumReplication(a.replicas) - 1
	for z := range a.masks {
		zone := a.layout.Zone(z)
		if uint64(len(a.masks[z])) != zone.Chunks {
			return fmt.Errorf("storage: atlas zone %q has %d chunks, layout %d", zone.Name, len(a.masks[z]), zone.Chunks)
		}
		var whole, any uint64 = ^uint64(0), 0
		for c, m := range a.masks[z] {
			any |= m
			if a.replicas < replicasMax && m>>a.replicas != 0 {
				return fmt.Errorf("storage: atlas grants zone %q chunk %d to replicas %#x, beyond the cluster's %d", zone.Name, c, m, a.replicas)
			}
			if n := bits.OnesCount64(m); n > perChunkMax {
				return fmt.Errorf("storage: atlas grants zone %q chunk %d to %d replicas (%#x), more than quorum_replication-1 = %d", zone.Name, c, n, m, perChunkMax)
			}
			if m != 0 && a.clean[z] {
				return fmt.Errorf("storage: atlas grants clean zone %q chunk %d to replicas %#x", zone.Name, c, m)
			}
			if l := a.leaders[z]; m != a.masks[l][c] {
				return fmt.Errorf("storage: atlas zone %q chunk %d differs from linked zone %q", zone.Name, c, a.layout.Zone(l).Name)
			}
			whole &= m
		}
		if zone.Chunks >= 2 && whole != 0 {
			return fmt.Errorf("storage: atlas grants every chunk of zone %q to replicas %#x", zone.Name, whole)
		}
		if a.shared[z] && bits.OnesCount64(any) > perChunkMax {
			return fmt.Errorf("storage: atlas grants shared zone %q to %d replicas (%#x), more than quorum_replication-1 = %d", zone.Name, bits.OnesCount64(any), any, perChunkMax)
		}
	}
	return nil
}
