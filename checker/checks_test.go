package checker_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// One test per check: each feeds a history that breaks exactly that
// invariant and expects exactly that violation, and the correct variant of
// the same history, which must pass.

func TestHealthyRunPasses(t *testing.T) {
	f, cls := started(t, 3, 3)
	f.do(f.invoke(cls[0], createStream("s")))
	f.do(f.invoke(cls[1], createStream("s"))) // a committed rejection: name taken
	f.do(f.invoke(cls[2], createTopic("s", "t", 2)))
	f.do(f.invoke(cls[0], createPartitions("s", "t", 3)))
	f.do(f.invoke(cls[1], deleteStream("s")))
	f.do(f.invoke(cls[2], deleteStream("s"))) // not found
	wantPass(t, f)
	if got := f.c.Committed(); got != 9 {
		t.Fatalf("Committed() = %d, want 9", got)
	}
	for op := uint64(1); op <= 9; op++ {
		h, ok := f.c.Header(op)
		if !ok || h != f.log[op-1].header {
			t.Fatalf("Header(%d) = %v, %v; want the log's", op, h.Checksum(), ok)
		}
	}
	for _, op := range []uint64{0, 10} {
		if _, ok := f.c.Header(op); ok {
			t.Fatalf("Header(%d) found", op)
		}
	}
}

func TestDivergentCommit(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 2)
		a := f.invoke(cls[0], createStream("a"))
		b := f.invoke(cls[1], createStream("b"))
		f.propose(a)
		f.commit(0)
		if bad {
			// Replica 1 commits b's prepare at op 3, which replica 0
			// committed as a's.
			f.commitPrep(1, f.forge(b, 3))
			v := wantViolation(t, f, checker.DivergentCommit)
			if !slices.Equal(v.Replicas, []uint8{1}) || !slices.Equal(v.Ops, []uint64{3}) {
				t.Fatalf("evidence %v %v", v.Replicas, v.Ops)
			}
			// The conflict names the commit it conflicts with, which the
			// last events need not hold.
			if !strings.Contains(v.Detail, "first committed by replica 0 at") {
				t.Fatalf("the detail does not name the first commit: %s", v.Detail)
			}
			continue
		}
		f.commitAll()
		f.reply(a)
		f.do(b)
		wantPass(t, f)
	}
}

func TestCommittedOpReplaced(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 2)
		a := f.invoke(cls[0], createStream("a"))
		b := f.invoke(cls[1], createStream("b"))
		f.do(a)
		// Replica 0 crashes and replays from op 1; in the bad history the
		// op it had committed comes back as another prepare (a lost write).
		f.crash(0)
		f.commitTo(0, 2)
		if bad {
			f.commitPrep(0, f.forge(b, 3))
			wantViolation(t, f, checker.CommittedOpReplaced)
			continue
		}
		f.commit(0)
		f.do(b)
		wantPass(t, f)
	}
}

func TestHashChainBreak(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 1)
		a := f.invoke(cls[0], createStream("a"))
		p := f.build(a, func(x *wire.PrepareHeader, _ *[]byte) {
			if bad {
				x.Parent = wire.BodySeal([]byte("some other op 1"))
			}
		})
		f.append(p)
		f.commitAll()
		if bad {
			v := wantViolation(t, f, checker.HashChainBreak)
			if !slices.Equal(v.Ops, []uint64{1, 2}) {
				t.Fatalf("ops %v", v.Ops)
			}
			continue
		}
		f.reply(a)
		wantPass(t, f)
	}
}

