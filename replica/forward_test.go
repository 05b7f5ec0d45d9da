package replica

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/sim/kernel"
	"github.com/iggy-vopr/vopr/storage"
)

// Session forwarding, scripted at one replica: frames from its peers are
// delivered by hand, what it sends its clients is recorded, and its probes
// say which outcome it reached. The sim's scenario tests run the whole
// round trip over the network (sim TestScenarioRegisterAtABackup).

type sentFrame struct {
	conn  ConnID
	frame []byte
}

type recordClients struct{ sent []sentFrame }

func (c *recordClients) Send(conn ConnID, frame []byte) bool {
	c.sent = append(c.sent, sentFrame{conn, append([]byte(nil), frame...)})
	return true
}
func (c *recordClients) Close(ConnID) {}

type forwardRig struct {
	r       *Replica
	sink    *recordSink
	clients *recordClients
	loop    *kernel.Loop
}

// openFresh opens replica id of a fresh three-replica cluster: Normal in
// view 0, whose primary is replica 0.
func openFresh(t *testing.T, id uint8) *forwardRig {
	t.Helper()
	cfg := Config{ClusterName: "test", Replica: id, ReplicaCount: 3, Profile: SimulationProfile()}
	cfg.Profile.JournalSlots, cfg.CheckpointInterval = 64, 32
	loop := kernel.NewLoop()
	dev := storage.NewSimDevice(loop, kernel.NewStreams(1), 1, storage.Options{SectorSize: cfg.Profile.SectorSize,
		Layout: Layout(cfg), IOsMax: cfg.DeviceIOsMax()})
	Format(cfg, dev, func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	})
	for loop.Step() {
	}
	rig := &forwardRig{sink: &recordSink{}, clients: &recordClients{}, loop: loop}
	Open(cfg, Env{Peers: nopPeers{}, Clients: rig.clients, Device: dev, Sink: rig.sink,
		Rand: rand.New(rand.NewPCG(1, 2)), RealtimeUs: func() uint64 { return 1 }}, true, func(r *Replica, err error) {
		if err != nil {
			t.Fatal(err)
		}
		rig.r = r
	})
	for rig.r == nil && loop.Step() {
	}
	if rig.r == nil {
		t.Fatal("open did not finish")
	}
	for loop.Step() { // the fresh view's state write
	}
	return rig
}

func (g *forwardRig) probed(name string) int {
	n := 0
	for _, e := range g.sink.events {
		if e.Kind == EventProbe && e.Probe == name {
			n++
		}
	}
	return n
}

func client(n uint64) wire.U128 { return wire.U128{Lo: n} }

func registerFrame(id wire.U128, user uint32) []byte {
	h := wire.RequestHeader{Client: id, Operation: wire.OperationRegister, UserID: user}
	return wire.BuildFrame(&h, nil)
}

func forwardRegisterFrame(id, nonce wire.U128, user uint32) []byte {
	x := wire.ForwardRegisterHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("test"), Replica: 1}, Client: id, Nonce: nonce, UserID: user}
	return wire.BuildFrame(&x, nil)
}

