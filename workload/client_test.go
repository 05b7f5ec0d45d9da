package workload_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// A request that times out is sent again, byte for byte (same client, session,
// request number and checksum), to the next replica in turn, and stays one
// invocation: the replicas' client table deduplicates it only if it is the
// very same request, and the checker counts invocations, not sends.
func TestTimeoutResendsSameRequestToNextReplica(t *testing.T) {
	const timeoutTicks = 5
	cases := []struct {
		name                      string
		replicas, index, timeouts int
		wantTargets               []int // the replica of the first send, then of each resend
	}{
		{"three replicas from replica 0", 3, 0, 4, []int{0, 1, 2, 0, 1}},
		{"client 3 of five starts at replica 3 and wraps", 5, 3, 3, []int{3, 4, 0, 1}},
		{"client 8 of six starts at replica 2", 6, 8, 6, []int{2, 3, 4, 5, 0, 1, 2}},
		{"one replica: the same one again", 1, 0, 2, []int{0, 0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newRig(t, workload.Config{Index: tc.index, Replicas: tc.replicas, TimeoutTicks: timeoutTicks})
			id := g.register(7)
			g.c.Submit(op(1))
			g.tick()
			first := g.lastSend()
			if h := first.request(); h.Request != 1 || h.Session != 7 || h.Client != id || h.Operation != wire.OperationCreateStream {
				t.Fatalf("first send: request %d session %d client %s %v", h.Request, h.Session, h.Client, h.Operation)
			}
			if first.target != tc.wantTargets[0] {
				t.Fatalf("first send to replica %d, want %d", first.target, tc.wantTargets[0])
			}
			for i := 1; i <= tc.timeouts; i++ {
				dials, sends, conn := len(g.net.dials), len(g.net.sends), g.net.last
				for range timeoutTicks - 1 {
					g.tick()
				}
				if len(g.net.dials) != dials {
					t.Fatalf("timeout %d: failed over after %d ticks, before the timeout of %d", i, timeoutTicks-1, timeoutTicks)
				}
				g.tick()
				if n := len(g.rec.timeouts); n != i || g.rec.timeouts[n-1] != (workload.Timeout{Client: tc.index, ClientID: id,
					Request: 1, Target: tc.wantTargets[i], Attempts: i, AtNs: g.net.nowNs}) {
					t.Fatalf("timeout %d: reported %+v", i, g.rec.timeouts)
				}
				if len(g.net.dials) != dials+1 {
					t.Fatalf("timeout %d: no new dial after %d ticks", i, timeoutTicks)
				}
				if got := g.net.dials[dials]; got != tc.wantTargets[i] {
					t.Fatalf("timeout %d: dialed replica %d, want %d", i, got, tc.wantTargets[i])
				}
				if n := len(g.net.closed); n == 0 || g.net.closed[n-1] != conn {
					t.Fatalf("timeout %d: the connection %d it left was not closed (closed %v)", i, conn, g.net.closed)
				}
				if len(g.net.sends) != sends {
					t.Fatalf("timeout %d: sent before the new connection was up", i)
				}
				g.connect()
				re := g.lastSend()
				if len(g.net.sends) != sends+1 || re.conn != g.net.last {
					t.Fatalf("timeout %d: no resend on the new connection", i)
				}
				if !bytes.Equal(re.frame, first.frame) {
					t.Fatalf("timeout %d: the resend differs from the first send (request %d, want 1)", i, re.request().Request)
				}
			}
			g.net.nowNs += 3 // the completion must carry the clock of its own moment
			g.deliver(replyFrame(id, 1, 2, 0))
			dones := g.rec.completions()
			last := dones[len(dones)-1]
			if last.Kind != workload.Replied || last.Request != 1 || last.Attempts != tc.timeouts+1 || last.AtNs != g.net.nowNs {
				t.Errorf("completion %+v, want replied request 1 after %d attempts at %d", last, tc.timeouts+1, g.net.nowNs)
			}
			if invs := g.rec.invocations(); len(invs) != 2 || invs[1].Request != 1 {
				t.Errorf("invocations %+v, want the Register and request 1 once", invs)
			}
			if g.c.Timeouts != tc.timeouts {
				t.Errorf("Timeouts %d, want %d", g.c.Timeouts, tc.timeouts)
			}
		})
	}
}

