package replica

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/bus"
	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/partition"
	"github.com/iggy-vopr/vopr/replica/transfer"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/storage"
)

// Config is one replica's configuration.
type Config struct {
	ClusterName  string
	Replica      uint8
	ReplicaCount uint8

	// Auth enables the authenticated replica handshake; Secret and
	// PreviousSecret are cluster.auth's shared secrets.
	Auth           bool
	Secret         []byte
	PreviousSecret []byte

	Profile Profile

	// FlushMessages and FlushBytes are the segment logs' flush thresholds
	// (0: Iggy's, 1024 messages and 1 MiB; partition.SegmentConfig).
	FlushMessages uint64
	FlushBytes    uint64
	// SegmentArtifactBytes is where a partition offer starts a new segment
	// artifact (0: segmentArtifactBytesDefault, 64 KiB).
	SegmentArtifactBytes uint64
	// EvictedRing is how many flushed ops a partition's memory journal
	// keeps for repair (0: the profile's PartitionEvictedRing).
	EvictedRing uint64
	// CheckpointInterval is how many committed ops lie between two
	// checkpoints of the metadata plane: a replica checkpoints after
	// applying each multiple of it (0: the profile's).
	CheckpointInterval uint64
	// FormatExtentSlots is how many slots of the journal's ring are
	// formatted at a time (0: journal.FormatExtentSlotsDefault; a value
	// above the ring formats the whole ring at once).
	FormatExtentSlots uint64
}

// Profile holds the sizes and timeouts that differ between the simulator
// and production.
type Profile struct {
	PipelineMax        int    // prepare queue depth
	RequestQueueMax    int    // requests waiting for a pipeline slot
	RepairChunkMax     int    // prepares served per RequestPrepares
	PeerQueueFramesMax int    // message_bus.peer_queue_capacity
	ClientTableMax     int    // client table slots
	JournalSlots       uint64 // metadata journal ring
	FrameSizeMax       uint32 // message_bus.max_message_size, and the largest prepare journaled
	SectorSize         int    // the device's sector size
	Timeouts           vsr.Timeouts
	// ForwardsMax bounds the logins and logouts a backup has forwarded
	// to the primary and waits on; ForwardTimeoutTicks is how long it waits
	// before it answers TransientNotCommitted (below a client's own
	// timeout, so the client hears why).
	ForwardsMax         int
	ForwardTimeoutTicks int
	// PartitionPipelineMax is a partition group's prepare queue depth
	// (its request queue is twice that, wire.md correction 0.7).
	PartitionPipelineMax int
	// PartitionSlots bounds the partition groups a replica runs at once:
	// the superblock slots of the partition store. PartitionStoreIOsMax
	// bounds the store's writes in flight.
	PartitionSlots       int
	PartitionStoreIOsMax int
	// SegmentSlotSectors is each partition's segment log capacity;
	// SegmentIOsMax bounds the flushes in flight.
	SegmentSlotSectors int
	SegmentIOsMax      int
	// PartitionEvictedRing is how many flushed ops a partition's journal
	// keeps for repair (Iggy's evicted ring: 4096 entries).
	PartitionEvictedRing uint64
	// RepairAnyPeer: see vsr.Config; off in both profiles, a simulator
	// knob.
	RepairAnyPeer bool
	// CheckpointInterval is the default of Config.CheckpointInterval;
	// CheckpointAreaSectors the size of each of the two checkpoint areas
	// (a header sector, then snapshot.bin).
	CheckpointInterval    uint64
	CheckpointAreaSectors uint64
}

// SimulationProfile is the small profile the simulator runs: short queues
// and a small client table so every run fills them (issue 4's profile).
// The swarm draws the journal's ring and the checkpoint interval
// (sim.Swarm): the profile's 4096 slots are a run's default.
func SimulationProfile() Profile {
	return Profile{
		PipelineMax:          4,
		RequestQueueMax:      8,
		RepairChunkMax:       8,
		PeerQueueFramesMax:   32,
		ClientTableMax:       8,
		JournalSlots:         4096,
		FrameSizeMax:         128 << 10,
		SectorSize:           512,
		Timeouts:             vsr.DefaultTimeouts(),
		ForwardsMax:          16,
		ForwardTimeoutTicks:  200,
		PartitionPipelineMax: 4,
		PartitionSlots:       256,
		PartitionStoreIOsMax: 8,
		SegmentSlotSectors:   4096,
		SegmentIOsMax:        8,
		PartitionEvictedRing: 4096,
		// 2 MiB: a client table of 8 full rings of 128 KiB replies and a
		// state far larger than a run builds.
		CheckpointInterval:    256,
		CheckpointAreaSectors: 4096,
	}
}