// TestForwardRegisterAtThePrimary: every verdict a primary gives a forwarded
// login, in client-ops.md's order.
func TestForwardRegisterAtThePrimary(t *testing.T) {
	t.Run("a primary proposes it and answers at commit", func(t *testing.T) {
		g := openFresh(t, 0)
		g.r.Deliver(1, forwardRegisterFrame(client(7), wire.U128{Hi: 1, Lo: 1}, 0))
		if g.probed("forwarded register proposed") != 1 || g.r.Metadata().PipelineLen() != 1 {
			t.Fatalf("not proposed: pipeline %d", g.r.Metadata().PipelineLen())
		}
		if _, ok := g.r.fwd.origins[client(7)]; !ok {
			t.Fatal("the primary does not remember whom to answer")
		}
	})
	t.Run("a backup answers NotPrimary", func(t *testing.T) {
		g := openFresh(t, 2)
		g.r.Deliver(1, forwardRegisterFrame(client(7), wire.U128{Hi: 1, Lo: 1}, 0))
		if g.probed("forwarded register refused by the primary: NotPrimary") != 1 || g.r.Metadata().PipelineLen() != 0 {
			t.Fatal("a backup did not refuse with NotPrimary")
		}
	})
	t.Run("a login of the same client in flight is InProgress", func(t *testing.T) {
		g := openFresh(t, 0)
		g.r.Deliver(1, forwardRegisterFrame(client(7), wire.U128{Hi: 1, Lo: 1}, 0))
		g.r.Deliver(2, forwardRegisterFrame(client(7), wire.U128{Hi: 2, Lo: 1}, 0))
		if g.probed("forwarded register refused by the primary: InProgress") != 1 {
			t.Fatal("a second login of a client in flight was not InProgress")
		}
	})
	t.Run("full queues are PipelineFull", func(t *testing.T) {
		g := openFresh(t, 0)
		room := g.r.cfg.Profile.PipelineMax + g.r.cfg.Profile.RequestQueueMax
		for i := range room + 1 {
			g.r.Deliver(1, forwardRegisterFrame(client(uint64(100+i)), wire.U128{Hi: 1, Lo: uint64(i + 1)}, 0))
		}
		if got := g.probed("forwarded register proposed"); got != room {
			t.Fatalf("%d proposed, want %d", got, room)
		}
		if g.probed("forwarded register refused by the primary: PipelineFull") != 1 {
			t.Fatal("the login beyond both queues was not PipelineFull")
		}
	})
	t.Run("a client id another user owns is refused", func(t *testing.T) {
		g := openFresh(t, 0)
		reply := clients.BuildReply(wire.PrepareHeader{Client: client(7), Op: 1, Operation: wire.OperationRegister}, nil)
		g.r.table.CommitRegister(3, reply)
		g.r.Deliver(1, forwardRegisterFrame(client(7), wire.U128{Hi: 1, Lo: 1}, 4))
		if g.probed("forwarded register refused by the primary: ClientIdOwnedByAnotherUser") != 1 {
			t.Fatal("a login under another user's client id was not refused")
		}
		g.r.Deliver(1, forwardRegisterFrame(client(7), wire.U128{Hi: 1, Lo: 2}, 3))
		if g.probed("forwarded register proposed") != 1 {
			t.Fatal("the owner's own login was refused")
		}
	})
	t.Run("losing the view cancels what it proposed", func(t *testing.T) {
		g := openFresh(t, 0)
		g.r.Deliver(1, forwardRegisterFrame(client(7), wire.U128{Hi: 1, Lo: 1}, 0))
		svc := wire.StartViewChangeHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("test"), View: 1, Replica: 1},
			Group: wire.MetadataGroup}
		g.r.Deliver(1, wire.BuildFrame(&svc, nil))
		if g.r.Metadata().IsPrimary() || g.probed("forwards canceled: primary lost its view") != 1 || len(g.r.fwd.origins) != 0 {
			t.Fatal("a primary that left its view kept its forwards")
		}
	})
}

// transientOf reads a reply's transient code: shape C's status, or shape B's
// result code.
func transientOf(t *testing.T, frame []byte) (status, code uint32) {
	t.Helper()
	h := wire.HeaderOf(frame)
	if h.Command() != wire.CommandReply {
		t.Fatalf("a %v, not a Reply", h.Command())
	}
	var r wire.ReplyHeader
	r.Decode(h)
	body := frame[wire.HeaderSize:]
	if len(body) == 12 {
		code = binary.LittleEndian.Uint32(body[8:])
	}
	return r.Status, code
}