func TestLogGap(t *testing.T) {
	setup := func(t *testing.T) *fakeCluster {
		f, cls := started(t, 3, 2)
		f.do(f.invoke(cls[0], createStream("a")))
		f.do(f.invoke(cls[1], createStream("b")))
		return f // 4 ops, every replica committed them
	}
	t.Run("skip", func(t *testing.T) {
		for _, bad := range []bool{false, true} {
			f := setup(t)
			c, d := f.client(9), f.client(10)
			f.do(f.register(c))
			f.do(f.register(d))
			f.propose(f.invoke(c, createStream("c")))
			f.propose(f.invoke(d, createStream("d")))
			f.commitTo(1, 8)
			if bad {
				f.commitPrep(0, f.log[7]) // replica 0 skips op 7
				v := wantViolation(t, f, checker.LogGap)
				if !slices.Equal(v.Replicas, []uint8{0}) || !slices.Equal(v.Ops, []uint64{8}) {
					t.Fatalf("evidence %v %v", v.Replicas, v.Ops)
				}
				continue
			}
			f.commitAll()
			wantPass(t, f)
		}
	})
	t.Run("again without a crash", func(t *testing.T) {
		f := setup(t)
		f.commitPrep(2, f.log[3]) // op 4 again, never crashed
		wantViolation(t, f, checker.LogGap)
	})
	t.Run("replay after a crash", func(t *testing.T) {
		f := setup(t)
		f.crash(2)
		f.commitTo(2, 4) // ops 1..4 again: fine
		f.crash(2)
		f.commitTo(2, 1)
		wantPass(t, f)
	})
	t.Run("op 3 right after a crash", func(t *testing.T) {
		f := setup(t)
		f.crash(2)
		f.commitPrep(2, f.log[2])
		v := wantViolation(t, f, checker.LogGap)
		if !strings.Contains(v.Detail, "op 1 was next") {
			t.Fatalf("detail %q", v.Detail)
		}
	})
}

func TestTimestampRegression(t *testing.T) {
	for _, delta := range []int64{1, 0, -1} {
		f, cls := started(t, 3, 1)
		a := f.invoke(cls[0], createStream("a"))
		prev := f.log[len(f.log)-1].x.Timestamp
		f.append(f.build(a, func(x *wire.PrepareHeader, _ *[]byte) { x.Timestamp = uint64(int64(prev) + delta) }))
		f.commitAll()
		if delta <= 0 {
			wantViolation(t, f, checker.TimestampRegression)
			continue
		}
		f.reply(a)
		wantPass(t, f)
	}
}

func TestConflictingPrepares(t *testing.T) {
	t.Run("one view", func(t *testing.T) {
		for _, bad := range []bool{false, true} {
			f, cls := started(t, 3, 2)
			a := f.invoke(cls[0], createStream("a"))
			b := f.invoke(cls[1], createStream("b"))
			p := f.propose(a)
			if bad {
				f.prepared(0, 0, f.forge(b, p.op())) // a second prepare for view 0, op 3
				wantViolation(t, f, checker.ConflictingPrepares)
				continue
			}
			f.prepared(0, 0, p) // the same prepare again is the same prepare
			f.commitAll()
			f.reply(a)
			wantPass(t, f)
		}
	})
	t.Run("new view replaces an uncommitted op", func(t *testing.T) {
		f, cls := started(t, 3, 2)
		a := f.invoke(cls[0], createStream("a"))
		b := f.invoke(cls[1], createStream("b"))
		f.propose(a) // op 3 in view 0, never committed
		f.viewChange(1, 2)
		f.do(b) // op 3 in view 1: another prepare, another view
		f.do(a) // a's retry commits as op 4
		wantPass(t, f)
	})
}

func TestConflictingStartView(t *testing.T) {
	build := func(t *testing.T) (*fakeCluster, []wire.Header) {
		f, cls := started(t, 3, 2)
		f.propose(f.invoke(cls[0], createStream("a")))
		f.propose(f.invoke(cls[1], createStream("b")))
		f.startView(1)
		return f, f.suffix()
	}
	t.Run("same", func(t *testing.T) {
		f, hs := build(t)
		f.startViewWith(1, 4, hs) // a resent StartView
		f.startViewWith(2, 3, hs[1:])
		wantPass(t, f)
	})
	t.Run("other op", func(t *testing.T) {
		f, hs := build(t)
		f.startViewWith(1, 3, hs[1:])
		wantViolation(t, f, checker.ConflictingStartView)
	})
	t.Run("other headers", func(t *testing.T) {
		f, hs := build(t)
		other := slices.Clone(hs)
		other[0] = f.forge(f.invoke(f.client(7), createStream("c")), 4).header
		f.startViewWith(1, 4, other)
		wantViolation(t, f, checker.ConflictingStartView)
	})
	t.Run("fewer headers", func(t *testing.T) {
		f, hs := build(t)
		f.startViewWith(1, 4, hs[:1])
		wantViolation(t, f, checker.ConflictingStartView)
	})
}

