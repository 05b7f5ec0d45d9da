package checker

import (
	"fmt"
	"math/bits"

	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// The promises a replica makes that only a quiet cluster can hold it to.
// Once the liveness phase heals the core (Quiet), no frame between core
// replicas is lost, so what a replica is told decides what it does next;
// a stall then has a first event where a replica was told enough and did
// not act, and the checker names it there instead of leaving the run to
// end as "the core did not converge".

// Names of the liveness promises.
const (
	// QuorumNotCommitted: a Normal primary held its own acknowledgement
	// and a replication quorum's PrepareOks of the next op to commit, and
	// did not commit it.
	QuorumNotCommitted = "acknowledged by a quorum, not committed"
)

// tickNsAssumed is the simulator's tick (10 ms of virtual time): Quiet
// is not told it, and dates the ops next to commit then as long due.
const tickNsAssumed = 10_000_000

// quietTicksGrace: how long a promise may take once it is due (frames are
// handled within the tick they arrive in; a few ticks spare the order of
// events within one).
const quietTicksGrace = 3

// quietNextGraceTicks: how long an op may wait once it is the next to
// commit (a state transfer's install made it so: the installed state is
// written durably before the ops above it apply).
const quietNextGraceTicks = 300

// quietAck is what the checker knows of one op in one view of a primary:
// the identity its own acknowledgement named, the replicas whose
// acknowledgements reached it, and since when they make a quorum.
type quietAck struct {
	identity wire.U128
	acks     uint64
	quorumNs int64 // 0 until a quorum
}

type quietKey struct {
	view uint32
	op   uint64
}

// quietState is the liveness phase's bookkeeping (nil before it).
type quietState struct {
	startNs int64
	core    []bool
	status  []vsr.Status // the metadata group's, by replica, as last reported
	view    []uint32
	acks    map[quietKey]*quietAck // looked up only
	// nextOp[r], nextNs[r]: the op r was to commit next when a tick last
	// looked, and since when (a quorum of an op it could not commit yet,
	// behind a state transfer, is due only from then).
	nextOp []uint64
	nextNs []int64
}

// Quiet tells the checker the liveness phase began: faults are off, and
// the replicas core marks are healed and connected.
func (c *Checker) Quiet(nowNs int64, core []bool) {
	c.nowNs = nowNs
	q := &quietState{startNs: nowNs, core: append([]bool(nil), core...), status: make([]vsr.Status, c.replicas),
		view: make([]uint32, c.replicas), acks: map[quietKey]*quietAck{}, nextOp: make([]uint64, c.replicas), nextNs: make([]int64, c.replicas)}
	copy(q.status, c.lastStatus)
	copy(q.view, c.lastView)
	copy(q.nextOp, c.next)
	for r := range q.nextNs {
		q.nextNs[r] = nowNs - (quietNextGraceTicks+1)*tickNsAssumed
	}
	c.quiet = q
}

// quorumReplication is wire.md 11's quorum_replication for n replicas.
func quorumReplication(n int) int {
	if n == 2 {
		return 2
	}
	return min((n+1)/2, 3)
}

// quietOwnAck: a primary counted its own acknowledgement (EventAcked).
func (c *Checker) quietOwnAck(r uint8, g vsr.Event) {
	if c.quiet == nil || g.Group != wire.MetadataGroup {
		return
	}
	k := quietKey{g.View, g.Op}
	a := c.quiet.acks[k]
	if a == nil {
		a = &quietAck{}
		c.quiet.acks[k] = a
	}
	a.identity = g.Header.Checksum()
	c.quietCount(a, r)
}

// Delivered tells the checker a frame reached replica to from replica
// from (before to handles it). A frame the receiver must refuse (wire.md's
// receiver rules: a bit the network flipped in its size or under its seal)
// told the replica nothing: counting it would hold a primary to a quorum it
// never heard (VOPR seed 3115656313: the PrepareOk that made op 12's
// quorum arrived with its size flipped, and the replica closed the
// connection on it).
func (c *Checker) Delivered(nowNs int64, from, to uint8, frame []byte) {
	if c.violation != nil || len(frame) < wire.HeaderSize || c.receiverRefuses(frame) {
		return
	}
	c.nowNs = nowNs
	c.promiseDelivered(from, to, frame)
	q := c.quiet
	if q == nil || frame[wirespec.OffCommand] != wirespec.PrepareOk {
		return
	}
	if wirespec.U64(frame, wirespec.OffPrepareOkGroup) != wire.MetadataGroup || int(to) >= c.replicas || !q.core[from] {
		return
	}
	view := wirespec.U32(frame, wirespec.OffView)
	if int(view)%c.replicas != int(to) {
		return
	}
	k := quietKey{view, wirespec.U64(frame, wirespec.OffPrepareOkOp)}
	a := q.acks[k]
	if a == nil {
		a = &quietAck{}
		q.acks[k] = a
	}
	id := wirespec.Get128(frame, wirespec.OffPrepareOkChecksum)
	if a.identity.IsZero() || (wire.U128{Lo: id.Lo, Hi: id.Hi}) == a.identity {
		if a.identity.IsZero() {
			a.identity = wire.U128{Lo: id.Lo, Hi: id.Hi}
		}
		c.quietCount(a, from)
	}
}

func (c *Checker) quietCount(a *quietAck, r uint8) {
	a.acks |= 1 << r
	if a.quorumNs == 0 && bits.OnesCount64(a.acks) >= quorumReplication(c.replicas) {
		a.quorumNs = c.nowNs
	}
}

// quietStatus follows a replica's metadata status.
func (c *Checker) quietStatus(r uint8, s vsr.Status, view uint32) {
	c.lastStatus[r], c.lastView[r] = s, view
	if c.quiet != nil {
		c.quiet.status[r], c.quiet.view[r] = s, view
	}
}

// QuietTick checks the quiet cluster's promises that came due: a Normal
// core primary whose next op to commit has its own acknowledgement and a
// quorum's, for more than the grace, broke one.
func (c *Checker) QuietTick(nowNs, tickNs int64) {
	q := c.quiet
	if q == nil || c.violation != nil {
		return
	}
	c.nowNs = nowNs
	for r := 0; r < c.replicas; r++ {
		view := q.view[r]
		if !q.core[r] || q.status[r] != vsr.StatusNormal || int(view)%c.replicas != r {
			continue
		}
		op := c.next[r]
		if q.nextOp[r] != op {
			q.nextOp[r], q.nextNs[r] = op, nowNs
		}
		a := q.acks[quietKey{view, op}]
		if a == nil || a.quorumNs == 0 || a.acks&(1<<r) == 0 || nowNs-a.quorumNs <= quietTicksGrace*tickNs ||
			nowNs-q.nextNs[r] <= quietNextGraceTicks*tickNs {
			continue
		}
		c.fail(Violation{Name: QuorumNotCommitted, Liveness: true, Replicas: []uint8{uint8(r)}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d, the Normal primary of view %d, has held its own and %d replicas' acknowledgements of op %d %s (replicas %s) since %.6f s, a replication quorum of %d, and has not committed it",
				r, view, bits.OnesCount64(a.acks)-1, op, a.identity, replicaSet(a.acks, c.replicas), float64(a.quorumNs)/1e9, quorumReplication(c.replicas))})
		return
	}
	c.promisesTick(tickNs)
}

