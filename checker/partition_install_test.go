package checker_test

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// Partition state transfer: a replica installs the state of a group at an
// op, a segment log and an ICO1 artifact, and the checker compares them
// with its own model of the canonical log at that op.

// offsetRequest is a consumer offset request body of individual consumer
// id (numeric), stream 1, topic 2, partition 0: a store of offset, or a
// delete, at ack level ack (1 Quorum, 0 NoAck).
func offsetRequest(id uint32, offset uint64, store bool, ack byte) []byte {
	b := binary.LittleEndian.AppendUint32([]byte{1, 1, 4}, id)
	b = append(b, 1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 1, 0, 0, 0, 0)
	if store {
		b = binary.LittleEndian.AppendUint64(b, offset)
	}
	return append(b, ack)
}

// namedOffsetStore is a Quorum store of offset by the consumer named "con".
func namedOffsetStore(offset uint64) []byte {
	b := []byte{1, 2, 3, 'c', 'o', 'n', 1, 4, 1, 0, 0, 0, 1, 4, 2, 0, 0, 0, 1, 0, 0, 0, 0}
	return append(binary.LittleEndian.AppendUint64(b, offset), 1)
}

// offsetOp invokes request req (a consumer offset operation with body) and
// builds its prepare as the group's next op.
func (h *partitionHistory) offsetOp(req uint64, op wire.Operation, body []byte) (wire.Header, []byte) {
	h.c.Invoke(workload.Invocation{Client: 0, ClientID: wire.U128{Lo: 1}, Session: 1, Request: req,
		Operation: op, Body: body, AtNs: h.tick()})
	n := uint64(len(h.headers)) + 1
	var parent wire.U128
	if n > 1 {
		parent = h.headers[n-2].Checksum()
	}
	x := wire.PrepareHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("c"), Command: wire.CommandPrepare},
		Client: wire.U128{Lo: 1}, Parent: parent, Op: n, Timestamp: 1000 + n, Request: req,
		Operation: op, Group: testGroup}
	frame := wire.BuildFrame(&x, body)
	hd := *wire.HeaderOf(frame)
	h.headers = append(h.headers, hd)
	return hd, frame[wire.HeaderSize:]
}

// noAck invokes request req, a NoAck consumer offset request (never
// replicated: the primary applies it alone).
func (h *partitionHistory) noAck(req uint64, op wire.Operation, body []byte) {
	h.c.Invoke(workload.Invocation{Client: 0, ClientID: wire.U128{Lo: 1}, Session: 1, Request: req,
		Operation: op, Body: body, AtNs: h.tick()})
}

func (h *partitionHistory) install(r uint8, group, op uint64, segmentLog, offsets []byte) {
	h.c.Replica(h.tick(), replica.Event{Kind: replica.EventPartitionInstalled, Replica: r, PartitionGroup: group,
		Op: op, Frame: segmentLog, Offsets: offsets})
}

// installFixture is a group whose replicas 0 and 1 committed ops 1..7 and
// replica 2 op 1 only:
//
//	op 1  send ids 1, 2 (offsets 0, 1)
//	op 2  consumer 1 stores offset 1
//	op 3  send id 3 (offset 2)
//	op 4  consumer 2 stores offset 2
//	op 5  consumer 1's offset deleted
//	op 6  consumer 3 stores offset 0
//	op 7  send ids 4, 5 (offsets 3, 4)
type installFixture struct {
	*partitionHistory
	ops [7]struct {
		hd   wire.Header
		body []byte
	}
	batches [3][]byte // the committed batches of ops 1, 3, 7
}

func newInstallFixture(t *testing.T) *installFixture {
	f := &installFixture{partitionHistory: newPartitionHistory(t)}
	h := f.partitionHistory
	h.invoke(1, batchOf(1, 2))
	f.ops[0].hd, f.ops[0].body = h.prepare(1, batchOf(1, 2), 0, 0)
	f.ops[1].hd, f.ops[1].body = h.offsetOp(2, wire.OperationStoreConsumerOffset, offsetRequest(1, 1, true, 1))
	h.invoke(3, batchOf(3))
	f.ops[2].hd, f.ops[2].body = h.prepare(3, batchOf(3), 2, 0)
	f.ops[3].hd, f.ops[3].body = h.offsetOp(4, wire.OperationStoreConsumerOffset, offsetRequest(2, 2, true, 1))
	f.ops[4].hd, f.ops[4].body = h.offsetOp(5, wire.OperationDeleteConsumerOffset, offsetRequest(1, 0, false, 1))
	f.ops[5].hd, f.ops[5].body = h.offsetOp(6, wire.OperationStoreConsumerOffset, offsetRequest(3, 0, true, 1))
	h.invoke(7, batchOf(4, 5))
	f.ops[6].hd, f.ops[6].body = h.prepare(7, batchOf(4, 5), 3, 0)
	for i, op := range f.ops {
		h.commit(0, op.hd, op.body)
		h.commit(1, op.hd, op.body)
		if i == 0 {
			h.commit(2, op.hd, op.body)
		}
	}
	f.batches = [3][]byte{f.ops[0].body, f.ops[2].body, f.ops[6].body}
	h.want("")
	return f
}

