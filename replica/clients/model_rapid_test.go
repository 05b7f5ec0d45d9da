package clients

import (
	"bytes"
	"cmp"
	"slices"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"pgregory.net/rapid"
)

// A plain model of the client table: a slot array of small structs, each
// ring a list of (request, commit, checksum). It is written from the rules of
// consensus.md "Client table" and client-ops.md 2.4 / 6, not from table.go.

type mReply struct {
	request, commit uint64
	checksum        wire.U128
	frame           []byte
}

type mEntry struct {
	client          wire.U128
	epoch           uint64
	user            uint32
	watermark       uint64
	wsum            wire.U128
	ring            []mReply
	newestCommitted uint64
}

type model struct{ slots []*mEntry }

func (m *model) find(c wire.U128) (int, *mEntry) {
	for i, e := range m.slots {
		if e != nil && e.client == c {
			return i, e
		}
	}
	return -1, nil
}

func (e *mEntry) push(r mReply) {
	e.ring = append(e.ring, r)
	if len(e.ring) > 5 {
		e.ring = e.ring[1:]
	}
	e.newestCommitted = r.commit
}

func conflict(a, b wire.U128) bool { return !a.IsZero() && !b.IsZero() && a != b }

// verdict is the model's answer to a request (Register excluded).
func (m *model) verdict(session, request uint64, checksum wire.U128, c wire.U128) (VerdictKind, wire.EvictionReason, []byte) {
	_, e := m.find(c)
	if e == nil {
		return VerdictEvict, wire.EvictionNoSession, nil
	}
	if session < e.epoch {
		return VerdictEvict, wire.EvictionSessionTooLow, nil
	}
	if session > e.epoch {
		return VerdictDrop, 0, nil
	}
	if request > e.watermark {
		return VerdictNew, 0, nil
	}
	if request == e.watermark && conflict(e.wsum, checksum) {
		return VerdictDrop, 0, nil
	}
	for _, r := range e.ring {
		if r.request == request {
			if conflict(r.checksum, checksum) {
				return VerdictDrop, 0, nil
			}
			return VerdictReplay, 0, r.frame
		}
	}
	return VerdictAlreadyApplied, 0, nil
}

func (m *model) register(c wire.U128, user uint32, op uint64, frame []byte) (wire.U128, bool) {
	r := mReply{request: 0, commit: op, frame: frame}
	if _, e := m.find(c); e != nil {
		e.epoch, e.user = op, user
		var kept []mReply
		for _, x := range e.ring {
			if x.request != 0 {
				kept = append(kept, x)
			}
		}
		e.ring = kept
		e.push(r)
		return wire.U128{}, false
	}
	var evicted wire.U128
	full := true
	for _, e := range m.slots {
		if e == nil {
			full = false
		}
	}
	if full {
		victim := 0
		for i, e := range m.slots {
			if e.newestCommitted < m.slots[victim].newestCommitted {
				victim = i
			}
		}
		evicted = m.slots[victim].client
		m.slots[victim] = nil
	}
	for i := range m.slots {
		if m.slots[i] == nil {
			e := &mEntry{client: c, epoch: op, user: user}
			e.push(r)
			m.slots[i] = e
			break
		}
	}
	return evicted, full
}

func (m *model) commit(c wire.U128, request, op uint64, checksum wire.U128, frame []byte) CommitOutcome {
	_, e := m.find(c)
	if e == nil {
		return NoEntry
	}
	if op < e.newestCommitted || request < e.watermark {
		return SkippedRegression
	}
	var kept []mReply
	for _, x := range e.ring {
		if x.request != request {
			kept = append(kept, x)
		}
	}
	e.ring = kept
	e.push(mReply{request: request, commit: op, checksum: checksum, frame: frame})
	e.watermark, e.wsum = request, checksum
	return Cached
}

func (m *model) compare(fatalf func(string, ...any), tb *Table) {
	got := tb.Entries()
	n := 0
	for slot, e := range m.slots {
		if e == nil {
			continue
		}
		if n >= len(got) {
			fatalf("table has %d entries, model more", len(got))
		}
		g := got[n]
		n++
		var reqs []uint64
		for _, r := range e.ring {
			reqs = append(reqs, r.request)
		}
		if g.Slot != slot || g.Client != e.client || g.Epoch != e.epoch || g.UserID != e.user || g.Watermark != e.watermark ||
			g.WatermarkChecksum != e.wsum || g.LatestCommit != e.newestCommitted || !equalU64(g.Requests, reqs) {
			fatalf("slot %d: table %+v, model %+v ring %v", slot, g, *e, reqs)
		}
	}
	if n != len(got) || tb.Len() != n {
		fatalf("table has %d entries, model %d", len(got), n)
	}
}

