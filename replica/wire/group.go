package wire

import "fmt"

// MetadataGroup is the consensus group of the metadata plane (wire.md 10.2).
const MetadataGroup uint64 = 1 << 63

// Bounds of the components of a packed partition-plane group.
const (
	StreamIDLimit    = 1 << 20   // stream ids are < 2^20 (20 bits)
	TopicIDLimit     = 1 << 12   // topic ids are < 4096 (12 bits)
	PartitionIDLimit = 1_000_000 // partition ids are < 1 000 000 (not the 20-bit mask)
)

// PartitionGroup names one partition plane: the server-assigned numeric ids
// of its stream, topic and partition.
type PartitionGroup struct {
	Stream    uint32
	Topic     uint32
	Partition uint32
}

// PackGroup packs p into its group id: stream in bits 32..52, topic in bits
// 20..32, partition in bits 0..20. Out-of-range components are refused.
func PackGroup(p PartitionGroup) (uint64, error) {
	switch {
	case p.Stream >= StreamIDLimit:
		return 0, fmt.Errorf("wire: stream id %d out of range (must be < %d)", p.Stream, StreamIDLimit)
	case p.Topic >= TopicIDLimit:
		return 0, fmt.Errorf("wire: topic id %d out of range (must be < %d)", p.Topic, TopicIDLimit)
	case p.Partition >= PartitionIDLimit:
		return 0, fmt.Errorf("wire: partition id %d out of range (must be < %d)", p.Partition, PartitionIDLimit)
	}
	return uint64(p.Stream)<<32 | uint64(p.Topic)<<20 | uint64(p.Partition), nil
}

// UnpackGroup is the inverse of PackGroup. It refuses the metadata group and
// any id that PackGroup could not have produced.
func UnpackGroup(group uint64) (PartitionGroup, error) {
	if group == MetadataGroup {
		return PartitionGroup{}, fmt.Errorf("wire: group %#x is the metadata plane", group)
	}
	if group>>52 != 0 {
		return PartitionGroup{}, fmt.Errorf("wire: group %#x has bits above 52 set", group)
	}
	p := PartitionGroup{
		Stream:    uint32(group >> 32),
		Topic:     uint32(group>>20) & (TopicIDLimit - 1),
		Partition: uint32(group) & (1<<20 - 1),
	}
	if p.Partition >= PartitionIDLimit {
		return PartitionGroup{}, fmt.Errorf("wire: group %#x has partition %d out of range", group, p.Partition)
	}
	return p, nil
}

// IsMetadataGroup reports whether group is the metadata plane.
func IsMetadataGroup(group uint64) bool { return group == MetadataGroup }

// DescribeGroup returns a readable name for a group id: "metadata", or
// "stream S topic T partition P", or "invalid group" for ids no packing
// produces.
func DescribeGroup(group uint64) string {
	if group == MetadataGroup {
		return "metadata"
	}
	p, err := UnpackGroup(group)
	if err != nil {
		return "invalid group"
	}
	return fmt.Sprintf("stream %d topic %d partition %d", p.Stream, p.Topic, p.Partition)
}
