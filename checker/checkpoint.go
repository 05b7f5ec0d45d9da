package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// checkpointRecord is the first snapshot seen at one checkpoint op.
type checkpointRecord struct {
	checksum wire.U128
	replica  uint8
	bytes    int
}

// checkpointed: replica r's superblock now records its checkpoint at op.
// The state at an op is a function of the log up to it, and the snapshot's
// encoding is canonical, so every replica's snapshot at op is the same
// bytes; and a replica checkpoints only what it applied.
func (c *Checker) checkpointed(r uint8, op uint64, payload []byte) {
	c.note("replica %d checkpointed op %d (%d bytes)", r, op, len(payload))
	if op == 0 || op >= c.next[r] {
		c.fail(Violation{Name: CheckpointAhead, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d checkpointed the state at op %d with op %d next to apply", r, op, c.next[r])})
		return
	}
	c.sameCheckpoint(r, op, payload)
}

// restoredCheckpoint: replica r restarted from its checkpoint at op. It
// applies op+1 next, and what it restored is the state every replica had at
// op. The checkpoint is of an op it applied, or of a state a transfer
// brought whose superblock write the crash left on the disk before it was
// durable (the crash model lets an unsynced write survive): either way a
// committed op.
func (c *Checker) restoredCheckpoint(r uint8, op uint64, payload []byte) {
	c.note("replica %d restored the checkpoint at op %d (%d bytes)", r, op, len(payload))
	if op == 0 || (op > c.high[r] && op > uint64(len(c.canon))) {
		c.fail(Violation{Name: CheckpointAhead, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d restored a state at op %d, but never applied beyond op %d, and ops up to %d are committed",
				r, op, c.high[r], len(c.canon))})
		return
	}
	c.high[r] = max(c.high[r], op)
	if c.next[r] != 1 {
		panic(fmt.Sprintf("checker: replica %d restored a checkpoint with op %d next, not after a crash", r, c.next[r]))
	}
	c.next[r] = op + 1
	c.sameCheckpoint(r, op, payload)
}

func (c *Checker) sameCheckpoint(r uint8, op uint64, payload []byte) {
	sum := wire.SnapshotChecksum(payload)
	prev, ok := c.checkpoints[op]
	if !ok {
		c.checkpoints[op] = checkpointRecord{checksum: sum, replica: r, bytes: len(payload)}
		c.snapshotMatchesModel(r, op, payload)
		return
	}
	if prev.checksum != sum {
		c.fail(Violation{Name: CheckpointDiverged, Replicas: []uint8{prev.replica, r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("the snapshot at op %d is %d bytes summing to %s on replica %d, %d bytes summing to %s on replica %d",
				op, prev.bytes, prev.checksum, prev.replica, len(payload), sum, r)})
	}
}

// installed: replica r installed the state at op that a state transfer
// brought. It had applied less (an install never applies an op twice), op
// is committed, and the state is the one every replica's checkpoint at op
// holds.
func (c *Checker) installed(r uint8, op uint64, payload []byte) {
	c.note("replica %d installed the state at op %d (%d bytes)", r, op, len(payload))
	if op+1 <= c.next[r] {
		c.fail(Violation{Name: InstallBehind, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d installed the state at op %d with op %d next to apply", r, op, c.next[r])})
		return
	}
	if op > uint64(len(c.canon)) {
		c.fail(Violation{Name: InstallUncommitted, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d installed the state at op %d, but only ops up to %d are committed", r, op, len(c.canon))})
		return
	}
	c.next[r] = op + 1
	c.high[r] = max(c.high[r], op)
	c.sameCheckpoint(r, op, payload)
}
