package refmodel

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// The model's reply is laid out from wire.md 5.20 by hand: each field at
// its offset, and the whole frame the bytes the (unmutated) codec builds.
func TestReplyLaidOutFromTheSpec(t *testing.T) {
	h := wire.PrepareHeader{Prefix: wire.Prefix{Cluster: wire.U128{Lo: 1, Hi: 2}, Release: 0, Replica: 3, View: 9},
		RequestChecksum: wire.U128{Lo: 4, Hi: 5}, Client: wire.U128{Lo: 6, Hi: 7}, Op: 8, Timestamp: 10, Request: 11,
		Operation: wire.OperationCreateStream}
	body := []byte{0, 0, 0, 0, 1, 2, 3}
	got := Reply(h, body)
	le := binary.LittleEndian
	for _, f := range []struct {
		name      string
		off       int
		got, want uint64
	}{
		{"request_checksum", 128, le.Uint64(got[128:]), 4}, {"request_checksum hi", 136, le.Uint64(got[136:]), 5},
		{"client", 160, le.Uint64(got[160:]), 6}, {"op", 176, le.Uint64(got[176:]), 8}, {"commit", 184, le.Uint64(got[184:]), 8},
		{"timestamp", 192, le.Uint64(got[192:]), 10}, {"request", 200, le.Uint64(got[200:]), 11},
		{"operation", 208, uint64(got[208]), uint64(wire.OperationCreateStream)}, {"view", 52, uint64(le.Uint32(got[52:])), 0},
		{"size", 48, uint64(le.Uint32(got[48:])), uint64(wire.HeaderSize + len(body))}, {"command", 60, uint64(got[60]), 8},
	} {
		if f.got != f.want {
			t.Errorf("%s at %d: %d, want %d", f.name, f.off, f.got, f.want)
		}
	}
	codec := wire.BuildFrame(&wire.ReplyHeader{Prefix: wire.Prefix{Cluster: h.Cluster, Release: h.Release, Replica: h.Replica, Command: wire.CommandReply},
		RequestChecksum: h.RequestChecksum, Client: h.Client, Op: h.Op, Commit: h.Op, Timestamp: h.Timestamp, Request: h.Request, Operation: h.Operation}, body)
	if !bytes.Equal(got, codec) {
		t.Errorf("model's reply\n%x\ncodec's\n%x", got, codec)
	}
}
