package checker_test

import (
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/checker/wirespec"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// quietNormal is a quiet cluster of n replicas, all Normal in view 0.
func quietNormal(t *testing.T, n int) *fakeCluster {
	f := newFake(t, n)
	core := make([]bool, n)
	for r := range n {
		f.status(uint8(r), vsr.StatusNormal, 0)
		core[r] = true
	}
	f.c.Quiet(f.tick(), core)
	return f
}

// after moves the clock on by ticks and runs the quiet cluster's checks.
func (f *fakeCluster) after(ticks int) {
	f.at(f.now + int64(ticks)*tickNs)
	f.c.QuietTick(f.now, tickNs)
}

// A replica told of a newer view by a StartViewChange joins it; one that
// stays in its view is named.
func TestNewerViewIgnored(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f := quietNormal(t, 3)
		f.c.Delivered(f.tick(), 1, 2, startViewChange(1, 1))
		if !bad {
			f.status(2, vsr.StatusViewChange, 1)
		}
		f.after(10)
		if bad {
			if v := wantViolation(t, f, checker.NewerViewIgnored); !v.Liveness {
				t.Fatal("a promise of the quiet cluster is not marked liveness")
			}
			continue
		}
		wantPass(t, f)
	}
}

// A recovering replica ignores view changes (consensus.md 5): no promise.
func TestNewerViewIgnoredWhileRecovering(t *testing.T) {
	f := quietNormal(t, 3)
	f.status(2, vsr.StatusRecovering, 0)
	f.c.Delivered(f.tick(), 1, 2, startViewChange(1, 1))
	f.after(10)
	wantPass(t, f)
}

// A replica in a view change that heard f others suspect the primary
// votes; one that heard them and sends no DoViewChange is named, unless it
// said it withholds its vote (an amnesiac).
func TestNoDoViewChange(t *testing.T) {
	for _, tc := range []struct {
		name     string
		votes    bool
		withheld bool
		want     string
	}{
		{"votes", true, false, ""},
		{"silent", false, false, checker.NoDoViewChange},
		{"withholds", false, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := quietNormal(t, 3)
			f.status(2, vsr.StatusViewChange, 1)
			f.c.Delivered(f.tick(), 1, 2, startViewChange(1, 1))
			if tc.withheld {
				f.group(2, vsr.Event{Kind: vsr.EventProbe, View: 1, Probe: "amnesiac replica withholds its DoViewChange"})
			}
			f.after(100)
			if tc.votes {
				f.c.Delivered(f.tick(), 2, 1, doViewChange(f, 1, 0, 2, 0))
				f.status(1, vsr.StatusViewChange, 1)
			}
			f.after(400)
			if tc.want != "" {
				wantViolation(t, f, tc.want)
				return
			}
			wantPass(t, f)
		})
	}
}

// A Normal backup that acknowledged op N-1 and is given op N of its view,
// chained to it, acknowledges it (or learns it committed); one that does
// neither is named.
func TestPrepareNotAcked(t *testing.T) {
	for _, tc := range []struct {
		name string
		then func(f *fakeCluster, p2 *prep)
		want string
	}{
		{"acknowledged", func(f *fakeCluster, p2 *prep) { f.c.Delivered(f.tick(), 1, 0, prepareOk(0, 1, p2)) }, ""},
		{"committed", func(f *fakeCluster, p2 *prep) { f.commitTo(1, p2.op()) }, ""},
		{"left the view", func(f *fakeCluster, p2 *prep) { f.status(1, vsr.StatusViewChange, 1) }, ""},
		{"silent", func(f *fakeCluster, p2 *prep) {}, checker.PrepareNotAcked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := quietNormal(t, 3)
			p1 := f.propose(f.register(f.client(0)))
			f.c.Delivered(f.tick(), 1, 0, prepareOk(0, 1, p1))
			p2 := f.propose(f.register(f.client(1)))
			f.c.Delivered(f.tick(), 0, 1, p2.frame)
			f.after(10)
			tc.then(f, p2)
			f.after(600)
			if tc.want != "" {
				wantViolation(t, f, tc.want)
				return
			}
			wantPass(t, f)
		})
	}
}