func replicaSet(mask uint64, n int) string {
	s := "{"
	for i := 0; i < n; i++ {
		if mask&(1<<i) != 0 {
			if len(s) > 1 {
				s += ","
			}
			s += fmt.Sprint(i)
		}
	}
	return s + "}"
}

// OpenRefused names a replica that could not open its own disk: the fault
// model never leaves a disk a correct replica cannot open (the superblock
// is read by quorum, a damaged journal slot is repaired from its peers).
const OpenRefused = "disk refused at recovery"

// OpenFailed tells the checker replica r's restart failed to open its disk
// with err.
func (c *Checker) OpenFailed(nowNs int64, r uint8, err error) {
	c.nowNs = nowNs
	own := "the checker's own reading of its superblock fails too"
	if c.disks != nil {
		if view, logView, derr := c.disks.DurableView(r); derr == nil {
			own = fmt.Sprintf("the checker's own reading of its superblock finds view %d log_view %d", view, logView)
		} else {
			own += ": " + derr.Error()
		}
	}
	c.fail(Violation{Name: OpenRefused, Replicas: []uint8{r},
		Detail: fmt.Sprintf("replica %d could not open its disk: %v (%s)", r, err, own)})
}

// quietProbe judges a replica's probe: a state transfer's artifact that
// passed its manifest's checksum and does not decode was read wrong, in any
// phase (a chunk corrupted in flight, or a sector that rotted under the
// server's checkpoint, fails the checksum instead; the checkpoints served
// are checked against the model as they are written). Never seen in a
// clean campaign.
func (c *Checker) quietProbe(r uint8, probe string) {
	if c.violation != nil {
		return
	}
	if probe == unknownGroupProbe {
		c.groupUnknown(r)
	}
	switch probe {
	case "state transfer failed: an artifact does not decode", "partition state transfer failed: an artifact does not decode":
		// Not "an artifact failed its checksum": that is what faults do.
		c.fail(Violation{Name: TransferRefused, Replicas: []uint8{r},
			Detail: fmt.Sprintf("replica %d reports %q: it took an artifact as the one its manifest's length and checksum vouch for (the checker read that artifact as its model's state when it was checkpointed), and the bytes it took do not decode: taken unchecked, or checked against the wrong entry", r, probe)})
	}
}

// TransferRefused: a state transfer took an artifact as vouched for by its
// manifest, and the artifact does not decode.
const TransferRefused = "transferred artifact does not decode"
