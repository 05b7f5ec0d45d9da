package storage_test

import (
	"bytes"
	"errors"
	"math/bits"
	"testing"

	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
	"pgregory.net/rapid"
)

// journalLayout is a small journal-like layout: a superblock, slot headers
// (one sector each) and slot prepares (four sectors each), and a reply zone.
func journalLayout() *storage.Layout {
	return storage.NewLayout(
		storage.Zone{Name: "superblock", ChunkSectors: 2, Chunks: 4},
		storage.Zone{Name: "headers", ChunkSectors: 1, Chunks: 16},
		storage.Zone{Name: "prepares", ChunkSectors: 4, Chunks: 16},
		storage.Zone{Name: "replies", ChunkSectors: 2, Chunks: 8},
	)
}

func journalAtlas(replicas int, seed uint64) *storage.Atlas {
	layout := journalLayout()
	return storage.NewAtlas(layout, replicas, kernel.NewStreams(seed).Stream("storage.atlas"), storage.AtlasOptions{
		Clean:  []string{"superblock"},
		Linked: [][2]string{{"headers", "prepares"}},
	})
}

// granted returns a sector in a chunk the atlas grants replica, and one in a
// chunk it does not, both in zone "prepares".
func granted(t *testing.T, atlas *storage.Atlas, replica int32) (yes, no uint64) {
	t.Helper()
	layout := atlas.Layout()
	z := layout.ZoneIndex("prepares")
	foundYes, foundNo := false, false
	for c := range layout.Zone(z).Chunks {
		if atlas.Granted(replica, z, c) && !foundYes {
			yes, foundYes = layout.ChunkStart(z, c), true
		}
		if !atlas.Granted(replica, z, c) && !foundNo {
			no, foundNo = layout.ChunkStart(z, c), true
		}
	}
	if !foundYes || !foundNo {
		t.Fatalf("atlas gives replica %d no granted or no refused chunk", replica)
	}
	return yes, no
}

func faultyDevice(loop *kernel.Loop, atlas *storage.Atlas, replica int32, seed uint64) *storage.SimDevice {
	opts := quiet(atlas.Layout(), 512)
	opts.Atlas = atlas
	opts.CrashTornProbability = 0.5
	return storage.NewSimDevice(loop, kernel.NewStreams(seed), replica, opts)
}

// TestCorruptionStable: a corrupt sector reads with the same single bit
// flipped on every retry, without error; a rewrite clears it; chunks the
// atlas refuses this replica are never corrupted.
func TestCorruptionStable(t *testing.T) {
	loop := kernel.NewLoop()
	atlas := journalAtlas(3, 1)
	dev := faultyDevice(loop, atlas, 0, 2)
	yes, no := granted(t, atlas, 0)
	dev.SetFaults(storage.Faults{CorruptProbability: 1})
	data := pattern(1, 512)
	writeSync(t, loop, dev, yes, data)
	writeSync(t, loop, dev, no, data)
	if _, corrupt := dev.SectorFaults(yes); !corrupt {
		t.Fatal("a write with corruption probability 1 left a granted sector clean")
	}
	first, err := readSync(t, loop, dev, yes, 1)
	if err != nil {
		t.Fatal(err)
	}
	flipped := 0
	for i := range first {
		flipped += bits.OnesCount8(first[i] ^ data[i])
	}
	if flipped != 1 {
		t.Fatalf("corrupt read differs from the written bytes in %d bits, want 1", flipped)
	}
	for range 5 {
		if again, _ := readSync(t, loop, dev, yes, 1); !bytes.Equal(again, first) {
			t.Fatal("corrupt sector reads differently on retry")
		}
	}
	if got, _ := readSync(t, loop, dev, no, 1); !bytes.Equal(got, data) {
		t.Error("a chunk the atlas refuses this replica was corrupted")
	}
	dev.FaultsOff()
	writeSync(t, loop, dev, yes, data)
	if got, _ := readSync(t, loop, dev, yes, 1); !bytes.Equal(got, data) {
		t.Error("a rewrite did not clear corruption")
	}
}

// TestLatentErrorClearsOnRewrite: a latent error fails every read of the
// sector, also of a range containing it, until a rewrite.
func TestLatentErrorClearsOnRewrite(t *testing.T) {
	loop := kernel.NewLoop()
	atlas := journalAtlas(3, 1)
	dev := faultyDevice(loop, atlas, 0, 2)
	yes, no := granted(t, atlas, 0)
	data := pattern(1, 4*512)
	writeSync(t, loop, dev, yes, data)
	writeSync(t, loop, dev, no, data)
	dev.SetFaults(storage.Faults{LatentProbability: 1})
	if _, err := readSync(t, loop, dev, no, 4); err != nil {
		t.Fatal("a latent error on a chunk the atlas refuses this replica")
	}
	if _, err := readSync(t, loop, dev, yes, 4); !errors.Is(err, storage.ErrReadFault) {
		t.Fatalf("read with latent probability 1: %v", err)
	}
	dev.FaultsOff()
	for range 3 {
		if _, err := readSync(t, loop, dev, yes, 4); !errors.Is(err, storage.ErrReadFault) {
			t.Fatal("a latent error cleared without a rewrite")
		}
	}
	writeSync(t, loop, dev, yes, data)
	if got, err := readSync(t, loop, dev, yes, 4); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after rewrite: %v", err)
	}
	if dev.Stats().ReadFaults != 4 {
		t.Errorf("stats %+v", dev.Stats())
	}
}