// An eviction while a request is in flight makes that request indefinite
// (it may or may not have committed), and the client never sends it again:
// it registers under a fresh id and goes on with its next request, whose
// number is above the evicted one. Resending the evicted request under the
// new session could apply it twice.
func TestEvictionInFlightIsIndefiniteAndNeverResent(t *testing.T) {
	const timeoutTicks = 4
	cases := []struct {
		name           string
		timeoutsBefore int // failovers of the request before the eviction
		reason         wire.EvictionReason
	}{
		{"evicted at its first send", 0, wire.EvictionNoSession},
		{"evicted after two failovers", 2, wire.EvictionSessionTooLow},
		{"evicted as a stale client", 1, wire.EvictionStaleClient},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newRig(t, workload.Config{Index: 1, Replicas: 3, TimeoutTicks: timeoutTicks})
			old := g.register(3)
			g.c.Submit(op(1))
			g.c.Submit(op(2))
			g.tick()
			for range tc.timeoutsBefore {
				for range timeoutTicks {
					g.tick()
				}
				g.connect()
			}
			if h := g.lastSend().request(); h.Request != 1 || h.Client != old {
				t.Fatalf("in flight: request %d from %s, want request 1 from %s", h.Request, h.Client, old)
			}
			g.net.nowNs += 5
			mark := len(g.net.sends)
			g.deliver(evictionFrame(old, tc.reason))

			dones := g.rec.completions()
			d := dones[len(dones)-1]
			want := workload.Completion{Client: 1, ClientID: old, Request: 1, Kind: workload.Indefinite, Reason: tc.reason,
				Attempts: tc.timeoutsBefore + 1, AtNs: g.net.nowNs}
			if d.Client != want.Client || d.ClientID != want.ClientID || d.Request != want.Request || d.Kind != want.Kind ||
				d.Reason != want.Reason || d.Attempts != want.Attempts || d.AtNs != want.AtNs || d.Frame != nil {
				t.Fatalf("completion %+v\nwant %+v", d, want)
			}
			if g.c.ID() == old || g.c.Session() != 0 || g.c.Evictions != 1 {
				t.Fatalf("after the eviction: id %s (old %s), session %d, evictions %d", g.c.ID(), old, g.c.Session(), g.c.Evictions)
			}
			// It registers again at once, under its fresh id.
			reg := g.lastSend()
			if len(g.net.sends) != mark+1 || reg.request().Operation != wire.OperationRegister || reg.request().Client != g.c.ID() {
				t.Fatalf("after the eviction: %d sends, last %v from %s; want a Register from %s",
					len(g.net.sends)-mark, reg.request().Operation, reg.request().Client, g.c.ID())
			}
			fresh := g.c.ID()
			g.deliver(replyFrame(fresh, 0, 11, 0))
			// The next request goes out under the new session with the next
			// number, and survives its own failovers as itself.
			next := g.lastSend().request()
			if next.Request != 2 || next.Session != 11 || next.Client != fresh {
				t.Fatalf("after re-registering: request %d session %d client %s, want request 2 session 11 client %s",
					next.Request, next.Session, next.Client, fresh)
			}
			for range 2 {
				for range timeoutTicks {
					g.tick()
				}
				g.connect()
			}
			g.deliver(replyFrame(fresh, 2, 12, 0))
			for i, s := range g.net.sends[mark:] {
				if h := s.request(); h.Client == old || h.Request == 1 {
					t.Errorf("send %d after the eviction: request %d from %s: the evicted request was resent", mark+i, h.Request, h.Client)
				}
			}
			invs := g.rec.invocations()
			if len(invs) != 4 || invs[2].Operation != wire.OperationRegister || invs[2].ClientID != fresh || invs[3].Request != 2 {
				t.Errorf("invocations %+v, want Register, 1, Register (fresh id), 2", invs)
			}
			if !g.c.Done() {
				t.Errorf("not done after every request ended")
			}
		})
	}
}

