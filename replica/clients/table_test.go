package clients

import (
	"bytes"
	"errors"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

var cluster = wire.ClusterID("test")

func client(n uint64) wire.U128 { return wire.U128{Lo: n, Hi: 0xc1} }

func sum(n uint64) wire.U128 { return wire.U128From64(n) }

// prepareOf returns the prepare header of a committed op.
func prepareOf(c wire.U128, op uint64, operation wire.Operation, request uint64, checksum wire.U128, user uint32) wire.PrepareHeader {
	return wire.PrepareHeader{
		Prefix: wire.Prefix{Cluster: cluster, View: 3, Command: wire.CommandPrepare, Replica: 1},
		Client: c, RequestChecksum: checksum, Op: op, Commit: op - 1, Timestamp: 1000 + op, Request: request,
		Operation: operation, Group: wire.MetadataGroup, UserID: user,
	}
}

func registerReply(c wire.U128, op uint64, user uint32) []byte {
	return BuildReply(prepareOf(c, op, wire.OperationRegister, 0, wire.U128{}, user), nil)
}

func requestReply(c wire.U128, op, request uint64, checksum wire.U128) []byte {
	return BuildReply(prepareOf(c, op, wire.OperationCreateStream, request, checksum, 0), []byte{0, 0, 0, 0, byte(request)})
}

func req(c wire.U128, session, request uint64, checksum wire.U128) wire.RequestHeader {
	return wire.RequestHeader{Prefix: wire.Prefix{Command: wire.CommandRequest}, Client: c, Session: session,
		Request: request, RequestChecksum: checksum, Operation: wire.OperationCreateStream}
}

func register(c wire.U128, user uint32) wire.RequestHeader {
	return wire.RequestHeader{Prefix: wire.Prefix{Command: wire.CommandRequest}, Client: c, UserID: user,
		Operation: wire.OperationRegister}
}

func TestBuildReply(t *testing.T) {
	p := prepareOf(client(1), 42, wire.OperationCreateTopicWithAssignments, 7, sum(99), 0)
	p.Release = 5
	frame := BuildReply(p, []byte{1, 2, 3})
	if err := wire.Validate(frame); err != nil {
		t.Fatal(err)
	}
	var h wire.ReplyHeader
	h.Decode(wire.HeaderOf(frame))
	want := wire.ReplyHeader{
		Prefix:          wire.Prefix{Cluster: cluster, Size: 259, View: 0, Release: 5, Command: wire.CommandReply, Replica: 1},
		RequestChecksum: sum(99), Client: client(1), Op: 42, Commit: 42, Timestamp: 1042, Request: 7,
		Operation: wire.OperationCreateTopicWithAssignments,
	}
	if h != want || !bytes.Equal(frame[wire.HeaderSize:], []byte{1, 2, 3}) {
		t.Fatalf("reply %+v\nwant  %+v", h, want)
	}
	if !bytes.Equal(frame, BuildReply(p, []byte{1, 2, 3})) {
		t.Fatal("BuildReply is not a function of its inputs")
	}
	// A re-stamped view (a retransmission) must not change the cached bytes.
	p.View = 9
	if !bytes.Equal(frame, BuildReply(p, []byte{1, 2, 3})) {
		t.Fatal("BuildReply depends on the prepare's view")
	}
}

func TestCheckRequestVerdicts(t *testing.T) {
	tb := New(CapacitySim)
	a := client(1)
	// Register: New for an unknown client.
	if v := tb.CheckRequest(register(a, 4)); v.Kind != VerdictNew {
		t.Fatalf("register unknown: %v", v.Kind)
	}
	// Anything else from an unknown client: NoSession.
	if v := tb.CheckRequest(req(a, 1, 1, sum(1))); v.Kind != VerdictEvict || v.Reason != wire.EvictionNoSession {
		t.Fatalf("no entry: %+v", v)
	}
	tb.CommitRegister(4, registerReply(a, 10, 4))
	// Register again: New for the same user, Drop for another.
	if v := tb.CheckRequest(register(a, 4)); v.Kind != VerdictNew {
		t.Fatalf("re-register same user: %v", v.Kind)
	}
	if v := tb.CheckRequest(register(a, 5)); v.Kind != VerdictDrop {
		t.Fatalf("register of another user's client: %v", v.Kind)
	}
	if v := tb.CheckRequest(req(a, 9, 1, sum(1))); v.Kind != VerdictEvict || v.Reason != wire.EvictionSessionTooLow {
		t.Fatalf("session below epoch: %+v", v)
	}
	if v := tb.CheckRequest(req(a, 11, 1, sum(1))); v.Kind != VerdictDrop {
		t.Fatalf("session above epoch: %+v", v)
	}
	if v := tb.CheckRequest(req(a, 10, 1, sum(1))); v.Kind != VerdictNew {
		t.Fatalf("first request: %+v", v)
	}
	r1 := requestReply(a, 11, 1, sum(1))
	if o := tb.CommitRequest(r1); o != Cached {
		t.Fatal(o)
	}
	r3 := requestReply(a, 12, 3, sum(3)) // gaps are allowed
	tb.CommitRequest(r3)
	cases := []struct {
		name     string
		request  uint64
		checksum wire.U128
		want     VerdictKind
		reply    []byte
	}{
		{"above the watermark", 4, sum(4), VerdictNew, nil},
		{"watermark, same checksum", 3, sum(3), VerdictReplay, r3},
		{"watermark, unstamped retry", 3, wire.U128{}, VerdictReplay, r3},
		{"watermark, another checksum", 3, sum(33), VerdictDrop, nil},
		{"older cached, same checksum", 1, sum(1), VerdictReplay, r1},
		{"older cached, another checksum", 1, sum(11), VerdictDrop, nil},
		{"never sent, below the watermark", 2, sum(2), VerdictAlreadyApplied, nil},
	}
	for _, c := range cases {
		v := tb.CheckRequest(req(a, 10, c.request, c.checksum))
		if v.Kind != c.want || !bytes.Equal(v.Reply, c.reply) {
			t.Errorf("%s: %v (% x)", c.name, v.Kind, v.Reply)
		}
	}
	// The replayed bytes are a copy.
	v := tb.CheckRequest(req(a, 10, 3, sum(3)))
	v.Reply[0] ^= 0xff
	if v2 := tb.CheckRequest(req(a, 10, 3, sum(3))); !bytes.Equal(v2.Reply, r3) {
		t.Fatal("a replay aliases the cached reply")
	}
	// A stored unstamped watermark matches any retry checksum.
	tb.CommitRequest(requestReply(a, 13, 5, wire.U128{}))
	if v := tb.CheckRequest(req(a, 10, 5, sum(77))); v.Kind != VerdictReplay {
		t.Fatalf("unstamped stored: %v", v.Kind)
	}
	// Five more commits push request 1 and 3 out of the ring.
	for i := uint64(0); i < 5; i++ {
		tb.CommitRequest(requestReply(a, 14+i, 6+i, sum(6+i)))
	}
	if v := tb.CheckRequest(req(a, 10, 3, sum(3))); v.Kind != VerdictAlreadyApplied {
		t.Fatalf("aged-out reply: %v", v.Kind)
	}
	if v := tb.CheckRequest(req(a, 10, 1, sum(99))); v.Kind != VerdictAlreadyApplied {
		t.Fatalf("aged-out reply, another checksum: %v", v.Kind)
	}
}

func TestRingOfFive(t *testing.T) {
	tb := New(2)
	a := client(1)
	tb.CommitRegister(0, registerReply(a, 1, 0))
	want := []uint64{0}
	for i := uint64(1); i <= 7; i++ {
		tb.CommitRequest(requestReply(a, 1+i, i, sum(i)))
		want = append(want, i)
		if len(want) > RingCapacity {
			want = want[1:]
		}
		e, _ := tb.Lookup(a)
		if !equalU64(e.Requests, want) || e.Watermark != i || e.WatermarkChecksum != sum(i) || e.LatestCommit != 1+i {
			t.Fatalf("after request %d: %+v, want ring %v", i, e, want)
		}
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRebindKeepsWatermark(t *testing.T) {
	tb := New(CapacitySim)
	a := client(1)
	tb.CommitRegister(1, registerReply(a, 5, 1))
	tb.CommitRequest(requestReply(a, 6, 1, sum(1)))
	tb.CommitRequest(requestReply(a, 7, 2, sum(2)))
	if _, evicted := tb.CommitRegister(2, registerReply(a, 9, 2)); evicted {
		t.Fatal("a rebind evicted")
	}
	e, _ := tb.Lookup(a)
	if e.Epoch != 9 || e.UserID != 2 || e.Watermark != 2 || e.WatermarkChecksum != sum(2) || e.LatestCommit != 9 ||
		!equalU64(e.Requests, []uint64{1, 2, 0}) {
		t.Fatalf("after rebind: %+v", e)
	}
	if v := tb.CheckRequest(req(a, 5, 3, sum(3))); v.Kind != VerdictEvict || v.Reason != wire.EvictionSessionTooLow {
		t.Fatalf("old epoch after rebind: %+v", v)
	}
	if v := tb.CheckRequest(req(a, 9, 2, sum(2))); v.Kind != VerdictReplay {
		t.Fatalf("cached reply across the rebind: %v", v.Kind)
	}
	if v := tb.CheckRequest(req(a, 9, 3, sum(3))); v.Kind != VerdictNew {
		t.Fatalf("next request: %v", v.Kind)
	}
	// A rebind to an older epoch is a corrupt log.
	defer func() {
		if recover() == nil {
			t.Fatal("a rebind at an older epoch did not panic")
		}
	}()
	tb.CommitRegister(2, registerReply(a, 8, 2))
}

func TestEvictionOrder(t *testing.T) {
	tb := New(3)
	a, b, c, d, e := client(1), client(2), client(3), client(4), client(5)
	tb.CommitRegister(0, registerReply(a, 1, 0))
	tb.CommitRegister(0, registerReply(b, 2, 0))
	tb.CommitRegister(0, registerReply(c, 3, 0))
	tb.CommitRequest(requestReply(a, 4, 1, sum(1))) // a's newest reply is now op 4; b (2) is the oldest
	got, evicted := tb.CommitRegister(0, registerReply(d, 5, 0))
	if !evicted || got != b {
		t.Fatalf("evicted %s %v, want b", got, evicted)
	}
	if e, _ := tb.Lookup(d); e.Slot != 1 {
		t.Fatalf("d took slot %d, want b's slot 1", e.Slot)
	}
	if v := tb.CheckRequest(req(b, 2, 1, sum(1))); v.Kind != VerdictEvict || v.Reason != wire.EvictionNoSession {
		t.Fatalf("evicted client's next request: %+v", v)
	}
	// A committed reply for an evicted client is not cached.
	if o := tb.CommitRequest(requestReply(b, 6, 1, sum(1))); o != NoEntry {
		t.Fatalf("reply for an evicted client: %v", o)
	}
	// Logout frees a slot: no eviction.
	if !tb.CommitLogout(c) || tb.CommitLogout(c) {
		t.Fatal("logout")
	}
	if _, evicted := tb.CommitRegister(0, registerReply(e, 7, 0)); evicted {
		t.Fatal("evicted with a free slot")
	}
	if ee, _ := tb.Lookup(e); ee.Slot != 2 {
		t.Fatalf("e took slot %d, want 2", ee.Slot)
	}

	// Ties (only reachable from a transferred table): the lowest slot goes.
	tie := New(3)
	x, y, z := client(10), client(11), client(12)
	tie.CommitRegister(0, registerReply(x, 20, 0))
	tie.CommitRegister(0, registerReply(y, 21, 0))
	enc := wire.EncodeClientTable([]wire.ClientTableEntry{
		{ClientID: z, Epoch: 5, Replies: [][]byte{registerReply(z, 5, 0)}},
		{ClientID: y, Epoch: 5, Replies: [][]byte{registerReply(y, 5, 0)}},
		{ClientID: x, Epoch: 6, Replies: [][]byte{registerReply(x, 6, 0)}},
	})
	tie, err := Decode(enc, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := tie.CommitRegister(0, registerReply(client(13), 30, 0)); got != z {
		t.Fatalf("tie evicted %s, want z (slot 0)", got)
	}
	if got, _ := tie.CommitRegister(0, registerReply(client(14), 31, 0)); got != y {
		t.Fatalf("then %s, want y", got)
	}
}

func TestCommitRequestEdges(t *testing.T) {
	tb := New(4)
	a := client(1)
	tb.CommitRegister(0, registerReply(a, 1, 0))
	tb.CommitRequest(requestReply(a, 5, 3, sum(3)))
	before := tb.Digest()
	if o := tb.CommitRequest(requestReply(a, 4, 4, sum(4))); o != SkippedRegression {
		t.Fatalf("older commit op: %v", o)
	}
	if o := tb.CommitRequest(requestReply(a, 6, 2, sum(2))); o != SkippedRegression {
		t.Fatalf("request below the watermark: %v", o)
	}
	if tb.Digest() != before {
		t.Fatal("a skipped commit changed the table")
	}
	// A second commit of the watermark request replaces its cached reply.
	second := requestReply(a, 7, 3, sum(33))
	if o := tb.CommitRequest(second); o != Cached {
		t.Fatal(o)
	}
	e, _ := tb.Lookup(a)
	if !equalU64(e.Requests, []uint64{0, 3}) || e.LatestCommit != 7 || e.Watermark != 3 || e.WatermarkChecksum != sum(33) {
		t.Fatalf("after the second commit: %+v", e)
	}
	if v := tb.CheckRequest(req(a, 1, 3, sum(33))); !bytes.Equal(v.Reply, second) {
		t.Fatal("the replaced reply is not replayed")
	}
	for _, bad := range [][]byte{
		registerReply(a, 9, 0), // a Register through CommitRequest
		BuildReply(prepareOf(a, 9, wire.OperationLogout, 4, wire.U128{}, 0), nil),
		requestReply(a, 9, 4, sum(4))[:258], // size disagrees
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("CommitRequest(% x...) did not panic", bad[:64])
				}
			}()
			tb.CommitRequest(bad)
		}()
	}
}

func TestEncodeDecode(t *testing.T) {
	tb := New(4)
	for i := uint64(1); i <= 4; i++ {
		tb.CommitRegister(uint32(i), registerReply(client(i), i, uint32(i)))
	}
	for i := uint64(1); i <= 6; i++ {
		tb.CommitRequest(requestReply(client(2), 10+i, i, sum(i)))
	}
	tb.CommitLogout(client(1)) // a hole at slot 0
	enc := tb.Encode()
	back, err := Decode(enc, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Encode(), enc) {
		t.Fatal("ICT2 does not re-encode")
	}
	if back.Digest() != tb.Digest() {
		t.Fatal("the digest depends on slot positions")
	}
	if e, _ := back.Lookup(client(2)); e.Slot != 0 || e.Watermark != 6 || len(e.Requests) != 5 {
		t.Fatalf("decoded entry %+v", e)
	}
	for i, e := range tb.Entries() {
		if f := back.Entries()[i]; f.Client != e.Client || f.Epoch != e.Epoch || f.LatestCommit != e.LatestCommit ||
			!equalU64(f.Requests, e.Requests) {
			t.Fatalf("entry %d: %+v vs %+v", i, f, e)
		}
	}
	// The same operations on both continue identically.
	for _, x := range []*Table{tb, back} {
		x.CommitRegister(9, registerReply(client(9), 30, 9))
		x.CommitRegister(9, registerReply(client(10), 31, 9)) // full: evicts the oldest
	}
	if back.Digest() != tb.Digest() {
		t.Fatal("the decoded table diverged")
	}
	clone := tb.Clone()
	clone.CommitLogout(client(9))
	if clone.Digest() == tb.Digest() {
		t.Fatal("Clone shares state")
	}

	if _, err := Decode(enc, 2); !errors.Is(err, ErrTooManyClients) {
		t.Fatalf("capacity 2: %v", err)
	}
	broken := append([]byte(nil), enc...)
	broken[len(broken)-1] ^= 1
	var fe *wire.FormatError
	if _, err := Decode(broken, 4); !errors.As(err, &fe) {
		t.Fatalf("bad trailer: %v", err)
	}
	zero := wire.EncodeClientTable([]wire.ClientTableEntry{{Replies: [][]byte{registerReply(client(1), 1, 0)}}})
	if _, err := Decode(zero, 4); !errors.Is(err, ErrEntry) {
		t.Fatalf("client 0: %v", err)
	}
	foreign := wire.EncodeClientTable([]wire.ClientTableEntry{{ClientID: client(2), Replies: [][]byte{registerReply(client(1), 1, 0)}}})
	if _, err := Decode(foreign, 4); !errors.Is(err, ErrEntry) {
		t.Fatalf("another client's reply: %v", err)
	}
	if empty, err := Decode(New(3).Encode(), 3); err != nil || empty.Len() != 0 {
		t.Fatalf("empty table: %v", err)
	}
}
