package checker

import (
	"encoding/binary"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// The partition planes, checked with a model of their own written from
// partition-plane.md and wire.md 7 (bytes decoded with replica/wire alone;
// nothing of replica/partition is called). Each partition group is one
// log:
//
//   - canonical history, as on the metadata plane: every replica commits op
//     k+1 right after op k, op k has one identity everywhere, it chains to
//     op k-1, timestamps increase, and nothing committed is replaced across
//     restarts (a restarted replica lost its memory journal and commits the
//     log again from op 1);
//   - stamping: a committed SendMessages batch verifies in full (every
//     message checksum and the batch checksum), starts at the offset the
//     batches before it end at (contiguous offsets), and carries the
//     prepare's timestamp as base_timestamp ("inconsistent offsets");
//   - no phantom: a committed batch holds exactly the messages some client
//     sent in a SendMessages with that client id and request number;
//   - duplicates: a message id is committed twice in a group only through a
//     retry of the send that carried it (at-least-once allows that, and
//     nothing else: "duplicate");
//   - acknowledged sends: a SendMessages reply names the op and the base
//     offset its batch was committed at in the canonical log ("lost write"
//     otherwise).
//
// Polls and consumer offsets are checked below, segment logs in segment.go.

// Names of the partition planes' violations (Jepsen's queue vocabulary).
const (
	InconsistentOffsets = "inconsistent offsets"              // a committed batch not at the log's next offset, or not stamped with its prepare's timestamp; a poll's current offset below what it returned
	AbortedRead         = "G1a aborted read"                  // a poll returned a batch that is not committed, or not as committed
	OffsetAhead         = "consumer offset ahead of the data" // a stored consumer offset past the partition's committed messages
	PollSkip            = "poll skip"                         // a poll's records are not consecutive batches of one partition
	CorruptBatch        = "corrupt batch applied"             // a committed batch whose checksums do not verify
	DuplicateMessage    = "duplicate"                         // a message id committed twice, not through a retry of its send
	LostWrite           = "lost write"                        // an acknowledged send whose messages are not at the acknowledged offsets
)

// partitionLog is the checker's model of one partition group.
type partitionLog struct {
	group uint64
	canon []partitionOp // canon[k-1] is op k
	next  []uint64      // per replica: the op it must commit next
	high  []uint64      // per replica: the highest op it ever committed
	// offset is the offset the next committed batch must start at.
	offset uint64
	// ids: the message ids committed, with the send that committed each
	// first (looked up only).
	ids map[wire.U128]requestKey
	// offsetsMinted: the offset the log had reached before its last cut
	// (beyondf.go); reseeded: cut, and no batch committed since, so the
	// next batch's base offset is what the replica re-seeded its counter
	// to, not the cut log's next offset.
	offsetsMinted uint64
	reseeded      bool
	// adopted: per replica, the log it last went Normal with in this group
	// (log_view and head): a vote of that log_view must reach it, across
	// restarts too (the log_view is durable in the group's superblock).
	adopted []adoptedLog
}

type partitionOp struct {
	header wire.Header
	base   uint64 // SendMessages: the batch's base offset
	count  uint64
	batch  []byte // SendMessages: the committed (stamped) batch
	// offsetBody: StoreConsumerOffset, DeleteConsumerOffset: the committed
	// body (an install's consumer offsets are judged by replaying them,
	// partition_install.go).
	offsetBody []byte
}

// batchRef finds a committed batch by its first message's id (ids are
// unique to a send, and a retried send's second commit is another batch
// with the same first id: both are kept).
type batchRef struct {
	group uint64
	op    uint64
}

// sendCommit is one commit of a client's send: at-least-once allows
// several for one (client, request).
type sendCommit struct {
	group uint64
	op    uint64
	base  uint64
}

func (c *Checker) partitionLog(group uint64) *partitionLog {
	if l, ok := c.partitions[group]; ok {
		return l
	}
	l := &partitionLog{group: group, next: make([]uint64, c.replicas), high: make([]uint64, c.replicas),
		ids: map[wire.U128]requestKey{}, adopted: make([]adoptedLog, c.replicas)}
	for i := range l.next {
		l.next[i] = 1
	}
	c.partitions[group] = l
	c.partitionOrder = append(c.partitionOrder, group)
	return l
}

// partitionEvent checks one event of a partition group.
func (c *Checker) partitionEvent(r uint8, g vsr.Event) {
	switch g.Kind {
	case vsr.EventCommitted:
		c.note("replica %d committed op %d of group %d %s", r, g.Op, g.Group, g.Header.Checksum())
		c.partitionCommit(c.partitionLog(g.Group), r, g.Header, g.Body)
		c.segmentCommitted(r, g)
	case vsr.EventStatus:
		if g.Status == vsr.StatusNormal && g.LogView == g.View {
			a := &c.partitionLog(g.Group).adopted[r]
			if g.LogView != a.logView {
				*a = adoptedLog{logView: g.LogView, head: g.Op, atNs: c.nowNs}
			} else if g.Op > a.head {
				a.head, a.atNs = g.Op, c.nowNs
			}
		}
	case vsr.EventReconciled:
		a := &c.partitionLog(g.Group).adopted[r]
		a.head = min(a.head, g.Op)
	case vsr.EventPrepared:
		gk := groupPrepareKey{group: g.Group, prepareKey: prepareKey{view: g.View, op: g.Op}}
		if prev, ok := c.partitionPrepares[gk]; ok && prev != g.Header.Checksum() {
			c.fail(Violation{Name: ConflictingPrepares, Replicas: []uint8{r}, Ops: []uint64{g.Op},
				Detail: fmt.Sprintf("group %d view %d op %d prepared as %s and as %s", g.Group, g.View, g.Op, prev, g.Header.Checksum())})
			return
		}
		c.partitionPrepares[gk] = g.Header.Checksum()
		c.admittedPrepare(r, g.Group, &g.Header)
	}
}

type groupPrepareKey struct {
	group uint64
	prepareKey
}

// partitionCommit checks one replica's commit of one op of a group.
func (c *Checker) partitionCommit(l *partitionLog, r uint8, h wire.Header, body []byte) {
	var p wire.PrepareHeader
	p.Decode(&h)
	if p.Op != l.next[r] {
		c.fail(Violation{Name: LogGap, Replicas: []uint8{r}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("replica %d committed op %d of group %d when op %d was next", r, p.Op, l.group, l.next[r])})
		return
	}
	l.next[r] = p.Op + 1
	again := p.Op <= l.high[r]
	l.high[r] = max(l.high[r], p.Op)
	if p.Op <= uint64(len(l.canon)) {
		want := l.canon[p.Op-1].header.Checksum()
		if want == p.Checksum {
			return
		}
		if !c.beyondBound {
			name, how := DivergentCommit, "but"
			if again {
				name, how = CommittedOpReplaced, "after a restart, but had"
			}
			c.fail(Violation{Name: name, Replicas: []uint8{r}, Ops: []uint64{p.Op},
				Detail: fmt.Sprintf("replica %d committed op %d of group %d as %s %s committed %s there", r, p.Op, l.group, p.Checksum, how, want)})
			return
		}
		// Beyond the bound: the log was lost from op on; the new op
		// starts what the group goes on with.
		c.cutPartitionLog(l, p.Op)
	}
	if p.Op > 1 {
		var prev wire.PrepareHeader
		prevHeader := l.canon[p.Op-2].header
		prev.Decode(&prevHeader)
		if p.Parent != prev.Checksum {
			c.fail(Violation{Name: HashChainBreak, Replicas: []uint8{r}, Ops: []uint64{p.Op - 1, p.Op},
				Detail: fmt.Sprintf("group %d op %d's parent is %s, op %d is %s", l.group, p.Op, p.Parent, p.Op-1, prev.Checksum)})
			return
		}
		if p.Timestamp <= prev.Timestamp {
			c.fail(Violation{Name: TimestampRegression, Replicas: []uint8{r}, Ops: []uint64{p.Op - 1, p.Op},
				Detail: fmt.Sprintf("group %d op %d timestamp %d does not exceed op %d's %d", l.group, p.Op, p.Timestamp, p.Op-1, prev.Timestamp)})
			return
		}
	}
	entry := partitionOp{header: h}
	if p.Operation == wire.OperationStoreConsumerOffset || p.Operation == wire.OperationDeleteConsumerOffset {
		if !c.checkOffsetCommit(l, r, &p, body) {
			return
		}
		entry.offsetBody = append([]byte(nil), body...)
	}
	if p.Operation == wire.OperationSendMessages {
		base, count, ok := c.checkBatch(l, r, &p, body)
		if !ok {
			return
		}
		entry.base, entry.count = base, count
		entry.batch = append([]byte(nil), body...)
		l.offset = base + count
		if first, ok := firstMessageID(body); ok {
			c.batches[first] = append(c.batches[first], batchRef{group: l.group, op: p.Op})
		}
		key := requestKey{p.Client, p.Request}
		c.sends[key] = append(c.sends[key], sendCommit{group: l.group, op: p.Op, base: base})
	}
	l.canon = append(l.canon, entry)
}

// checkBatch checks a first commit of a SendMessages batch: it verifies, it
// is stamped at the log's next offset and the prepare's timestamp, a
// client sent exactly its messages, and no message id repeats except
// through a retry of its send.
func (c *Checker) checkBatch(l *partitionLog, r uint8, p *wire.PrepareHeader, body []byte) (base, count uint64, ok bool) {
	if err := wire.VerifyBatch(body); err != nil {
		c.fail(Violation{Name: CorruptBatch, Replicas: []uint8{r}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("replica %d applied op %d of group %d with a batch that does not verify: %v", r, p.Op, l.group, err)})
		return 0, 0, false
	}
	b, _ := wire.ReadBatchHeader(body)
	if l.reseeded && b.BaseTimestamp == p.Timestamp {
		// After a cut the replica re-seeded its offset counter from what
		// survived (its superblock's frontier, a lower bound).
		l.offset, l.reseeded = b.BaseOffset, false
	}
	if b.BaseOffset != l.offset || b.BaseTimestamp != p.Timestamp {
		c.fail(Violation{Name: InconsistentOffsets, Replicas: []uint8{r}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("group %d op %d: batch at offset %d with base_timestamp %d, the log's next offset is %d and the prepare's timestamp %d",
				l.group, p.Op, b.BaseOffset, b.BaseTimestamp, l.offset, p.Timestamp)})
		return 0, 0, false
	}
	key := requestKey{p.Client, p.Request}
	inv, sent := c.invocations[key]
	if !sent || inv.inv.Operation != wire.OperationSendMessages || !sameMessages(inv.inv.Body, body) {
		c.fail(Violation{Name: PhantomCommit, Replicas: []uint8{r}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("group %d op %d holds a batch that client %s request %d did not send", l.group, p.Op, p.Client, p.Request)})
		return 0, 0, false
	}
	_, msgs, _ := wire.DecodeBatch(body)
	for _, m := range msgs {
		if first, seen := l.ids[m.ID]; seen && first != key {
			c.fail(Violation{Name: DuplicateMessage, Replicas: []uint8{r}, Ops: []uint64{p.Op},
				Detail: fmt.Sprintf("group %d op %d commits message %s again, first committed by client %s request %d, now by request %d",
					l.group, p.Op, m.ID, first.client, first.request, p.Request)})
			return 0, 0, false
		} else if !seen {
			l.ids[m.ID] = key
		}
	}
	if l.offsetsMinted > 0 {
		c.mintedAgain(l, p.Op, b.BaseOffset, uint64(b.MessageCount))
	}
	return b.BaseOffset, uint64(b.MessageCount), true
}

// sameMessages reports whether a committed batch holds the messages of a
// SendMessages request body: the routing prefix (metadata_length, then that
// many bytes) is skipped, and the batch's frames compared byte for byte
// (stamping changes only the batch header's fields).
func sameMessages(request, batch []byte) bool {
	if len(request) < 4 {
		return false
	}
	n := int(binary.LittleEndian.Uint32(request))
	if n > len(request)-4 {
		return false
	}
	sent := request[4+n:]
	if len(sent) != len(batch) || len(sent) < wire.BatchHeaderSize {
		return false
	}
	return string(sent[wire.BatchHeaderSize:]) == string(batch[wire.BatchHeaderSize:])
}

// partitionReply checks a client's SendMessages reply: it names a commit of
// that send, with the base offset the batch was committed at.
func (c *Checker) partitionReply(done workload.Completion, r *wire.ReplyHeader) {
	body := done.Frame[wire.HeaderSize:]
	commits := c.sends[requestKey{done.ClientID, done.Request}]
	if len(body) < 24 || binary.LittleEndian.Uint32(body) != 1 {
		c.fail(Violation{Name: WrongReply, Ops: []uint64{r.Op},
			Detail: fmt.Sprintf("client %s request %d got a SendMessages reply without one confirmation (%d bytes)", done.ClientID, done.Request, len(body))})
		return
	}
	base := binary.LittleEndian.Uint64(body[16:])
	for _, s := range commits {
		if s.op == r.Op && s.base == base {
			c.ackedBatches[batchRef{group: s.group, op: s.op}] = true
			return
		}
	}
	if c.beyondBound {
		c.lossBeyondBound(LossAckedMessages, uint64(sentMessages(c.invocations[requestKey{done.ClientID, done.Request}])),
			"client %s request %d was acknowledged at op %d offset %d, which no commit holds any more", done.ClientID, done.Request, r.Op, base)
		return
	}
	c.fail(Violation{Name: LostWrite, Ops: []uint64{r.Op},
		Detail: fmt.Sprintf("client %s request %d was acknowledged at op %d offset %d, which no commit of its send holds (%d commits)",
			done.ClientID, done.Request, r.Op, base, len(commits))})
}

// partitionsCrashed: a restarted replica commits every partition log again
// from op 1 (its memory journals are gone).
func (c *Checker) partitionsCrashed(r uint8) {
	for _, g := range c.partitionOrder {
		c.partitions[g].next[r] = 1
	}
}

// PartitionMessages returns the messages committed on every partition
// group, summed, those lost beyond the memory-loss bound included.
func (c *Checker) PartitionMessages() uint64 {
	total := c.messagesCut
	for _, g := range c.partitionOrder {
		for _, op := range c.partitions[g].canon {
			total += op.count
		}
	}
	return total
}

func firstMessageID(batch []byte) (wire.U128, bool) {
	_, msgs, err := wire.DecodeBatch(batch)
	if err != nil || len(msgs) == 0 {
		return wire.U128{}, false
	}
	return msgs[0].ID, true
}

// pollReply checks a client's PollMessages reply against what a poll
// promises (doc.go): its records are committed batches, byte for byte,
// consecutive in one partition, and its current offset covers them.
func (c *Checker) pollReply(done workload.Completion, r *wire.ReplyHeader) {
	c.polls++
	body := done.Frame[wire.HeaderSize:]
	fail := func(name, format string, args ...any) {
		detail := fmt.Sprintf("client %s poll %d: ", done.ClientID, done.Request) + fmt.Sprintf(format, args...)
		if c.beyondBound && name != WrongReply {
			c.lossBeyondBound(LossPolls, 1, "%s: %s", name, detail)
			return
		}
		c.fail(Violation{Name: name, Detail: detail})
	}
	if len(body) < 16 {
		fail(WrongReply, "a poll reply of %d bytes", len(body))
		return
	}
	current, count := binary.LittleEndian.Uint64(body[4:]), binary.LittleEndian.Uint32(body[12:])
	records := body[16:]
	var group, next uint64
	messages := uint32(0)
	for i := 0; len(records) > 0; i++ {
		b, err := wire.ReadBatchHeader(records)
		if err != nil || b.BatchLength > uint64(len(records)) || b.BatchLength < wire.BatchHeaderSize {
			fail(WrongReply, "record %d does not frame: %v", i, err)
			return
		}
		batch := records[:b.BatchLength]
		records = records[b.BatchLength:]
		ref, ok := c.committedBatch(batch)
		if !ok {
			fail(AbortedRead, "record %d (offset %d, %d messages) is no committed batch", i, b.BaseOffset, b.MessageCount)
			return
		}
		if i > 0 && (ref.group != group || b.BaseOffset != next) {
			fail(PollSkip, "record %d is group %d offset %d, after group %d up to offset %d", i, ref.group, b.BaseOffset, group, next)
			return
		}
		group, next = ref.group, b.BaseOffset+uint64(b.MessageCount)
		messages += b.MessageCount
	}
	if messages != count {
		fail(WrongReply, "messages_count %d, the records hold %d", count, messages)
		return
	}
	if first, ok := firstRecord(body[16:]); ok {
		if inv := c.invocations[requestKey{done.ClientID, done.Request}]; inv != nil {
			if s, ok := c.nextPollStart(inv.inv.Body, group, first); !ok {
				fail(PollSkip, "a Next poll returned offsets from %d (a batch of %d), after no offset the consumer stored: %s", first.BaseOffset, first.MessageCount, s)
				return
			}
		}
	}
	if messages > 0 && current+1 < next {
		fail(InconsistentOffsets, "current offset %d, but it returned offsets up to %d", current, next-1)
	}
}

// committedBatch finds batch among the committed batches, byte for byte.
func (c *Checker) committedBatch(batch []byte) (batchRef, bool) {
	first, ok := firstMessageID(batch)
	if !ok {
		return batchRef{}, false
	}
	for _, ref := range c.batches[first] {
		l := c.partitions[ref.group]
		if string(l.canon[ref.op-1].batch) == string(batch) {
			return ref, true
		}
	}
	return batchRef{}, false
}

// PartitionCommitted returns the highest op committed anywhere in a
// partition group (0 for a group nothing was committed in).
func (c *Checker) PartitionCommitted(group uint64) uint64 {
	if l, ok := c.partitions[group]; ok {
		return uint64(len(l.canon))
	}
	return 0
}

// Polls returns the number of poll replies checked.
func (c *Checker) Polls() uint64 { return c.polls }

// checkOffsetCommit checks a first commit of a consumer offset operation: a
// client sent exactly it, and a stored offset is at or below the last
// committed message of its partition ("consumer offset ahead of the data").
// Bodies are parsed here, on their own (client-ops.md 5.26, 5.27).
func (c *Checker) checkOffsetCommit(l *partitionLog, r uint8, p *wire.PrepareHeader, body []byte) bool {
	key := requestKey{p.Client, p.Request}
	inv, sent := c.invocations[key]
	if !sent || inv.inv.Operation != p.Operation || string(inv.inv.Body) != string(body) {
		c.fail(Violation{Name: PhantomCommit, Replicas: []uint8{r}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("group %d op %d is a %v that client %s request %d did not send", l.group, p.Op, p.Operation, p.Client, p.Request)})
		return false
	}
	if p.Operation != wire.OperationStoreConsumerOffset {
		return true
	}
	offset, ok := storedOffsetOf(body)
	if ok {
		c.storableOffset(l.group, body, offset)
	}
	if !ok {
		c.fail(Violation{Name: PhantomCommit, Replicas: []uint8{r}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("group %d op %d: a StoreConsumerOffset body that does not parse", l.group, p.Op)})
		return false
	}
	if offset >= l.offset && c.beyondBound {
		c.lossBeyondBound(LossOffsetAhead, 1, "group %d op %d stores offset %d, and the partition's committed messages end at offset %d",
			l.group, p.Op, offset, int64(l.offset)-1)
		return true
	}
	if offset >= l.offset {
		c.fail(Violation{Name: OffsetAhead, Replicas: []uint8{r}, Ops: []uint64{p.Op},
			Detail: fmt.Sprintf("group %d op %d stores offset %d, and the partition's committed messages end at offset %d",
				l.group, p.Op, offset, int64(l.offset)-1)})
		return false
	}
	return true
}

// storedOffsetOf reads the offset of a StoreConsumerOffset body: consumer
// kind, three identifiers ([kind][len][bytes] each), the optional partition
// (5 bytes), then the offset.
func storedOffsetOf(body []byte) (uint64, bool) {
	at := 1
	for range 3 {
		if len(body) < at+2 {
			return 0, false
		}
		at += 2 + int(body[at+1])
	}
	at += 5
	if len(body) < at+8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(body[at:]), true
}

// offsetReply checks a consumer offset reply: the success body (client-ops.md
// 5.26: result-framed, no payload). What was stored is checked at commit.
func (c *Checker) offsetReply(done workload.Completion, r *wire.ReplyHeader) {
	if body := done.Frame[wire.HeaderSize:]; string(body) != "\x00\x00\x00\x00" {
		c.fail(Violation{Name: WrongReply, Detail: fmt.Sprintf("client %s request %d: a %v success with body %x",
			done.ClientID, done.Request, r.Operation, body)})
	}
}

// partitionVote checks a partition group's DoViewChange: a vote of the
// log_view its sender last went Normal with must reach that log's head. A
// replica that lost its memory journal and votes anyway, under a log_view
// whose log was not empty, claims an empty log the merge trusts to drop
// committed ops (VOPR seed 1213): "log_view without its log".
func (c *Checker) partitionVote(r uint8, group uint64, x *wire.DoViewChangeHeader) {
	a := c.partitionLog(group).adopted[r]
	if x.LogView != a.logView || a.logView == 0 || x.Op >= a.head {
		return
	}
	c.fail(Violation{Name: LogShorterThanView, Replicas: []uint8{r}, Ops: []uint64{a.head},
		Detail: fmt.Sprintf("replica %d voted in view %d of partition group %d with log_view %d and head op %d, but it went Normal in log_view %d with head op %d (at %.3f s)",
			r, x.View, group, x.LogView, x.Op, a.logView, a.head, float64(a.atNs)/1e9)})
}

// Next polls and the offsets they start after. A Next poll starts after
// the consumer's stored offset (0 when it stored none): the first batch it
// returns holds offset 0, or stored+1 for some offset the consumer stored
// in that partition by a committed Quorum store (found by the group the
// store committed in, so renames and numeric ids do not matter), or by an
// invoked NoAck store (applied at the primary at once; the request names
// its partition by stream and topic, which the checker does not resolve, so
// any NoAck store of the consumer counts). A replica that shows a store
// before it commits (canary_offset_at_prepare) shows one no commit holds:
// "poll skip".

// consumerPrefix returns where a consumer offset or poll request body's
// consumer kind, consumer, stream, topic and partition end (both bodies
// begin with them, client-ops.md 5.26-5.28), and the consumer kind and
// consumer's bytes.
func consumerPrefix(body []byte) (consumer string, end int, ok bool) {
	if len(body) < 3 || len(body) < 3+int(body[2]) {
		return "", 0, false
	}
	consumer = string(body[:3+int(body[2])])
	at := 1
	for range 3 {
		if len(body) < at+2 {
			return "", 0, false
		}
		at += 2 + int(body[at+1])
	}
	at += 5
	if len(body) < at {
		return "", 0, false
	}
	return consumer, at, true
}

// storeKey finds the offsets a consumer stored: committed ones by group,
// NoAck ones (group 0) by consumer alone.
type storeKey struct {
	group    uint64
	consumer string
}

// storableOffset records offset as one a Next poll of the body's consumer
// in group (0: any group, a NoAck store) may start after.
func (c *Checker) storableOffset(group uint64, body []byte, offset uint64) {
	consumer, _, ok := consumerPrefix(body)
	if !ok {
		return
	}
	if c.storable == nil {
		c.storable = map[storeKey]map[uint64]bool{}
	}
	k := storeKey{group, consumer}
	if c.storable[k] == nil {
		c.storable[k] = map[uint64]bool{}
	}
	c.storable[k][offset] = true
}

// noAckStore records a NoAck StoreConsumerOffset's offset at its
// invocation (the primary applies it at once, never through the log).
func (c *Checker) noAckStore(body []byte) {
	if len(body) == 0 || body[len(body)-1] != 0 {
		return // Quorum (or a body that does not parse): recorded at commit
	}
	if offset, ok := storedOffsetOf(body); ok {
		c.storableOffset(0, body, offset)
	}
}

// firstRecord returns the header of a poll reply's first record.
func firstRecord(records []byte) (wire.BatchHeader, bool) {
	if len(records) == 0 {
		return wire.BatchHeader{}, false
	}
	b, err := wire.ReadBatchHeader(records)
	return b, err == nil
}

// nextPollStart checks a poll's first record, a batch of group, against the
// Next rule; polls of other strategies pass. On a failure it also says
// what the consumer stored.
func (c *Checker) nextPollStart(body []byte, group uint64, first wire.BatchHeader) (string, bool) {
	consumer, at, ok := consumerPrefix(body)
	if !ok || len(body) < at+1 || body[at] != pollStrategyNext {
		return "", true
	}
	holds := func(offset uint64) bool {
		return first.BaseOffset <= offset && offset < first.BaseOffset+uint64(first.MessageCount)
	}
	if holds(0) {
		return "", true
	}
	committed, noAck := c.storable[storeKey{group, consumer}], c.storable[storeKey{0, consumer}]
	for s := first.BaseOffset - 1; holds(s + 1); s++ {
		if committed[s] || noAck[s] {
			return "", true
		}
	}
	return fmt.Sprintf("%d offsets stored in group %d and %d by NoAck, none at %d..%d", len(committed), group, len(noAck),
		int64(first.BaseOffset)-1, first.BaseOffset+uint64(first.MessageCount)-2), false
}