// A backup that committed op N-1 (its acknowledgement lost) holds it: the
// prepare of op N chained to it is owed an acknowledgement too.
func TestPrepareNotAckedAfterCommit(t *testing.T) {
	f := quietNormal(t, 3)
	p1 := f.propose(f.register(f.client(0)))
	f.commitPrep(0, p1)
	f.commitTo(1, p1.op())
	p2 := f.propose(f.register(f.client(1)))
	f.c.Delivered(f.tick(), 0, 1, p2.frame)
	f.after(610)
	wantViolation(t, f, checker.PrepareNotAcked)
}

// A Normal primary resends a prepare short of a quorum to each Normal
// backup that has not acknowledged it; one that never does is named.
func TestPrepareNotRetransmitted(t *testing.T) {
	for _, tc := range []struct {
		name string
		each func(f *fakeCluster, p *prep) // every 500 ticks
		want string
	}{
		{"resent", func(f *fakeCluster, p *prep) {
			f.c.Delivered(f.tick(), 0, 1, p.frame)
			f.c.Delivered(f.tick(), 0, 2, p.frame)
		}, ""},
		{"resent to one backup only", func(f *fakeCluster, p *prep) { f.c.Delivered(f.tick(), 0, 1, p.frame) }, checker.PrepareNotRetransmitted},
		{"never resent", func(f *fakeCluster, p *prep) {}, checker.PrepareNotRetransmitted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := quietNormal(t, 3)
			p := f.propose(f.register(f.client(0)))
			f.group(0, vsr.Event{Kind: vsr.EventAcked, View: 0, Op: p.op(), Header: p.header})
			for range 4 {
				tc.each(f, p)
				f.after(500)
			}
			if tc.want != "" {
				wantViolation(t, f, tc.want)
				return
			}
			wantPass(t, f)
		})
	}
}

// A prepare at a replication quorum is committed: nothing more is owed to
// the backup that never acknowledged it.
func TestPrepareAtQuorumNotOwed(t *testing.T) {
	f := quietNormal(t, 3)
	p := f.propose(f.register(f.client(0)))
	f.group(0, vsr.Event{Kind: vsr.EventAcked, View: 0, Op: p.op(), Header: p.header})
	f.c.Delivered(f.tick(), 1, 0, prepareOk(0, 1, p))
	f.commitPrep(0, p)
	f.after(2000)
	wantPass(t, f)
}

// A quorum counted before the quiet cluster binds the primary in it too:
// its pipeline emptied, no acknowledgement of the op arrives again.
func TestQuorumBeforeQuietNotCommitted(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f := newFake(t, 3)
		for r := range 3 {
			f.status(uint8(r), vsr.StatusNormal, 0)
		}
		p := f.propose(f.register(f.client(0)))
		f.group(0, vsr.Event{Kind: vsr.EventAcked, View: 0, Op: p.op(), Header: p.header})
		f.c.Delivered(f.tick(), 1, 0, prepareOk(0, 1, p))
		if !bad {
			f.commitPrep(0, p)
		}
		f.c.Quiet(f.tick(), []bool{true, true, true})
		f.after(60)
		if bad {
			wantViolation(t, f, checker.QuorumNotCommitted)
			continue
		}
		wantPass(t, f)
	}
}

// A PrepareOk the receiver refuses (a bit flipped in its size, which closes
// the connection: VOPR seed 3115656313) makes no quorum: the primary that
// never heard it owes no commit; the intact one does.
func TestRefusedAckMakesNoQuorum(t *testing.T) {
	for _, flipped := range []bool{false, true} {
		f := newFake(t, 3)
		for r := range 3 {
			f.status(uint8(r), vsr.StatusNormal, 0)
		}
		p := f.propose(f.register(f.client(0)))
		f.group(0, vsr.Event{Kind: vsr.EventAcked, View: 0, Op: p.op(), Header: p.header})
		ok := prepareOk(0, 1, p)
		if flipped {
			ok[wirespec.OffSize+1] ^= 1 << 1 // size 256 + 512
		}
		f.c.Delivered(f.tick(), 1, 0, ok)
		f.c.Quiet(f.tick(), []bool{true, true, true})
		f.after(60)
		if !flipped {
			wantViolation(t, f, checker.QuorumNotCommitted)
			continue
		}
		wantPass(t, f)
	}
}

