// Package transfer holds a replica's checkpoints and the sessions of state
// transfer, for the metadata plane and the partition plane. A checkpoint is
// the durable snapshot of the metadata plane's state at an op, written in
// two areas of the device in turn so that a crash at any point leaves the
// old checkpoint or the new one, never a mix (../../../shared/spec/wire.md
// 8.2). A Server keeps the offers a replica made; a Fetch is a receiver's
// lockstep session with one server (wire.md 5.11-5.14, 8.1; cluster.mdx
// "State transfer").
//
// A checkpoint becomes the replica's only when the superblock records it
// (checkpoint_op and checkpoint_checksum, wire.md 9.2); until then the area
// written is just bytes. The package knows nothing of what the snapshot
// says: it stores, sends and verifies opaque artifacts. A partition offer
// is the exception: NewPartitionOffer cuts a partition's batches into
// segment logs and DecodePartitionOffer walks them back (wire.md 8.4, 8.5).
package transfer
