package refmodel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
	"pgregory.net/rapid"
)

// The differential tests run every drawn request through the replica's path
// (metadata.Project with a GroupAllocator, which runs metadata.Preflight;
// metadata.State.Apply; clients.BuildReply) and through this model (Admit,
// Project, Model.Apply, Reply), and require the same refusal, the same
// replicated body, and byte-equal reply frames.

// replicaKind maps the replica's refusal kinds onto the model's.
func replicaKind(k metadata.RefusalKind) RefusalKind {
	switch k {
	case metadata.Accepted:
		return Accepted
	case metadata.Deny:
		return Deny
	case metadata.Evict:
		return Evict
	case metadata.Drop:
		return Drop
	}
	return RefusalKind(255)
}

// replicaSame is the replica side's notion of "the same request" (what the
// checker did before this model: metadata.Project's body, with the
// partition assignments compared without their group ids).
func replicaSame(op wire.Operation, body []byte, committedOp wire.Operation, committed []byte) bool {
	p, r := metadata.Project(op, body, metadata.NewGroupAllocator(0))
	if r.Refused() || p.Operation != committedOp {
		return false
	}
	ids := func(ps []metadata.PartitionAssignment) []uint32 {
		out := []uint32{}
		for _, a := range ps {
			out = append(out, a.PartitionID)
		}
		return out
	}
	switch committedOp {
	case wire.OperationCreateTopicWithAssignments:
		x, err1 := metadata.DecodeCreateTopicWithAssignments(committed)
		w, err2 := metadata.DecodeCreateTopicWithAssignments(p.Body)
		return err1 == nil && err2 == nil && bytes.Equal(x.Request.Encode(), w.Request.Encode()) &&
			bytes.Equal(x.Derived, w.Derived) && fmt.Sprint(ids(x.Partitions)) == fmt.Sprint(ids(w.Partitions))
	case wire.OperationCreatePartitionsWithAssignments:
		x, err1 := metadata.DecodeCreatePartitionsWithAssignments(committed)
		w, err2 := metadata.DecodeCreatePartitionsWithAssignments(p.Body)
		return err1 == nil && err2 == nil && bytes.Equal(x.Request.Encode(), w.Request.Encode()) &&
			fmt.Sprint(ids(x.Partitions)) == fmt.Sprint(ids(w.Partitions))
	}
	return bytes.Equal(committed, p.Body)
}

// pair is the replica's state machine and this model, fed the same history.
type pair struct {
	t       *rapid.T
	replica *metadata.State
	alloc   *metadata.GroupAllocator
	model   *Model
	op      uint64
	// prev is the last replicated request, for the negative checks of
	// SameRequest.
	prev           request
	prevOp         wire.Operation
	prevReplicated []byte
	checked        *atomic.Int64
	skipped        *atomic.Int64
	outcomes       *outcomes
}

// outcomes counts the committed results and refusals seen, so that a run
// shows which rules it reached.
type outcomes struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *outcomes) add(what string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = make(map[string]int)
	}
	o.n[what]++
}

func (o *outcomes) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	keys := make([]string, 0, len(o.n))
	for k := range o.n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-50s %d", k, o.n[k])
	}
	return b.String()
}

// result returns a reply body's code (0 for a success or an empty body).
func result(body []byte) uint32 {
	if len(body) >= 12 && binary.LittleEndian.Uint32(body) == 1 {
		return binary.LittleEndian.Uint32(body[8:])
	}
	return 0
}

func newPair(t *rapid.T, l metadata.Limits, checked, skipped *atomic.Int64, seen *outcomes) *pair {
	return &pair{
		t:        t,
		replica:  metadata.NewStateWithLimits(l),
		alloc:    metadata.NewGroupAllocator(0),
		model:    New(Limits{Streams: l.Streams, TopicsPerStream: l.TopicsPerStream, PartitionID: l.PartitionID, Partitions: l.Partitions}),
		checked:  checked,
		skipped:  skipped,
		outcomes: seen,
	}
}

// prepareFor builds the prepare header a primary would stamp for the next
// op.
func (p *pair) prepareFor(op wire.Operation, user uint32) wire.PrepareHeader {
	p.op++
	return wire.PrepareHeader{
		Prefix: wire.Prefix{Command: wire.CommandPrepare, Cluster: wire.U128{Lo: 0xc1, Hi: 0x5e}, View: uint32(p.op % 3),
			Release: 7, Replica: uint8(p.op % 3)},
		Client:          wire.U128{Lo: 1000 + p.op%5, Hi: 1},
		Parent:          wire.U128{Lo: p.op * 31},
		RequestChecksum: wire.U128{Lo: p.op * 7919},
		Op:              p.op,
		Commit:          p.op - 1,
		Timestamp:       1_700_000_000_000_000 + p.op*1000,
		Request:         p.op + 10,
		Operation:       op,
		Group:           wire.MetadataGroup,
		UserID:          user,
	}
}

