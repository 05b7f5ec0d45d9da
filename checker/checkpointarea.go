package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/checker/diskread"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// The checkpoint areas (docs/disk-format.md 14.4, DEVIATIONS.md 61), read
// from each replica's durable image by checker/diskread. A replica writes
// its next checkpoint to the area that does not hold the durable one,
// syncs it, and only then records it in the superblock, so that a crash at
// any point leaves the superblock naming an area that holds its
// checkpoint intact. The promises, each checked where it is made:
//
//   - when the superblock records a checkpoint (EventCheckpoint, and an
//     install's EventInstalled), the superblock a restart would read names
//     it, and an area holds it intact: its header sealed, naming the op
//     and the payload's checksum, and snapshot.bin verifying, with the
//     payload the replica reports ("checkpoint recorded before durable"),
//     and the header names the op's committed prepare identity and
//     timestamp, what a restart chains op+1 to ("checkpoint labelled with
//     another op");
//   - that area is not the one that held the checkpoint the superblock
//     named before: writing there first would have left a crash in between
//     with a superblock naming a checkpoint no area holds ("durable
//     checkpoint overwritten");
//   - at a crash, the superblock's checkpoint is in an area, intact
//     ("checkpoint recorded before durable");
//   - a restart restores the checkpoint the superblock names, and finds
//     one unreadable only where a fault touched its area ("checkpoint
//     misread at recovery").
//
// A fault the atlas allows on an area (a latent error, corruption, a
// misdirected write) excuses its loss: DEVIATIONS.md 61's replica then
// rebuilds its state from op 1 and keeps the record.

// Names of the checkpoint areas' violations.
const (
	CheckpointNotDurable  = "checkpoint recorded before durable"  // the superblock names a checkpoint no area holds intact
	CheckpointOverwritten = "durable checkpoint overwritten"      // a checkpoint was written over the area of the one the superblock named
	CheckpointMisread     = "checkpoint misread at recovery"      // a restart restored another checkpoint than its superblock names, or lost one its disk holds
	CheckpointMislabelled = "checkpoint labelled with another op" // a recorded checkpoint's area names another prepare than its op's committed one
)

// Probes of the replica the checks hear (replica/replica.go open,
// statetransfer.go tryInstall).
const (
	probeCheckpointUnreadable = "checkpoint unreadable at recovery: the state is rebuilt below it"
	probeTransferNotNeeded    = "state transfer no longer needed: the replica caught up"
)

// durableCheckpoint is what the checker last found a replica's superblock
// to name: the checkpoint's op and the area holding it (-1: unknown, or
// in no area intact).
type durableCheckpoint struct {
	op   uint64
	area int
	// lost: the op of a recorded checkpoint known to be in no area intact,
	// excused by a fault: the replica keeps the record (DEVIATIONS.md 61)
	// and may write its next checkpoint over the damaged area.
	lost uint64
}