// TestPropertyTableMatchesModel: random Register / request / commit /
// Logout sequences leave the table equal to the model, every CheckRequest
// verdict equal to the model's, and the table's ICT2 round trip equal in
// digest and in behaviour.
func TestPropertyTableMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		capacity := rapid.IntRange(1, 4).Draw(t, "capacity")
		tb := New(capacity)
		m := &model{slots: make([]*mEntry, capacity)}
		pool := rapid.IntRange(1, 6).Draw(t, "clients")
		op := uint64(0)
		for range rapid.IntRange(1, 80).Draw(t, "steps") {
			c := client(uint64(rapid.IntRange(1, pool).Draw(t, "client")))
			_, me := m.find(c)
			switch rapid.IntRange(0, 10).Draw(t, "action") {
			case 10: // a restart from a checkpoint taken now: only each newest reply survives
				back, err := DecodeCheckpoint(tb.EncodeCheckpoint(), capacity)
				if err != nil {
					t.Fatalf("checkpoint round trip: %v", err)
				}
				tb = back
				// The checkpoint keeps no slots: the entries come back in
				// client id order, from slot 0.
				var kept []*mEntry
				for _, e := range m.slots {
					if e != nil {
						e.ring = e.ring[len(e.ring)-1:]
						kept = append(kept, e)
					}
				}
				slices.SortFunc(kept, func(a, b *mEntry) int {
					if a.client.Hi != b.client.Hi {
						return cmp.Compare(a.client.Hi, b.client.Hi)
					}
					return cmp.Compare(a.client.Lo, b.client.Lo)
				})
				clear(m.slots)
				copy(m.slots, kept)
			case 0, 1: // Register
				user := uint32(rapid.IntRange(0, 1).Draw(t, "user"))
				v := tb.CheckRequest(register(c, user))
				if want := me != nil && me.user != user; (v.Kind == VerdictDrop) != want || (!want && v.Kind != VerdictNew) {
					t.Fatalf("register verdict %v, owner %v", v.Kind, me)
				}
				if v.Kind != VerdictNew {
					continue
				}
				op++
				frame := registerReply(c, op, user)
				gotC, gotE := tb.CommitRegister(user, frame)
				wantC, wantE := m.register(c, user, op, frame)
				if gotC != wantC || gotE != wantE {
					t.Fatalf("evicted %s %v, model %s %v", gotC, gotE, wantC, wantE)
				}
			case 2: // Logout, committed
				if tb.CommitLogout(c) != (me != nil) {
					t.Fatal("logout of", c)
				}
				if i, _ := m.find(c); i >= 0 {
					m.slots[i] = nil
				}
			default: // a request, checked; committed when New (or as a duplicate commit)
				session := uint64(0)
				if me != nil {
					session = me.epoch
				}
				session += uint64(rapid.IntRange(-1, 1).Draw(t, "session_skew"))
				if session == 0 {
					session = 1
				}
				var wm uint64
				if me != nil {
					wm = me.watermark
				}
				request := max(1, wm+uint64(rapid.IntRange(-6, 2).Draw(t, "request_delta")))
				checksum := sum(request)
				switch rapid.IntRange(0, 4).Draw(t, "checksum") {
				case 0:
					checksum = wire.U128{}
				case 1:
					checksum = sum(request + 1000)
				}
				v := tb.CheckRequest(req(c, session, request, checksum))
				kind, reason, frame := m.verdict(session, request, checksum, c)
				if v.Kind != kind || v.Reason != reason || !bytes.Equal(v.Reply, frame) {
					t.Fatalf("verdict %v %v, model %v %v", v.Kind, v.Reason, kind, reason)
				}
				duplicate := me != nil && request == wm && wm > 0 && rapid.IntRange(0, 5).Draw(t, "dup_commit") == 0
				if v.Kind == VerdictNew || duplicate {
					op++
					reply := requestReply(c, op, request, checksum)
					if got, want := tb.CommitRequest(reply), m.commit(c, request, op, checksum, reply); got != want {
						t.Fatalf("commit outcome %v, model %v", got, want)
					}
				}
			}
			m.compare(t.Fatalf, tb)
		}
		back, err := Decode(tb.Encode(), capacity)
		if err != nil {
			t.Fatal(err)
		}
		if back.Digest() != tb.Digest() || !bytes.Equal(back.Encode(), tb.Encode()) {
			t.Fatal("ICT2 round trip changed the table")
		}
		if tb.Clone().Digest() != tb.Digest() {
			t.Fatal("clone digest")
		}
	})
}
