package checker_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// tableEntryOf is one client table entry of a snapshot (DEVIATIONS.md 60).
type tableEntryOf struct {
	client           wire.U128
	epoch, watermark uint64
	reply            []byte
}

// clientTableOf encodes a snapshot's client_table by hand: [capacity,
// [[client, epoch, user_id, watermark, watermark_checksum, reply]...]].
func clientTableOf(t *testing.T, capacity uint32, es ...tableEntryOf) []byte {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	u128 := func(v wire.U128) []byte {
		b := make([]byte, 16)
		binary.LittleEndian.PutUint64(b, v.Lo)
		binary.LittleEndian.PutUint64(b[8:], v.Hi)
		return b
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.EncodeArrayLen(2))
	must(e.EncodeUint32(capacity))
	must(e.EncodeArrayLen(len(es)))
	for _, x := range es {
		must(e.EncodeArrayLen(6))
		must(e.EncodeBytes(u128(x.client)))
		must(e.EncodeUint64(x.epoch))
		must(e.EncodeUint32(0))
		must(e.EncodeUint64(x.watermark))
		must(e.EncodeBytes(make([]byte, 16)))
		must(e.EncodeBytes(x.reply))
	}
	return buf.Bytes()
}

// TestSnapshotClientTableAgainstTheModel: a checkpoint's client table that
// holds the model's sessions at its op (client id order, epochs,
// watermarks, each newest reply the one its op built) passes; a watermark
// off, a reply of another op, a session missing, or sessions out of order
// fail "snapshot differs from the model" (issue 26: a client table that
// every replica encodes alike, wrongly, is no longer taken on trust).
func TestSnapshotClientTableAgainstTheModel(t *testing.T) {
	run := func(edit func(f *fakeCluster, es []tableEntryOf) []tableEntryOf) *fakeCluster {
		f, st, es := twoSessionCheckpoint(t)
		es = edit(f, es)
		payload := st.EncodeSnapshot(metadata.SnapshotMeta{CreatedAt: f.log[3].x.Timestamp, SequenceNumber: 4,
			ClientTable: clientTableOf(t, 4, es...)})
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventCheckpoint, Replica: 1, Op: 4, Frame: payload})
		return f
	}
	wantPass(t, run(func(_ *fakeCluster, es []tableEntryOf) []tableEntryOf { return es }))
	for name, edit := range map[string]func(f *fakeCluster, es []tableEntryOf) []tableEntryOf{
		"watermark":    func(_ *fakeCluster, es []tableEntryOf) []tableEntryOf { es[1].watermark = 0; return es },
		"reply":        func(f *fakeCluster, es []tableEntryOf) []tableEntryOf { es[1].reply = f.log[1].reply; return es },
		"missing":      func(_ *fakeCluster, es []tableEntryOf) []tableEntryOf { return es[:1] },
		"out of order": func(_ *fakeCluster, es []tableEntryOf) []tableEntryOf { return []tableEntryOf{es[1], es[0]} },
	} {
		t.Run(name, func(t *testing.T) {
			wantViolation(t, run(edit), checker.SnapshotWrong)
		})
	}
}

// twoSessionCheckpoint: two registers, a stream and a topic of two
// partitions (ops 1-4), checkpoint interval 4 and a client table of 4
// slots; it returns the cluster, the state applied through op 4 and the
// model's two sessions at op 4 (the client table a checkpoint must hold).
func twoSessionCheckpoint(t *testing.T) (*fakeCluster, *metadata.State, []tableEntryOf) {
	f := newFake(t, 3)
	f.c.SetCheckpointInterval(4)
	f.c.SetClientTableCapacity(4)
	f.status(0, vsr.StatusNormal, 0)
	cls := []*fakeClient{f.client(0), f.client(1)}
	for _, cl := range cls {
		f.do(f.register(cl))
	}
	f.do(f.invoke(cls[0], createStream("a")))
	f.do(f.invoke(cls[1], createTopic("a", "t", 2)))
	st := metadata.NewState()
	for _, p := range f.log[:4] {
		st.Apply(p.x, p.body)
	}
	return f, st, []tableEntryOf{
		{client: cls[0].id, epoch: 1, watermark: 1, reply: f.log[2].reply},
		{client: cls[1].id, epoch: 2, watermark: 1, reply: f.log[3].reply},
	}
}
