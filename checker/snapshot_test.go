package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// checkpointRun: two registers, a stream and a topic of two partitions
// (ops 1-4), checkpoint interval 4, and the replica's snapshot at op 4
// (built by the replica's own code, then edited by tamper).
func checkpointRun(t *testing.T, tamper func(st *metadata.State)) *fakeCluster {
	f := newFake(t, 3)
	f.c.SetCheckpointInterval(4)
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
	tamper(st)
	payload := st.EncodeSnapshot(metadata.SnapshotMeta{CreatedAt: f.log[3].x.Timestamp, SequenceNumber: 4})
	f.c.Replica(f.tick(), replica.Event{Kind: replica.EventCheckpoint, Replica: 1, Op: 4, Frame: payload})
	return f
}

// TestSnapshotAgainstTheModel: a checkpoint's snapshot that holds the
// state at its op passes; one that holds a state the model never had at
// that op (a stream more) fails "snapshot differs from the model", read by
// the checker's own reading of the payload.
func TestSnapshotAgainstTheModel(t *testing.T) {
	wantPass(t, checkpointRun(t, func(*metadata.State) {}))
	f := checkpointRun(t, func(st *metadata.State) {
		x := wire.PrepareHeader{Op: 5, Timestamp: 99, Operation: wire.OperationCreateStream, UserID: metadata.RootUserID}
		st.Apply(x, metadata.CreateStream{Name: "ghost"}.Encode())
	})
	v := wantViolation(t, f, checker.SnapshotWrong)
	if len(v.Ops) != 1 || v.Ops[0] != 4 {
		t.Fatalf("violation at ops %v, want [4]", v.Ops)
	}
}