// A client evicted after its last request has nothing left to send: it
// records nothing and does not register again, or a done client would keep
// evicting the others when there are more clients than table slots.
func TestEvictionWhenIdleDoesNotRegisterAgain(t *testing.T) {
	g := newRig(t, workload.Config{Index: 0, Replicas: 3, TimeoutTicks: 4})
	id := g.register(2)
	g.c.Submit(op(1))
	g.tick()
	g.deliver(replyFrame(id, 1, 3, 0))
	if !g.c.Done() {
		t.Fatal("not done after its one request")
	}
	records, sends := len(g.rec.records), len(g.net.sends)
	g.deliver(evictionFrame(id, wire.EvictionNoSession))
	for range 20 {
		g.tick()
	}
	if len(g.rec.records) != records || len(g.net.sends) != sends || !g.c.Done() || g.c.Evictions != 1 {
		t.Errorf("after an idle eviction: %d new records, %d new sends, done %v, evictions %d",
			len(g.rec.records)-records, len(g.net.sends)-sends, g.c.Done(), g.c.Evictions)
	}
}

// Frames that do not answer the request in flight change nothing: the
// request stays pending and no completion is recorded. Each case is
// followed by the right reply, which must complete it, so a rig that
// completes nothing cannot pass.
func TestFramesThatDoNotAnswerAreIgnored(t *testing.T) {
	other := wire.U128{Lo: 0xdead, Hi: 1}
	cases := []struct {
		name     string
		failover bool // move to another replica first, so the frame comes on the old connection
		frame    func(id wire.U128) []byte
	}{
		{"a reply for another client", false, func(wire.U128) []byte { return replyFrame(other, 2, 5, 0) }},
		{"a late reply to the request before", false, func(id wire.U128) []byte { return replyFrame(id, 1, 5, 0) }},
		{"a reply to a request not sent yet", false, func(id wire.U128) []byte { return replyFrame(id, 3, 5, 0) }},
		{"an eviction for another client", false, func(wire.U128) []byte { return evictionFrame(other, wire.EvictionNoSession) }},
		{"a reply on the connection it left", true, func(id wire.U128) []byte { return replyFrame(id, 2, 5, 0) }},
		{"an eviction on the connection it left", true, func(id wire.U128) []byte { return evictionFrame(id, wire.EvictionNoSession) }},
		{"a corrupted reply", false, func(id wire.U128) []byte {
			f := replyFrame(id, 2, 5, 0)
			f[200] ^= 1 // the request number, under the frame seal
			return f
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := newRig(t, workload.Config{Index: 0, Replicas: 3, TimeoutTicks: 4})
			id := g.register(4)
			g.c.Submit(op(1))
			g.c.Submit(op(2))
			g.tick()
			g.deliver(replyFrame(id, 1, 5, 0)) // request 2 goes out at once
			conn := g.net.last
			if tc.failover {
				for range 4 {
					g.tick()
				}
				g.connect()
			}
			records := len(g.rec.records)
			g.c.Received(conn, tc.frame(id))
			if len(g.rec.records) != records || !g.c.Pending() || g.c.ID() != id || g.c.Evictions != 0 {
				t.Fatalf("changed the client: %d new records, pending %v, id %s (was %s), evictions %d",
					len(g.rec.records)-records, g.c.Pending(), g.c.ID(), id, g.c.Evictions)
			}
			g.deliver(replyFrame(id, 2, 6, 0))
			if g.c.Pending() || len(g.rec.records) != records+1 {
				t.Fatalf("the right reply did not complete request 2")
			}
		})
	}
}

// A Register refused with a status is not a session: the client records no
// completion and keeps trying the same Register on the next replica.
func TestRegisterRefusalIsRetried(t *testing.T) {
	g := newRig(t, workload.Config{Index: 0, Replicas: 2, TimeoutTicks: 3})
	g.tick()
	g.connect()
	first := g.lastSend()
	g.deliver(replyFrame(first.request().Client, 0, 0, 5))
	if g.c.Session() != 0 || !g.c.Pending() || len(g.rec.completions()) != 0 {
		t.Fatalf("a refused Register: session %d, pending %v, %d completions", g.c.Session(), g.c.Pending(), len(g.rec.completions()))
	}
	for range 3 {
		g.tick()
	}
	g.connect()
	if re := g.lastSend(); !bytes.Equal(re.frame, first.frame) || re.target != 1 {
		t.Fatalf("the Register was not resent as it was to replica 1 (sent to %d)", re.target)
	}
	g.deliver(replyFrame(first.request().Client, 0, 9, 0))
	if g.c.Session() != 9 {
		t.Fatalf("session %d, want 9", g.c.Session())
	}
}

