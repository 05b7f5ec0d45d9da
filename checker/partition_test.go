package checker_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// Partition-plane histories, fed to the checker by hand: sends invoked,
// their prepares committed by replicas of one group, replies completed.
// Each test breaks one invariant; its correct twin must pass.

const testGroup uint64 = 7

type partitionHistory struct {
	t       *testing.T
	c       *checker.Checker
	nowNs   int64
	headers []wire.Header // the group's log as built, op k at k-1
	offset  uint64
}

func newPartitionHistory(t *testing.T) *partitionHistory {
	return &partitionHistory{t: t, c: checker.New(3)}
}

func (h *partitionHistory) tick() int64 { h.nowNs += 1000; return h.nowNs }

// batchOf is a producer's batch of messages with the given ids.
func batchOf(ids ...uint64) []byte {
	msgs := make([]wire.Message, len(ids))
	for i, id := range ids {
		msgs[i] = wire.Message{ID: wire.U128{Lo: id}, OffsetDelta: uint32(i), Payload: []byte(fmt.Sprintf("payload %d", id))}
	}
	return wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 5}, msgs)
}

// sendBody wraps a batch in a SendMessages request body (a numeric stream
// and topic, partition 0).
func sendBody(batch []byte) []byte {
	prefix := []byte{1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 2, 4, 0, 0, 0, 0}
	prefix = binary.LittleEndian.AppendUint32(prefix, binary.LittleEndian.Uint32(batch[48:]))
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(prefix)))
	return append(append(b, prefix...), batch...)
}

// invoke records client 1's request req sending batch.
func (h *partitionHistory) invoke(req uint64, batch []byte) {
	h.c.Invoke(workload.Invocation{Client: 0, ClientID: wire.U128{Lo: 1}, Session: 1, Request: req,
		Operation: wire.OperationSendMessages, Body: sendBody(batch), AtNs: h.tick()})
}

// prepare builds the next op of the group: request req's batch stamped at
// offset base with the prepare's timestamp (unless stampTs differs).
func (h *partitionHistory) prepare(req uint64, batch []byte, base uint64, stampTs uint64) (wire.Header, []byte) {
	op := uint64(len(h.headers)) + 1
	var parent wire.U128
	if op > 1 {
		parent = h.headers[op-2].Checksum()
	}
	ts := 1000 + op
	if stampTs == 0 {
		stampTs = ts
	}
	body := append([]byte(nil), batch...)
	wire.StampBatch(body, 0, base, stampTs)
	x := wire.PrepareHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("c"), Command: wire.CommandPrepare},
		Client: wire.U128{Lo: 1}, Parent: parent, Op: op, Timestamp: ts, Request: req,
		Operation: wire.OperationSendMessages, Group: testGroup}
	frame := wire.BuildFrame(&x, body)
	hd := *wire.HeaderOf(frame)
	h.headers = append(h.headers, hd)
	return hd, frame[wire.HeaderSize:]
}

func (h *partitionHistory) commit(r uint8, hd wire.Header, body []byte) {
	var p wire.PrepareHeader
	p.Decode(&hd)
	h.c.Replica(h.tick(), replica.Event{Kind: replica.EventGroup, Replica: r,
		Group: vsr.Event{Kind: vsr.EventCommitted, Group: testGroup, Replica: r, Op: p.Op, Header: hd, Body: body}})
}

func (h *partitionHistory) commitAll(hd wire.Header, body []byte) {
	for r := range uint8(3) {
		h.commit(r, hd, body)
	}
}

// reply completes request req with a reply of op confirming base.
func (h *partitionHistory) reply(req, op, base uint64) {
	body := binary.LittleEndian.AppendUint32(nil, 1)
	body = append(body, make([]byte, 12)...)
	body = binary.LittleEndian.AppendUint64(body, base)
	x := wire.ReplyHeader{Client: wire.U128{Lo: 1}, Op: op, Commit: op, Request: req, Operation: wire.OperationSendMessages}
	h.c.Complete(workload.Completion{Client: 0, ClientID: wire.U128{Lo: 1}, Request: req, Kind: workload.Replied,
		Frame: wire.BuildFrame(&x, body), AtNs: h.tick()})
}

func (h *partitionHistory) want(name string) {
	h.t.Helper()
	v := h.c.Violation()
	switch {
	case name == "" && v != nil:
		h.t.Fatalf("a correct history failed: %v", v)
	case name != "" && v == nil:
		h.t.Fatalf("no violation, want %q", name)
	case name != "" && v.Name != name:
		h.t.Fatalf("violation %q (%v), want %q", v.Name, v, name)
	}
}