// step runs one client request through both.
func (p *pair) step(req request, user uint32) {
	t := p.t
	p.checked.Add(1)
	next := p.alloc.Highest() + 1
	mine := Admit(req.op, req.body)
	myOp, myBody, myOK := Project(req.op, req.body, next)
	proj, refusal := metadata.Project(req.op, req.body, p.alloc)

	// The same refusal decision, down to the status or eviction reason.
	if replicaKind(refusal.Kind) != mine.Kind || refusal.Status != mine.Status || refusal.Reason != mine.Reason {
		t.Fatalf("refusal of %v % x:\n replica %v\n model   %v", req.op, trunc(req.body), refusal, mine)
	}
	if refusal.Refused() {
		p.outcomes.add(fmt.Sprintf("%v refused %v %d/%v", req.op, mine.Kind, mine.Status, mine.Reason))
	}
	if myOK != (mine.Kind == Accepted) {
		t.Fatalf("Project ok=%v but Admit %v", myOK, mine)
	}
	if refusal.Refused() {
		if SameRequest(req.op, req.body, req.op, req.body) {
			t.Fatalf("SameRequest accepted a request the primary refuses: %v % x", req.op, trunc(req.body))
		}
		return
	}

	// The same replicated operation and body; with the same group ids they
	// are byte-equal, and modulo group ids each side accepts the other's.
	if myOp != proj.Operation || !bytes.Equal(myBody, proj.Body) {
		t.Fatalf("projection of %v % x:\n replica %v % x\n model   %v % x", req.op, trunc(req.body),
			proj.Operation, trunc(proj.Body), myOp, trunc(myBody))
	}
	if !SameRequest(req.op, req.body, proj.Operation, proj.Body) {
		t.Fatalf("SameRequest refused the replica's projection of %v % x", req.op, trunc(req.body))
	}
	if !replicaSame(req.op, req.body, myOp, myBody) {
		t.Fatalf("the replica's comparison refused the model's projection of %v % x", req.op, trunc(req.body))
	}
	// Against the previous request's projection both sides must give the
	// same answer (mostly "different").
	if p.prevReplicated != nil {
		if a, b := SameRequest(req.op, req.body, p.prevOp, p.prevReplicated), replicaSame(req.op, req.body, p.prevOp, p.prevReplicated); a != b {
			t.Fatalf("SameRequest(%v % x, previous %v % x) = %v, the replica's comparison %v",
				req.op, trunc(req.body), p.prevOp, trunc(p.prevReplicated), a, b)
		}
	}
	p.prev, p.prevOp, p.prevReplicated = req, proj.Operation, proj.Body

	p.commit(p.prepareFor(proj.Operation, user), proj.Body)
}

// commit applies one committed prepare to both and compares the cached
// reply frames.
func (p *pair) commit(h wire.PrepareHeader, body []byte) {
	t := p.t
	replyBody := p.replica.Apply(h, body)
	p.outcomes.add(fmt.Sprintf("%v committed %d", h.Operation, result(replyBody)))
	want := clients.BuildReply(h, replyBody)
	got := Reply(h, p.model.Apply(h, body))
	if !bytes.Equal(got, want) {
		t.Fatalf("reply to op %d %v (user %d) % x:\n replica % x\n model   % x", h.Op, h.Operation, h.UserID,
			trunc(body), trunc(want[wire.HeaderSize:]), trunc(got[wire.HeaderSize:]))
	}
	if p.replica.HighestGroupID() != p.model.HighestGroupID() {
		t.Fatalf("highest group id: replica %d, model %d", p.replica.HighestGroupID(), p.model.HighestGroupID())
	}
	if n := len(p.replica.Partitions()); n != p.model.LivePartitions() {
		t.Fatalf("live partitions: replica %d, model %d", n, p.model.LivePartitions())
	}
}

// trunc shortens a body for messages.
func trunc(b []byte) []byte {
	if len(b) > 400 {
		return b[:400]
	}
	return b
}

// TestDifferentialRequests: random request sequences, through the primary's
// refusal and projection and then every replica's apply, agree with the
// replica byte for byte.
func TestDifferentialRequests(t *testing.T) {
	var cases, checked, skipped atomic.Int64
	var seen outcomes
	start := time.Now()
	for round := range 20 {
		t.Run(fmt.Sprint("round", round), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				cases.Add(1)
				p := newPair(t, genLimits(t), &checked, &skipped, &seen)
				for range rapid.IntRange(1, 40).Draw(t, "n") {
					if rare(t, "new_primary", 30) {
						// A new primary seeds its allocator from the committed state.
						p.alloc = metadata.NewGroupAllocator(p.replica.HighestGroupID())
					}
					p.step(genRequest(t, p.replica), genUser(t))
				}
			})
		})
	}
	t.Logf("%d rapid cases, %d requests checked (%d skipped), %v; outcomes:%v",
		cases.Load(), checked.Load(), skipped.Load(), time.Since(start), &seen)
}

