package clients

import (
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Capacities of the table (wire.md 11: "Client table slots max 65 536;
// configured default 8192").
const (
	CapacityMax        = wire.ClientTableSlotsMax
	CapacityProduction = 8192
	CapacitySim        = 8
	// RingCapacity is how many committed replies an entry keeps.
	RingCapacity = wire.ReplyRingCapacity
)

// RequestAlreadyApplied is the result code of the B-shape refusal for a
// duplicate whose reply aged out of the ring (client-ops.md 2.4).
const RequestAlreadyApplied uint32 = 59

// VerdictKind is what the preflight decided for a request.
type VerdictKind uint8

// The verdicts of CheckRequest (client-ops.md 2.4 step 6.2, after the
// in-flight and caught-up rules).
const (
	// VerdictNew: dispatch the request (decode, project, prepare).
	VerdictNew VerdictKind = iota + 1
	// VerdictReplay: send Verdict.Reply, the cached Reply frame, verbatim.
	VerdictReplay
	// VerdictEvict: send an Eviction with Verdict.Reason (NoSession or
	// SessionTooLow).
	VerdictEvict
	// VerdictDrop: answer nothing (shape E).
	VerdictDrop
	// VerdictAlreadyApplied: the request committed earlier and its reply aged out of
	// the ring. The shell path answers with the B-shape result-only refusal
	// RequestAlreadyApplied (59); the raw consensus-plane path is silent.
	VerdictAlreadyApplied
)

var verdictNames = [...]string{"", "New", "Replay", "Evict", "Drop", "AlreadyApplied"}

// String names the verdict kind.
func (k VerdictKind) String() string {
	if int(k) < len(verdictNames) && k != 0 {
		return verdictNames[k]
	}
	return fmt.Sprintf("VerdictKind(%d)", uint8(k))
}

// Verdict is the answer of CheckRequest.
type Verdict struct {
	Kind VerdictKind
	// Reply is the cached Reply frame to send (Replay only): a copy, exactly
	// the frame's size bytes, the caller's to keep.
	Reply []byte
	// Reason is the eviction reason (Evict only).
	Reason wire.EvictionReason
	// Why says, for Drop, which rule dropped the request (for traces).
	Why string
}

// CommitOutcome says what CommitRequest did with a reply.
type CommitOutcome uint8

// Outcomes of CommitRequest. Only Cached changes the table.
const (
	// Cached: the reply is in the ring and the watermark moved (or stayed, on
	// a second commit of the watermark request).
	Cached CommitOutcome = iota + 1
	// NoEntry: the client has no entry (evicted or logged out while the
	// request was in flight); the reply is sent but not cached.
	NoEntry
	// SkippedRegression: the reply's commit op is older than the entry's
	// newest, or its request number is below the watermark; nothing changes.
	SkippedRegression
)

var outcomeNames = [...]string{"", "Cached", "NoEntry", "SkippedRegression"}

// String names the outcome.
func (o CommitOutcome) String() string {
	if int(o) < len(outcomeNames) && o != 0 {
		return outcomeNames[o]
	}
	return fmt.Sprintf("CommitOutcome(%d)", uint8(o))
}

// Entry is a read-only view of one client's entry.
type Entry struct {
	Client            wire.U128
	Epoch             uint64 // op of the client's latest committed Register
	UserID            uint32
	Watermark         uint64 // highest committed request number; 0 = only registered
	WatermarkChecksum wire.U128
	// LatestCommit is the commit op of the newest cached reply, the eviction
	// key.
	LatestCommit uint64
	// Requests lists the request numbers of the cached replies, oldest
	// first.
	Requests []uint64
	// Slot is the entry's position in the slot array.
	Slot int
}

// cached is one reply of a ring with the header fields the table reads.
type cached struct {
	frame    []byte // the whole stored bytes (ICT2 reply_len bytes)
	request  uint64
	commit   uint64
	checksum wire.U128
}

// wireBytes is what is sent on a replay: the frame's size bytes.
func (c *cached) wireBytes() []byte {
	size := wire.HeaderOf(c.frame).Size()
	return append([]byte(nil), c.frame[:size]...)
}

type entry struct {
	client            wire.U128
	epoch             uint64
	user              uint32
	watermark         uint64
	watermarkChecksum wire.U128
	latestCommit      uint64
	ring              []cached // oldest first; 1..RingCapacity once registered
}

// pushLatest appends c as the newest reply, dropping the oldest at capacity.
func (e *entry) pushLatest(c cached) {
	e.latestCommit = c.commit
	if len(e.ring) == RingCapacity {
		copy(e.ring, e.ring[1:])
		e.ring = e.ring[:RingCapacity-1]
	}
	e.ring = append(e.ring, c)
}

func (e *entry) find(request uint64) (int, bool) {
	for i := range e.ring {
		if e.ring[i].request == request {
			return i, true
		}
	}
	return 0, false
}

// Table is the client table. The zero value is not usable; call New.
type Table struct {
	slots []*entry          // len == capacity; nil = free
	index map[wire.U128]int // client -> slot; lookups only, never iterated
}

// New returns an empty table of capacity slots, 1 <= capacity <= CapacityMax.
func New(capacity int) *Table {
	if capacity < 1 || capacity > CapacityMax {
		panic(fmt.Sprintf("clients: capacity %d outside 1..%d", capacity, CapacityMax))
	}
	return &Table{slots: make([]*entry, capacity), index: make(map[wire.U128]int, capacity)}
}

// Capacity returns the number of slots.
func (t *Table) Capacity() int { return len(t.slots) }

// Len returns the number of registered clients.
func (t *Table) Len() int { return len(t.index) }

func (t *Table) lookup(client wire.U128) (*entry, int, bool) {
	slot, ok := t.index[client]
	if !ok {
		return nil, 0, false
	}
	e := t.slots[slot]
	if e == nil || e.client != client {
		panic(fmt.Sprintf("clients: index says client %s is in slot %d, which holds %v", client, slot, e))
	}
	if len(e.ring) == 0 || len(e.ring) > RingCapacity || e.ring[len(e.ring)-1].commit != e.latestCommit {
		panic(fmt.Sprintf("clients: client %s has %d cached replies, newest commit %d", client, len(e.ring), e.latestCommit))
	}
	return e, slot, true
}

// Lookup returns a view of client's entry.
func (t *Table) Lookup(client wire.U128) (Entry, bool) {
	e, slot, ok := t.lookup(client)
	if !ok {
		return Entry{}, false
	}
	return e.view(slot), true
}

func (e *entry) view(slot int) Entry {
	v := Entry{
		Client: e.client, Epoch: e.epoch, UserID: e.user, Watermark: e.watermark,
		WatermarkChecksum: e.watermarkChecksum, LatestCommit: e.latestCommit, Slot: slot,
		Requests: make([]uint64, len(e.ring)),
	}
	for i := range e.ring {
		v.Requests[i] = e.ring[i].request
	}
	return v
}

// Entries returns every entry in slot order.
func (t *Table) Entries() []Entry {
	out := make([]Entry, 0, len(t.index))
	for slot, e := range t.slots {
		if e != nil {
			out = append(out, e.view(slot))
		}
	}
	return out
}

// checksumsConflict is Iggy's rule: only two nonzero, different checksums
// conflict; 0 means unstamped and matches anything.
func checksumsConflict(stored, received wire.U128) bool {
	return !stored.IsZero() && !received.IsZero() && stored != received
}

// CheckRequest decides what the primary does with a client Request, after
// the caller has handled the two rules that depend on consensus state
// (client-ops.md 2.4 step 6.2): a prepare from the same client already in
// flight, and "not a caught-up primary". h must have passed wire.Validate
// (client != 0; session and request nonzero except for Register).
//
// Register (client-ops.md 5.1 [raw]): VerdictDrop when the client id is
// owned by a different user (the header user_id is the acting user on this
// path), VerdictNew otherwise; a re-register rebinds.
//
// Any other operation, in this order:
//   - no entry: VerdictEvict NoSession;
//   - session < epoch: VerdictEvict SessionTooLow;
//   - session > epoch: VerdictDrop;
//   - request > watermark: VerdictNew;
//   - request == watermark and the stored and received checksums conflict
//     (both nonzero and different): VerdictDrop;
//   - a cached reply for request whose checksum conflicts: VerdictDrop;
//   - a cached reply for request: VerdictReplay with its frame;
//   - otherwise (request <= watermark, reply aged out): VerdictAlreadyApplied.
//
// CheckRequest does not change the table.
func (t *Table) CheckRequest(h wire.RequestHeader) Verdict {
	if h.Client.IsZero() {
		panic("clients: CheckRequest with client 0 (the frame was not validated)")
	}
	if h.Operation == wire.OperationRegister {
		return t.CheckRegister(h.Client, h.UserID)
	}
	e, _, ok := t.lookup(h.Client)
	if bug.RetryAppliedTwice && ok && h.Session == e.epoch && h.Request <= e.watermark {
		return Verdict{Kind: VerdictNew} // canary_retry_applied_twice: a retry dispatched as new
	}
	switch {
	case !ok:
		return Verdict{Kind: VerdictEvict, Reason: wire.EvictionNoSession}
	case h.Session < e.epoch:
		return Verdict{Kind: VerdictEvict, Reason: wire.EvictionSessionTooLow}
	case h.Session > e.epoch:
		return Verdict{Kind: VerdictDrop, Why: fmt.Sprintf("session %d is ahead of epoch %d", h.Session, e.epoch)}
	case h.Request > e.watermark:
		return Verdict{Kind: VerdictNew}
	case h.Request == e.watermark && checksumsConflict(e.watermarkChecksum, h.RequestChecksum):
		return Verdict{Kind: VerdictDrop, Why: fmt.Sprintf("request %d reused with another checksum", h.Request)}
	}
	i, ok := e.find(h.Request)
	switch {
	case ok && checksumsConflict(e.ring[i].checksum, h.RequestChecksum):
		return Verdict{Kind: VerdictDrop, Why: fmt.Sprintf("request %d reused with another checksum", h.Request)}
	case ok:
		return Verdict{Kind: VerdictReplay, Reply: e.ring[i].wireBytes()}
	}
	return Verdict{Kind: VerdictAlreadyApplied}
}

// CheckRegister is the Register part of CheckRequest: Drop when client is
// registered to a user other than userID, New otherwise.
func (t *Table) CheckRegister(client wire.U128, userID uint32) Verdict {
	if e, _, ok := t.lookup(client); ok && e.user != userID {
		return Verdict{Kind: VerdictDrop, Why: fmt.Sprintf("client is owned by user %d, not %d", e.user, userID)}
	}
	return Verdict{Kind: VerdictNew}
}

// replyFields reads and checks a reply frame handed to a commit.
func replyFields(reply []byte) (wire.ReplyHeader, cached) {
	if len(reply) < wire.HeaderSize {
		panic(fmt.Sprintf("clients: a cached reply of %d bytes", len(reply)))
	}
	var h wire.ReplyHeader
	h.Decode(wire.HeaderOf(reply))
	if h.Command != wire.CommandReply || int(h.Size) != len(reply) || h.Status != 0 {
		panic(fmt.Sprintf("clients: not a committed Reply frame: command %v, size %d of %d bytes, status %d",
			h.Command, h.Size, len(reply), h.Status))
	}
	if h.Client.IsZero() {
		panic("clients: a reply for client 0")
	}
	return h, cached{frame: append([]byte(nil), reply...), request: h.Request, commit: h.Commit, checksum: h.RequestChecksum}
}

// CommitRegister applies a committed Register. reply is its cached Reply
// frame (BuildReply of the Register prepare with an empty body): its client
// is the registering client and its commit is the new epoch (the Register's
// op). userID is the prepare's user_id.
//
// A new client takes the lowest free slot, with watermark 0; when the table
// is full the entry with the oldest newest reply (ties: lowest slot) is
// evicted first and returned with evicted = true. A known client is rebound:
// the epoch moves, the user is refreshed, the watermark and the cached
// replies are kept except an older Register reply, which the new one
// replaces.
func (t *Table) CommitRegister(userID uint32, reply []byte) (evictedClient wire.U128, evicted bool) {
	h, c := replyFields(reply)
	if h.Request != 0 || h.Operation != wire.OperationRegister || h.Commit == 0 || h.Commit != h.Op {
		panic(fmt.Sprintf("clients: CommitRegister with a reply for request %d, operation %v, op %d, commit %d",
			h.Request, h.Operation, h.Op, h.Commit))
	}
	epoch := h.Commit
	if e, _, ok := t.lookup(h.Client); ok {
		if epoch <= e.epoch || epoch < e.latestCommit {
			panic(fmt.Sprintf("clients: client %s rebinds at epoch %d, not after epoch %d / commit %d",
				h.Client, epoch, e.epoch, e.latestCommit))
		}
		e.epoch, e.user = epoch, userID
		kept := e.ring[:0]
		for _, r := range e.ring {
			if r.request != 0 {
				kept = append(kept, r)
			}
		}
		clear(e.ring[len(kept):])
		e.ring = kept
		e.pushLatest(c)
		return wire.U128{}, false
	}
	if len(t.index) == len(t.slots) {
		evictedClient, evicted = t.evictOldest(), true
	}
	slot := t.firstFree()
	e := &entry{client: h.Client, epoch: epoch, user: userID, ring: make([]cached, 0, RingCapacity)}
	e.pushLatest(c)
	t.slots[slot] = e
	t.index[h.Client] = slot
	return evictedClient, evicted
}

func (t *Table) firstFree() int {
	for slot, e := range t.slots {
		if e == nil {
			return slot
		}
	}
	panic("clients: no free slot")
}

// evictOldest removes the entry with the lowest latest commit, ties to the
// lowest slot, and returns its client.
func (t *Table) evictOldest() wire.U128 {
	victim := -1
	for slot, e := range t.slots {
		if e != nil && (victim < 0 || e.latestCommit < t.slots[victim].latestCommit) {
			victim = slot
		}
	}
	if victim < 0 {
		panic("clients: evicting from an empty table")
	}
	client := t.slots[victim].client
	t.slots[victim] = nil
	delete(t.index, client)
	return client
}

// CommitRequest caches the reply of a committed metadata op other than
// Register and Logout: a committed Reply frame (BuildReply) whose request is
// nonzero. The watermark moves to the reply's request and its checksum is
// stored; the reply becomes the newest of the ring (the oldest of 5 is
// dropped). A second commit of the watermark request replaces the cached
// reply of that request, and the new one is the newest. See CommitOutcome for
// the cases that change nothing.
func (t *Table) CommitRequest(reply []byte) CommitOutcome {
	h, c := replyFields(reply)
	if h.Request == 0 || h.Operation == wire.OperationRegister || h.Operation == wire.OperationLogout {
		panic(fmt.Sprintf("clients: CommitRequest with request %d, operation %v", h.Request, h.Operation))
	}
	e, _, ok := t.lookup(h.Client)
	switch {
	case !ok:
		return NoEntry
	case h.Commit < e.latestCommit, h.Request < e.watermark:
		return SkippedRegression
	}
	if h.Request == e.watermark {
		// A second commit of the watermark request (a retry that slipped
		// past the in-flight check): its new reply replaces the old one and
		// becomes the newest. Iggy overwrites the old reply in place, which
		// leaves a ring whose last reply is not its newest, and a table that
		// no longer survives an ICT2 round trip (Decode takes the eviction key
		// from the last reply).
		if i, found := e.find(h.Request); found {
			e.ring = append(e.ring[:i], e.ring[i+1:]...)
		}
	}
	e.pushLatest(c)
	e.watermark = h.Request
	e.watermarkChecksum = h.RequestChecksum
	return Cached
}

// CommitLogout applies a committed Logout: client's entry is removed. It
// reports whether there was one.
func (t *Table) CommitLogout(client wire.U128) bool {
	_, slot, ok := t.lookup(client)
	if !ok {
		return false
	}
	t.slots[slot] = nil
	delete(t.index, client)
	return true
}

// Clone returns an independent copy of t (cached frames are never mutated
// in place, so they are shared).
func (t *Table) Clone() *Table {
	c := &Table{slots: make([]*entry, len(t.slots)), index: make(map[wire.U128]int, len(t.slots))}
	for slot, e := range t.slots {
		if e == nil {
			continue
		}
		ce := *e
		ce.ring = append(make([]cached, 0, RingCapacity), e.ring...)
		c.slots[slot] = &ce
		c.index[e.client] = slot
	}
	return c
}

// RegisterReply returns the cached reply of client's Register at epoch, if
// that is still the client's session.
func (t *Table) RegisterReply(client wire.U128, epoch uint64) ([]byte, bool) {
	e, _, ok := t.lookup(client)
	if !ok || e.epoch != epoch {
		return nil, false
	}
	i, ok := e.find(0)
	if !ok {
		return nil, false
	}
	return e.ring[i].wireBytes(), true
}
