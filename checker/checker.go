package checker

import (
	"fmt"
	"math"

	"github.com/iggy-vopr/vopr/checker/refmodel"
	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// pollMessagesCode is PollMessages' NonReplicated command code
// (client-ops.md 5.28).
const pollMessagesCode = 100

// evidenceMax bounds the recent events a violation carries.
const evidenceMax = 40

// Checker judges one run. Feed it every replica event (Replica) and every
// client history record (Invoke, Complete) in the order they happen; it
// stops at the first violation (Violation).
type Checker struct {
	replicas int

	// Canonical history of the metadata group.
	canon []committed // canon[k-1] is op k
	// Per replica: the op it must commit next (a restarted replica replays
	// from op 1), the highest op it ever committed (across restarts), the
	// highest view it sent in, and whether it crashed since.
	next      []uint64
	high      []uint64
	sentView  []uint32
	restarted []bool

	prepares   map[prepareKey]wire.U128   // looked up only
	startViews map[uint32]startViewRecord // looked up only
	// checkpoints: the snapshot payload's checksum at each checkpoint op,
	// as the first replica to record or restore it had it. Looked up only.
	checkpoints map[uint64]checkpointRecord
	// checkpointInterval is the replicas' (SetCheckpointInterval), and
	// checkpointViews the model's state at each multiple of it not yet
	// compared with a replica's snapshot. Looked up only.
	checkpointInterval uint64
	checkpointViews    map[uint64]refmodel.View

	// Client side.
	invocations map[requestKey]*invocation // looked up only
	registers   map[wire.U128]bool         // client ids that sent a Register
	executed    map[requestKey]uint64      // (client, request) -> the op it committed as
	model       *refmodel.Model            // the checker's own model of the metadata state machine

	// Durability (durability.go): the replicas' disks, what each replica
	// acknowledged, and the nacks of acknowledged ops waiting for their op
	// to commit.
	disks        Disks
	segments     Segments                // segment.go: the replicas' segment logs
	flush        segmentFlush            // segmentflush.go: the flush thresholds' promise
	acks         map[ackKey]ackRecord    // looked up only
	ackMax       []uint64                // per replica, the highest op in acks
	nacks        map[uint64][]nackRecord // looked up only
	nacksPending int
	// adopted[r]: the log_view and head of the log r last went Normal
	// with (its reconcile done): a vote of that log_view must reach it.
	adopted []adoptedLog

	// The partition planes (partition.go): one log per group, by id
	// (looked up only; partitionOrder lists the ids in first-seen order),
	// the prepares built per (group, view, op), and every commit of each
	// client send.
	partitions        map[uint64]*partitionLog
	partitionOrder    []uint64
	partitionPrepares map[groupPrepareKey]wire.U128
	sends             map[requestKey][]sendCommit
	batches           map[wire.U128][]batchRef // committed batches by first message id (looked up only)
	polls             uint64
	// Beyond the memory-loss bound (beyondf.go): whether more than f
	// replicas were ever without partition memory at once, the losses
	// counted since, and the committed batches a reply acknowledged.
	beyondBound  bool
	losses       map[string]uint64 // looked up only; LossesBeyondBound sorts
	ackedBatches map[batchRef]bool // looked up only
	messagesCut  uint64            // messages committed, then cut from their log beyond the bound
	// storable: the offsets a Next poll of a consumer may start after:
	// every committed Quorum store, by group, and every NoAck store
	// invoked (applied by the primary at once), by consumer alone (group
	// 0). Looked up only.
	storable map[storeKey]map[uint64]bool
	// noAck: what the NoAck consumer offset requests invoked may have done
	// to a partition primary's offsets, outside the log (partition_install.go).
	noAck noAckOffsets

	// pendingReplies: per replica, the reply it built for the op it is
	// applying, checked when the op's commit follows (replies.go).
	pendingReplies []pendingReply
	// conf: what the frames sent so far promise, for the frames that
	// answer them (conform.go).
	conf conformance
	// refusals: what the receiver-rule checks follow (refusals.go).
	refusals refusalState
	// The liveness phase's promises (liveness.go): nil before it; and
	// every replica's last metadata status and view.
	quiet      *quietState
	lastStatus []vsr.Status
	lastView   []uint32
	// table: the client table model (clienttable.go); nil until
	// SetClientTableCapacity.
	table *tableModel
	// incarnations: per replica, the crashes so far.
	incarnations []uint64
	// formattedIn: per replica, 1 + the incarnation its last format
	// completed in (0: none seen); journalrecovery.go.
	formattedIn []uint64
	// promises: the quiet cluster's consensus promises, by group
	// (promises.go).
	promises promiseBook
	// art: the replicas' durable artifacts besides the journal
	// (artifacts.go).
	art artifactState
	// adm: the answers before consensus (admission.go); nil until needed.
	adm *admission
	// inflight (inflight.go): per primary and client, the last prepare it
	// built. Looked up only.
	inflight map[inflightKey]inflightRecord
	// answers (answers.go): the client connections and the requests each
	// replica admitted from them, owed a reply.
	answers *answerState
	// pollGroups: the group each poll in flight was served from (pollcurrent.go).
	pollGroups map[requestKey]uint64
	// commitSeen: the highest metadata commit any frame announced
	// (claims.go).
	commitSeen uint64

	violation *Violation
	recent    [evidenceMax]noteEntry // a ring: event k at k % evidenceMax
	noted     int                    // events noted in all
	nowNs     int64
}

type committed struct {
	header wire.Header
	reply  []byte // the reply every replica must have built (BuildReply of the model's body)
	// invokedMax is the latest invocation time of the client ops at or
	// below this op (Registers are not ordered), for the real-time check.
	invokedMax int64
	// The first commit of the op: by whom, when, in which view (a
	// conflicting commit names it, evidence the last events may not hold).
	firstReplica uint8
	firstNs      int64
	firstView    uint32
}

// first describes the op's first commit, for a violation's detail.
func (k committed) first() string {
	return fmt.Sprintf("first committed by replica %d at %.6f s in view %d", k.firstReplica, float64(k.firstNs)/1e9, k.firstView)
}

type prepareKey struct {
	view uint32
	op   uint64
}

type startViewRecord struct {
	op      uint64
	headers []wire.U128
}

type requestKey struct {
	client  wire.U128
	request uint64
}

type invocation struct {
	inv  workload.Invocation
	done bool
}

// New returns a checker for a cluster of n replicas.
func New(n int) *Checker {
	c := &Checker{
		replicas:        n,
		next:            make([]uint64, n),
		high:            make([]uint64, n),
		sentView:        make([]uint32, n),
		restarted:       make([]bool, n),
		prepares:        map[prepareKey]wire.U128{},
		startViews:      map[uint32]startViewRecord{},
		checkpoints:     map[uint64]checkpointRecord{},
		checkpointViews: map[uint64]refmodel.View{},
		invocations:     map[requestKey]*invocation{},
		registers:       map[wire.U128]bool{},
		executed:        map[requestKey]uint64{},
		model:           refmodel.New(refmodel.DefaultLimits()),
		acks:            map[ackKey]ackRecord{},
		ackMax:          make([]uint64, n),
		nacks:           map[uint64][]nackRecord{},
		adopted:         make([]adoptedLog, n),
		pendingReplies:  make([]pendingReply, n),
		lastStatus:      make([]vsr.Status, n),
		lastView:        make([]uint32, n),
		incarnations:    make([]uint64, n),

		partitions:        map[uint64]*partitionLog{},
		partitionPrepares: map[groupPrepareKey]wire.U128{},
		sends:             map[requestKey][]sendCommit{},
		batches:           map[wire.U128][]batchRef{},
		ackedBatches:      map[batchRef]bool{},
	}
	for i := range c.next {
		c.next[i] = 1
	}
	return c
}

// SetMetadataLimits makes the metadata model use the replicas' ceilings
// (replica.Config.MetadataLimits, in the model's own terms); it must come
// before any event.
func (c *Checker) SetMetadataLimits(l refmodel.Limits) {
	if len(c.canon) > 0 {
		panic("checker: metadata limits set after the first commit")
	}
	c.model = refmodel.New(l)
}

// SetCheckpointInterval tells the checker the replicas' checkpoint
// interval, so that it keeps its model's state at each checkpoint op and
// compares every snapshot with it; it must come before any event.
func (c *Checker) SetCheckpointInterval(ops uint64) {
	if len(c.canon) > 0 {
		panic("checker: checkpoint interval set after the first commit")
	}
	c.checkpointInterval = ops
}

// Violation returns the first violation found, or nil.
func (c *Checker) Violation() *Violation { return c.violation }

// Evidence returns the recent events, oldest first.
func (c *Checker) Evidence() []string {
	n := min(c.noted, evidenceMax)
	out := make([]string, 0, n)
	for k := c.noted - n; k < c.noted; k++ {
		e := c.recent[k%evidenceMax]
		out = append(out, fmt.Sprintf("%.6fs ", float64(e.atNs)/1e9)+fmt.Sprintf(e.format, e.args...))
	}
	return out
}

// Committed returns the highest op committed anywhere.
func (c *Checker) Committed() uint64 { return uint64(len(c.canon)) }

// Header returns the committed header of op.
func (c *Checker) Header(op uint64) (wire.Header, bool) {
	if op == 0 || op > uint64(len(c.canon)) {
		return wire.Header{}, false
	}
	return c.canon[op-1].header, true
}

// note records an event for the evidence, unformatted: most runs never
// print it, and formatting every event cost the checker much of its time
// (issue 12 item 5). Every argument is a value (ids, numbers, names), so
// formatting it later says what it said now.
func (c *Checker) note(format string, args ...any) {
	c.recent[c.noted%evidenceMax] = noteEntry{atNs: c.nowNs, format: format, args: args}
	c.noted++
}

// noteEntry is one event of the evidence, formatted when asked for.
type noteEntry struct {
	atNs   int64
	format string
	args   []any
}

func (c *Checker) fail(v Violation) {
	if c.violation != nil {
		return
	}
	v.AtNs = c.nowNs
	c.violation = &v
}

// Panic records a panic inside replica code as a violation.
func (c *Checker) Panic(nowNs int64, replica int, value any) {
	c.nowNs = nowNs
	c.fail(Violation{Name: ReplicaPanic, Detail: fmt.Sprint(value), Replicas: []uint8{uint8(replica)}})
}

// Crashed tells the checker a replica's process died: it replays the log
// from op 1 when it comes back, and its view must not go back.
func (c *Checker) Crashed(r uint8) {
	c.note("replica %d crashed (or was frozen outside the liveness core)", r)
	c.next[r] = 1
	c.restarted[r] = true
	c.incarnations[r]++
	c.partitionsCrashed(r)
	c.checkSegmentsAt(r)
	c.artifactsCrashed(r)
	c.segmentFlushCrashed(r)
}

// Replica checks one replica event.
func (c *Checker) Replica(nowNs int64, e replica.Event) {
	c.nowNs = nowNs
	if c.violation != nil {
		return
	}
	c.tableEvent(e.Replica, e)
	c.admissionEvent(e)
	switch e.Kind {
	case replica.EventEviction:
		c.evicted(e)
		return
	case replica.EventCheckpoint:
		c.checkpointed(e.Replica, e.Op, e.Frame)
		c.checkpointRecorded(e.Replica, "its checkpoint", e.Op, e.Frame, e.Disk.ClientTable)
		return
	case replica.EventRestored:
		c.restoredCheckpoint(e.Replica, e.Op, e.Frame)
		c.checkpointRestored(e.Replica, e.Op, e.Frame, e.Disk.ClientTable)
		return
	case replica.EventInstalled:
		c.installed(e.Replica, e.Op, e.Frame)
		c.checkpointRecorded(e.Replica, "the state it installed", e.Op, e.Frame, e.Disk.ClientTable)
		return
	case replica.EventPartitionInstalled:
		c.partitionInstalled(e.Replica, e.PartitionGroup, e.Op, e.Frame, e.Offsets)
		c.offsetsInstalled(e.Replica, e.PartitionGroup, e.Offsets)
		c.segmentInstalled(e.Replica, e.PartitionGroup)
		return
	case replica.EventOffsetsRecovered, replica.EventOffsetWrite, replica.EventOffsetDurable, replica.EventSegmentRecovered,
		replica.EventCheckpointRead:
		c.artifactEvent(e)
		return
	case replica.EventJournalRecovered:
		c.journalRecovered(e.Replica, e.Journal)
		return
	case replica.EventOfferRefused:
		c.offerRefused(e.Replica, e.Frame, e.Op, e.ArtifactMax, e.Probe)
		return
	case replica.EventReply:
		c.builtReply(e)
		c.answered(e)
		return
	case replica.EventReplay:
		c.replayed(e)
		return
	case replica.EventPoll:
		c.pollGroupOf(e)
		return
	case replica.EventProbe:
		c.quietProbe(e.Replica, e.Probe)
		c.probeClaim(e.Replica, e.Probe)
		c.checkpointProbe(e.Replica, e.Probe)
		return
	}
	if e.Kind != replica.EventGroup {
		return
	}
	c.groupEvent(e.Replica, e.Group)
	if e.Group.Group != wire.MetadataGroup {
		c.partitionEvent(e.Replica, e.Group)
		return
	}
	g, r := e.Group, e.Replica
	switch g.Kind {
	case vsr.EventCommitted:
		c.note("replica %d committed op %d %s", r, g.Op, g.Header.Checksum())
		c.commit(r, g.Header, g.Body)
		c.checkBuiltReply(r, g.Op)
		c.tableCommitted(r, g.Op)
	case vsr.EventPrepared:
		c.note("replica %d prepared op %d in view %d %s", r, g.Op, g.View, g.Header.Checksum())
		if p := wirespec.CheckPrepareHeader(g.Header[:]); p != nil {
			c.fail(Violation{Name: OffTheWire, Replicas: []uint8{r}, Ops: []uint64{g.Op},
				Detail: fmt.Sprintf("replica %d built a prepare of op %d whose header breaks wire.md %s: %s", r, g.Op, p.Rule, p.Detail)})
			return
		}
		k := prepareKey{g.View, g.Op}
		id := g.Header.Checksum()
		if prev, ok := c.prepares[k]; ok && prev != id {
			c.fail(Violation{Name: ConflictingPrepares, Replicas: []uint8{r}, Ops: []uint64{g.Op},
				Detail: fmt.Sprintf("view %d op %d prepared as %s and as %s", g.View, g.Op, prev, id)})
			return
		}
		c.prepares[k] = id
		c.preparedFor(r, g)
		c.admittedPrepare(r, wire.MetadataGroup, &g.Header)
	case vsr.EventStartView:
		ids := make([]wire.U128, len(g.Headers))
		for i := range g.Headers {
			ids[i] = g.Headers[i].Checksum()
		}
		c.note("replica %d started view %d at op %d commit %d", r, g.View, g.Op, g.Commit)
		if prev, ok := c.startViews[g.View]; ok && (prev.op != g.Op || !sameIDs(prev.headers, ids)) {
			c.fail(Violation{Name: ConflictingStartView, Replicas: []uint8{r}, Ops: []uint64{prev.op, g.Op},
				Detail: fmt.Sprintf("view %d started at op %d and at op %d (or with other headers)", g.View, prev.op, g.Op)})
			return
		}
		c.startViews[g.View] = startViewRecord{op: g.Op, headers: ids}
	case vsr.EventSent:
		c.sentView[r] = max(c.sentView[r], g.View)
	case vsr.EventAcked:
		c.ownAck(r, g)
		c.quietOwnAck(r, g)
	case vsr.EventReconciled:
		c.reconciled(r, g.View, g.Op)
	case vsr.EventStatus:
		c.note("replica %d is %v in view %d (log_view %d, op %d, commit %d)", r, g.Status, g.View, g.LogView, g.Op, g.Commit)
		c.quietStatus(r, g.Status, g.View)
		if g.Status == vsr.StatusNormal && g.LogView == g.View {
			c.wentNormal(r, g.LogView, g.Op)
		}
		if c.restarted[r] {
			c.restarted[r] = false
			if g.View < c.sentView[r] {
				c.fail(Violation{Name: ViewRegression, Replicas: []uint8{r},
					Detail: fmt.Sprintf("replica %d restarted in view %d after sending messages in view %d", r, g.View, c.sentView[r])})
			}
		}
	}
}

func sameIDs(a, b []wire.U128) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// commit checks one replica's commit of one op.
func (c *Checker) commit(r uint8, h wire.Header, body []byte) {
	var p wire.PrepareHeader
	p.Decode(&h)
	if p.Op != c.next[r] {
		c.fail(Violation{Name: LogGap, Replicas: []uint8{r}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("replica %d committed op %d when op %d was next", r, p.Op, c.next[r])})
		return
	}
	c.next[r] = p.Op + 1
	// The identity covers checksum_body, not the body: a replica applying a
	// body that rotted under the right header would pass every identity
	// check below.
	if got, want := wire.BodySeal(body), h.ChecksumBody(); got != want {
		c.fail(Violation{Name: CorruptBodyApplied, Replicas: []uint8{r}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("replica %d applied op %d with a body sealing to %s, its checksum_body is %s", r, p.Op, got, want)})
		return
	}
	again := p.Op <= c.high[r]
	c.high[r] = max(c.high[r], p.Op)
	if p.Op <= uint64(len(c.canon)) {
		if want := c.canon[p.Op-1].header.Checksum(); want != p.Checksum {
			if again {
				// This replica committed the op itself before it restarted.
				c.fail(Violation{Name: CommittedOpReplaced, Replicas: []uint8{r}, Ops: []uint64{p.Op},
					Detail: fmt.Sprintf("replica %d committed op %d as %s in view %d after a restart, but had committed it as %s (%s)",
						r, p.Op, p.Checksum, p.View, want, c.canon[p.Op-1].first())})
				return
			}
			c.fail(Violation{Name: DivergentCommit, Replicas: []uint8{r}, Ops: []uint64{p.Op},
				Detail: fmt.Sprintf("replica %d committed op %d as %s in view %d, but %s was committed there before (%s)",
					r, p.Op, p.Checksum, p.View, want, c.canon[p.Op-1].first())})
		}
		return
	}
	if p.Op > 1 {
		var prev wire.PrepareHeader
		prevHeader := c.canon[p.Op-2].header
		prev.Decode(&prevHeader)
		if p.Parent != prev.Checksum {
			c.fail(Violation{Name: HashChainBreak, Replicas: []uint8{r}, Ops: []uint64{p.Op - 1, p.Op},
				Detail: fmt.Sprintf("op %d's parent is %s, op %d is %s", p.Op, p.Parent, p.Op-1, prev.Checksum)})
			return
		}
		if p.Timestamp <= prev.Timestamp {
			c.fail(Violation{Name: TimestampRegression, Replicas: []uint8{r}, Ops: []uint64{p.Op - 1, p.Op},
				Detail: fmt.Sprintf("op %d timestamp %d does not exceed op %d's %d", p.Op, p.Timestamp, p.Op-1, prev.Timestamp)})
			return
		}
	}
	c.firstCommit(r, p, h, body)
}

// firstCommit extends the canonical log and checks the op against the
// client history: it was sent (no phantom, and its body is the one sent)
// and it commits once (exactly once). The reference model then applies it.
// The real-time order is checked as completions arrive (Complete).
func (c *Checker) firstCommit(r uint8, p wire.PrepareHeader, h wire.Header, body []byte) {
	key := requestKey{p.Client, p.Request}
	invokedMax := int64(math.MinInt64)
	if n := len(c.canon); n > 0 {
		invokedMax = c.canon[n-1].invokedMax
	}
	switch {
	case p.Operation == wire.OperationRegister:
		if !c.registers[p.Client] {
			c.fail(Violation{Name: PhantomCommit, Replicas: []uint8{r}, Ops: []uint64{p.Op},
				Detail: fmt.Sprintf("op %d registers client %s, which no client registered", p.Op, p.Client)})
			return
		}
	default:
		inv, ok := c.invocations[key]
		// A forwarded Logout commits with request_checksum 0: ForwardLogout
		// has no field for it (wire.md 5.17), and its body is empty.
		forwardedLogout := p.Operation == wire.OperationLogout && p.RequestChecksum.IsZero()
		if !ok || inv.inv.Checksum != p.RequestChecksum && !forwardedLogout || !sameOperation(inv.inv.Operation, p.Operation) ||
			!sameBody(inv.inv, p.Operation, body) {
			c.fail(Violation{Name: PhantomCommit, Replicas: []uint8{r}, Ops: []uint64{p.Op},
				Detail: fmt.Sprintf("op %d is %v request %d of client %s with checksum %s, which no client sent",
					p.Op, p.Operation, p.Request, p.Client, p.RequestChecksum)})
			return
		}
		if prev, dup := c.executed[key]; dup && !c.logoutRepeat(&p) {
			c.fail(Violation{Name: DuplicateApply, Replicas: []uint8{r}, Ops: []uint64{prev, p.Op},
				Detail: fmt.Sprintf("request %d of client %s committed as op %d and again as op %d", p.Request, p.Client, prev, p.Op)})
			return
		} else if !dup {
			c.executed[key] = p.Op
		}
		invokedMax = max(invokedMax, inv.inv.AtNs)
	}
	body = append([]byte(nil), body...)
	reply := refmodel.Reply(p, c.model.Apply(p, body))
	c.modelChanged(&p, reply)
	c.table.apply(&p)
	c.canon = append(c.canon, committed{header: h, reply: reply, invokedMax: invokedMax, firstReplica: r, firstNs: c.nowNs, firstView: p.View})
	if c.checkpointInterval > 0 && p.Op%c.checkpointInterval == 0 {
		c.checkpointViews[p.Op] = c.model.View()
	}
	c.keepCheckpointTable(p.Op)
	c.committedNacks(p.Op)
}

// sameBody reports whether a prepare's body is what the client sent: the
// same bytes, or for a projected operation (CreateTopic, CreatePartitions)
// the replicated body a correct primary builds from the client's request,
// with partition group ids of its own choice (refmodel.SameRequest).
func sameBody(inv workload.Invocation, op wire.Operation, body []byte) bool {
	switch op {
	case wire.OperationCreateTopicWithAssignments, wire.OperationCreatePartitionsWithAssignments:
		return refmodel.SameRequest(inv.Operation, inv.Body, op, body)
	}
	return string(body) == string(inv.Body)
}

// sameOperation: a request's operation and the prepare's, which the primary
// may have rewritten (CreateTopic 132 -> 64, CreatePartitions 136 -> 65).
func sameOperation(request, prepare wire.Operation) bool {
	switch {
	case request == prepare:
		return true
	case request == wire.OperationCreateTopic:
		return prepare == wire.OperationCreateTopicWithAssignments
	case request == wire.OperationCreatePartitions:
		return prepare == wire.OperationCreatePartitionsWithAssignments
	}
	return false
}

// checkRealTime checks a completion of op at completedNs: no op below it
// may have been invoked after that. (An op committed after a completion is
// always above the completed op, so the check belongs here, where every
// lower op is committed with its invocation time. In a history fed in the
// order things happen it cannot fire, since a lower op commits before the
// completion and so after its own Invoke; it catches a history whose times
// say otherwise: an op committed before it was invoked.)
func (c *Checker) checkRealTime(completedNs int64, op uint64) {
	if op < 2 || c.canon[op-2].invokedMax <= completedNs {
		return
	}
	later := op - 1
	for later > 1 && c.canon[later-2].invokedMax > completedNs {
		later-- // the lowest op invoked after the completion
	}
	c.fail(Violation{Name: RealTimeOrder, Ops: []uint64{op, later},
		Detail: fmt.Sprintf("op %d was invoked after op %d had completed, but comes before it in the log", later, op)})
}

// Invoke records a client's invocation.
func (c *Checker) Invoke(inv workload.Invocation) {
	c.nowNs = inv.AtNs
	if inv.Operation == wire.OperationRegister {
		c.registers[inv.ClientID] = true
		c.note("client %d (%s) registers", inv.Client, inv.ClientID)
		return
	}
	c.note("client %d (%s) invokes request %d %v", inv.Client, inv.ClientID, inv.Request, inv.Operation)
	c.invocations[requestKey{inv.ClientID, inv.Request}] = &invocation{inv: inv}
	if isOffsetOperation(inv.Operation) && !offsetTakesEffect(inv.Operation, inv.Body) {
		return // refused whatever the state: no NoAck effect to allow for
	}
	if inv.Operation == wire.OperationStoreConsumerOffset {
		c.noAckStore(inv.Body)
	}
	if inv.Operation == wire.OperationStoreConsumerOffset || inv.Operation == wire.OperationDeleteConsumerOffset {
		c.noAckOffsetRequest(inv.Operation, inv.Body)
	}
}

// Complete records how a client's invocation ended, and checks a reply
// against the model.
func (c *Checker) Complete(done workload.Completion) {
	c.nowNs = done.AtNs
	if c.violation != nil {
		return
	}
	c.note("client %d (%s) request %d %v", done.Client, done.ClientID, done.Request, done.Kind)
	if done.Kind != workload.Replied {
		return
	}
	var r wire.ReplyHeader
	r.Decode(wire.HeaderOf(done.Frame))
	if r.Operation == wire.OperationSendMessages {
		c.partitionReply(done, &r)
		return
	}
	if r.Operation == wire.OperationStoreConsumerOffset || r.Operation == wire.OperationDeleteConsumerOffset {
		c.offsetReply(done, &r)
		return
	}
	if r.Operation == wire.OperationNonReplicated {
		if inv, ok := c.invocations[requestKey{done.ClientID, done.Request}]; ok && inv.inv.Code == pollMessagesCode {
			c.pollReply(done, &r)
			c.pollCurrent(done)
		}
		return
	}
	if r.Operation == wire.OperationLogout && r.Op == 0 && c.table != nil {
		// The empty success of a no-op Logout: the session was gone
		// already (client-ops.md 5.2 [shell]), so nothing committed.
		inv, ok := c.invocations[requestKey{done.ClientID, done.Request}]
		if epoch, present := c.table.sessionAt(done.ClientID, uint64(len(c.canon))); ok && present && epoch == inv.inv.Session {
			c.fail(Violation{Name: WrongReply,
				Detail: fmt.Sprintf("client %s request %d (Logout of session %d) got the empty success of a no-op, and the session is live in the client table",
					done.ClientID, done.Request, epoch)})
		}
		return
	}
	if r.Op == 0 || r.Op > uint64(len(c.canon)) {
		c.fail(Violation{Name: WrongReply, Ops: []uint64{r.Op},
			Detail: fmt.Sprintf("client %s request %d got a reply for op %d, which is not committed", done.ClientID, done.Request, r.Op)})
		return
	}
	entry := c.canon[r.Op-1]
	var p wire.PrepareHeader
	p.Decode(&entry.header)
	if p.Client != done.ClientID || p.Request != done.Request {
		c.fail(Violation{Name: WrongReply, Ops: []uint64{r.Op},
			Detail: fmt.Sprintf("client %s request %d got the reply of op %d, which is client %s request %d",
				done.ClientID, done.Request, r.Op, p.Client, p.Request)})
		return
	}
	if string(entry.reply) != string(done.Frame) {
		c.fail(Violation{Name: WrongReply, Ops: []uint64{r.Op},
			Detail: fmt.Sprintf("client %s request %d (op %d) got a reply that differs from the model's in canonical order",
				done.ClientID, done.Request, r.Op)})
		return
	}
	if p.Operation == wire.OperationRegister {
		return // a Register may commit more than once (a retry rebinds): not ordered
	}
	c.checkRealTime(done.AtNs, r.Op)
}