// checkpointRecorded checks the promise of a superblock that now records
// the checkpoint at op with payload (EventCheckpoint, EventInstalled), and
// the client table the replica offers with it (ict2.go).
func (c *Checker) checkpointRecorded(r uint8, what string, op uint64, payload, clientTable []byte) {
	c.clientTableArtifact(r, what, op, clientTable)
	a := c.art.src
	if a == nil || c.violation != nil {
		return
	}
	peek, zone := a.Peek(r), a.CheckpointZone()
	sb, err := diskread.ReadSuperblock(a.Geometry(r), peek)
	if err != nil {
		return // a superblock that does not read: "sent before durable" names that
	}
	sum := wire.SnapshotChecksum(payload)
	if sb.State.CheckpointOp != op || sb.State.CheckpointChecksum != sum {
		c.fail(Violation{Name: CheckpointNotDurable, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d reported %s at op %d (payload checksum %s), but the superblock a restart now reads names the checkpoint at op %d (checksum %s)",
				r, what, op, sum, sb.State.CheckpointOp, sb.State.CheckpointChecksum)})
		return
	}
	found, area := diskread.FindCheckpoint(zone, peek, op, sum)
	prev := c.art.checkpoints[r]
	if found < 0 {
		if c.areaFaulted(r, 0) || c.areaFaulted(r, 1) {
			c.art.checkpoints[r] = durableCheckpoint{op: op, area: -1, lost: op}
			return
		}
		c.fail(Violation{Name: CheckpointNotDurable, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d's superblock records %s at op %d, but no area of its disk holds it intact (%s), and no fault touched them",
				r, what, op, c.areasFound(r))})
		return
	}
	if h, ok := c.Header(op); ok {
		var p wire.PrepareHeader
		p.Decode(&h)
		if area.Identity != p.Checksum || area.Timestamp != p.Timestamp {
			c.fail(Violation{Name: CheckpointMislabelled, Replicas: []uint8{r}, Ops: []uint64{op},
				Detail: fmt.Sprintf("replica %d's superblock records %s at op %d, whose area %d names the prepare %s stamped %d, but op %d committed as %s stamped %d",
					r, what, op, found, area.Identity, area.Timestamp, op, p.Checksum, p.Timestamp)})
			return
		}
	}
	if string(area.Payload) != string(payload) {
		c.fail(Violation{Name: CheckpointNotDurable, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d's superblock records %s at op %d, and its area %d holds a payload of %d bytes other than the %d it reports",
				r, what, op, found, len(area.Payload), len(payload))})
		return
	}
	if prev.area == found && prev.op != op && prev.lost != prev.op {
		c.fail(Violation{Name: CheckpointOverwritten, Replicas: []uint8{r}, Ops: []uint64{prev.op, op},
			Detail: fmt.Sprintf("replica %d wrote %s at op %d into area %d, which held the checkpoint at op %d its superblock named until then: a crash before the superblock write would have left a superblock naming a checkpoint no area holds",
				r, what, op, found, prev.op)})
		return
	}
	c.art.checkpoints[r] = durableCheckpoint{op: op, area: found}
}

// checkpointRestored checks a restart's restore of the checkpoint at op
// (EventRestored): it is the one the superblock names; and the client
// table the replica offers with it (ict2.go).
func (c *Checker) checkpointRestored(r uint8, op uint64, payload, clientTable []byte) {
	c.clientTableArtifact(r, "the checkpoint it restored", op, clientTable)
	a := c.art.src
	if a == nil || c.violation != nil {
		return
	}
	peek := a.Peek(r)
	sb, err := diskread.ReadSuperblock(a.Geometry(r), peek)
	if err != nil {
		return
	}
	sum := wire.SnapshotChecksum(payload)
	if sb.State.CheckpointOp != op || sb.State.CheckpointChecksum != sum {
		c.fail(Violation{Name: CheckpointMisread, Replicas: []uint8{r}, Ops: []uint64{op, sb.State.CheckpointOp},
			Detail: fmt.Sprintf("replica %d restored the checkpoint at op %d (payload checksum %s), but its superblock names the checkpoint at op %d (checksum %s)",
				r, op, sum, sb.State.CheckpointOp, sb.State.CheckpointChecksum)})
		return
	}
	c.art.checkpoints[r] = c.findDurable(r, sb.State)
}

// checkpointProbe hears the replica's probes about its checkpoint: one
// found unreadable at recovery must be in no area intact, or in one a
// fault touched; after an install that was no longer needed the
// superblock may name the new checkpoint.
func (c *Checker) checkpointProbe(r uint8, probe string) {
	a := c.art.src
	if a == nil || c.violation != nil || probe != probeCheckpointUnreadable && probe != probeTransferNotNeeded {
		return
	}
	sb, err := diskread.ReadSuperblock(a.Geometry(r), a.Peek(r))
	if err != nil {
		c.art.checkpoints[r] = durableCheckpoint{area: -1}
		return
	}
	d := c.findDurable(r, sb.State)
	if prev := c.art.checkpoints[r]; prev.lost == d.op {
		d.lost = d.op
	}
	if probe == probeCheckpointUnreadable && d.area < 0 {
		// Lost, and excused: the crash before it found the checkpoint
		// intact or its loss excused. The replica keeps the record and
		// may write its next checkpoint over the area that held it.
		d.lost = d.op
	}
	c.art.checkpoints[r] = d
	if probe != probeCheckpointUnreadable || d.area < 0 {
		return
	}
	c.fail(Violation{Name: CheckpointMisread, Replicas: []uint8{r}, Ops: []uint64{d.op},
		Detail: fmt.Sprintf("replica %d found the checkpoint its superblock names (op %d) unreadable at recovery, but its area %d holds it intact and no fault touched it",
			r, d.op, d.area)})
}

