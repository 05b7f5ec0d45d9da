package refmodel

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
	"pgregory.net/rapid"
)

// TestSameRequest: a committed body matches the client's request whatever
// consensus group ids the primary chose, and nothing else does.
func TestSameRequest(t *testing.T) {
	topic := unhex(t, goldenCreateTopic)
	parts := unhex(t, goldenCreatePartitions)
	del := unhex(t, goldenDeleteTopic01)

	for _, c := range []struct {
		name string
		op   wire.Operation
		body []byte
	}{
		{"CreateTopic", wire.OperationCreateTopic, topic},
		{"CreatePartitions", wire.OperationCreatePartitions, parts},
		{"DeleteTopic", wire.OperationDeleteTopic, del},
	} {
		for _, next := range []uint64{0, 1, 1 << 40} {
			op, body, ok := Project(c.op, c.body, next)
			if !ok || !SameRequest(c.op, c.body, op, body) {
				t.Errorf("%s: its own projection from group %d is not the same request", c.name, next)
			}
		}
	}

	_, topic64, _ := Project(wire.OperationCreateTopic, topic, 5)
	_, parts65, _ := Project(wire.OperationCreatePartitions, parts, 5)
	flip := func(b []byte, at int) []byte {
		b = bytes.Clone(b)
		b[at] ^= 1
		return b
	}
	derivedAt := 4 + len(topic) + 4 // the first byte of the derived block
	for _, c := range []struct {
		name        string
		op          wire.Operation
		body        []byte
		committedOp wire.Operation
		committed   []byte
	}{
		{"another operation", wire.OperationCreateTopic, topic, wire.OperationCreateTopic, topic},
		{"another request section", wire.OperationCreateTopic, topic, wire.OperationCreateTopicWithAssignments, flip(topic64, 4+len(topic)-1)},
		{"another derived block", wire.OperationCreateTopic, topic, wire.OperationCreateTopicWithAssignments, flip(topic64, derivedAt+30)},
		{"another partition id", wire.OperationCreateTopic, topic, wire.OperationCreateTopicWithAssignments, flip(topic64, len(topic64)-12)},
		{"one assignment less", wire.OperationCreateTopic, topic, wire.OperationCreateTopicWithAssignments,
			func() []byte {
				b := bytes.Clone(topic64[:len(topic64)-12])
				binary.LittleEndian.PutUint32(b[len(b)-4-12:], 1)
				return b
			}()},
		{"a trailing byte", wire.OperationCreateTopic, topic, wire.OperationCreateTopicWithAssignments, append(bytes.Clone(topic64), 0)},
		{"not decodable", wire.OperationCreatePartitions, parts, wire.OperationCreatePartitionsWithAssignments, parts65[:10]},
		{"another offset", wire.OperationCreatePartitions, parts, wire.OperationCreatePartitionsWithAssignments, flip(parts65, len(parts65)-12)},
		{"a verbatim body changed", wire.OperationDeleteTopic, del, wire.OperationDeleteTopic, flip(del, 2)},
		{"a verbatim body with a trailing byte", wire.OperationDeleteTopic, del, wire.OperationDeleteTopic, append(bytes.Clone(del), 0)},
		{"a refused request", wire.OperationCreateTopic, []byte{0}, wire.OperationCreateTopicWithAssignments, topic64},
		{"an internal operation", wire.OperationCreateTopicWithAssignments, topic64, wire.OperationCreateTopicWithAssignments, topic64},
	} {
		if SameRequest(c.op, c.body, c.committedOp, c.committed) {
			t.Errorf("%s: SameRequest accepted it", c.name)
		}
	}
}

// TestPropertyProjectionDecodes: every projection Project builds decodes
// as the replicated body it claims to be, carries the request it came from,
// and numbers its groups from nextGroup.
func TestPropertyProjectionDecodes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		req := genRequest(t, metadata.NewState())
		next := rapid.Uint64Range(0, 1<<62).Draw(t, "next")
		op, body, ok := Project(req.op, req.body, next)
		if !ok {
			return
		}
		var parts []assignment
		switch op {
		case wire.OperationCreateTopicWithAssignments:
			x, err := decodeCreateTopicReplicated(body)
			if err != nil {
				t.Fatalf("64 body does not decode: %v", err)
			}
			c, _ := decodeCreateTopic(req.body)
			if x.request.stream != c.stream || x.request.name != c.name || x.request.count != c.count || int(c.count) != len(x.parts) {
				t.Fatalf("request section %+v from %+v", x.request, c)
			}
			// Explicit and derived keys are disjoint and cover the catalog.
			seen := map[string]int{}
			for _, block := range [][]byte{x.request.options, x.derived} {
				pairs, _ := decodeBlock(block)
				for _, p := range pairs {
					seen[p.key]++
				}
			}
			if len(seen) != 8 {
				t.Fatalf("explicit and derived keys %v", seen)
			}
			for k, n := range seen {
				if n != 1 {
					t.Fatalf("key %s in both blocks", k)
				}
			}
			parts = x.parts
		case wire.OperationCreatePartitionsWithAssignments:
			x, err := decodeCreatePartitionsReplicated(body)
			if err != nil {
				t.Fatalf("65 body does not decode: %v", err)
			}
			parts = x.parts
		default:
			if op != req.op || !bytes.Equal(body, req.body) {
				t.Fatalf("%v is not replicated verbatim", req.op)
			}
		}
		for i, p := range parts {
			if p.id != uint32(i) || p.group != next+uint64(i) {
				t.Fatalf("assignment %d = %+v", i, p)
			}
		}
	})
}