// A seeded world that answers, refuses, evicts, refuses dials, closes
// connections and stays silent at random, driven until the client is done.
// Over the whole history: request numbers strictly increase across
// sessions; every request is sent under the id and session of the Register
// before it, and every send of it carries the same bytes; every invocation
// completes exactly once; an indefinite request is never sent again; and
// every invocation and completion carries the clock of its moment.
func TestHistoryOverAScriptedWorld(t *testing.T) {
	cases := []struct {
		seed               uint64
		replicas, requests int
	}{
		{1, 3, 40}, {2, 1, 25}, {3, 6, 60}, {4, 2, 30}, {5, 5, 50},
	}
	totalEvictions, totalTimeouts := 0, 0
	for _, tc := range cases {
		world := rand.New(rand.NewPCG(tc.seed, 0x3041d))
		g := newRig(t, workload.Config{Index: int(tc.seed), Replicas: tc.replicas, Requests: tc.requests, TimeoutTicks: 6,
			Rand: rand.New(rand.NewPCG(tc.seed, 1)), Mix: workload.NewMix(rand.New(rand.NewPCG(tc.seed, 2)), false)})
		var (
			resolved = map[workload.ConnID]bool{} // dials connected or refused (looked up only)
			answered = 0                          // sends the world has looked at
			epoch    = uint64(0)
			sendsAt  []int // len(g.net.sends) at each record
		)
		for tick := 0; tick < 50_000 && !g.c.Done(); tick++ {
			g.tick()
			if c := g.net.last; c != 0 && !resolved[c] {
				switch world.IntN(4) {
				case 0, 1:
					resolved[c] = true
					g.c.Connected(c)
				case 2:
					resolved[c] = true
					g.c.DialFailed(c)
				}
			}
			for ; answered < len(g.net.sends); answered++ {
				s := g.net.sends[answered]
				if s.conn != g.net.last {
					continue // lost with its connection
				}
				h := s.request()
				switch k := world.IntN(20); {
				case k < 9 && h.Operation == wire.OperationRegister:
					epoch++
					g.c.Received(s.conn, replyFrame(h.Client, 0, epoch, 0))
				case k < 9:
					g.c.Received(s.conn, replyFrame(h.Client, h.Request, epoch, 0))
				case k < 11:
					g.c.Received(s.conn, replyFrame(h.Client, h.Request, 0, 1003))
				case k < 13:
					g.c.Received(s.conn, evictionFrame(h.Client, wire.EvictionNoSession))
				case k < 14:
					g.c.Closed(s.conn)
				}
			}
			for len(sendsAt) < len(g.rec.records) {
				sendsAt = append(sendsAt, len(g.net.sends))
			}
		}
		if !g.c.Done() {
			t.Fatalf("seed %d: the client never finished", tc.seed)
		}
		totalEvictions += g.c.Evictions
		totalTimeouts += g.c.Timeouts
		checkHistory(t, tc.seed, tc.requests, g, sendsAt)
	}
	// The world must have exercised what the history is checked against.
	if totalEvictions == 0 || totalTimeouts == 0 {
		t.Errorf("the scripted worlds had %d evictions and %d timeouts; both must occur", totalEvictions, totalTimeouts)
	}
}

type reqKey struct {
	client  wire.U128
	request uint64
}

