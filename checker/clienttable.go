package checker

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// The checker's own model of the client table (client-ops.md 6.1, 6.2),
// applied to the canonical log: which clients hold a session at each op,
// with which epoch, and which client each Register evicts from a full
// table (the entry whose newest reply has the oldest commit op, ties to
// the lowest slot). Every Eviction a replica sends for a session reason is
// held to it: a replica that evicts the wrong client, or evicts a live
// session, is named at the eviction.

// Names of the client table's violations.
const (
	EvictedWrongSession = "wrong session evicted"      // a full table's Register evicted another client than the model's
	EvictedLiveSession  = "eviction of a live session" // a replica refused a request with NoSession while the model holds the session
	EvictedNoneWas      = "eviction nobody owed"       // a Register evicted a client though the model's table had room
)

// Eviction reasons (client-ops.md 6.6) the model decides.
const (
	reasonNoSession     = 1
	reasonSessionTooLow = 7
)

type tableEntry struct {
	client    wire.U128
	epoch     uint64
	watermark uint64
	// watermarkChecksum: the request_checksum of the watermark request
	// (client-ops.md 6.2; wire.md 8.3's ICT2 field), kept on a rebind.
	watermarkChecksum wire.U128
	latestCommit      uint64
}

// sessionMark is one change of a client's session: from op on it holds
// epoch (present) or none.
type sessionMark struct {
	op      uint64
	present bool
	epoch   uint64
}

type tableModel struct {
	slots     []*tableEntry
	index     map[wire.U128]int             // looked up only
	history   map[wire.U128][]sessionMark   // looked up only
	evictions map[uint64]wire.U128          // the client the Register at op evicted; looked up only
	pending   map[uint8]pendingEvictionNote // per replica; looked up only
}

// pendingEvictionNote is an Eviction a replica sent while it applied op
// (or refused a request just after applying op-1): which it was tells
// once its next event shows whether it was inside the commit.
type pendingEvictionNote struct {
	client   wire.U128
	reason   wire.EvictionReason
	op       uint64 // the op the replica applies next
	inCommit bool   // the op's reply followed: the eviction was the commit's
}

// SetClientTableCapacity gives the model the replicas' client table size;
// without it the model does not run.
func (c *Checker) SetClientTableCapacity(slots int) {
	if slots < 1 {
		panic(fmt.Sprintf("checker: client table of %d slots", slots))
	}
	c.table = &tableModel{slots: make([]*tableEntry, slots), index: map[wire.U128]int{},
		history: map[wire.U128][]sessionMark{}, evictions: map[uint64]wire.U128{}, pending: map[uint8]pendingEvictionNote{}}
}

// tableApply applies a canonical op to the model.
func (t *tableModel) apply(p *wire.PrepareHeader) {
	if t == nil || p.Client.IsZero() {
		return
	}
	slot, ok := t.index[p.Client]
	switch p.Operation {
	case wire.OperationRegister:
		if ok {
			e := t.slots[slot]
			e.epoch, e.latestCommit = p.Op, p.Op
			t.mark(p.Client, p.Op, true, p.Op)
			return
		}
		if len(t.index) == len(t.slots) {
			victim := -1
			for s, e := range t.slots {
				if e != nil && (victim < 0 || e.latestCommit < t.slots[victim].latestCommit) {
					victim = s
				}
			}
			gone := t.slots[victim].client
			t.slots[victim] = nil
			delete(t.index, gone)
			t.mark(gone, p.Op, false, 0)
			t.evictions[p.Op] = gone
		}
		free := 0
		for t.slots[free] != nil {
			free++
		}
		t.slots[free] = &tableEntry{client: p.Client, epoch: p.Op, latestCommit: p.Op}
		t.index[p.Client] = free
		t.mark(p.Client, p.Op, true, p.Op)
	case wire.OperationLogout:
		if ok {
			t.slots[slot] = nil
			delete(t.index, p.Client)
			t.mark(p.Client, p.Op, false, 0)
		}
	default:
		if !ok || !p.Operation.IsMetadata() {
			return
		}
		if e := t.slots[slot]; p.Request >= e.watermark {
			e.watermark, e.watermarkChecksum, e.latestCommit = p.Request, p.RequestChecksum, p.Op
		}
	}
}