func TestViewRegression(t *testing.T) {
	for _, restartView := range []uint32{3, 5, 6} {
		f, _ := started(t, 3, 1)
		f.sent(1, 5)
		f.crash(1)
		f.sent(1, 3) // a lower view sent after the restart changes nothing
		f.status(1, vsr.StatusRecovering, restartView)
		if restartView < 5 {
			v := wantViolation(t, f, checker.ViewRegression)
			if !slices.Equal(v.Replicas, []uint8{1}) {
				t.Fatalf("replicas %v", v.Replicas)
			}
			continue
		}
		f.status(1, vsr.StatusNormal, restartView)
		wantPass(t, f)
	}
	t.Run("only the first status after a restart", func(t *testing.T) {
		f, _ := started(t, 3, 1)
		f.sent(1, 5)
		f.status(1, vsr.StatusNormal, 3) // no restart: not this check's business
		f.crash(1)
		f.status(1, vsr.StatusRecovering, 5)
		f.status(1, vsr.StatusNormal, 4) // not the first status after the restart
		wantPass(t, f)
	})
}

func TestPhantomCommit(t *testing.T) {
	cases := []struct {
		name string
		bend func(f *fakeCluster, cl *fakeClient) *prep // nil: the correct variant
	}{
		{"correct", nil},
		{"no invocation", func(f *fakeCluster, cl *fakeClient) *prep {
			c := createStream("a") // never invoked
			return f.build(&req{cl: cl, inv: workload.Invocation{ClientID: cl.id, Request: 99, Operation: c.op,
				Body: c.body, Checksum: wire.BodySeal(c.body)}}, nil)
		}},
		{"wrong checksum", func(f *fakeCluster, cl *fakeClient) *prep {
			return f.build(f.invoke(cl, createStream("a")), func(x *wire.PrepareHeader, _ *[]byte) {
				x.RequestChecksum = wire.BodySeal([]byte("something else"))
			})
		}},
		{"wrong body", func(f *fakeCluster, cl *fakeClient) *prep {
			return f.build(f.invoke(cl, createStream("a")), func(_ *wire.PrepareHeader, body *[]byte) {
				*body = createStream("b").body
			})
		}},
		{"operation mismatch", func(f *fakeCluster, cl *fakeClient) *prep {
			return f.build(f.invoke(cl, createStream("a")), func(x *wire.PrepareHeader, _ *[]byte) {
				x.Operation = wire.OperationUpdateStream
			})
		}},
		{"wrong request number", func(f *fakeCluster, cl *fakeClient) *prep {
			return f.build(f.invoke(cl, createStream("a")), func(x *wire.PrepareHeader, _ *[]byte) { x.Request++ })
		}},
		{"another client's id", func(f *fakeCluster, cl *fakeClient) *prep {
			return f.build(f.invoke(cl, createStream("a")), func(x *wire.PrepareHeader, _ *[]byte) {
				x.Client = f.client(5).id
			})
		}},
		{"register nobody sent", func(f *fakeCluster, cl *fakeClient) *prep {
			stranger := f.client(6) // never invoked a Register
			r := &req{cl: stranger}
			r.inv.ClientID = stranger.id
			return f.build(r, func(x *wire.PrepareHeader, body *[]byte) {
				x.Operation, x.Request, *body = wire.OperationRegister, 0, nil
			})
		}},
		{"projected with another request", func(f *fakeCluster, cl *fakeClient) *prep {
			return f.build(f.invoke(cl, createTopic("s", "t", 1)), func(_ *wire.PrepareHeader, body *[]byte) {
				pr, _ := metadata.Project(wire.OperationCreateTopic, createTopic("s", "t", 2).body, metadata.NewGroupAllocator(9))
				*body = pr.Body
			})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, cls := started(t, 3, 1)
			if tc.bend == nil {
				f.do(f.invoke(cls[0], createStream("a")))
				f.do(f.invoke(cls[0], createTopic("a", "t", 1)))
				wantPass(t, f)
				return
			}
			p := tc.bend(f, cls[0])
			f.append(p)
			f.commit(0)
			name := checker.PhantomCommit
			if p.x.Operation == wire.OperationCreateTopicWithAssignments {
				name = checker.ProjectionDiverged // named as the primary sends it (admission.go)
			}
			v := wantViolation(t, f, name)
			if !slices.Equal(v.Ops, []uint64{2}) {
				t.Fatalf("ops %v", v.Ops)
			}
		})
	}
}