// ProductionProfile is Iggy's defaults (wire.md 11, consensus.md 5).
func ProductionProfile() Profile {
	return Profile{
		PipelineMax:          32,
		RequestQueueMax:      64,
		RepairChunkMax:       128,
		PeerQueueFramesMax:   256,
		ClientTableMax:       8192,
		JournalSlots:         1024,
		FrameSizeMax:         wire.MaxFrameSizeDefault,
		SectorSize:           4096,
		Timeouts:             vsr.DefaultTimeouts(),
		ForwardsMax:          1024,
		ForwardTimeoutTicks:  300,
		PartitionPipelineMax: 32,
		PartitionSlots:       8192,
		PartitionStoreIOsMax: 64,
		SegmentSlotSectors:   1 << 18,
		SegmentIOsMax:        64,
		PartitionEvictedRing: 4096,
		// Iggy's cap on one metadata artifact, 1 GiB (wire.md 11).
		CheckpointInterval:    512,
		CheckpointAreaSectors: 1 << 18,
	}
}

func (c *Config) check() {
	p := c.Profile
	switch {
	case c.ReplicaCount < 1 || c.ReplicaCount > bus.ReplicasMax:
		panic(fmt.Sprintf("replica: %d replicas", c.ReplicaCount))
	case c.Replica >= c.ReplicaCount:
		panic(fmt.Sprintf("replica: id %d of %d", c.Replica, c.ReplicaCount))
	case p.RepairChunkMax >= p.PeerQueueFramesMax:
		panic("replica: the repair chunk must stay below the peer queue (a burst would be dropped)")
	case p.ClientTableMax < 1:
		panic("replica: empty client table")
	case p.ForwardsMax < 1 || p.ForwardTimeoutTicks < 1:
		panic("replica: session forwarding needs room and a timeout")
	case p.PartitionPipelineMax < 1 || p.PartitionSlots < 1 || p.PartitionStoreIOsMax < 1 || p.SegmentSlotSectors < 1 || p.SegmentIOsMax < 1 ||
		p.PartitionEvictedRing < 1:
		panic("replica: the partition planes need a pipeline, slots, segments and I/Os")
	case p.CheckpointAreaSectors < 2:
		panic("replica: a checkpoint area needs its header sector and a snapshot")
	case p.JournalSlots < JournalSlotsMin(c.checkpointInterval(), p.PipelineMax):
		panic(fmt.Sprintf("replica: a journal ring of %d slots for a checkpoint interval of %d and a pipeline of %d (at least %d)",
			p.JournalSlots, c.checkpointInterval(), p.PipelineMax, JournalSlotsMin(c.checkpointInterval(), p.PipelineMax)))
	}
}

// JournalSlotsMin is the smallest metadata journal ring for a checkpoint
// interval and a pipeline depth (DEVIATIONS.md 18): the ring holds the ops
// above the durable checkpoint, so it must reach the next checkpoint (an
// interval) with room for the pipeline the primary fills meanwhile and for
// the one a view change re-proposes, while that checkpoint is written.
// Iggy asks 4 * max(64, pipeline) slots whatever the interval.
func JournalSlotsMin(interval uint64, pipeline int) uint64 {
	return interval + 2*uint64(pipeline)
}

// Cluster returns the cluster id.
func (c *Config) Cluster() wire.U128 { return wire.ClusterID(c.ClusterName) }

// JournalConfig is the journal's configuration for this replica.
func (c *Config) JournalConfig() journal.Config {
	p := c.Profile
	appends := 2*p.PipelineMax + 2*p.RepairChunkMax + 2*wire.SuffixEntriesMax
	return journal.Config{
		SectorSize:     p.SectorSize,
		SlotCount:      p.JournalSlots,
		FrameSizeMax:   int(p.FrameSizeMax),
		AppendsMax:     appends,
		IOsMax:         appends + 2,
		StateWritesMax: 64,
		Cluster:        c.Cluster(),
		Replica:        c.Replica,
		ReplicaCount:   c.ReplicaCount,

		FormatExtentSlots: min(c.FormatExtentSlots, p.JournalSlots),
	}
}

// DeviceIOsMax is how many I/Os the device under this replica must accept
// at once.
func (c *Config) DeviceIOsMax() int {
	return c.JournalConfig().IOsMax + 2*c.Profile.PartitionStoreIOsMax + c.Profile.SegmentIOsMax + 1 + 16 + transfer.Areas
}