// checkpointCrashed checks r's durable image at its crash: what its
// restart will read. The superblock's checkpoint must be in an area,
// intact, unless a fault excuses it.
func (c *Checker) checkpointCrashed(r uint8) {
	a := c.art.src
	if a == nil || c.violation != nil {
		return
	}
	prev := c.art.checkpoints[r]
	c.art.checkpoints[r] = durableCheckpoint{area: -1, lost: prev.lost}
	sb, err := diskread.ReadSuperblock(a.Geometry(r), a.Peek(r))
	if err != nil || sb.State.CheckpointOp == 0 {
		return
	}
	d := c.findDurable(r, sb.State)
	if d.lost == d.op {
		c.art.checkpoints[r].lost = d.op
	}
	if d.area >= 0 || d.lost == d.op || prev.lost == d.op {
		return
	}
	c.fail(Violation{Name: CheckpointNotDurable, Replicas: []uint8{r}, Ops: []uint64{d.op},
		Detail: fmt.Sprintf("replica %d crashed with a superblock naming the checkpoint at op %d, which no area of its disk holds intact (%s), and no fault touched them",
			r, d.op, c.areasFound(r))})
}

// findDurable finds the checkpoint state names: its area when one holds it
// intact and no fault touched that area (a replica may have read it
// otherwise), or -1, with the op marked lost when a fault excuses that.
func (c *Checker) findDurable(r uint8, state wire.VsrState) durableCheckpoint {
	d := durableCheckpoint{op: state.CheckpointOp, area: -1}
	if d.op == 0 {
		return d
	}
	found, area := diskread.FindCheckpoint(c.art.src.CheckpointZone(), c.art.src.Peek(r), d.op, state.CheckpointChecksum)
	switch {
	case found >= 0 && !c.checkpointFaulted(r, found, area):
		d.area = found
	case found >= 0 || c.areaFaulted(r, 0) || c.areaFaulted(r, 1):
		d.lost = d.op
	}
	return d
}

// checkpointFaulted reports whether a fault touched the sectors of area a
// that the checkpoint read there occupies.
func (c *Checker) checkpointFaulted(r uint8, a int, area diskread.CheckpointArea) bool {
	first, count := c.art.src.CheckpointZone().Sectors(a, area)
	return c.art.src.Faulted(r, first, count)
}

// areaFaulted reports whether a fault touched area a of r's device.
func (c *Checker) areaFaulted(r uint8, a int) bool {
	z := c.art.src.CheckpointZone()
	return c.art.src.Faulted(r, z.FirstSector+uint64(a)*z.AreaSectors, z.AreaSectors)
}

// areasFound describes what r's two areas hold, for a violation's detail.
func (c *Checker) areasFound(r uint8) string {
	s := ""
	for a := range diskread.CheckpointAreas {
		area := diskread.ReadCheckpointArea(c.art.src.CheckpointZone(), c.art.src.Peek(r), a)
		if a > 0 {
			s += "; "
		}
		if area.Valid {
			s += fmt.Sprintf("area %d: the checkpoint at op %d", a, area.Op)
		} else {
			s += fmt.Sprintf("area %d: %s", a, area.Problem)
		}
	}
	return s
}

// checkpointRead checks the checkpoint a restart read back, before it
// restores it (EventCheckpointRead): the superblock's, with the prepare
// identity and timestamp its area's header holds by the checker's own
// reading.
func (c *Checker) checkpointRead(r uint8, op uint64, payload []byte, identity wire.U128, timestamp uint64) {
	a := c.art.src
	if a == nil || c.violation != nil {
		return
	}
	sb, err := diskread.ReadSuperblock(a.Geometry(r), a.Peek(r))
	if err != nil {
		return
	}
	sum := wire.SnapshotChecksum(payload)
	if sb.State.CheckpointOp != op || sb.State.CheckpointChecksum != sum {
		return // checkpointRestored names it
	}
	found, area := diskread.FindCheckpoint(a.CheckpointZone(), a.Peek(r), op, sum)
	if found < 0 || c.checkpointFaulted(r, found, area) {
		return
	}
	if area.Identity != identity || area.Timestamp != timestamp {
		c.fail(Violation{Name: CheckpointMisread, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d read back the checkpoint at op %d as the prepare %s stamped %d, but its area %d's header holds %s stamped %d",
				r, op, identity, timestamp, found, area.Identity, area.Timestamp)})
	}
}
