package clients

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

var writeCorpus = flag.Bool("write-corpus", false, "rewrite the seed corpora under testdata/fuzz")

// reseal returns b with its ICT2 trailer recomputed (nil when too short), so
// that the fuzzer also reaches the rules behind the checksum.
func reseal(b []byte) []byte {
	if len(b) < 8 {
		return nil
	}
	c := bytes.Clone(b)
	binary.LittleEndian.PutUint64(c[len(c)-8:], xxh3.Hash(c[:len(c)-8]))
	return c
}

// FuzzDecode: Decode never panics; a table it accepts re-encodes to exactly
// its input, digests the same after a second round trip, answers
// CheckRequest for every entry without panicking, and takes a Register and a
// request commit.
func FuzzDecode(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, b := range [][]byte{in, reseal(in)} {
			if b == nil {
				continue
			}
			tb, err := Decode(b, 4)
			if err != nil {
				continue
			}
			if !bytes.Equal(tb.Encode(), b) {
				t.Fatal("a decoded table does not re-encode to its input")
			}
			again, err := Decode(tb.Encode(), 4)
			if err != nil || again.Digest() != tb.Digest() {
				t.Fatalf("second round trip: %v", err)
			}
			newest := uint64(0)
			for _, e := range tb.Entries() {
				newest = max(newest, e.LatestCommit, e.Epoch)
				for _, r := range []uint64{e.Watermark, e.Watermark + 1, 1} {
					if r == 0 {
						continue
					}
					tb.CheckRequest(wire.RequestHeader{Client: e.Client, Session: e.Epoch, Request: r, Operation: wire.OperationCreateStream})
				}
				tb.CheckRequest(wire.RequestHeader{Client: e.Client, UserID: e.UserID + 1, Operation: wire.OperationRegister})
			}
			if newest >= math.MaxUint64-2 {
				continue
			}
			fresh := wire.U128{Lo: 1, Hi: math.MaxUint64}
			if _, ok := tb.Lookup(fresh); ok {
				continue
			}
			tb.CommitRegister(0, registerReply(fresh, newest+1, 0))
			tb.CommitRequest(requestReply(fresh, newest+2, 1, sum(1)))
			if e, ok := tb.Lookup(fresh); !ok || e.Watermark != 1 {
				t.Fatalf("fresh client after two commits: %+v", e)
			}
		}
	})
}

func seedTables() [][]byte {
	full := New(4)
	for i := uint64(1); i <= 4; i++ {
		full.CommitRegister(uint32(i), registerReply(client(i), i, uint32(i)))
	}
	for i := uint64(1); i <= 6; i++ {
		full.CommitRequest(requestReply(client(3), 10+i, i, sum(i)))
	}
	one := New(4)
	one.CommitRegister(0, registerReply(client(1), 1, 0))
	enc := full.Encode()
	foreign := wire.EncodeClientTable([]wire.ClientTableEntry{{ClientID: client(2), Replies: [][]byte{registerReply(client(1), 1, 0)}}})
	return [][]byte{New(4).Encode(), one.Encode(), enc, enc[:len(enc)-9], foreign}
}

// TestWriteFuzzCorpus writes the seed corpus with -write-corpus. Without the
// flag it checks that it is present and current.
func TestWriteFuzzCorpus(t *testing.T) {
	programs := [][]byte{
		{0, 1, 0, 0, 0, 2, 1, 0, 1, 2, 2, 1, 0, 1, 2, 0, 1, 0, 0, 0, 2, 1, 0, 0, 0x82},
		{0, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 4, 0, 0, 0, 2, 4, 0, 1, 2, 0, 1, 1, 0, 0},
		{0, 1, 0, 0, 0, 2, 1, 0, 1, 2, 2, 1, 0, 1, 2, 2, 1, 0, 1, 2, 2, 1, 0, 1, 2, 2, 1, 0, 1, 2, 2, 1, 0, 1, 2, 2, 1, 0, 0xfd, 2},
	}
	for _, c := range []struct {
		target string
		inputs [][]byte
	}{{"FuzzDecode", seedTables()}, {"FuzzTableOps", programs}} {
		writeSeeds(t, c.target, c.inputs)
	}
}

func writeSeeds(t *testing.T, target string, inputs [][]byte) {
	dir := filepath.Join("testdata", "fuzz", target)
	for i, input := range inputs {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", input)
		path := filepath.Join(dir, fmt.Sprintf("seed-%02d", i))
		if *writeCorpus {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Errorf("%s is missing or stale (go test ./replica/clients -run WriteFuzzCorpus -write-corpus): %v", path, err)
		}
	}
}

// FuzzTableOps reads its input as a program of Register, request and Logout
// steps (5 bytes each) against a table of 3 slots and the plain model of
// model_rapid_test.go: every verdict, commit outcome and entry must agree,
// and the final table must survive an ICT2 round trip.
func FuzzTableOps(f *testing.F) {
	f.Fuzz(func(t *testing.T, program []byte) {
		const capacity = 3
		tb := New(capacity)
		m := &model{slots: make([]*mEntry, capacity)}
		op := uint64(0)
		for len(program) >= 5 {
			step := program[:5]
			program = program[5:]
			c := client(uint64(step[1]%5) + 1)
			_, me := m.find(c)
			switch step[0] % 4 {
			case 0: // Register
				user := uint32(step[2] % 2)
				v := tb.CheckRequest(register(c, user))
				if (me != nil && me.user != user) != (v.Kind == VerdictDrop) {
					t.Fatalf("register verdict %v", v.Kind)
				}
				if v.Kind != VerdictNew {
					continue
				}
				op++
				frame := registerReply(c, op, user)
				gotC, gotE := tb.CommitRegister(user, frame)
				if wantC, wantE := m.register(c, user, op, frame); gotC != wantC || gotE != wantE {
					t.Fatalf("evicted %s %v, model %s %v", gotC, gotE, wantC, wantE)
				}
			case 1: // Logout
				if tb.CommitLogout(c) != (me != nil) {
					t.Fatal("logout")
				}
				if i, _ := m.find(c); i >= 0 {
					m.slots[i] = nil
				}
			default: // a request; committed when New, or as a duplicate
				var session, wm uint64 = 1, 0
				if me != nil {
					session, wm = me.epoch, me.watermark
				}
				session = max(1, session+uint64(int8(step[2])%2))
				request := max(1, wm+uint64(int8(step[3])%4))
				checksum := sum(request)
				switch step[4] % 4 {
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
				if v.Kind == VerdictNew || (me != nil && request == wm && wm > 0 && step[4]&0x80 != 0) {
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
		if err != nil || back.Digest() != tb.Digest() || !bytes.Equal(back.Encode(), tb.Encode()) {
			t.Fatalf("ICT2 round trip: %v", err)
		}
	})
}