// Layout is the device layout of a replica: the journal's zones, then the
// partition store's.
func Layout(cfg Config) *storage.Layout {
	cfg.check()
	zones := journal.Zones(cfg.JournalConfig())
	return storage.NewLayout(append(zones, partition.StoreZone(cfg.Profile.PartitionSlots), partition.OffsetZone(cfg.Profile.PartitionSlots),
		partition.SegmentZone(cfg.Profile.PartitionSlots, cfg.Profile.SegmentSlotSectors),
		transfer.Zone(cfg.Profile.CheckpointAreaSectors))...)
}

// checkpointConfig places the checkpoint areas after the segment logs.
func (c *Config) checkpointConfig() transfer.Config {
	s := c.SegmentConfig()
	return transfer.Config{FirstSector: s.FirstSector + partition.SegmentZone(s.Slots, s.SlotSectors).Sectors(),
		AreaSectors: c.Profile.CheckpointAreaSectors, SectorSize: c.Profile.SectorSize}
}

// CheckpointIntervalOps is the metadata plane's checkpoint interval in ops:
// a replica checkpoints after applying each multiple of it.
func (c *Config) CheckpointIntervalOps() uint64 { return c.checkpointInterval() }

func (c *Config) checkpointInterval() uint64 {
	if c.CheckpointInterval > 0 {
		return c.CheckpointInterval
	}
	return c.Profile.CheckpointInterval
}

// evictedRing is how many flushed ops a partition journal keeps.
func (c *Config) evictedRing() uint64 {
	if c.EvictedRing > 0 {
		return c.EvictedRing
	}
	return c.Profile.PartitionEvictedRing
}

// MetadataLimits are the metadata state machine's ceilings on this
// replica: Iggy's, and live partitions no more than the partition
// superblock slots (every replica runs every partition). Every replica of
// a cluster shares a profile, so all apply the same.
func (c *Config) MetadataLimits() metadata.Limits {
	l := metadata.DefaultLimits()
	l.Partitions = c.Profile.PartitionSlots
	return l
}

// SegmentConfig places the segment logs after the consumer offset records.
func (c *Config) SegmentConfig() partition.SegmentConfig {
	cfg := partition.SegmentConfig{FirstSector: c.offsetsFirst() + partition.OffsetZone(c.Profile.PartitionSlots).Sectors(),
		Slots: c.Profile.PartitionSlots, SlotSectors: c.Profile.SegmentSlotSectors, IOsMax: c.Profile.SegmentIOsMax,
		FlushMessages: c.FlushMessages, FlushBytes: c.FlushBytes}
	if cfg.FlushMessages == 0 {
		cfg.FlushMessages = partition.FlushMessagesIggy
	}
	if cfg.FlushBytes == 0 {
		cfg.FlushBytes = partition.FlushBytesIggy
	}
	return cfg
}

// offsetsFirst places the consumer offset records after the partition
// store.
func (c *Config) offsetsFirst() uint64 {
	s := c.storeConfig()
	return s.FirstSector + partition.StoreZone(s.Slots).Sectors()
}

// storeConfig places the partition store after the journal.
func (c *Config) storeConfig() partition.StoreConfig {
	first := uint64(0)
	for _, z := range journal.Zones(c.JournalConfig()) {
		first += z.Sectors()
	}
	return partition.StoreConfig{FirstSector: first, Slots: c.Profile.PartitionSlots, IOsMax: c.Profile.PartitionStoreIOsMax,
		Cluster: c.Cluster(), Replica: c.Replica, Replicas: c.ReplicaCount}
}

func (c *Config) vsrConfig() vsr.Config {
	p := c.Profile
	return vsr.Config{
		Cluster: c.Cluster(), Group: wire.MetadataGroup, Replica: c.Replica, ReplicaCount: c.ReplicaCount,
		PipelineMax: p.PipelineMax, RequestQueueMax: p.RequestQueueMax, RepairChunkMax: p.RepairChunkMax,
		Timeouts: p.Timeouts, RepairAnyPeer: p.RepairAnyPeer,
	}
}

func (c *Config) busConfig() bus.Config {
	b := bus.DefaultConfig(c.Cluster(), c.Replica, c.ReplicaCount)
	b.Auth, b.Secret, b.PreviousSecret = c.Auth, c.Secret, c.PreviousSecret
	b.PeerQueueFramesMax = c.Profile.PeerQueueFramesMax
	b.FrameSizeMax = c.Profile.FrameSizeMax
	return b
}