// A replica given its view's StartView by the view's primary goes Normal in
// it; one that does not, or that leaves for a view no frame told it of
// (its own election), is named.
func TestStartViewNotAdopted(t *testing.T) {
	for _, tc := range []struct {
		name string
		then func(f *fakeCluster)
		want string
	}{
		{"adopted", func(f *fakeCluster) { f.status(2, vsr.StatusNormal, 3) }, ""},
		{"told of a newer view", func(f *fakeCluster) {
			f.c.Delivered(f.tick(), 1, 2, startViewChange(4, 1))
			f.status(2, vsr.StatusViewChange, 4)
			f.c.Delivered(f.tick(), 2, 1, doViewChange(f, 4, 0, 2, 0))
			f.status(1, vsr.StatusViewChange, 4)
			f.c.Delivered(f.tick(), 2, 0, doViewChange(f, 4, 0, 2, 0))
			f.status(0, vsr.StatusViewChange, 4)
			f.c.Delivered(f.tick(), 1, 0, doViewChange(f, 4, 0, 1, 0))
			f.c.Delivered(f.tick(), 0, 1, doViewChange(f, 4, 0, 0, 0))
		}, ""},
		{"elected itself", func(f *fakeCluster) {
			f.at(f.now + 10*tickNs)
			f.status(2, vsr.StatusViewChange, 4)
		}, checker.StartViewNotAdopted},
		{"stayed", func(f *fakeCluster) {}, checker.StartViewNotAdopted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := quietNormal(t, 3)
			p := f.propose(f.register(f.client(0)))
			f.status(2, vsr.StatusRecovering, 0)
			f.c.Delivered(f.tick(), 0, 2, startView(3, p))
			f.after(10)
			tc.then(f)
			f.after(3100)
			if tc.want != "" {
				wantViolation(t, f, tc.want)
				return
			}
			wantPass(t, f)
		})
	}
}

// startView is view's StartView from its primary with p's header.
func startView(view uint32, p *prep) []byte {
	x := wire.StartViewHeader{Prefix: wire.Prefix{View: view, Replica: uint8(view % 3)}, Op: p.op(), Group: wire.MetadataGroup}
	return wire.BuildFrame(&x, wire.EncodeSuffix([]wire.Header{p.header}))
}

// A core replica's superblock records the view it is in once its state
// write completes; one still at an older view long after is named.
func TestViewNotDurable(t *testing.T) {
	for _, durable := range []bool{false, true} {
		f := newFake(t, 3)
		d := newFakeDisks()
		f.c.SetDisks(d)
		for r := range 3 {
			f.status(uint8(r), vsr.StatusNormal, 0)
		}
		f.c.Quiet(f.tick(), []bool{true, true, true})
		f.status(1, vsr.StatusViewChange, 1)
		if durable {
			d.view[1] = [2]uint32{1, 0}
		}
		f.after(310)
		if !durable {
			wantViolation(t, f, checker.ViewNotDurable)
			continue
		}
		wantPass(t, f)
	}
}

// commitFrame is view's Commit heartbeat from its primary, saying ops up to
// commit are committed.
func commitFrame(view uint32, commit uint64) []byte {
	x := wire.CommitHeader{Prefix: wire.Prefix{View: view, Replica: uint8(view % 3)}, Commit: commit, Group: wire.MetadataGroup}
	return wire.BuildFrame(&x, nil)
}

// A Normal backup told by its primary that ops up to C are committed
// commits them; one that stays short is named.
func TestCommitNotFollowed(t *testing.T) {
	for _, follows := range []bool{false, true} {
		f := quietNormal(t, 3)
		p := f.propose(f.register(f.client(0)))
		f.commitPrep(0, p)
		f.c.Delivered(f.tick(), 0, 1, commitFrame(0, p.op()))
		f.after(100)
		if follows {
			f.commitTo(1, p.op())
		}
		f.after(3000)
		if !follows {
			wantViolation(t, f, checker.CommitNotFollowed)
			continue
		}
		wantPass(t, f)
	}
}

// A replica that applied an op at a multiple of the checkpoint interval
// records a checkpoint at or above it; one whose superblock stays below it
// is named.
func TestCheckpointNotRecorded(t *testing.T) {
	for _, recorded := range []bool{false, true} {
		f, d := normalWithDisks(t)
		f.c.SetCheckpointInterval(1)
		f.c.Quiet(f.tick(), []bool{true, true, true})
		p := f.propose(f.register(f.client(0)))
		f.commitPrep(0, p)
		if recorded {
			d.checkpoint[0] = p.op()
		}
		f.after(1010)
		if !recorded {
			wantViolation(t, f, checker.CheckpointNotRecorded)
			continue
		}
		wantPass(t, f)
	}
}

