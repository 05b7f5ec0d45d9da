package storage_test

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
	"pgregory.net/rapid"
)

func TestQuorumReplication(t *testing.T) {
	for n, want := range map[int]int{1: 1, 2: 2, 3: 2, 4: 2, 5: 3, 6: 3, 7: 3, 9: 3} {
		if got := storage.QuorumReplication(n); got != want {
			t.Errorf("QuorumReplication(%d) = %d, want %d", n, got, want)
		}
	}
}

// TestAtlasBound: for 1..6 replicas and random layouts, links and clean
// zones, no chunk is granted to more than quorum_replication-1 replicas
// (checked here independently of Atlas.Check), with one replica none is,
// clean zones grant nothing, linked zones grant alike, no replica holds a
// whole zone of two or more chunks, and Check agrees.
func TestAtlasBound(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		replicas := rapid.IntRange(1, 6).Draw(rt, "replicas")
		zoneCount := rapid.IntRange(1, 5).Draw(rt, "zones")
		zones := make([]storage.Zone, zoneCount)
		for i := range zones {
			zones[i] = storage.Zone{
				Name:         fmt.Sprintf("z%d", i),
				ChunkSectors: rapid.Uint64Range(1, 4).Draw(rt, "chunkSectors"),
				Chunks:       rapid.Uint64Range(1, 40).Draw(rt, "chunks"),
			}
		}
		var opts storage.AtlasOptions
		if zoneCount >= 2 && rapid.Bool().Draw(rt, "link") {
			zones[1].Chunks = zones[0].Chunks
			opts.Linked = [][2]string{{"z0", "z1"}}
		}
		if rapid.Bool().Draw(rt, "clean") {
			opts.Clean = []string{fmt.Sprintf("z%d", zoneCount-1)}
		}
		shared := ""
		if zoneCount >= 3 && rapid.Bool().Draw(rt, "shared") {
			shared = "z2"
			opts.Shared = []string{shared}
		}
		layout := storage.NewLayout(zones...)
		atlas := storage.NewAtlas(layout, replicas, kernel.NewStreams(rapid.Uint64().Draw(rt, "seed")).Stream("atlas"), opts)
		if err := atlas.Check(); err != nil {
			rt.Fatal(err)
		}
		bound := storage.QuorumReplication(replicas) - 1
		for z := range layout.ZoneCount() {
			whole := ^uint64(0)
			for c := range layout.Zone(z).Chunks {
				m := atlas.Mask(z, c)
				whole &= m
				if n := bits.OnesCount64(m); n > bound || m>>replicas != 0 {
					rt.Fatalf("%d replicas: zone %d chunk %d granted to %#x", replicas, z, c, m)
				}
				if len(opts.Clean) > 0 && layout.Zone(z).Name == opts.Clean[0] && m != 0 {
					rt.Fatalf("clean zone %d chunk %d granted to %#x", z, c, m)
				}
				if len(opts.Linked) > 0 && z == 1 && m != atlas.Mask(0, c) {
					rt.Fatalf("linked zones differ at chunk %d", c)
				}
				for r := range int32(replicas) {
					if atlas.Granted(r, z, c) != (m&(1<<r) != 0) {
						rt.Fatalf("Granted disagrees with Mask")
					}
				}
			}
			if layout.Zone(z).Chunks >= 2 && whole != 0 {
				rt.Fatalf("zone %d wholly granted to %#x", z, whole)
			}
			if layout.Zone(z).Name == shared {
				// However each replica places the zone's datum among its
				// chunks, one of at most bound replicas may lose it.
				var any uint64
				for c := range layout.Zone(z).Chunks {
					any |= atlas.Mask(z, c)
				}
				if n := bits.OnesCount64(any); n > bound {
					rt.Fatalf("%d replicas: shared zone %d granted to %d replicas (%#x), more than %d", replicas, z, n, any, bound)
				}
			}
		}
	})
}

// TestAtlasSpreads: with a quorum above two, faults are actually granted,
// and to every replica somewhere (the atlas is not vacuous).
func TestAtlasSpreads(t *testing.T) {
	for replicas := 2; replicas <= 6; replicas++ {
		atlas := journalAtlas(replicas, 4)
		var union uint64
		layout := atlas.Layout()
		for z := range layout.ZoneCount() {
			for c := range layout.Zone(z).Chunks {
				union |= atlas.Mask(z, c)
			}
		}
		if union != 1<<replicas-1 {
			t.Errorf("%d replicas: only %#x ever granted a chunk", replicas, union)
		}
	}
}

func TestAtlasDeterministic(t *testing.T) {
	a, b := journalAtlas(5, 9), journalAtlas(5, 9)
	layout := a.Layout()
	for z := range layout.ZoneCount() {
		for c := range layout.Zone(z).Chunks {
			if a.Mask(z, c) != b.Mask(z, c) {
				t.Fatalf("one seed, two atlases differ at zone %d chunk %d", z, c)
			}
		}
	}
}

func TestLayoutLocate(t *testing.T) {
	layout := journalLayout()
	for s := range layout.Sectors() {
		z, c := layout.Locate(s)
		start := layout.ChunkStart(z, c)
		if s < start || s >= start+layout.Zone(z).ChunkSectors {
			t.Fatalf("sector %d located in zone %d chunk %d starting at %d", s, z, c, start)
		}
	}
	if layout.Sectors() != 8+16+64+16 || layout.ZoneIndex("prepares") != 2 || layout.ZoneIndex("nope") != -1 {
		t.Fatal("layout geometry")
	}
}