// TestForwardRegisterAtABackup: a backup parks a login, forwards it, and
// answers its client by the outcome (client-ops.md 5.1 [shell] and 6.5).
func TestForwardRegisterAtABackup(t *testing.T) {
	nonce := wire.U128{Hi: 1, Lo: 1} // replica 1's first nonce of this boot
	result := func(o wire.ForwardRegisterOutcome, epoch uint64) []byte {
		x := wire.ForwardRegisterResultHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("test")}, Nonce: nonce,
			Client: client(7), Epoch: epoch, Outcome: o}
		return wire.BuildFrame(&x, nil)
	}
	cases := []struct {
		outcome wire.ForwardRegisterOutcome
		code    uint32 // the shape-B code the client gets; 0 for an eviction
	}{
		{wire.ForwardRegisterNotPrimary, codeTransientNotAccepted},
		{wire.ForwardRegisterPipelineFull, codeTransientNotAccepted},
		{wire.ForwardRegisterInProgress, codeTransientNotCommitted},
		{wire.ForwardRegisterCanceled, codeTransientNotCommitted},
		{wire.ForwardRegisterClientIDOwnedByAnotherUser, 0},
	}
	for _, tc := range cases {
		t.Run(tc.outcome.String(), func(t *testing.T) {
			g := openFresh(t, 1)
			g.r.ClientReceived(5, registerFrame(client(7), 0))
			if len(g.r.fwd.parked) != 1 || len(g.clients.sent) != 0 {
				t.Fatalf("the backup did not park the login (%d parked, %d answers)", len(g.r.fwd.parked), len(g.clients.sent))
			}
			g.r.Deliver(0, result(tc.outcome, 0))
			if len(g.clients.sent) != 1 || g.clients.sent[0].conn != 5 || len(g.r.fwd.parked) != 0 {
				t.Fatalf("%d answers, %d parked: want one answer on connection 5", len(g.clients.sent), len(g.r.fwd.parked))
			}
			f := g.clients.sent[0].frame
			if tc.code == 0 {
				var e wire.EvictionHeader
				e.Decode(wire.HeaderOf(f))
				if wire.HeaderOf(f).Command() != wire.CommandEviction || e.Reason != wire.EvictionSessionError {
					t.Fatalf("a %v with reason %v, want an Eviction SessionError", wire.HeaderOf(f).Command(), e.Reason)
				}
				return
			}
			if status, code := transientOf(t, f); status != 0 || code != tc.code {
				t.Fatalf("status %d code %d, want a result-only refusal %d", status, code, tc.code)
			}
			if _, bound := g.r.conns[client(7)]; bound {
				t.Fatal("a refused login bound the connection")
			}
		})
	}
	t.Run("Ok binds and waits for the backup's own commit", func(t *testing.T) {
		g := openFresh(t, 1)
		g.r.ClientReceived(5, registerFrame(client(7), 0))
		g.r.Deliver(0, result(wire.ForwardRegisterOk, 1))
		if c, ok := g.r.conns[client(7)]; !ok || c != 5 {
			t.Fatal("Ok did not bind the client's connection")
		}
		if len(g.clients.sent) != 0 || len(g.r.fwd.parked) != 1 {
			t.Fatal("the backup answered before it committed the Register")
		}
		// The Register commits here: its reply goes out on the bound connection.
		p := wire.PrepareHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("test"), Command: wire.CommandPrepare},
			Client: client(7), Op: 1, Operation: wire.OperationRegister, Group: wire.MetadataGroup}
		g.r.Commit(wire.BuildFrame(&p, nil))
		if len(g.clients.sent) != 1 || len(g.r.fwd.parked) != 0 {
			t.Fatalf("%d answers after the commit, %d parked", len(g.clients.sent), len(g.r.fwd.parked))
		}
		want := clients.BuildReply(p, nil)
		if string(g.clients.sent[0].frame) != string(want) {
			t.Fatal("the answer is not the committed Register's reply")
		}
	})
	t.Run("a lost result times out as TransientNotCommitted", func(t *testing.T) {
		g := openFresh(t, 1)
		g.r.ClientReceived(5, registerFrame(client(7), 0))
		for range g.r.cfg.Profile.ForwardTimeoutTicks - 1 {
			g.r.tickForwards()
		}
		if len(g.clients.sent) != 0 {
			t.Fatal("answered before the forward timed out")
		}
		g.r.tickForwards()
		if len(g.clients.sent) != 1 {
			t.Fatal("no answer once the forward timed out")
		}
		if _, code := transientOf(t, g.clients.sent[0].frame); code != codeTransientNotCommitted {
			t.Fatalf("code %d, want %d", code, codeTransientNotCommitted)
		}
		g.r.Deliver(0, result(wire.ForwardRegisterOk, 1))
		if _, bound := g.r.conns[client(7)]; bound {
			t.Fatal("a result after the timeout bound the connection")
		}
	})
	t.Run("a backup with no room refuses at once", func(t *testing.T) {
		g := openFresh(t, 1)
		for i := range g.r.cfg.Profile.ForwardsMax + 1 {
			g.r.ClientReceived(ConnID(i+1), registerFrame(client(uint64(100+i)), 0))
		}
		if len(g.clients.sent) != 1 || g.probed("forward refused by the backup: no room") != 1 {
			t.Fatalf("%d answers, want one refusal beyond %d parked", len(g.clients.sent), g.r.cfg.Profile.ForwardsMax)
		}
		if _, code := transientOf(t, g.clients.sent[0].frame); code != codeTransientNotAccepted {
			t.Fatalf("code %d, want %d", code, codeTransientNotAccepted)
		}
	})
}