// A replica's own view change goes to the next view; one that jumps over a
// view no frame told it of is named.
func TestViewSkipped(t *testing.T) {
	for _, to := range []uint32{1, 2} {
		f := quietNormal(t, 3)
		f.status(1, vsr.StatusViewChange, to)
		if to == 2 {
			// (Liveness: a promise of the quiet cluster.)
			wantViolation(t, f, checker.ViewSkipped)
			continue
		}
		f.c.Delivered(f.tick(), 1, 0, startViewChange(1, 1))
		f.c.Delivered(f.tick(), 1, 2, startViewChange(1, 1))
		f.status(0, vsr.StatusViewChange, 1)
		f.status(2, vsr.StatusViewChange, 1)
		wantPass(t, f)
	}
}

// A core replica that restarted reports its metadata group's status once
// its disk is open; one that never does is named.
func TestNeverOpened(t *testing.T) {
	for _, opens := range []bool{false, true} {
		f := quietNormal(t, 3)
		f.crash(2)
		if opens {
			f.status(2, vsr.StatusRecovering, 0)
			f.status(2, vsr.StatusNormal, 0)
		}
		f.after(3010)
		if !opens {
			wantViolation(t, f, checker.NeverOpened)
			continue
		}
		wantPass(t, f)
	}
}

// A StartViewChange counts toward a replica's vote only if it heard it in
// the view it tallies: one that ignored view 1's suspicions while
// recovering, then elected itself into view 1 (which the others had left
// Normal), heard nobody there and owes no vote; one that hears them in its
// view change owes it (VOPR seed 424747, partition group 3: replica 0 was
// named for StartViewChanges it heard in view 24, recovering).
func TestNoDoViewChangeOnlyForItsView(t *testing.T) {
	for _, heardInView := range []bool{false, true} {
		f := quietNormal(t, 3)
		f.status(2, vsr.StatusRecovering, 0)
		f.c.Delivered(f.tick(), 1, 2, startViewChange(1, 1))
		f.c.Delivered(f.tick(), 0, 2, startViewChange(1, 0))
		f.after(100)
		f.status(2, vsr.StatusViewChange, 1) // its own election
		if heardInView {
			f.c.Delivered(f.tick(), 1, 2, startViewChange(1, 1))
		}
		f.after(410)
		if heardInView {
			wantViolation(t, f, checker.NoDoViewChange)
			continue
		}
		wantPass(t, f)
	}
}

// A replica that joins a view on hearing its StartViewChange counts that
// one (its tally starts afresh with it); a new life starts from nothing.
func TestNoDoViewChangeJoinCounts(t *testing.T) {
	for _, restarted := range []bool{false, true} {
		f := quietNormal(t, 3)
		joinBy(f, 1, 2, startViewChange(1, 1), 1)
		if restarted {
			f.crash(2)
			f.status(2, vsr.StatusRecovering, 1)
			f.status(2, vsr.StatusViewChange, 1)
		}
		f.after(410)
		if !restarted {
			wantViolation(t, f, checker.NoDoViewChange)
			continue
		}
		wantPass(t, f)
	}
}

// joinBy delivers frame, of view, from replica from to replica to, which
// joins the view in its handler: its status comes at the delivery's time,
// as a real delivery's does.
func joinBy(f *fakeCluster, from, to uint8, frame []byte, view uint32) {
	now := f.tick()
	f.c.Delivered(now, from, to, frame)
	f.c.Replica(now, replica.Event{Kind: replica.EventGroup, Replica: to, Group: vsr.Event{Kind: vsr.EventStatus,
		Group: wire.MetadataGroup, Replica: to, Status: vsr.StatusViewChange, View: view, LogView: 0}})
}

