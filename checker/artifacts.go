package checker

import (
	"github.com/iggy-vopr/vopr/checker/diskread"
	"github.com/iggy-vopr/vopr/replica"
)

// Artifacts is what the checker may read of the replicas' durable artifacts
// besides the journal's ring (docs/disk-format.md 10 and 14): each
// replica's durable image, read only by checker/diskread (the checker's own
// reader of the format), where each zone lies, and which sectors a fault
// the fault model allows has touched. The harness implements it over its
// simulated devices; without it the checks of the artifacts do not run.
type Artifacts interface {
	// Peek returns a reader of replica r's durable image: what a crash now
	// would leave.
	Peek(r uint8) diskread.Peek
	// Geometry returns r's journal geometry (its superblock's place and
	// identity).
	Geometry(r uint8) diskread.Geometry
	// CheckpointZone places the metadata plane's checkpoint areas.
	CheckpointZone() diskread.CheckpointZone
	// OffsetZone places the consumer offset records.
	OffsetZone() diskread.OffsetZone
	// SegmentZone places the segment logs.
	SegmentZone() diskread.SegmentZone
	// Faulted reports whether a fault touched any of count sectors from
	// first on r's device: a latent error, silent corruption, or a
	// misdirected write that missed them or landed on them. What the
	// replica reads there may differ from the durable image, or what it
	// wrote may never have landed.
	Faulted(r uint8, first, count uint64) bool
}

// artifactState is what the checks of the artifacts keep: where to read
// them, and per replica the checkpoint its superblock last named.
type artifactState struct {
	src         Artifacts
	checkpoints []durableCheckpoint
	records     map[recordsKey]*groupRecords // offsetrecords.go; looked up only
	// segmentsRead: the slots whose segment log a build has read since
	// the replica's restart (segmentrecovery.go); looked up only.
	segmentsRead map[slotKey]bool
	// tables: the client table model at each checkpoint op, for the
	// snapshots and the ICT2 artifacts of that op (snapshottable.go,
	// ict2.go); looked up only.
	tables map[uint64]checkpointTable
}

// SetArtifacts lets the checker read the replicas' durable artifacts.
func (c *Checker) SetArtifacts(a Artifacts) {
	c.art.src = a
	c.art.records = map[recordsKey]*groupRecords{}
	c.art.segmentsRead = map[slotKey]bool{}
	c.art.checkpoints = make([]durableCheckpoint, c.replicas)
	for i := range c.art.checkpoints {
		c.art.checkpoints[i].area = -1
	}
}

// artifactsCrashed checks r's durable artifacts at its crash: what its
// restart will read.
func (c *Checker) artifactsCrashed(r uint8) {
	c.checkpointCrashed(r)
	c.offsetsCrashed(r)
	c.segmentsCrashed(r)
}

// artifactEvent takes the durable artifact events.
func (c *Checker) artifactEvent(e replica.Event) {
	switch e.Kind {
	case replica.EventOffsetsRecovered, replica.EventOffsetWrite, replica.EventOffsetDurable:
		c.offsetEvent(e)
	case replica.EventSegmentRecovered:
		c.segmentRecovered(e.Replica, e.PartitionGroup, e.Disk)
		c.segmentBuilt(e.Replica, e.PartitionGroup, e.Disk.Slot)
	case replica.EventCheckpointRead:
		c.checkpointRead(e.Replica, e.Op, e.Frame, e.Disk.Identity, e.Disk.Timestamp)
	}
}