func (t *tableModel) mark(client wire.U128, op uint64, present bool, epoch uint64) {
	t.history[client] = append(t.history[client], sessionMark{op: op, present: present, epoch: epoch})
}

// sessionAt is the client's session once op is applied.
func (t *tableModel) sessionAt(client wire.U128, op uint64) (epoch uint64, present bool) {
	h := t.history[client]
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].op <= op {
			return h[i].epoch, h[i].present
		}
	}
	return 0, false
}

// evicted notes an Eviction replica r sent (replica.EventEviction).
func (c *Checker) evicted(e replica.Event) {
	t := c.table
	if t == nil {
		return
	}
	c.settleEviction(e.Replica)
	if e.Reason != reasonNoSession && e.Reason != reasonSessionTooLow {
		return
	}
	t.pending[e.Replica] = pendingEvictionNote{client: e.Client, reason: e.Reason, op: c.next[e.Replica]}
}

// tableEvent sees every event of replica r after an Eviction: the reply
// of the op it was applying marks the eviction as the commit's, the op's
// commit checks it against the model's Register, and anything else
// settles it as a refusal of a request.
func (c *Checker) tableEvent(r uint8, e replica.Event) {
	t := c.table
	if t == nil {
		return
	}
	p, ok := t.pending[r]
	if !ok {
		return
	}
	switch {
	case e.Kind == replica.EventReply && e.PartitionGroup == 0 && e.Op == p.op:
		p.inCommit = true
		t.pending[r] = p
	case e.Kind == replica.EventEviction:
		// evicted settles it
	default:
		c.settleEviction(r)
	}
}

// settleEviction judges replica r's pending Eviction, if any.
func (c *Checker) settleEviction(r uint8) {
	t := c.table
	p, ok := t.pending[r]
	if !ok || c.violation != nil {
		return
	}
	delete(t.pending, r)
	if p.inCommit {
		// Checked when the op's commit comes (tableCommitted); an op not
		// committed is not judged.
		return
	}
	applied := p.op - 1
	if applied > uint64(len(c.canon)) {
		return
	}
	epoch, present := t.sessionAt(p.client, applied)
	switch {
	case p.reason == reasonNoSession && present:
		c.fail(Violation{Name: EvictedLiveSession, Replicas: []uint8{r}, Ops: []uint64{applied},
			Detail: fmt.Sprintf("replica %d, having applied op %d, evicted client %s with NoSession; the client table holds its session of epoch %d then",
				r, applied, p.client, epoch)})
	case p.reason == reasonSessionTooLow && !present:
		c.fail(Violation{Name: EvictedLiveSession, Replicas: []uint8{r}, Ops: []uint64{applied},
			Detail: fmt.Sprintf("replica %d, having applied op %d, evicted client %s with SessionTooLow; the client table holds no session of it then (NoSession)",
				r, applied, p.client)})
	}
}

// tableCommitted runs when replica r committed op: an Eviction it sent
// while applying it must be the one the model's Register at op makes.
func (c *Checker) tableCommitted(r uint8, op uint64) {
	t := c.table
	if t == nil {
		return
	}
	p, ok := t.pending[r]
	if !ok || !p.inCommit || p.op != op {
		return
	}
	delete(t.pending, r)
	want, evicts := t.evictions[op]
	switch {
	case !evicts:
		c.fail(Violation{Name: EvictedNoneWas, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d evicted client %s applying op %d; in the model the table had room, or op %d is not a new Register", r, p.client, op, op)})
	case want != p.client:
		c.fail(Violation{Name: EvictedWrongSession, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d's Register at op %d evicted client %s; the entry whose newest reply is oldest (ties to the lowest slot) is client %s's",
				r, op, p.client, want)})
	}
}