func TestDuplicateApply(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 1)
		a := f.do(f.invoke(cls[0], createStream("a")))
		if bad {
			// The primary applies a's retry again, as a new op.
			f.append(f.build(a, nil))
			f.commitAll()
			v := wantViolation(t, f, checker.DuplicateApply)
			if !slices.Equal(v.Ops, []uint64{2, 3}) {
				t.Fatalf("ops %v", v.Ops)
			}
			continue
		}
		f.complete(a, a.p.reply) // the retry is answered with the cached reply
		f.do(f.invoke(cls[0], createStream("a")))
		wantPass(t, f)
	}
}

func TestWrongReply(t *testing.T) {
	t.Run("correct", func(t *testing.T) {
		f, cls := started(t, 3, 2)
		f.do(f.invoke(cls[0], createStream("a")))
		f.do(f.invoke(cls[1], createStream("a")))
		wantPass(t, f)
	})
	t.Run("bytes differ from the model", func(t *testing.T) {
		f, cls := started(t, 3, 2)
		f.do(f.invoke(cls[0], createStream("a")))
		b := f.invoke(cls[1], createStream("a"))
		f.propose(b)
		f.commitAll()
		// The model says "name taken"; the reply says created (a stale state).
		stale := metadata.NewModel().Apply(b.p.x, b.p.body)
		f.complete(b, clients.BuildReply(b.p.x, stale))
		wantViolation(t, f, checker.WrongReply)
	})
	t.Run("header differs", func(t *testing.T) {
		f, cls := started(t, 3, 1)
		a := f.invoke(cls[0], createStream("a"))
		f.propose(a)
		f.commitAll()
		frame := append([]byte(nil), a.p.reply...)
		wire.HeaderOf(frame).SetView(1) // replies carry view 0
		f.complete(a, frame)
		wantViolation(t, f, checker.WrongReply)
	})
	t.Run("uncommitted op", func(t *testing.T) {
		f, cls := started(t, 3, 1)
		a := f.invoke(cls[0], createStream("a"))
		f.propose(a)
		f.complete(a, clients.BuildReply(a.p.x, metadata.NewModel().Apply(a.p.x, a.p.body)))
		v := wantViolation(t, f, checker.WrongReply)
		if !strings.Contains(v.Detail, "not committed") {
			t.Fatalf("detail %q", v.Detail)
		}
	})
	t.Run("op 0", func(t *testing.T) {
		f, cls := started(t, 3, 1)
		a := f.invoke(cls[0], createStream("a"))
		h := wire.ReplyHeader{Client: cls[0].id, Request: 1, Operation: wire.OperationCreateStream}
		f.complete(a, wire.BuildFrame(&h, nil))
		wantViolation(t, f, checker.WrongReply)
	})
	t.Run("another client's op", func(t *testing.T) {
		f, cls := started(t, 3, 2)
		a := f.do(f.invoke(cls[0], createStream("a")))
		b := f.invoke(cls[1], createStream("b"))
		f.propose(b)
		f.commitAll()
		f.complete(b, a.p.reply)
		v := wantViolation(t, f, checker.WrongReply)
		if !strings.Contains(v.Detail, "which is client") {
			t.Fatalf("detail %q", v.Detail)
		}
	})
}

