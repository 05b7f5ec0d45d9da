package checker_test

import (
	"errors"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

const tickNs = 10_000_000

// In the quiet cluster a primary holding its own and a quorum's
// acknowledgements of its next op commits it; one that sits on them is
// named.
func TestQuorumNotCommitted(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 1)
		f.c.Quiet(f.tick(), []bool{true, true, true})
		a := f.invoke(cls[0], createStream("a"))
		p := f.propose(a)
		f.group(0, vsr.Event{Kind: vsr.EventAcked, View: 0, Op: p.op(), Header: p.header})
		f.c.Delivered(f.tick(), 1, 0, prepareOk(0, 1, p))
		if !bad {
			f.commitPrep(0, p)
		}
		f.at(f.now + 10*tickNs)
		f.c.QuietTick(f.now, tickNs)
		if bad {
			v := wantViolation(t, f, checker.QuorumNotCommitted)
			if !v.Liveness {
				t.Fatal("a promise of the quiet cluster is not marked liveness")
			}
			continue
		}
		wantPass(t, f)
	}
}

// A replica that cannot open its disk is named (the fault model leaves no
// disk a correct replica cannot open).
func TestOpenRefused(t *testing.T) {
	f, _ := started(t, 3, 1)
	f.c.OpenFailed(f.tick(), 2, errors.New("journal: no trustworthy superblock"))
	wantViolation(t, f, checker.OpenRefused)
}

// A state transfer whose checksummed artifact does not decode read it
// wrong; one whose artifact failed its checksum met a fault.
func TestTransferRefused(t *testing.T) {
	for _, probe := range []string{"state transfer retried: an artifact failed its checksum", "state transfer failed: an artifact does not decode"} {
		f, _ := started(t, 3, 1)
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventProbe, Replica: 1, Probe: probe})
		if probe == "state transfer failed: an artifact does not decode" {
			wantViolation(t, f, checker.TransferRefused)
			continue
		}
		wantPass(t, f)
	}
}

// A replica that has committed the whole canonical log refuses nothing as
// "replaying"; one behind it may.
func TestRefusedWithoutCause(t *testing.T) {
	for _, tc := range []struct {
		name     string
		caughtUp bool
	}{{"behind the log", false}, {"announced a commit not applied yet", false}, {"caught up", true}} {
		f, cls := started(t, 3, 1)
		f.do(f.invoke(cls[0], createStream("a")))
		caughtUp := tc.caughtUp
		switch tc.name {
		case "behind the log":
			f.crash(2) // it replays from op 1
		case "announced a commit not applied yet":
			// The primary announces op 3 committed before it applies it.
			x := wire.CommitHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("test")}, Commit: 3, Group: wire.MetadataGroup}
			f.c.Sent(f.tick(), 0, 2, wire.BuildFrame(&x, nil))
		}
		f.status(2, vsr.StatusNormal, 0)
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventProbe, Replica: 2,
			Probe: "partition plane: request refused: the metadata plane is replaying what it applied before its restart"})
		if caughtUp {
			wantViolation(t, f, checker.RefusedWithoutCause)
			continue
		}
		wantPass(t, f)
	}
}