// commitOp makes replica r commit op of the fixture.
func (f *installFixture) commitOp(r uint8, op uint64) {
	f.commit(r, f.ops[op-1].hd, f.ops[op-1].body)
}

func concat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// stateAt returns the fixture's correct segment log and consumer offsets at
// ops 4, 6 and 7.
func (f *installFixture) stateAt(op uint64) (segmentLog []byte, offsets wire.ConsumerOffsets) {
	switch op {
	case 4:
		return concat(f.batches[0], f.batches[1]), wire.ConsumerOffsets{NextOffset: 3,
			Consumers: []wire.OffsetEntry{{ID: 1, Offset: 1}, {ID: 2, Offset: 2}}}
	case 6:
		return concat(f.batches[0], f.batches[1]), wire.ConsumerOffsets{NextOffset: 3,
			Consumers: []wire.OffsetEntry{{ID: 2, Offset: 2}, {ID: 3, Offset: 0}}}
	case 7:
		return concat(f.batches[:]...), wire.ConsumerOffsets{NextOffset: 5,
			Consumers: []wire.OffsetEntry{{ID: 2, Offset: 2}, {ID: 3, Offset: 0}}}
	}
	panic("no state kept at that op")
}

// installState makes replica r install the fixture's correct state at op.
func (f *installFixture) installState(r uint8, op uint64) {
	seg, o := f.stateAt(op)
	f.install(r, testGroup, op, seg, wire.EncodeConsumerOffsets(o))
}

// TestPartitionInstallCorrectState: a replica that installs the canonical
// state at an op goes on with the op after it, and only with it.
func TestPartitionInstallCorrectState(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(f *installFixture)
		want string
	}{
		{"at op 6, then op 7 committed", func(f *installFixture) {
			f.installState(2, 6)
			f.commitOp(2, 7)
		}, ""},
		{"at the commit, op 7", func(f *installFixture) { f.installState(2, 7) }, ""},
		{"after a restart, from op 1 next", func(f *installFixture) {
			f.c.Crashed(0)
			f.installState(0, 6)
			f.commitOp(0, 7)
		}, ""},
		{"at op 6, then op 6 committed again", func(f *installFixture) {
			f.installState(2, 6)
			f.commitOp(2, 6)
		}, checker.LogGap},
		{"at op 4, then op 6 committed before op 5", func(f *installFixture) {
			f.installState(2, 4)
			f.commitOp(2, 6)
		}, checker.LogGap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newInstallFixture(t)
			tc.run(f)
			f.want(tc.want)
		})
	}
}

// TestPartitionInstallBehindOrUncommitted: an install never applies an op
// twice nor goes back, and installs only a committed state.
func TestPartitionInstallBehindOrUncommitted(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(f *installFixture)
		want string
	}{
		{"above what the replica applied", func(f *installFixture) { f.installState(2, 6) }, ""},
		{"at the op the replica applied", func(f *installFixture) {
			seg, _ := f.stateAt(4)
			f.install(2, testGroup, 1, seg[:len(f.batches[0])], wire.EncodeConsumerOffsets(wire.ConsumerOffsets{NextOffset: 2}))
		}, checker.InstallBehind},
		{"below what a replica applied", func(f *installFixture) { f.installState(0, 6) }, checker.InstallBehind},
		{"going back below an install", func(f *installFixture) {
			f.installState(2, 6)
			f.want("")
			f.installState(2, 4)
		}, checker.InstallBehind},
		{"the state at op 0 after a restart", func(f *installFixture) {
			f.c.Crashed(2)
			f.install(2, testGroup, 0, nil, wire.EncodeConsumerOffsets(wire.ConsumerOffsets{}))
		}, checker.InstallBehind},
		{"above the commit", func(f *installFixture) {
			seg, o := f.stateAt(7)
			f.install(2, testGroup, 8, seg, wire.EncodeConsumerOffsets(o))
		}, checker.InstallUncommitted},
		{"of a group nothing committed in", func(f *installFixture) {
			f.install(2, testGroup+1, 1, nil, wire.EncodeConsumerOffsets(wire.ConsumerOffsets{}))
		}, checker.InstallUncommitted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newInstallFixture(t)
			tc.run(f)
			f.want(tc.want)
		})
	}
}