// TestForwardLogout: a backup forwards a logout; the primary proposes it for
// a live session and answers a gone one as a no-op; the backup answers its
// client with an empty success in both cases.
func TestForwardLogout(t *testing.T) {
	logout := func(session, request uint64) []byte {
		h := wire.RequestHeader{Client: client(7), Session: session, Request: request, Operation: wire.OperationLogout}
		return wire.BuildFrame(&h, nil)
	}
	forward := func(session, request uint64) []byte {
		x := wire.ForwardLogoutHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("test"), Replica: 1}, Client: client(7),
			Nonce: wire.U128{Hi: 1, Lo: 1}, Session: session, Request: request}
		return wire.BuildFrame(&x, nil)
	}
	t.Run("the primary proposes a live session's logout", func(t *testing.T) {
		g := openFresh(t, 0)
		g.r.table.CommitRegister(0, clients.BuildReply(wire.PrepareHeader{Client: client(7), Op: 1, Operation: wire.OperationRegister}, nil))
		g.r.Deliver(1, forward(1, 1))
		if g.probed("forwarded logout proposed") != 1 || g.r.Metadata().PipelineLen() != 1 {
			t.Fatal("the logout of a live session was not proposed")
		}
	})
	t.Run("the primary answers a superseded session's logout as a no-op", func(t *testing.T) {
		g := openFresh(t, 0)
		g.r.table.CommitRegister(0, clients.BuildReply(wire.PrepareHeader{Client: client(7), Op: 2, Operation: wire.OperationRegister}, nil))
		g.r.Deliver(1, forward(1, 1)) // session 1, superseded by the Register at op 2
		if g.probed("forwarded logout of a gone session: no-op") != 1 || g.r.Metadata().PipelineLen() != 0 {
			t.Fatal("the logout of a superseded session was proposed")
		}
	})
	// A primary whose table does not hold the session cannot tell a gone
	// session from one it has not applied yet (it may be a stale primary,
	// cut off in an old view: VOPR seed 424401): it proposes, and the
	// commit finds whatever the log's order left.
	t.Run("the primary proposes the logout of a session its table does not hold", func(t *testing.T) {
		g := openFresh(t, 0)
		g.r.Deliver(1, forward(1, 1))
		if g.probed("forwarded logout of a gone session: no-op") != 0 || g.r.Metadata().PipelineLen() != 1 {
			t.Fatal("the logout of a session the table does not hold was answered as a no-op, not proposed")
		}
	})
	for _, tc := range []struct {
		outcome wire.ForwardLogoutOutcome
		status  uint32
	}{
		{wire.ForwardLogoutNotPrimary, codeTransientNotAccepted},
		{wire.ForwardLogoutPipelineFull, codeTransientNotAccepted},
		{wire.ForwardLogoutInProgress, codeTransientNotCommitted},
		{wire.ForwardLogoutCanceled, codeTransientNotCommitted},
		{wire.ForwardLogoutOk, 0},
	} {
		t.Run("a backup answers "+tc.outcome.String(), func(t *testing.T) {
			g := openFresh(t, 1)
			g.r.ClientReceived(5, logout(1, 1))
			x := wire.ForwardLogoutResultHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("test")}, Nonce: wire.U128{Hi: 1, Lo: 1},
				Client: client(7), Outcome: tc.outcome}
			g.r.Deliver(0, wire.BuildFrame(&x, nil)) // commit 0: a no-op Ok this replica has reached
			if len(g.clients.sent) != 1 || len(g.r.fwd.parked) != 0 {
				t.Fatalf("%d answers, %d parked", len(g.clients.sent), len(g.r.fwd.parked))
			}
			if status, code := transientOf(t, g.clients.sent[0].frame); status != tc.status || code != 0 {
				t.Fatalf("status %d (body code %d), want a status reply %d", status, code, tc.status)
			}
		})
	}
}