// TestPartitionHealthyHistoryPasses: sends committed everywhere at
// consecutive offsets and acknowledged at them pass; the checker counts
// their messages.
func TestPartitionHealthyHistoryPasses(t *testing.T) {
	h := newPartitionHistory(t)
	h.invoke(1, batchOf(1, 2, 3))
	h.invoke(2, batchOf(4))
	a, ab := h.prepare(1, batchOf(1, 2, 3), 0, 0)
	b, bb := h.prepare(2, batchOf(4), 3, 0)
	h.commitAll(a, ab)
	h.commitAll(b, bb)
	h.reply(1, 1, 0)
	h.reply(2, 2, 3)
	h.want("")
	if got := h.c.PartitionMessages(); got != 4 {
		t.Fatalf("%d messages counted, want 4", got)
	}
}

func TestPartitionInconsistentOffsets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		base    uint64
		stampTs uint64
		want    string
	}{
		{"at the next offset", 2, 0, ""},
		{"a gap in the offsets", 3, 0, checker.InconsistentOffsets},
		{"an offset minted again", 1, 0, checker.InconsistentOffsets},
		{"another timestamp than the prepare's", 2, 77, checker.InconsistentOffsets},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newPartitionHistory(t)
			h.invoke(1, batchOf(1, 2))
			h.invoke(2, batchOf(3))
			a, ab := h.prepare(1, batchOf(1, 2), 0, 0)
			b, bb := h.prepare(2, batchOf(3), tc.base, tc.stampTs)
			h.commitAll(a, ab)
			h.commit(0, b, bb)
			h.want(tc.want)
		})
	}
}

func TestPartitionCorruptBatch(t *testing.T) {
	for _, bad := range []bool{false, true} {
		h := newPartitionHistory(t)
		h.invoke(1, batchOf(1, 2))
		a, ab := h.prepare(1, batchOf(1, 2), 0, 0)
		if bad {
			ab = append([]byte(nil), ab...)
			ab[len(ab)-1] ^= 1 // a payload byte rots: its message checksum fails
		}
		h.commit(1, a, ab)
		h.want(map[bool]string{true: checker.CorruptBatch}[bad])
	}
}

func TestPartitionPhantomBatch(t *testing.T) {
	for _, bad := range []bool{false, true} {
		h := newPartitionHistory(t)
		h.invoke(1, batchOf(1, 2))
		committed := batchOf(1, 2)
		if bad {
			committed = batchOf(1, 9) // not the messages request 1 sent
		}
		a, ab := h.prepare(1, committed, 0, 0)
		h.commit(0, a, ab)
		h.want(map[bool]string{true: checker.PhantomCommit}[bad])
	}
}

// TestPartitionDuplicate: a retried send may commit twice (at-least-once);
// a message id committed again by another send is a duplicate.
func TestPartitionDuplicate(t *testing.T) {
	for _, bad := range []bool{false, true} {
		h := newPartitionHistory(t)
		h.invoke(1, batchOf(1, 2))
		a, ab := h.prepare(1, batchOf(1, 2), 0, 0)
		h.commitAll(a, ab)
		retry, rb := h.prepare(1, batchOf(1, 2), 2, 0) // the same request again: a retry
		h.commitAll(retry, rb)
		h.want("")
		if bad {
			h.invoke(2, batchOf(3, 1))
			b, bb := h.prepare(2, batchOf(3, 1), 4, 0)
			h.commit(2, b, bb)
			h.want(checker.DuplicateMessage)
		}
	}
}

func TestPartitionLostWrite(t *testing.T) {
	for _, bad := range []bool{false, true} {
		h := newPartitionHistory(t)
		h.invoke(1, batchOf(1, 2))
		h.invoke(2, batchOf(3))
		a, ab := h.prepare(1, batchOf(1, 2), 0, 0)
		b, bb := h.prepare(2, batchOf(3), 2, 0)
		h.commitAll(a, ab)
		h.commitAll(b, bb)
		if bad {
			h.reply(2, 2, 0) // acknowledged at an offset its batch does not hold
			h.want(checker.LostWrite)
			continue
		}
		h.reply(2, 2, 2)
		h.want("")
	}
}