// TestPartitionInstallDiverged: the installed state at op 6 must be the
// canonical one exactly; each edit of the correct state is a violation
// whose detail names the first difference.
func TestPartitionInstallDiverged(t *testing.T) {
	altered := func(b []byte) []byte {
		b = append([]byte(nil), b...)
		b[len(b)-1] ^= 1 // a payload byte
		return b
	}
	for _, tc := range []struct {
		name    string
		segment func(b [3][]byte) []byte // nil: the correct one
		offsets func(o *wire.ConsumerOffsets)
		raw     func(ico []byte) []byte
		detail  string // in the violation's detail
	}{
		{name: "the correct state"},
		{name: "the last batch missing", segment: func(b [3][]byte) []byte { return b[0] }, detail: "without op 3's committed batch"},
		{name: "the first batch missing", segment: func(b [3][]byte) []byte { return b[1] }, detail: "record 0"},
		{name: "nothing at all", segment: func([3][]byte) []byte { return nil }, detail: "ends after 0 records"},
		{name: "a batch altered", segment: func(b [3][]byte) []byte { return concat(b[0], altered(b[1])) },
			detail: "record 1 (offset 2, 1 messages"},
		{name: "a batch restamped", segment: func(b [3][]byte) []byte {
			other := append([]byte(nil), b[1]...)
			wire.StampBatch(other, 0, 2, 99)
			return concat(b[0], other)
		}, detail: "not op 3's committed batch"},
		{name: "an extra batch", segment: func(b [3][]byte) []byte { return concat(b[:]...) }, detail: "record 2 (offset 3, 2 messages) is one more"},
		{name: "the batches out of order", segment: func(b [3][]byte) []byte { return concat(b[1], b[0]) }, detail: "record 0"},
		{name: "a torn last record", segment: func(b [3][]byte) []byte { return concat(b[0], b[1][:len(b[1])-1]) },
			detail: "record 1 (at byte"},
		{name: "a wrong next_offset", offsets: func(o *wire.ConsumerOffsets) { o.NextOffset = 2 }, detail: "next_offset 2"},
		{name: "next_offset of op 7's batch", offsets: func(o *wire.ConsumerOffsets) { o.NextOffset = 5 }, detail: "end at offset 3"},
		{name: "a wrong consumer offset", offsets: func(o *wire.ConsumerOffsets) { o.Consumers[0].Offset = 1 },
			detail: "consumer 2 at offset 1, but the ops up to 6 stored offset 2"},
		{name: "a missing consumer offset", offsets: func(o *wire.ConsumerOffsets) { o.Consumers = o.Consumers[:1] },
			detail: "consumer 3 has no offset"},
		{name: "the deleted consumer offset kept", offsets: func(o *wire.ConsumerOffsets) {
			o.Consumers = append([]wire.OffsetEntry{{ID: 1, Offset: 1}}, o.Consumers...)
		}, detail: "consumer 1 at offset 1, but the ops up to 6 leave it none"},
		{name: "an extra consumer offset", offsets: func(o *wire.ConsumerOffsets) {
			o.Consumers = append(o.Consumers, wire.OffsetEntry{ID: 4, Offset: 0})
		}, detail: "consumer 4 at offset 0"},
		{name: "a consumer group's offset", offsets: func(o *wire.ConsumerOffsets) { o.Groups = []wire.OffsetEntry{{ID: 2, Offset: 2}} },
			detail: "consumer group 2"},
		{name: "a purge generation", offsets: func(o *wire.ConsumerOffsets) { o.PurgeGeneration = 1 }, detail: "purge_generation 1"},
		{name: "offsets that do not decode", raw: func(ico []byte) []byte { ico[len(ico)-1] ^= 1; return ico }, detail: "do not decode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newInstallFixture(t)
			seg, o := f.stateAt(6)
			if tc.segment != nil {
				seg = tc.segment(f.batches)
			}
			if tc.offsets != nil {
				tc.offsets(&o)
			}
			ico := wire.EncodeConsumerOffsets(o)
			if tc.raw != nil {
				ico = tc.raw(ico)
			}
			f.install(2, testGroup, 6, seg, ico)
			if tc.detail == "" {
				f.want("")
				return
			}
			f.want(checker.InstallDiverged)
			if v := f.c.Violation(); !strings.Contains(v.Detail, tc.detail) || !strings.Contains(v.Detail, "replica 2") ||
				!strings.Contains(v.Detail, "group 7 at op 6") {
				t.Fatalf("detail %q does not name replica 2, group 7, op 6 and %q", v.Detail, tc.detail)
			}
		})
	}
}

