package sim

import (
	"github.com/iggy-vopr/vopr/checker/diskread"
	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/transfer"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
)

// clusterDisks lets the checker read each replica's durable image
// (checker.Disks, checker.Artifacts): what a crash now would leave on its
// simulated device, read by the checker's own reader of the on-disk format
// (checker/diskread, written from docs/disk-format.md, not by the journal's
// or the partition planes' code). It is the durability oracle behind
// "acknowledged before durable", "sent before durable" and the misdirect
// excuse of "nack of an acknowledged op", and behind the checks of the
// checkpoint areas, the consumer offset records and the segment logs
// (where each zone lies, and which sectors a fault touched).
type clusterDisks struct {
	c   *Cluster
	cfg []journal.Config    // per replica
	geo []diskread.Geometry // per replica
	// The journal's two ring zones in the device layout: slot k is chunk k
	// of both.
	headers, prepares int
}

func newClusterDisks(c *Cluster) *clusterDisks {
	d := &clusterDisks{c: c, headers: c.Layout.ZoneIndex(journal.ZoneHeaders), prepares: c.Layout.ZoneIndex(journal.ZonePrepares)}
	for i := range c.Options.Replicas {
		cfg := c.replicaConfig(uint8(i))
		j := cfg.JournalConfig()
		d.cfg = append(d.cfg, j)
		d.geo = append(d.geo, diskread.Geometry{SectorSize: j.SectorSize, SlotCount: j.SlotCount, FrameSizeMax: j.FrameSizeMax,
			Cluster: j.Cluster, Replica: j.Replica, ReplicaCount: j.ReplicaCount})
	}
	return d
}

func (d *clusterDisks) dev(r uint8) *storage.SimDevice { return d.c.Replicas[r].dev }

// HoldsAcknowledged implements checker.Disks.
func (d *clusterDisks) HoldsAcknowledged(r uint8, op uint64, id wire.U128) bool {
	return diskread.HoldsAcknowledged(d.geo[r], d.dev(r).PeekDurable, op, id)
}

// DurableView implements checker.Disks.
func (d *clusterDisks) DurableView(r uint8) (view, logView uint32, err error) {
	return diskread.DurableView(d.geo[r], d.dev(r).PeekDurable)
}

// JournalSlots implements checker.Disks.
func (d *clusterDisks) JournalSlots(r uint8) uint64 { return d.cfg[r].SlotCount }

// DurableCheckpoint implements checker.Disks.
func (d *clusterDisks) DurableCheckpoint(r uint8) (uint64, error) {
	return diskread.DurableCheckpoint(d.geo[r], d.dev(r).PeekDurable)
}

// HoldsPrepare implements checker.Disks.
func (d *clusterDisks) HoldsPrepare(r uint8, op uint64, id wire.U128) bool {
	return diskread.HoldsPrepare(d.geo[r], d.dev(r).PeekDurable, op, id)
}

// DurablePrepare implements checker.Disks.
func (d *clusterDisks) DurablePrepare(r uint8, op uint64) (wire.U128, bool) {
	return diskread.DurablePrepare(d.geo[r], d.dev(r).PeekDurable, op)
}

// Misdirected implements checker.Disks.
func (d *clusterDisks) Misdirected(r uint8, op uint64) bool {
	slot := op % d.cfg[r].SlotCount
	for _, z := range []int{d.headers, d.prepares} {
		first, count := d.c.Layout.ChunkStart(z, slot), d.c.Layout.Zone(z).ChunkSectors
		if d.dev(r).Missed(first, count) || d.dev(r).Hit(first, count) {
			return true
		}
	}
	return false
}

// slotSector returns the first sector of op's slot in zone z (d.headers or
// d.prepares) on replica r's device: where a nemesis aims a fault at it.
func (d *clusterDisks) slotSector(r uint8, z int, op uint64) uint64 {
	return d.c.Layout.ChunkStart(z, op%d.cfg[r].SlotCount)
}

// Faultable implements checker.Disks: the header and prepare zones share
// their sets in the atlas.
func (d *clusterDisks) Faultable(r uint8, op uint64) bool {
	return d.c.Atlas.Granted(int32(r), d.headers, op%d.cfg[r].SlotCount)
}

// clusterSegments lets the checker read each replica's segment logs
// (checker.Segments): each sector's durable bytes, and whether a fault the
// atlas allows touched it.
type clusterSegments struct {
	c                             *Cluster
	first                         uint64
	slots, slotSectors, sectorLen int
}

func newClusterSegments(c *Cluster) *clusterSegments {
	z := c.Layout.ZoneIndex(partition.ZoneSegments)
	zone := c.Layout.Zone(z)
	return &clusterSegments{c: c, first: c.Layout.ZoneStart(z), slots: int(zone.Chunks), slotSectors: int(zone.ChunkSectors),
		sectorLen: c.Replicas[0].dev.SectorSize()}
}

// Geometry implements checker.Segments.
func (s *clusterSegments) Geometry() (slots, slotSectors, sectorBytes int) {
	return s.slots, s.slotSectors, s.sectorLen
}

// Sector implements checker.Segments.
func (s *clusterSegments) Sector(r uint8, slot, k int) ([]byte, bool) {
	dev := s.c.Replicas[r].dev
	sector := s.first + uint64(slot)*uint64(s.slotSectors) + uint64(k)
	buf := make([]byte, s.sectorLen)
	dev.PeekDurable(sector, buf)
	latent, corrupt := dev.SectorFaults(sector)
	return buf, latent || corrupt || dev.Missed(sector, 1) || dev.Hit(sector, 1)
}

// Peek implements checker.Artifacts: r's durable image.
func (d *clusterDisks) Peek(r uint8) diskread.Peek { return d.dev(r).PeekDurable }

// Geometry implements checker.Artifacts.
func (d *clusterDisks) Geometry(r uint8) diskread.Geometry { return d.geo[r] }

// CheckpointZone implements checker.Artifacts: the zone's place in the
// layout, an area per chunk.
func (d *clusterDisks) CheckpointZone() diskread.CheckpointZone {
	z := d.c.Layout.ZoneIndex(transfer.ZoneCheckpoints)
	return diskread.CheckpointZone{FirstSector: d.c.Layout.ZoneStart(z), AreaSectors: d.c.Layout.Zone(z).ChunkSectors,
		SectorSize: d.cfg[0].SectorSize}
}

// Faulted implements checker.Artifacts.
func (d *clusterDisks) Faulted(r uint8, first, count uint64) bool {
	dev := d.dev(r)
	if dev.Missed(first, count) || dev.Hit(first, count) {
		return true
	}
	for k := range count {
		if latent, corrupt := dev.SectorFaults(first + k); latent || corrupt {
			return true
		}
	}
	return false
}

// OffsetZone implements checker.Artifacts.
func (d *clusterDisks) OffsetZone() diskread.OffsetZone {
	z := d.c.Layout.ZoneIndex(partition.ZoneOffsets)
	return diskread.OffsetZone{FirstSector: d.c.Layout.ZoneStart(z), Slots: int(d.c.Layout.Zone(z).Chunks), SectorSize: d.cfg[0].SectorSize}
}

// SegmentZone implements checker.Artifacts.
func (d *clusterDisks) SegmentZone() diskread.SegmentZone {
	z := d.c.Layout.ZoneIndex(partition.ZoneSegments)
	zone := d.c.Layout.Zone(z)
	return diskread.SegmentZone{FirstSector: d.c.Layout.ZoneStart(z), Slots: int(zone.Chunks), SlotSectors: int(zone.ChunkSectors),
		SectorSize: d.cfg[0].SectorSize}
}