func checkHistory(t *testing.T, seed uint64, requests int, g *rig, sendsAt []int) {
	t.Helper()
	var (
		lastRequest uint64
		regID       wire.U128
		regSession  uint64
		invoked     = map[reqKey]bool{}
		completed   = map[reqKey]bool{}
		pendingReg  *workload.Invocation
		sent        = 0
		lastAt      int64
	)
	for i, x := range g.rec.records {
		at := int64(-1)
		switch {
		case x.inv != nil:
			at = x.inv.AtNs
		case x.done != nil:
			at = x.done.AtNs
		}
		if at != x.clockNs || at < lastAt {
			t.Fatalf("seed %d record %d: at %d, clock %d, previous %d: the history must carry its own moments, in order",
				seed, i, at, x.clockNs, lastAt)
		}
		lastAt = at
		if inv := x.inv; inv != nil {
			if inv.Operation == wire.OperationRegister {
				pendingReg = inv
				continue
			}
			sent++
			if inv.Request <= lastRequest {
				t.Fatalf("seed %d: request %d after %d: request numbers must strictly increase", seed, inv.Request, lastRequest)
			}
			lastRequest = inv.Request
			if inv.ClientID != regID || inv.Session != regSession || regSession == 0 {
				t.Fatalf("seed %d: request %d under %s session %d; the last Register gave %s session %d",
					seed, inv.Request, inv.ClientID, inv.Session, regID, regSession)
			}
			invoked[reqKey{inv.ClientID, inv.Request}] = true
			continue
		}
		d := x.done
		k := reqKey{d.ClientID, d.Request}
		if d.Request == 0 {
			if pendingReg == nil || pendingReg.ClientID != d.ClientID {
				t.Fatalf("seed %d: a Register completion for %s without its invocation", seed, d.ClientID)
			}
			pendingReg = nil
			if d.Kind == workload.Replied {
				var r wire.ReplyHeader
				r.Decode(wire.HeaderOf(d.Frame))
				regID, regSession = d.ClientID, r.Commit
			}
			continue
		}
		if !invoked[k] || completed[k] {
			t.Fatalf("seed %d: completion of request %d of %s: invoked %v, already completed %v", seed, d.Request, d.ClientID, invoked[k], completed[k])
		}
		completed[k] = true
		if d.Kind == workload.Indefinite {
			for _, s := range g.net.sends[sendsAt[i]:] {
				if h := s.request(); h.Client == d.ClientID && h.Request == d.Request {
					t.Fatalf("seed %d: indefinite request %d of %s was sent again", seed, d.Request, d.ClientID)
				}
			}
		}
	}
	if sent != requests || len(completed) != len(invoked) {
		t.Errorf("seed %d: %d requests invoked (want %d), %d of them completed", seed, sent, requests, len(completed))
	}
	// Every send of one request is the same bytes.
	firstBytes := map[reqKey][]byte{}
	for _, s := range g.net.sends {
		h := s.request()
		if h.Operation == wire.OperationRegister {
			continue
		}
		k := reqKey{h.Client, h.Request}
		if b, ok := firstBytes[k]; ok && !bytes.Equal(b, s.frame) {
			t.Fatalf("seed %d: request %d of %s was sent with different bytes", seed, h.Request, h.Client)
		} else if !ok {
			firstBytes[k] = s.frame
		}
	}
}

// A thinking client waits ThinkTicks after each reply before it sends its
// next request (a long run's pacing), not after its Register; EndThinking
// lets it go on at once.
func TestThinkTicksPaceTheRequests(t *testing.T) {
	const think = 7
	g := newRig(t, workload.Config{Index: 0, Replicas: 3, TimeoutTicks: 1000, ThinkTicks: think})
	id := g.register(7)
	for n := 1; n <= 3; n++ {
		g.c.Submit(op(n))
	}
	g.tick()
	if h := g.lastSend().request(); h.Request != 1 {
		t.Fatalf("after the Register the first request went at once? sent request %d", h.Request)
	}
	for request := uint64(1); request <= 2; request++ {
		g.deliver(replyFrame(id, request, 2, 0))
		sends := len(g.net.sends)
		for i := 1; i < think; i++ {
			g.tick()
			if len(g.net.sends) != sends {
				t.Fatalf("request %d sent %d ticks after request %d's reply, the client thinks %d", request+1, i, request, think)
			}
		}
		g.tick()
		if len(g.net.sends) != sends+1 || g.lastSend().request().Request != request+1 {
			t.Fatalf("request %d not sent %d ticks after request %d's reply", request+1, think, request)
		}
	}
	g.deliver(replyFrame(id, 3, 2, 0))
	g.c.Submit(op(4))
	g.c.EndThinking()
	g.tick()
	if h := g.lastSend().request(); h.Request != 4 {
		t.Fatalf("after EndThinking the next request waited: last sent %d", h.Request)
	}
}