// TestFaultsOff: new faults (of every kind) stop, old ones stay until
// rewritten.
func TestFaultsOff(t *testing.T) {
	loop := kernel.NewLoop()
	atlas := journalAtlas(3, 1)
	dev := faultyDevice(loop, atlas, 0, 2)
	layout := atlas.Layout()
	z := layout.ZoneIndex("prepares")
	var chunks []uint64
	for c := range layout.Zone(z).Chunks {
		if atlas.Granted(0, z, c) {
			chunks = append(chunks, layout.ChunkStart(z, c))
		}
	}
	if len(chunks) < 2 {
		t.Fatal("replica 0 has fewer than two granted chunks")
	}
	dev.SetFaults(storage.Faults{CorruptProbability: 1, LatentProbability: 1})
	writeSync(t, loop, dev, chunks[0], pattern(1, 512))
	latent, corrupt := dev.SectorFaults(chunks[0])
	if !latent || !corrupt {
		t.Fatal("faults with probability 1 did not happen")
	}
	dev.SetFaults(storage.Faults{CorruptProbability: 1, LatentProbability: 1, MisdirectProbability: 1})
	dev.FaultsOff()
	data := pattern(2, 512)
	writeSync(t, loop, dev, chunks[1], data) // neither misdirected nor faulted
	if got, err := readSync(t, loop, dev, chunks[1], 1); err != nil || !bytes.Equal(got, data) {
		t.Error("a new fault after FaultsOff")
	}
	if _, err := readSync(t, loop, dev, chunks[0], 1); !errors.Is(err, storage.ErrReadFault) {
		t.Error("an old fault vanished at FaultsOff")
	}
	if l, c := dev.SectorFaults(chunks[0]); !l || !c {
		t.Error("an old fault vanished at FaultsOff")
	}
}

// TestMisdirect: with misdirect probability 1, a write within one granted
// chunk lands at the same offset of another granted chunk of its zone; any
// other write lands at its target.
func TestMisdirect(t *testing.T) {
	for replica := range int32(5) {
		loop := kernel.NewLoop()
		atlas := journalAtlas(5, 11)
		layout := atlas.Layout()
		dev := faultyDevice(loop, atlas, replica, 3)
		dev.SetFaults(storage.Faults{MisdirectProbability: 1})
		buf := make([]byte, 512)
		seed := uint64(1000)
		for z := range layout.ZoneCount() {
			zone := layout.Zone(z)
			grantedInZone := 0
			for c := range zone.Chunks {
				if atlas.Granted(replica, z, c) {
					grantedInZone++
				}
			}
			for c := range zone.Chunks {
				for _, w := range []struct{ offset, count uint64 }{{0, zone.ChunkSectors}, {zone.ChunkSectors - 1, 1}, {zone.ChunkSectors - 1, 2}} {
					target := layout.ChunkStart(z, c) + w.offset
					if target+w.count > dev.Sectors() {
						continue
					}
					seed++
					data := pattern(seed, int(w.count)*512)
					writeSync(t, loop, dev, target, data)
					// Find the first sector of the write by its unique bytes.
					landed, found := uint64(0), false
					for s := range dev.Sectors() {
						dev.PeekVisible(s, buf)
						if bytes.Equal(buf, data[:512]) {
							landed, found = s, true
							break
						}
					}
					if !found {
						t.Fatalf("replica %d: write to %d landed nowhere", replica, target)
					}
					withinChunk := w.offset+w.count <= zone.ChunkSectors
					shouldMove := withinChunk && atlas.Granted(replica, z, c) && grantedInZone >= 2
					lz, lc := layout.Locate(landed)
					if landed != target && !dev.Missed(target, w.count) {
						t.Fatalf("replica %d: write to %d landed at %d, but Missed does not say so", replica, target, landed)
					}
					if landed != target && !dev.Hit(landed, w.count) {
						t.Fatalf("replica %d: write to %d landed at %d, but Hit does not say so", replica, target, landed)
					}
					if !shouldMoveEver(atlas, replica, z, c, grantedInZone) && dev.Missed(target, w.count) {
						t.Fatalf("replica %d: Missed reports a write to %d (zone %s chunk %d) that no misdirect may touch", replica, target, zone.Name, c)
					}
					if !shouldMoveEver(atlas, replica, z, c, grantedInZone) && dev.Hit(target, 1) {
						t.Fatalf("replica %d: Hit reports a landing on %d (zone %s chunk %d) that no misdirect may touch", replica, target, zone.Name, c)
					}
					switch {
					case !shouldMove && landed != target:
						t.Fatalf("replica %d: write to %d (zone %s chunk %d) moved to %d", replica, target, zone.Name, c, landed)
					case shouldMove && (lz != z || lc == c || !atlas.Granted(replica, lz, lc) ||
						landed-layout.ChunkStart(lz, lc) != w.offset):
						t.Fatalf("replica %d: write to %d (zone %s chunk %d) misdirected to %d (zone %d chunk %d)", replica, target, zone.Name, c, landed, lz, lc)
					}
				}
			}
		}
		if dev.Stats().Misdirected == 0 && replica < 5 {
			t.Errorf("replica %d: no misdirects", replica)
		}
	}
}