// TestForwardLogoutNoOpSettlesAtItsCommit: a no-op Logout's Ok names the
// primary's commit N; the backup answers it with an empty success when it
// applies op N. vsr calls Commit for op N while its commit_min is still
// N-1, so judging by CommitMin there left the logout parked until op N+1
// committed, or until the forward timed out as TransientNotCommitted (57)
// though the logout had succeeded.
func TestForwardLogoutNoOpSettlesAtItsCommit(t *testing.T) {
	g := openFresh(t, 1)
	h := wire.RequestHeader{Client: client(7), Session: 1, Request: 1, Operation: wire.OperationLogout}
	g.r.ClientReceived(5, wire.BuildFrame(&h, nil))
	x := wire.ForwardLogoutResultHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("test")}, Nonce: wire.U128{Hi: 1, Lo: 1},
		Client: client(7), Commit: 1, Outcome: wire.ForwardLogoutOk}
	g.r.Deliver(0, wire.BuildFrame(&x, nil))
	if len(g.clients.sent) != 0 || len(g.r.fwd.parked) != 1 {
		t.Fatalf("answered before this replica applied op 1 (%d answers, %d parked)", len(g.clients.sent), len(g.r.fwd.parked))
	}
	// Op 1, another client's login, is applied here as vsr's commit walk
	// applies it: Commit runs before commit_min reaches the op.
	p := wire.PrepareHeader{Prefix: wire.Prefix{Cluster: wire.ClusterID("test"), Command: wire.CommandPrepare},
		Client: client(9), Op: 1, Operation: wire.OperationRegister, Group: wire.MetadataGroup}
	g.r.Commit(wire.BuildFrame(&p, nil))
	if g.r.Metadata().CommitMin() != 0 {
		t.Fatalf("commit_min %d: the scripted apply is not vsr's order", g.r.Metadata().CommitMin())
	}
	if len(g.clients.sent) != 1 || g.clients.sent[0].conn != 5 || len(g.r.fwd.parked) != 0 {
		t.Fatalf("%d answers, %d parked once op 1 was applied: want the logout answered on connection 5", len(g.clients.sent), len(g.r.fwd.parked))
	}
	if status, code := transientOf(t, g.clients.sent[0].frame); status != 0 || code != 0 {
		t.Fatalf("status %d (body code %d), want an empty success", status, code)
	}
}

// TestBackupDeniesALogoutBody: a Logout (or Register) whose body is not
// empty is denied InvalidCommand by a backup, as the primary's Preflight
// denies it, instead of being forwarded without its body and committed
// (VOPR seed 5 with -bad-requests 0.2: the answer depended on which
// replica the client reached).
func TestBackupDeniesALogoutBody(t *testing.T) {
	for _, op := range []wire.Operation{wire.OperationLogout, wire.OperationRegister} {
		g := openFresh(t, 1)
		h := wire.RequestHeader{Client: client(7), Operation: op}
		if op == wire.OperationLogout {
			h.Session, h.Request = 1, 1
		}
		g.r.ClientReceived(5, wire.BuildFrame(&h, []byte{1, 2, 3}))
		if len(g.r.fwd.parked) != 0 || g.probed("forward refused by the backup: a body the primary denies") != 1 {
			t.Fatalf("%v: a body was forwarded (%d parked)", op, len(g.r.fwd.parked))
		}
		if len(g.clients.sent) != 1 {
			t.Fatalf("%v: %d frames sent, want the denial", op, len(g.clients.sent))
		}
		if status, _ := transientOf(t, g.clients.sent[0].frame); status != 3 {
			t.Fatalf("%v: status %d, want InvalidCommand (3)", op, status)
		}
		h.RequestChecksum = wire.U128{}
		g.r.ClientReceived(5, wire.BuildFrame(&h, nil))
		if len(g.r.fwd.parked) != 1 {
			t.Fatalf("%v: an empty body was not forwarded", op)
		}
	}
}