// A vote is owed once the replica can reach a core peer: one in a view
// change with its quorum of suspicions and no established connection at
// both ends (one a reset closed at the other end before the quiet cluster,
// the bus to redial it ReconnectTicks on) owes nothing yet; once it can,
// it owes its DoViewChange within the grace (VOPR seed 664490705,
// -bad-frames=true: replica 0 had no connection from 16 s to 19.75 s).
func TestNoDoViewChangeOnceConnected(t *testing.T) {
	for _, votes := range []bool{true, false} {
		f := quietNormal(t, 3)
		linked := false
		f.c.SetLinks(func(r, p uint8) bool { return linked || r != 2 && p != 2 })
		joinBy(f, 1, 2, startViewChange(1, 1), 1)
		f.after(450) // 2 can reach nobody: its vote has no way out
		wantPass(t, f)
		linked = true
		f.after(100)
		if votes {
			f.c.Delivered(f.tick(), 2, 1, doViewChange(f, 1, 0, 2, 0))
			f.status(1, vsr.StatusViewChange, 1)
		}
		f.after(410)
		if !votes {
			v := wantViolation(t, f, checker.NoDoViewChange)
			if !strings.Contains(v.Detail, "connected to a core peer since") {
				t.Fatalf("the violation does not say since when it could send: %s", v.Detail)
			}
			continue
		}
		wantPass(t, f)
	}
}

// A checkpoint is owed by the life that applied its op: a replica that
// crashed before recording it and restored an older one owes it once it
// applies the op again, not before (VOPR seed 3530214869: replica 0
// applied op 25 at 0.25 s, crashed, restored op 20's checkpoint, and was
// named 210 s on while its core could not yet finish a view change).
func TestCheckpointOwedByItsLife(t *testing.T) {
	for _, appliesAgain := range []bool{false, true} {
		f, _ := normalWithDisks(t)
		f.c.SetCheckpointInterval(1)
		p := f.propose(f.register(f.client(0)))
		f.commitPrep(0, p)
		f.crash(0) // before its checkpoint
		f.status(0, vsr.StatusRecovering, 0)
		f.c.Quiet(f.tick(), []bool{true, true, true})
		f.after(1010)
		wantPass(t, f)
		if appliesAgain {
			f.commitTo(0, p.op())
		}
		f.after(1010)
		if appliesAgain {
			wantViolation(t, f, checker.CheckpointNotRecorded)
			continue
		}
		wantPass(t, f)
	}
}

// In a group of two, f = 0: a replica votes on entering a view change,
// with no StartViewChange heard; one that never does is named.
func TestNoDoViewChangeOfTwo(t *testing.T) {
	for _, votes := range []bool{true, false} {
		f := quietNormal(t, 2)
		f.status(1, vsr.StatusViewChange, 1) // its own suspicion
		f.after(100)
		if votes {
			f.c.Delivered(f.tick(), 1, 0, doViewChange(f, 1, 0, 1, 0))
			f.status(0, vsr.StatusViewChange, 1)
			f.c.Delivered(f.tick(), 0, 1, doViewChange(f, 1, 0, 0, 0))
		}
		f.after(500)
		if !votes {
			wantViolation(t, f, checker.NoDoViewChange)
			continue
		}
		wantPass(t, f)
	}
}

// A StartView is owed only while the core can carry the replica to it: a
// committed op above what the replica applied that no core replica holds
// (no durable prepare of it, no durable checkpoint over it) excuses it, as
// at VOPR seed 154 with -logout 0.1 (promises_catchup.go). The op held
// anywhere in the core, or acknowledged by a core replica whose disk may
// not lose it, keeps it owed.
func TestStartViewNotAdoptedWhereTheCoreLacksAnOp(t *testing.T) {
	for _, tc := range []struct {
		name string
		disk func(d *fakeDisks, p *prep)
		want string
	}{
		{"missing in the core", func(d *fakeDisks, p *prep) {}, ""},
		{"held by the primary's disk", func(d *fakeDisks, p *prep) {
			d.held[slotKey{0, p.op()}] = p.x.Checksum
		}, checker.StartViewNotAdopted},
		{"held by the recovering replica's disk", func(d *fakeDisks, p *prep) {
			d.held[slotKey{2, p.op()}] = p.x.Checksum
		}, checker.StartViewNotAdopted},
		{"under the primary's checkpoint", func(d *fakeDisks, p *prep) {
			d.checkpoint[0] = p.op()
		}, checker.StartViewNotAdopted},
		{"acknowledged where no fault may reach", func(d *fakeDisks, p *prep) {
			d.faultable[slotKey{0, p.op()}] = false
		}, checker.StartViewNotAdopted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, d := normalWithDisks(t)
			f.c.Quiet(f.tick(), []bool{true, true, true})
			p := f.propose(f.register(f.client(0)))
			// The primary acknowledged it durably and committed it; then a
			// fault the atlas allows took its slot.
			d.held[slotKey{0, p.op()}] = p.x.Checksum
			f.group(0, vsr.Event{Kind: vsr.EventAcked, View: 0, Op: p.op(), Header: p.header})
			f.commitPrep(0, p)
			delete(d.held, slotKey{0, p.op()})
			for r := range 3 {
				d.faultable[slotKey{uint8(r), p.op()}] = true
			}
			tc.disk(d, p)
			f.status(2, vsr.StatusRecovering, 0)
			f.c.Delivered(f.tick(), 0, 2, startView(3, p))
			f.after(3100)
			if tc.want != "" {
				wantViolation(t, f, tc.want)
				return
			}
			wantPass(t, f)
		})
	}
}