// shouldMoveEver: whether any write into chunk c of zone z may be
// misdirected on replica's device.
func shouldMoveEver(atlas *storage.Atlas, replica int32, z int, c uint64, grantedInZone int) bool {
	return atlas.Granted(replica, z, c) && grantedInZone >= 2
}

// TestFaultsOnlyWhereGranted: under heavy random faults, every faulty sector
// is in a chunk the atlas grants its replica; with one replica, none is.
func TestFaultsOnlyWhereGranted(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		replicas := rapid.IntRange(1, 6).Draw(rt, "replicas")
		seed := rapid.Uint64().Draw(rt, "seed")
		atlas := journalAtlas(replicas, seed)
		layout := atlas.Layout()
		loop := kernel.NewLoop()
		devs := make([]*storage.SimDevice, replicas)
		for r := range devs {
			devs[r] = faultyDevice(loop, atlas, int32(r), seed)
			devs[r].SetFaults(storage.Faults{LatentProbability: 0.5, CorruptProbability: 0.5, MisdirectProbability: 0.5})
		}
		for range rapid.IntRange(1, 200).Draw(rt, "ios") {
			dev := devs[rapid.IntRange(0, replicas-1).Draw(rt, "replica")]
			s := rapid.Uint64Range(0, dev.Sectors()-1).Draw(rt, "sector")
			count := rapid.Uint64Range(1, min(6, dev.Sectors()-s)).Draw(rt, "count")
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0, 1:
				dev.Write(s, make([]byte, count*512), func(error) {})
			case 2:
				dev.Read(s, make([]byte, count*512), func(error) {})
			case 3:
				dev.Sync(func(error) {})
			case 4:
				dev.Crash()
			}
			if rapid.Bool().Draw(rt, "step") {
				loop.Step()
			}
		}
		drain(loop)
		for r, dev := range devs {
			for s := range dev.Sectors() {
				latent, corrupt := dev.SectorFaults(s)
				z, c := layout.Locate(s)
				if (latent || corrupt) && !atlas.Granted(int32(r), z, c) {
					rt.Fatalf("replica %d: sector %d (zone %s chunk %d) faulty outside the atlas", r, s, layout.Zone(z).Name, c)
				}
			}
		}
	})
}

// TestMisdirectNextWrite: an armed misdirect sends exactly the next write
// aimed at its sector elsewhere (recorded as missed), with the random
// misdirect probability 0, and only where the atlas grants the replica the
// sector's chunk and another chunk of its zone; the write after it lands.
func TestMisdirectNextWrite(t *testing.T) {
	loop := kernel.NewLoop()
	atlas := journalAtlas(5, 11)
	layout := atlas.Layout()
	armed, refused := 0, 0
	for replica := range int32(5) {
		dev := faultyDevice(loop, atlas, replica, 3)
		dev.SetFaults(storage.Faults{})
		for z := range layout.ZoneCount() {
			zone := layout.Zone(z)
			for c := range min(zone.Chunks, 4) {
				target := layout.ChunkStart(z, c)
				granted := 0
				for k := range zone.Chunks {
					if atlas.Granted(replica, z, k) {
						granted++
					}
				}
				ok := dev.MisdirectNextWrite(target)
				if want := atlas.Granted(replica, z, c) && granted >= 2; ok != want {
					t.Fatalf("replica %d zone %d chunk %d: armed %v, want %v", replica, z, c, ok, want)
				}
				data := pattern(uint64(target)+7, 512)
				writeSync(t, loop, dev, target, data)
				if !ok {
					refused++
					if dev.Missed(target, 1) {
						t.Fatalf("replica %d zone %d chunk %d: not armed, yet the write missed", replica, z, c)
					}
					continue
				}
				armed++
				if !dev.Missed(target, 1) {
					t.Fatalf("replica %d zone %d chunk %d: armed, yet the write landed", replica, z, c)
				}
				again := pattern(uint64(target)+8, 512)
				writeSync(t, loop, dev, target, again)
				buf := make([]byte, 512)
				dev.PeekVisible(target, buf)
				if !bytes.Equal(buf, again) {
					t.Fatalf("replica %d zone %d chunk %d: the write after the misdirected one did not land", replica, z, c)
				}
			}
		}
	}
	if armed == 0 || refused == 0 {
		t.Fatalf("armed %d, refused %d: want both", armed, refused)
	}
}