func TestPartitionDivergentAndReplacedCommits(t *testing.T) {
	for _, tc := range []struct {
		name    string
		restart bool
		want    string
	}{
		{"another replica commits another prepare at the op", false, checker.DivergentCommit},
		{"a restarted replica commits another prepare at an op it committed", true, checker.CommittedOpReplaced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newPartitionHistory(t)
			h.invoke(1, batchOf(1))
			h.invoke(2, batchOf(2))
			a, ab := h.prepare(1, batchOf(1), 0, 0)
			h.commit(0, a, ab)
			h.commit(1, a, ab)
			h.headers = h.headers[:0]
			other, ob := h.prepare(2, batchOf(2), 0, 0) // op 1 again, another prepare
			r := uint8(2)
			if tc.restart {
				r = 1
				h.c.Crashed(1)
			}
			h.commit(r, other, ob)
			h.want(tc.want)
		})
	}
}

func TestPartitionLogGap(t *testing.T) {
	h := newPartitionHistory(t)
	h.invoke(1, batchOf(1))
	h.invoke(2, batchOf(2))
	a, ab := h.prepare(1, batchOf(1), 0, 0)
	b, bb := h.prepare(2, batchOf(2), 1, 0)
	h.commit(0, a, ab)
	h.commit(1, b, bb) // replica 1 skips op 1
	h.want(checker.LogGap)
}

// pollBody is a poll reply body carrying records.
func pollBody(current uint64, records ...[]byte) []byte {
	count := uint32(0)
	for _, r := range records {
		count += binary.LittleEndian.Uint32(r[48:])
	}
	b := binary.LittleEndian.AppendUint32(nil, 0)
	b = binary.LittleEndian.AppendUint64(b, current)
	b = binary.LittleEndian.AppendUint32(b, count)
	for _, r := range records {
		b = append(b, r...)
	}
	return b
}

// poll invokes request req as a PollMessages and completes it with body.
func (h *partitionHistory) poll(req uint64, body []byte) {
	h.c.Invoke(workload.Invocation{Client: 0, ClientID: wire.U128{Lo: 1}, Session: 1, Request: req,
		Operation: wire.OperationNonReplicated, Code: 100, AtNs: h.tick()})
	x := wire.ReplyHeader{Client: wire.U128{Lo: 1}, Op: 1, Request: req, Operation: wire.OperationNonReplicated}
	h.c.Complete(workload.Completion{Client: 0, ClientID: wire.U128{Lo: 1}, Request: req, Kind: workload.Replied,
		Frame: wire.BuildFrame(&x, body), AtNs: h.tick()})
}

// TestPollPromises: a poll may return any consecutive committed batches
// (or nothing, stale); a batch not committed, not as committed, a gap
// between records, or a current offset below them is a violation.
func TestPollPromises(t *testing.T) {
	setup := func(t *testing.T) (*partitionHistory, [3][]byte) {
		h := newPartitionHistory(t)
		var bodies [3][]byte
		base := uint64(0)
		for i, ids := range [][]uint64{{1, 2}, {3}, {4, 5, 6}} {
			h.invoke(uint64(i+1), batchOf(ids...))
			hd, b := h.prepare(uint64(i+1), batchOf(ids...), base, 0)
			h.commitAll(hd, b)
			bodies[i] = b
			base += uint64(len(ids))
		}
		return h, bodies
	}
	t.Run("consecutive committed batches pass, and so does a stale empty poll", func(t *testing.T) {
		h, b := setup(t)
		h.poll(10, pollBody(5, b[1], b[2]))
		h.poll(11, pollBody(0))
		h.poll(12, pollBody(2, b[0]))
		h.want("")
		if h.c.Polls() != 3 {
			t.Fatalf("%d polls counted, want 3", h.c.Polls())
		}
	})
	t.Run("a batch never committed is an aborted read", func(t *testing.T) {
		h, _ := setup(t)
		uncommitted := append([]byte(nil), batchOf(7)...)
		wire.StampBatch(uncommitted, 0, 6, 1099)
		h.poll(10, pollBody(6, uncommitted))
		h.want(checker.AbortedRead)
	})
	t.Run("a committed batch with other bytes is an aborted read", func(t *testing.T) {
		h, b := setup(t)
		other := append([]byte(nil), b[1]...)
		wire.StampBatch(other, 0, 3, 42) // restamped: not as committed
		h.poll(10, pollBody(5, other))
		h.want(checker.AbortedRead)
	})
	t.Run("a gap between records is a poll skip", func(t *testing.T) {
		h, b := setup(t)
		h.poll(10, pollBody(5, b[0], b[2]))
		h.want(checker.PollSkip)
	})
	t.Run("a current offset below the records is inconsistent", func(t *testing.T) {
		h, b := setup(t)
		h.poll(10, pollBody(3, b[1], b[2]))
		h.want(checker.InconsistentOffsets)
	})
}