// TestPartitionInstallNoAckOffsets: a NoAck store or delete is applied by
// the primary alone, so an installed offset may be one a NoAck store of
// the consumer set, and a consumer may lack its offset after a NoAck
// delete of it; nothing else differs.
func TestPartitionInstallNoAckOffsets(t *testing.T) {
	for _, tc := range []struct {
		name      string
		consumers []wire.OffsetEntry
		want      string
	}{
		{"the log's offsets", []wire.OffsetEntry{{ID: 2, Offset: 2}, {ID: 3, Offset: 0}}, ""},
		{"a NoAck store's offset", []wire.OffsetEntry{{ID: 2, Offset: 2}, {ID: 3, Offset: 0}, {ID: 4, Offset: 1}}, ""},
		{"an offset no store set", []wire.OffsetEntry{{ID: 2, Offset: 2}, {ID: 3, Offset: 0}, {ID: 4, Offset: 2}}, checker.InstallDiverged},
		{"a NoAck delete's missing offset", []wire.OffsetEntry{{ID: 3, Offset: 0}}, ""},
		{"a missing offset no delete removed", []wire.OffsetEntry{{ID: 2, Offset: 2}}, checker.InstallDiverged},
		{"a NoAck store's offset of another consumer", []wire.OffsetEntry{{ID: 2, Offset: 1}, {ID: 3, Offset: 0}}, checker.InstallDiverged},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newInstallFixture(t)
			f.noAck(20, wire.OperationStoreConsumerOffset, offsetRequest(4, 1, true, 0))
			f.noAck(21, wire.OperationDeleteConsumerOffset, offsetRequest(2, 0, false, 0))
			seg, o := f.stateAt(6)
			o.Consumers = tc.consumers
			f.install(2, testGroup, 6, seg, wire.EncodeConsumerOffsets(o))
			f.want(tc.want)
		})
	}
}

// TestPartitionInstallNamedConsumer: a named consumer's offsets are keyed
// by a hash the checker does not compute, so once one stored an offset
// (op 8 here) the consumer offsets go uncompared; the rest still is, and
// an install below the named store is compared in full.
func TestPartitionInstallNamedConsumer(t *testing.T) {
	for _, tc := range []struct {
		name  string
		op    uint64
		edit  func(seg []byte, o *wire.ConsumerOffsets) []byte
		want  string
		noted bool
	}{
		{"any consumer offsets after the named store", 8, func(seg []byte, o *wire.ConsumerOffsets) []byte {
			o.Consumers = []wire.OffsetEntry{{ID: 9, Offset: 4}}
			return seg
		}, "", true},
		{"a wrong next_offset after the named store", 8, func(seg []byte, o *wire.ConsumerOffsets) []byte {
			o.NextOffset = 4
			return seg
		}, checker.InstallDiverged, false},
		{"a missing batch after the named store", 8, func(seg []byte, o *wire.ConsumerOffsets) []byte {
			return seg[:len(seg)-1]
		}, checker.InstallDiverged, false},
		{"a wrong consumer offset below the named store", 7, func(seg []byte, o *wire.ConsumerOffsets) []byte {
			o.Consumers = []wire.OffsetEntry{{ID: 9, Offset: 4}}
			return seg
		}, checker.InstallDiverged, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newInstallFixture(t)
			hd, body := f.offsetOp(8, wire.OperationStoreConsumerOffset, namedOffsetStore(4))
			f.commit(0, hd, body)
			f.want("")
			seg, o := f.stateAt(7)
			seg = tc.edit(seg, &o)
			f.install(2, testGroup, tc.op, seg, wire.EncodeConsumerOffsets(o))
			f.want(tc.want)
			noted := strings.Contains(strings.Join(f.c.Evidence(), "\n"), "not compared")
			if noted != tc.noted {
				t.Fatalf("noted that the offsets were not compared: %v, want %v", noted, tc.noted)
			}
		})
	}
}

// TestPartitionInstallBeyondBound: beyond the memory-loss bound the
// canonical log may have been cut, so an installed state is not compared
// with it; an install still never goes back nor installs above the commit.
func TestPartitionInstallBeyondBound(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(f *installFixture)
		want string
	}{
		{"a state unlike the log's, then op 7", func(f *installFixture) {
			f.install(2, testGroup, 6, f.batches[2], wire.EncodeConsumerOffsets(wire.ConsumerOffsets{NextOffset: 9}))
			f.commitOp(2, 7)
		}, ""},
		{"below what the replica applied", func(f *installFixture) { f.installState(0, 6) }, checker.InstallBehind},
		{"above the commit", func(f *installFixture) {
			f.install(2, testGroup, 8, nil, wire.EncodeConsumerOffsets(wire.ConsumerOffsets{}))
		}, checker.InstallUncommitted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newInstallFixture(t)
			f.c.MemoryLostBeyondBound(2, 1)
			tc.run(f)
			f.want(tc.want)
		})
	}
}
