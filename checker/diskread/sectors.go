package diskread

// Where each part of the journal lies (format 2), for a caller that asks
// the fault model about exactly the sectors a reading depends on.

// SuperblockSectors returns the first sector of the superblock zone and
// how many sectors its copies take together.
func (g Geometry) SuperblockSectors() (first, count uint64) {
	return g.superblockCopySector(0), superblockCopies * g.superblockChunkSectors()
}

// SlotSectors returns slot k's header sector, and the first sector of its
// prepare chunk with the chunk's length in sectors.
func (g Geometry) SlotSectors(k uint64) (header, prepare, prepareCount uint64) {
	return g.headerSector(k), g.prepareSector(k), g.prepareChunkSectors()
}
