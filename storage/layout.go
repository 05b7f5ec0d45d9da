package storage

import "fmt"

// Zone is one named region of a device, cut into Chunks chunks of
// ChunkSectors sectors each. A chunk is the unit the fault Atlas reasons
// about: one piece of data that every replica holds a copy of at the same
// place (a journal slot's header, a journal slot's prepare, one superblock
// copy, one block of a segment log), so that "which replicas may fault this
// chunk" bounds how many copies of that data can go bad.
type Zone struct {
	Name         string
	ChunkSectors uint64 // sectors per chunk, at least 1
	Chunks       uint64 // chunks in the zone, at least 1
}

// Sectors returns the zone's size in sectors.
func (z Zone) Sectors() uint64 { return z.ChunkSectors * z.Chunks }

// Layout is the sequence of zones that make up a device, laid end to end
// from sector 0 in the order given; the device has exactly their total size.
// The harness supplies one layout for every replica of a cluster (replicas
// hold the same data at the same places, which is what lets one atlas bound
// the faults on all of them). A Layout is immutable once built.
type Layout struct {
	zones        []Zone
	startSectors []uint64 // startSectors[i]: first sector of zones[i]
	sectors      uint64
}

// zonesMax bounds the zones of a layout: a device holds a handful of
// structures, and a bound keeps Locate cheap.
const zonesMax = 64

// NewLayout lays out zones end to end. It panics on a layout that cannot be
// meant (no zones, an empty zone, a duplicate or empty name, a size that
// overflows), since the layout is fixed by the harness's code.
func NewLayout(zones ...Zone) *Layout {
	if len(zones) == 0 || len(zones) > zonesMax {
		panic(fmt.Sprintf("storage: layout of %d zones, want 1..%d", len(zones), zonesMax))
	}
	l := &Layout{zones: append([]Zone(nil), zones...), startSectors: make([]uint64, len(zones))}
	for i, z := range zones {
		if z.Name == "" {
			panic(fmt.Sprintf("storage: zone %d has no name", i))
		}
		for _, other := range zones[:i] {
			if other.Name == z.Name {
				panic(fmt.Sprintf("storage: zone %q named twice", z.Name))
			}
		}
		if z.ChunkSectors == 0 || z.Chunks == 0 {
			panic(fmt.Sprintf("storage: zone %q has %d chunks of %d sectors", z.Name, z.Chunks, z.ChunkSectors))
		}
		if z.Chunks > (1<<62)/z.ChunkSectors || l.sectors+z.Sectors() < l.sectors || l.sectors+z.Sectors() > 1<<62 {
			panic(fmt.Sprintf("storage: zone %q overflows the device", z.Name))
		}
		l.startSectors[i] = l.sectors
		l.sectors += z.Sectors()
	}
	return l
}

// Sectors returns the total size in sectors.
func (l *Layout) Sectors() uint64 { return l.sectors }

// ZoneCount returns the number of zones.
func (l *Layout) ZoneCount() int { return len(l.zones) }

// Zone returns zone i.
func (l *Layout) Zone(i int) Zone { return l.zones[i] }

// ZoneIndex returns the index of the zone named name, or -1.
func (l *Layout) ZoneIndex(name string) int {
	for i, z := range l.zones {
		if z.Name == name {
			return i
		}
	}
	return -1
}

// ZoneStart returns the first sector of zone i.
func (l *Layout) ZoneStart(i int) uint64 { return l.startSectors[i] }

// ChunkStart returns the first sector of chunk c of zone i.
func (l *Layout) ChunkStart(i int, c uint64) uint64 {
	if c >= l.zones[i].Chunks {
		panic(fmt.Sprintf("storage: chunk %d of zone %q, which has %d", c, l.zones[i].Name, l.zones[i].Chunks))
	}
	return l.startSectors[i] + c*l.zones[i].ChunkSectors
}

// Locate returns the zone and the chunk within it that hold sector. It panics
// on a sector past the end.
func (l *Layout) Locate(sector uint64) (zone int, chunk uint64) {
	if sector >= l.sectors {
		panic(fmt.Sprintf("storage: sector %d past the end of a %d-sector layout", sector, l.sectors))
	}
	// Binary search for the last zone starting at or before sector (zone 0
	// starts at 0, so there is one).
	lo, hi := 0, len(l.startSectors)
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if l.startSectors[mid] <= sector {
			lo = mid
		} else {
			hi = mid
		}
	}
	zone = lo
	return zone, (sector - l.startSectors[zone]) / l.zones[zone].ChunkSectors
}

// sameAs reports whether two layouts describe the same zones.
func (l *Layout) sameAs(other *Layout) bool {
	if len(l.zones) != len(other.zones) {
		return false
	}
	for i := range l.zones {
		if l.zones[i] != other.zones[i] {
			return false
		}
	}
	return true
}