// A probe's answer is owed only to the life that probed (promises_probe.go):
// an answer echoing an earlier life's incarnation, replayed on the
// restarted replica's new connection by the stale-answer nemesis, owes
// nothing, whether the new life's own probe reached the primary or not
// (VOPR seed 3328441306 with -replicas 2 -view-change-faults=true: replica
// 0 ignored it, "stale StartView ignored", and elected itself). The answer
// to the present life's probe, or an unsolicited one, stays owed.
func TestStartViewNotAdoptedOnlyByTheLifeThatProbed(t *testing.T) {
	earlier := wire.U128{Lo: 0x1111, Hi: 1}
	present := wire.U128{Lo: 0x2223, Hi: 2}
	for _, tc := range []struct {
		name     string
		restarts bool      // replica 2 crashes and restarts after its first probe
		reprobes bool      // its present life's probe reaches the primary
		answer   wire.U128 // the incarnation the StartView echoes
		elects   bool      // it elects itself after (else it stays)
		want     string
	}{
		{"an earlier life's answer replayed, then an election", true, false, earlier, true, ""},
		{"an earlier life's answer replayed, then it stays", true, false, earlier, false, ""},
		{"an earlier life's answer after the present life probed", true, true, earlier, true, ""},
		{"the present life's answer, then an election", true, true, present, true, checker.StartViewNotAdopted},
		{"the present life's answer, then it stays", true, true, present, false, checker.StartViewNotAdopted},
		{"the answer to its probe, no restart", false, false, earlier, true, checker.StartViewNotAdopted},
		{"an unsolicited StartView after a restart", true, false, wire.U128{}, true, checker.StartViewNotAdopted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := quietNormal(t, 3)
			p := f.propose(f.register(f.client(0)))
			f.status(2, vsr.StatusRecovering, 0)
			f.c.Delivered(f.tick(), 2, 0, requestStartView(0, 2, earlier))
			if tc.restarts {
				f.crash(2)
				f.status(2, vsr.StatusRecovering, 0)
			}
			if tc.reprobes {
				f.c.Delivered(f.tick(), 2, 0, requestStartView(0, 2, present))
			}
			f.c.Delivered(f.tick(), 0, 2, startViewFor(3, p, tc.answer))
			f.after(10)
			if tc.elects {
				f.status(2, vsr.StatusViewChange, 4)
			}
			f.after(3100)
			if tc.want != "" {
				wantViolation(t, f, tc.want)
				return
			}
			wantPass(t, f)
		})
	}
}

// requestStartView is replica r's probe of view with its boot's
// incarnation.
func requestStartView(view uint32, r uint8, inc wire.U128) []byte {
	x := wire.RequestStartViewHeader{Prefix: wire.Prefix{View: view, Replica: r}, Group: wire.MetadataGroup, Incarnation: inc}
	return wire.BuildFrame(&x, nil)
}

// startViewFor is view's StartView from its primary with p's header,
// answering the probe of incarnation inc (zero: unsolicited).
func startViewFor(view uint32, p *prep, inc wire.U128) []byte {
	x := wire.StartViewHeader{Prefix: wire.Prefix{View: view, Replica: uint8(view % 3)}, Op: p.op(), Group: wire.MetadataGroup, Incarnation: inc}
	return wire.BuildFrame(&x, wire.EncodeSuffix([]wire.Header{p.header}))
}

// normalWithDisks: three replicas Normal in view 0 over fake disks that
// record checkpoints, for the promises that read the disks.
func normalWithDisks(t *testing.T) (*fakeCluster, *fakeDisks) {
	f := newFake(t, 3)
	d := newFakeDisks()
	d.checkpoint = map[uint8]uint64{}
	f.c.SetDisks(d)
	for r := range 3 {
		f.status(uint8(r), vsr.StatusNormal, 0)
	}
	return f, d
}