// storeBody is a StoreConsumerOffset body (consumer 1, numeric stream and
// topic, partition 0) storing offset.
func storeBody(offset uint64) []byte {
	b := []byte{1, 1, 4, 1, 0, 0, 0, 1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 1, 0, 0, 0, 0}
	b = binary.LittleEndian.AppendUint64(b, offset)
	return append(b, 1)
}

// commitOffset invokes and commits request req's StoreConsumerOffset of
// offset as the group's next op (body as sent, unless commitBody differs).
func (h *partitionHistory) commitOffset(req uint64, offset uint64, commitBody []byte) {
	h.commitStore(req, storeBody(offset), commitBody)
}

// commitStore invokes and commits request req's StoreConsumerOffset body
// as the group's next op (as sent, unless commitBody differs).
func (h *partitionHistory) commitStore(req uint64, body, commitBody []byte) {
	h.c.Invoke(workload.Invocation{Client: 0, ClientID: wire.U128{Lo: 1}, Session: 1, Request: req,
		Operation: wire.OperationStoreConsumerOffset, Body: body, AtNs: h.tick()})
	if commitBody == nil {
		commitBody = body
	}
	op := uint64(len(h.headers)) + 1
	var parent wire.U128
	if op > 1 {
		parent = h.headers[op-2].Checksum()
	}
	x := wire.PrepareHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("c"), Command: wire.CommandPrepare},
		Client: wire.U128{Lo: 1}, Parent: parent, Op: op, Timestamp: 1000 + op, Request: req,
		Operation: wire.OperationStoreConsumerOffset, Group: testGroup}
	frame := wire.BuildFrame(&x, commitBody)
	hd := *wire.HeaderOf(frame)
	h.headers = append(h.headers, hd)
	h.commitAll(hd, frame[wire.HeaderSize:])
}

// TestConsumerOffsetAheadOfTheData: a stored offset at or below the last
// committed message passes; one past it is a violation, and so is a stored
// offset no client sent.
func TestConsumerOffsetAheadOfTheData(t *testing.T) {
	for _, tc := range []struct {
		name   string
		offset uint64
		body   []byte
		want   string
	}{
		{"the last committed offset", 2, nil, ""},
		{"one past the committed messages", 3, nil, checker.OffsetAhead},
		{"another offset than the client sent", 1, storeBody(0), checker.PhantomCommit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newPartitionHistory(t)
			h.invoke(1, batchOf(1, 2, 3))
			a, ab := h.prepare(1, batchOf(1, 2, 3), 0, 0)
			h.commitAll(a, ab)
			h.commitOffset(2, tc.offset, tc.body)
			h.want(tc.want)
		})
	}
}

// TestPartitionVoteReachesItsLog: a partition group's DoViewChange of the
// log_view its sender went Normal with must reach that log's head; a vote of
// that log_view with a shorter log (its memory lost, yet voting) is a
// violation, and so is nothing else.
func TestPartitionVoteReachesItsLog(t *testing.T) {
	for _, tc := range []struct {
		name    string
		logView uint32
		op      uint64
		want    string
	}{
		{"the adopted head", 4, 1, ""},
		{"a later log_view", 5, 0, ""},
		{"the adopted log_view with a shorter log", 4, 0, checker.LogShorterThanView},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newPartitionHistory(t)
			h.c.Replica(h.tick(), replica.Event{Kind: replica.EventGroup, Replica: 2, Group: vsr.Event{Kind: vsr.EventStatus,
				Group: testGroup, Replica: 2, Status: vsr.StatusNormal, View: 4, LogView: 4, Op: 1}})
			h.c.Crashed(2) // the log_view is durable: a restart does not forget it
			dvc := wire.DoViewChangeHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("c"), View: 7, Replica: 2},
				Op: tc.op, Group: testGroup, LogView: tc.logView}
			h.c.Sent(h.tick(), 2, -1, wire.BuildFrame(&dvc, nil))
			h.want(tc.want)
		})
	}
}

// namedStoreBody is a StoreConsumerOffset body of consumer 1 of partition 0
// of stream ps and topic pt, by name, at ack level ack.
func namedStoreBody(offset uint64, ack byte) []byte {
	b := []byte{1, 1, 4, 1, 0, 0, 0, 2, 2, 'p', 's', 2, 2, 'p', 't', 1, 0, 0, 0, 0}
	b = binary.LittleEndian.AppendUint64(b, offset)
	return append(b, ack)
}

