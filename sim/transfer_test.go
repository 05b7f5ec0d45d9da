package sim

import (
	"testing"
)

// TestScenarioStateTransferCatchesUpABackup: a backup is down while the
// other two commit far past their checkpoints (interval 8); when it comes
// back, its repair of the ops it missed is answered RangeEvicted (a
// journal serves nothing its checkpoint covers), it pulls a checkpoint by
// state transfer, installs it, repairs the ops above and applies
// everything, with the checker comparing each snapshot with its own model
// and the installed one with the bytes every replica checkpointed.
func TestScenarioStateTransferCatchesUpABackup(t *testing.T) {
	o := DefaultClusterOptions(21, 3, 1)
	o.CheckpointInterval = 8
	c := NewCluster(o)
	if !c.RunUntil(5*second, func() bool { return c.Primary() != nil }) {
		t.Fatal("the cluster did not come up")
	}
	w := watchCluster(c)
	behind := c.Replicas[(int(c.Primary().ID())+1)%3]
	behind.Crash()
	cl := c.Clients[0]
	submitStreams(cl, "st", 40)
	if !c.RunUntil(60*second, func() bool { return len(cl.Completions) >= 40 }) {
		dumpCluster(t, c)
		t.Fatal("the two replicas left did not commit the requests")
	}
	if c.Checkpoints < 2*4 {
		t.Fatalf("%d checkpoints recorded, want at least 4 on each of the two replicas up", c.Checkpoints)
	}
	behind.Restart()
	settleAll(t, c, 60*second)
	expectAllCommitted(t, c)
	probes := w.probes[behind.ID()]
	for _, p := range []string{"repair answered with RangeEvicted", "state transfer started", "state transfer completed"} {
		if probes[p] == 0 {
			t.Fatalf("the restarted backup never reported %q: probes %v", p, probes)
		}
	}
	if c.StateTransfersMetadata == 0 {
		t.Fatal("no install reached the checker")
	}
	r := behind.Replica()
	if got, want := r.Metadata().CommitMin(), c.Checker.Committed(); got != want {
		t.Fatalf("the backup applied up to %d, the cluster committed %d", got, want)
	}
	if got := r.Metadata().CheckpointOp(); got < 8 {
		t.Fatalf("the backup's superblock records checkpoint %d, want the installed one or later", got)
	}
}