// genAssignments draws the assignments of a hand-made replicated body:
// mostly 0..n-1, sometimes duplicates, ids out of range or offsets that
// overflow.
func genAssignments(t *rapid.T) []metadata.PartitionAssignment {
	n := rapid.IntRange(0, 4).Draw(t, "parts")
	ps := make([]metadata.PartitionAssignment, n)
	for i := range ps {
		id := uint32(i)
		switch rapid.IntRange(0, 9).Draw(t, "part_shape") {
		case 4:
			id = rapid.Uint32Range(0, 3).Draw(t, "part_dup")
		case 5:
			id = rapid.SampledFrom([]uint32{9, 10, 999_999, 1_000_000, math.MaxUint32}).Draw(t, "part_far")
		}
		ps[i] = metadata.PartitionAssignment{PartitionID: id, ConsensusGroupID: rapid.Uint64Range(1, 1<<40).Draw(t, "group")}
	}
	return ps
}

// genDerived draws the derived block of a hand-made CreateTopic prepare.
func genDerived(t *rapid.T) []byte {
	switch rapid.IntRange(0, 4).Draw(t, "derived_shape") {
	case 0:
		return genTopicOptions(t, "derived")
	case 1:
		return genStreamOptions(t, "derived_any")
	case 2:
		return []byte{}
	}
	return metadata.DerivedDefaults()
}

// genCommitted draws a committed prepare body no correct primary builds
// (as a faulty primary might, or a future one): a 64 or 65 body with
// hand-made assignments and blocks, whose blocks are valid blocks so that it
// decodes (a body that does not decode is a corrupt log, which both sides
// refuse to apply).
func genCommitted(t *rapid.T, st *metadata.State) (wire.Operation, []byte, bool) {
	w := target{streams: st.Streams()}
	if rapid.Bool().Draw(t, "committed_topic") {
		explicit := genTopicOptions(t, "explicit")
		if rapid.IntRange(0, 3).Draw(t, "explicit_any") == 0 {
			explicit = genStreamOptions(t, "explicit_any_keys")
		}
		derived := genDerived(t)
		if _, err := decodeBlock(explicit); err != nil {
			return 0, nil, false
		}
		if _, err := decodeBlock(derived); err != nil {
			return 0, nil, false
		}
		ps := genAssignments(t)
		sid, s := w.stream(t, "stream")
		req := append(metadata.CreateTopic{Stream: sid, PartitionsCount: uint32(len(ps)), Name: w.name(t, topicNames(s), "name")}.Encode(), explicit...)
		b := binary.LittleEndian.AppendUint32(nil, uint32(len(req)))
		b = append(b, req...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(derived)))
		b = append(b, derived...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(ps)))
		for _, p := range ps {
			b = binary.LittleEndian.AppendUint32(b, p.PartitionID)
			b = binary.LittleEndian.AppendUint64(b, p.ConsensusGroupID)
		}
		return wire.OperationCreateTopicWithAssignments, b, true
	}
	ps := genAssignments(t)
	sid, s := w.stream(t, "stream")
	tid, _ := w.topic(t, s, "topic")
	return wire.OperationCreatePartitionsWithAssignments, metadata.CreatePartitionsWithAssignments{
		Request:    metadata.CreatePartitions{Stream: sid, Topic: tid, PartitionsCount: uint32(len(ps))},
		Partitions: ps,
	}.Encode(), true
}

// TestDifferentialCommitted: hand-made committed 64 and 65 bodies, among
// ordinary requests, give the same replies; this reaches the committed
// rejections a correct primary cannot trigger (5.7 checks 4-6, 5.11 check
// 4) and the stored map of blocks that are not canonical.
func TestDifferentialCommitted(t *testing.T) {
	var cases, checked, skipped atomic.Int64
	var seen outcomes
	start := time.Now()
	for round := range 5 {
		t.Run(fmt.Sprint("round", round), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				cases.Add(1)
				p := newPair(t, genLimits(t), &checked, &skipped, &seen)
				for range rapid.IntRange(1, 30).Draw(t, "n") {
					if rapid.IntRange(0, 2).Draw(t, "hand_made") != 0 {
						p.step(genRequest(t, p.replica), genUser(t))
						continue
					}
					op, body, ok := genCommitted(t, p.replica)
					if !ok {
						continue
					}
					checked.Add(1)
					p.commit(p.prepareFor(op, genUser(t)), body)
				}
			})
		})
	}
	t.Logf("%d rapid cases, %d prepares checked (%d skipped), %v; outcomes:%v",
		cases.Load(), checked.Load(), skipped.Load(), time.Since(start), &seen)
}