// pollNext invokes request req as a Next poll of namedStoreBody's consumer
// and partition, and completes it with body.
func (h *partitionHistory) pollNext(req uint64, body []byte) {
	q := append([]byte(nil), namedStoreBody(0, 1)[:20]...)
	q = append(q, 5) // Next
	q = binary.LittleEndian.AppendUint64(q, 0)
	q = binary.LittleEndian.AppendUint32(q, 10)
	q = append(q, 0)
	h.c.Invoke(workload.Invocation{Client: 0, ClientID: wire.U128{Lo: 1}, Session: 1, Request: req,
		Operation: wire.OperationNonReplicated, Code: 100, Body: q, AtNs: h.tick()})
	x := wire.ReplyHeader{Client: wire.U128{Lo: 1}, Op: 1, Request: req, Operation: wire.OperationNonReplicated}
	h.c.Complete(workload.Completion{Client: 0, ClientID: wire.U128{Lo: 1}, Request: req, Kind: workload.Replied,
		Frame: wire.BuildFrame(&x, body), AtNs: h.tick()})
}

// TestNextPollStartsAfterAStoredOffset: a Next poll's first record holds
// offset 0, or the offset after one its consumer stored by a committed
// Quorum store or an invoked NoAck one; a poll that starts after any other
// offset read a store that was never committed (canary_offset_at_prepare):
// a poll skip.
func TestNextPollStartsAfterAStoredOffset(t *testing.T) {
	setup := func(t *testing.T) (*partitionHistory, [3][]byte) {
		h := newPartitionHistory(t)
		var bodies [3][]byte
		base := uint64(0)
		for i, ids := range [][]uint64{{1, 2}, {3}, {4, 5, 6}} {
			h.invoke(uint64(i+1), batchOf(ids...))
			hd, b := h.prepare(uint64(i+1), batchOf(ids...), base, 0)
			h.commitAll(hd, b)
			bodies[i] = b
			base += uint64(len(ids))
		}
		return h, bodies
	}
	t.Run("from offset 0, or after a committed store", func(t *testing.T) {
		h, b := setup(t)
		h.pollNext(10, pollBody(5, b[0], b[1]))
		h.commitStore(11, namedStoreBody(2, 1), nil)
		h.pollNext(12, pollBody(5, b[2]))
		h.want("")
	})
	t.Run("after a NoAck store, applied at the primary at once", func(t *testing.T) {
		h, b := setup(t)
		noAck := namedStoreBody(1, 0)
		h.c.Invoke(workload.Invocation{Client: 0, ClientID: wire.U128{Lo: 1}, Session: 1, Request: 11,
			Operation: wire.OperationStoreConsumerOffset, Body: noAck, AtNs: h.tick()})
		h.pollNext(12, pollBody(5, b[1], b[2]))
		h.want("")
	})
	t.Run("after an offset no store committed", func(t *testing.T) {
		h, b := setup(t)
		h.c.Invoke(workload.Invocation{Client: 0, ClientID: wire.U128{Lo: 1}, Session: 1, Request: 11,
			Operation: wire.OperationStoreConsumerOffset, Body: namedStoreBody(1, 1), AtNs: h.tick()}) // Quorum, never committed
		h.pollNext(12, pollBody(5, b[1], b[2]))
		h.want(checker.PollSkip)
	})
	t.Run("by numeric stream and topic ids: the committed store is found by its group", func(t *testing.T) {
		h, b := setup(t)
		h.commitStore(11, namedStoreBody(1, 1), nil)
		q := append([]byte(nil), storeBody(0)[:24]...) // stream 1, topic 2 by id
		q = append(q, 5)
		q = binary.LittleEndian.AppendUint64(q, 0)
		q = binary.LittleEndian.AppendUint32(q, 10)
		q = append(q, 0)
		h.c.Invoke(workload.Invocation{Client: 0, ClientID: wire.U128{Lo: 1}, Session: 1, Request: 12,
			Operation: wire.OperationNonReplicated, Code: 100, Body: q, AtNs: h.tick()})
		x := wire.ReplyHeader{Client: wire.U128{Lo: 1}, Op: 1, Request: 12, Operation: wire.OperationNonReplicated}
		h.c.Complete(workload.Completion{Client: 0, ClientID: wire.U128{Lo: 1}, Request: 12, Kind: workload.Replied,
			Frame: wire.BuildFrame(&x, pollBody(5, b[1], b[2])), AtNs: h.tick()})
		h.want("")
	})
}