// TestRealTimeOrder: B invoked after A completed, yet B holds a lower op
// than A. A history fed in the order things happen cannot show this (B
// would have committed before it was invoked, so before the Invoke that
// precedes its commit), so the checker finds it when A's completion is
// recorded: here the recorder stamps B's invocation later than the events
// it precedes.
func TestRealTimeOrder(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 2)
		base := f.now
		if bad {
			f.at(base + 1e9) // B's invocation is stamped after A's completion
		}
		b := f.invoke(cls[1], createStream("b"))
		f.at(base + 10_000)
		a := f.invoke(cls[0], createStream("a"))
		f.do(b)
		f.do(a)
		if bad {
			v := wantViolation(t, f, checker.RealTimeOrder)
			if !slices.Equal(v.Ops, []uint64{4, 3}) {
				t.Fatalf("ops %v", v.Ops)
			}
			continue
		}
		wantPass(t, f)
	}
	t.Run("an indefinite op counts", func(t *testing.T) {
		f, cls := started(t, 3, 2)
		base := f.now
		f.at(base + 1e9)
		b := f.invoke(cls[1], createStream("b"))
		f.at(base + 10_000)
		f.indefinite(b)
		f.propose(b)
		f.commitAll()
		f.do(f.invoke(cls[0], createStream("a")))
		wantViolation(t, f, checker.RealTimeOrder)
	})
	t.Run("registers are not ordered", func(t *testing.T) {
		f, cls := started(t, 3, 1)
		base := f.now
		f.at(base + 1e9)
		late := f.client(3)
		r := f.register(late)
		f.at(base + 10_000)
		f.propose(r)
		f.commitAll()
		f.do(f.invoke(cls[0], createStream("a")))
		f.reply(r)
		wantPass(t, f)
	})
	t.Run("equal times are concurrent", func(t *testing.T) {
		for _, gap := range []int64{0, 1} {
			f, cls := started(t, 3, 2)
			base := f.now
			f.at(base + 1e6 - 1000)
			b := f.invoke(cls[1], createStream("b")) // stamped base+1e6
			f.at(base + 10_000)
			a := f.invoke(cls[0], createStream("a"))
			f.do(b)
			f.propose(a)
			f.commitAll()
			f.at(b.inv.AtNs - 1000 - gap)
			f.reply(a) // completes at b's invocation (gap 0) or 1 ns before
			if gap == 0 {
				wantPass(t, f)
				continue
			}
			wantViolation(t, f, checker.RealTimeOrder)
		}
	})
}

func TestReplicaPanic(t *testing.T) {
	f, _ := started(t, 3, 1)
	wantPass(t, f)
	f.c.Panic(42e9, 2, "vsr: assertion failed")
	v := wantViolation(t, f, checker.ReplicaPanic)
	if !slices.Equal(v.Replicas, []uint8{2}) || v.Detail != "vsr: assertion failed" || v.AtNs != 42e9 {
		t.Fatalf("violation %+v", v)
	}
	if got, want := v.Error(), "replica panic: vsr: assertion failed (at 42.000 s, replicas [2])"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestReplaysPass(t *testing.T) {
	f, cls := started(t, 3, 1)
	a := f.do(f.invoke(cls[0], createStream("a")))
	// The replica resends the cached reply to a retry; the client-port
	// events are not the checker's business, the bytes the client records
	// are, and they are the same bytes.
	f.c.Replica(f.tick(), replica.Event{Kind: replica.EventReplay, Replica: 1, Client: cls[0].id, Request: 1, Op: a.p.op(),
		Frame: a.p.reply})
	f.c.Replica(f.tick(), replica.Event{Kind: replica.EventReply, Replica: 1, Client: cls[0].id, Request: 1, Op: a.p.op(),
		Frame: a.p.reply, Sent: true})
	f.complete(a, a.p.reply)
	f.complete(a, slices.Clone(a.p.reply))
	wantPass(t, f)
}

func TestRegisterCommittedTwicePasses(t *testing.T) {
	for _, answer := range []int{0, 1} {
		f := newFake(t, 3)
		cl := f.client(0)
		r := f.register(cl)
		first := f.propose(r)
		f.commitPrep(0, first)
		second := f.propose(r) // the retry reaches the primary again once it committed the first: a second Register
		f.commitAll()
		r.p = []*prep{first, second}[answer] // the client sees either reply
		f.reply(r)
		f.do(f.invoke(cl, createStream("a")))
		wantPass(t, f)
	}
}

func TestProjectedOperations(t *testing.T) {
	segmentSize := wire.EncodeOptions([]wire.Option{
		// A value sent as text: the primary re-encodes it as a typed u64.
		{Key: "segment_size", Kind: wire.OptionString, Value: []byte("2097152")},
		{Key: "compression_algorithm", Kind: wire.OptionString, Value: []byte("gzip")},
	})
	cases := []struct {
		name string
		c    call
	}{
		{"create topic", createTopic("s", "t", 3)},
		{"create topic, no partitions", createTopic("s", "u", 0)},
		{"create topic, options in client form", call{wire.OperationCreateTopic, metadata.CreateTopic{
			Stream: metadata.Named("s"), PartitionsCount: 1, Name: "v", Options: segmentSize}.Encode()}},
		{"create partitions", createPartitions("s", "t", 2)},
		{"create partitions, trailing bytes", call{wire.OperationCreatePartitions,
			append(createPartitions("s", "t", 2).body, 0xee)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, cls := started(t, 3, 1)
			f.do(f.invoke(cls[0], createStream("s")))
			f.do(f.invoke(cls[0], createTopic("s", "t", 1)))
			r := f.do(f.invoke(cls[0], tc.c))
			if want := map[wire.Operation]wire.Operation{wire.OperationCreateTopic: wire.OperationCreateTopicWithAssignments,
				wire.OperationCreatePartitions: wire.OperationCreatePartitionsWithAssignments}[tc.c.op]; r.p.x.Operation != want {
				t.Fatalf("committed as %v", r.p.x.Operation)
			}
			wantPass(t, f)
		})
	}
	t.Run("create partitions with another count", func(t *testing.T) {
		f, cls := started(t, 3, 1)
		f.do(f.invoke(cls[0], createStream("s")))
		f.do(f.invoke(cls[0], createTopic("s", "t", 1)))
		r := f.invoke(cls[0], createPartitions("s", "t", 2))
		f.append(f.build(r, func(_ *wire.PrepareHeader, body *[]byte) {
			pr, _ := metadata.Project(wire.OperationCreatePartitions, createPartitions("s", "t", 3).body, metadata.NewGroupAllocator(99))
			*body = pr.Body
		}))
		f.commit(0)
		wantViolation(t, f, checker.ProjectionDiverged) // named as it is sent (admission.go)
	})
	// 132 and 136 must be committed as 64 and 65: the request body as a
	// replicated body does not decode.
	for _, c := range []call{createTopic("s", "t", 1), createPartitions("s", "t", 1)} {
		t.Run("committed verbatim "+c.op.String(), func(t *testing.T) {
			f, cls := started(t, 3, 1)
			r := f.invoke(cls[0], c)
			f.append(f.build(r, func(_ *wire.PrepareHeader, body *[]byte) { *body = r.inv.Body }))
			f.commit(0)
			wantViolation(t, f, checker.ProjectionDiverged) // named as it is sent (admission.go)
		})
	}
	t.Run("create topic a primary must refuse", func(t *testing.T) {
		// A segment_size below 1 MiB: a correct primary evicts the client
		// instead of projecting the request.
		tiny := wire.EncodeOptions([]wire.Option{{Key: "segment_size", Kind: wire.OptionString, Value: []byte("512")}})
		bad := metadata.CreateTopic{Stream: metadata.Named("s"), PartitionsCount: 1, Name: "t", Options: tiny}
		f, cls := started(t, 3, 1)
		r := f.invoke(cls[0], call{wire.OperationCreateTopic, bad.Encode()})
		f.append(f.build(&req{cl: cls[0], inv: workload.Invocation{ClientID: cls[0].id, Request: r.inv.Request,
			Checksum: r.inv.Checksum, Operation: wire.OperationCreateTopicWithAssignments}},
			func(_ *wire.PrepareHeader, body *[]byte) {
				*body = metadata.CreateTopicWithAssignments{Request: bad, Derived: metadata.DerivedDefaults(),
					Partitions: []metadata.PartitionAssignment{{PartitionID: 0, ConsensusGroupID: 1}}}.Encode()
			}))
		// Named as it is prepared (admission.go), before any commit.
		wantViolation(t, f, checker.RefusedPrepared)
	})
}

func TestIndefinite(t *testing.T) {
	t.Run("commits later", func(t *testing.T) {
		f, cls := started(t, 3, 2)
		a := f.invoke(cls[0], createStream("a"))
		f.propose(a)
		f.indefinite(a) // evicted while in flight
		f.commitAll()   // ...and it commits after all
		f.do(f.register(cls[0]))
		f.do(f.invoke(cls[0], createStream("a"))) // name taken, by its own earlier request
		f.do(f.invoke(cls[1], createStream("b")))
		wantPass(t, f)
	})
	t.Run("never commits", func(t *testing.T) {
		f, cls := started(t, 3, 2)
		a := f.invoke(cls[0], createStream("a"))
		f.propose(a)
		f.indefinite(a)
		f.viewChange(1, f.applied) // the prepare is lost in a view change
		f.do(f.invoke(cls[1], createStream("a")))
		wantPass(t, f)
	})
	t.Run("denied", func(t *testing.T) {
		f, cls := started(t, 3, 1)
		a := f.invoke(cls[0], createStream("a"))
		f.denied(a)
		f.do(f.invoke(cls[0], createStream("b")))
		wantPass(t, f)
	})
}

func TestOtherGroupsIgnored(t *testing.T) {
	f, _ := started(t, 3, 1)
	group, err := wire.PackGroup(wire.PartitionGroup{Stream: 1, Topic: 1, Partition: 0})
	if err != nil {
		t.Fatal(err)
	}
	// A partition plane's commit at op 7 would be a gap on the metadata plane.
	e := vsr.Event{Kind: vsr.EventCommitted, Group: group, Replica: 0, Op: 7, Header: f.log[0].header}
	f.c.Replica(f.tick(), replica.Event{Kind: replica.EventGroup, Replica: 0, Group: e})
	f.c.Replica(f.tick(), replica.Event{Kind: replica.EventProbe, Replica: 0, Probe: "x"})
	f.group(0, vsr.Event{Kind: vsr.EventProbe, Probe: "repair answered"})
	wantPass(t, f)
}

func TestFirstViolationSticks(t *testing.T) {
	f, cls := started(t, 3, 1)
	a := f.invoke(cls[0], createStream("a"))
	f.propose(a)
	f.commitPrep(0, f.log[0]) // op 1 again: a gap
	v := wantViolation(t, f, checker.LogGap)
	n := len(f.c.Evidence())
	f.commitPrep(1, f.log[1])
	f.complete(a, []byte("not even a frame")) // not looked at after a violation
	f.c.Panic(f.tick(), 1, "later")
	if got := f.c.Violation(); got != v || got.Name != checker.LogGap {
		t.Fatalf("violation changed to %v", got)
	}
	if len(f.c.Evidence()) != n {
		t.Fatalf("evidence grew after the violation")
	}
}

func TestEvidence(t *testing.T) {
	f, cls := started(t, 3, 1)
	for i := range 30 {
		f.do(f.invoke(cls[0], createStream(string(rune('a'+i%26))+"x")))
	}
	ev := f.c.Evidence()
	if len(ev) != 40 {
		t.Fatalf("%d lines of evidence, want 40", len(ev))
	}
	last := ev[len(ev)-1]
	if !strings.Contains(last, "request 30") || !strings.HasSuffix(last, "replied") {
		t.Fatalf("last evidence %q", last)
	}
	ev[0] = "changed"
	if f.c.Evidence()[0] == "changed" {
		t.Fatalf("Evidence returns the checker's own slice")
	}
	v := &checker.Violation{Name: checker.LogGap, Detail: "d", AtNs: 1_500_000_000, Replicas: []uint8{1, 2}, Ops: []uint64{3}}
	if got, want := v.Error(), "log gap: d (at 1.500 s, replicas [1 2], ops [3])"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func TestCorruptBodyApplied(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 1)
		a := f.invoke(cls[0], createStream("a"))
		p := f.propose(a)
		f.commit(0)
		if bad {
			// Replica 1 applies op 3 under its header with a body that
			// rotted: the identity matches, the body does not.
			rotten := *p
			rotten.body = append([]byte(nil), p.body...)
			rotten.body[len(rotten.body)-1] ^= 1
			f.commitTo(1, p.op()-1)
			f.commitPrep(1, &rotten)
			v := wantViolation(t, f, checker.CorruptBodyApplied)
			if !slices.Equal(v.Replicas, []uint8{1}) || !slices.Equal(v.Ops, []uint64{p.op()}) {
				t.Fatalf("evidence %v %v", v.Replicas, v.Ops)
			}
			continue
		}
		f.commitAll()
		f.reply(a)
		wantPass(t, f)
	}
}
