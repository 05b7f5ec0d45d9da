package metadata

import (
	"encoding/binary"

	"github.com/iggy-vopr/vopr/replica/wire"
	"pgregory.net/rapid"
)

// Generators of request bodies, shared by the property tests.

var namePool = []string{"a", "b", "orders", "événements", "1", "0"}

func genName(t *rapid.T, label string) string {
	if rapid.IntRange(0, 9).Draw(t, label+"_fresh") == 0 {
		return rapid.StringOfN(rapid.Rune(), 1, 20, NameMax).
			Filter(func(s string) bool { return len(s) <= NameMax }).Draw(t, label)
	}
	return rapid.SampledFrom(namePool).Draw(t, label)
}

func genIdentifier(t *rapid.T, label string) Identifier {
	if rapid.Bool().Draw(t, label+"_numeric") {
		return ID(rapid.Uint32Range(0, 5).Draw(t, label))
	}
	return Named(genName(t, label))
}

// genOptionValue draws an option value: mostly well formed for its kind,
// sometimes of the wrong length for a fixed-size kind, sometimes of a kind
// with no meaning (skipped by the stored map).
func genOptionValue(t *rapid.T, label string) (wire.OptionKind, []byte) {
	kind := wire.OptionKind(rapid.SampledFrom([]uint8{1, 2, 3, 9, 11, 12, 15, 16, 200}).Draw(t, label+"_kind"))
	n := fixedSize(kind)
	if n == 0 || rapid.IntRange(0, 9).Draw(t, label+"_badlen") == 0 {
		n = rapid.IntRange(1, 12).Draw(t, label+"_len")
	}
	return kind, rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, label)
}

var topicKeys = append(topicKeyNames[:], "partitions_count", "unknown")

// genTopicOptions draws a topic options block: catalog keys with plausible
// typed or text values, sometimes bad ones.
func genTopicOptions(t *rapid.T, label string) []byte {
	n := rapid.IntRange(0, 3).Draw(t, label+"_n")
	seen := map[string]bool{}
	var pairs []wire.Option
	for range n {
		key := rapid.SampledFrom(topicKeys).Draw(t, label+"_key")
		if seen[key] {
			continue
		}
		seen[key] = true
		var kind wire.OptionKind
		var value []byte
		switch rapid.IntRange(0, 5).Draw(t, label+"_shape") {
		case 0:
			kind, value = genOptionValue(t, label+"_raw")
		case 1:
			kind, value = wire.OptionString, []byte(rapid.SampledFrom([]string{
				"none", "GZIP", "true", "false", "0", "unlimited", "server_default", "1073741824", "1048576",
				"1h 30m", "10s", "512", "1024", "+7", "128MiB",
			}).Draw(t, label+"_text"))
		case 2:
			kind, value = wire.OptionUint64, binary.LittleEndian.AppendUint64(nil,
				rapid.SampledFrom([]uint64{0, 1 << 20, 1 << 30, 1<<30 + 512, 1 << 31, 5_000_000, ^uint64(0)}).Draw(t, label+"_u64"))
		case 3:
			kind, value = wire.OptionUint32, binary.LittleEndian.AppendUint32(nil, rapid.Uint32Range(0, 2000).Draw(t, label+"_u32"))
		case 4:
			kind, value = wire.OptionBool, []byte{rapid.ByteRange(0, 2).Draw(t, label+"_bool")}
		default:
			kind, value = wire.OptionUint8, []byte{rapid.ByteRange(0, 3).Draw(t, label+"_u8")}
		}
		pairs = append(pairs, wire.Option{Key: key, Kind: kind, Value: value})
	}
	if len(pairs) == 0 {
		return []byte{}
	}
	return wire.EncodeOptions(pairs)
}

// genStreamOptions draws a stream options block (any keys).
func genStreamOptions(t *rapid.T, label string) []byte {
	if rapid.IntRange(0, 3).Draw(t, label+"_any") != 0 {
		return []byte{}
	}
	n := rapid.IntRange(1, 3).Draw(t, label+"_n")
	var pairs []wire.Option
	seen := map[string]bool{}
	for range n {
		key := rapid.SampledFrom([]string{"x", "y", "retention"}).Draw(t, label+"_key")
		if seen[key] {
			continue
		}
		seen[key] = true
		kind, value := genOptionValue(t, label+"_v")
		pairs = append(pairs, wire.Option{Key: key, Kind: kind, Value: value})
	}
	return wire.EncodeOptions(pairs)
}

// request is a client request of the supported set.
type request struct {
	op   wire.Operation
	body []byte
	typ  any
}

func genRequest(t *rapid.T) request {
	op := rapid.SampledFrom([]wire.Operation{
		wire.OperationCreateStream, wire.OperationCreateStream, wire.OperationUpdateStream, wire.OperationDeleteStream,
		wire.OperationCreateTopic, wire.OperationCreateTopic, wire.OperationDeleteTopic,
		wire.OperationCreatePartitions, wire.OperationDeletePartitions,
	}).Draw(t, "op")
	var x interface{ Encode() []byte }
	switch op {
	case wire.OperationCreateStream:
		x = CreateStream{Name: genName(t, "name"), Options: genStreamOptions(t, "opts")}
	case wire.OperationUpdateStream:
		x = UpdateStream{Stream: genIdentifier(t, "stream"), Name: genName(t, "name"), Options: genStreamOptions(t, "opts")}
	case wire.OperationDeleteStream:
		x = DeleteStream{Stream: genIdentifier(t, "stream")}
	case wire.OperationCreateTopic:
		x = CreateTopic{Stream: genIdentifier(t, "stream"), PartitionsCount: rapid.Uint32Range(0, 4).Draw(t, "count"),
			Name: genName(t, "name"), Options: genTopicOptions(t, "opts")}
	case wire.OperationDeleteTopic:
		x = DeleteTopic{Stream: genIdentifier(t, "stream"), Topic: genIdentifier(t, "topic")}
	case wire.OperationCreatePartitions:
		x = CreatePartitions{Stream: genIdentifier(t, "stream"), Topic: genIdentifier(t, "topic"),
			PartitionsCount: rapid.Uint32Range(0, 4).Draw(t, "count")}
	case wire.OperationDeletePartitions:
		x = DeletePartitions{Stream: genIdentifier(t, "stream"), Topic: genIdentifier(t, "topic"),
			PartitionsCount: rapid.Uint32Range(0, 5).Draw(t, "count")}
	}
	return request{op: op, body: x.Encode(), typ: x}
}

// committed is one prepare as a replica commits it.
type committed struct {
	header wire.PrepareHeader
	body   []byte
}

// genHistory draws client requests and runs them through Preflight and
// Project as a primary would, returning the prepares to commit in order.
func genHistory(t *rapid.T, alloc *GroupAllocator) []committed {
	n := rapid.IntRange(1, 60).Draw(t, "n")
	var out []committed
	for i := range n {
		req := genRequest(t)
		p, r := Project(req.op, req.body, alloc)
		if r.Refused() {
			continue
		}
		user := RootUserID
		if rapid.IntRange(0, 9).Draw(t, "other_user") == 0 {
			user = 1
		}
		h := prepare(uint64(len(out)+1), p.Operation, uint64(1000+i))
		h.UserID = user
		out = append(out, committed{header: h, body: p.Body})
	}
	return out
}

// genLimits draws small ceilings, so that the ceilings are reached.
func genLimits(t *rapid.T) Limits {
	if rapid.Bool().Draw(t, "default_limits") {
		return DefaultLimits()
	}
	return Limits{
		Streams:         rapid.IntRange(1, 4).Draw(t, "max_streams"),
		TopicsPerStream: rapid.IntRange(1, 3).Draw(t, "max_topics"),
		PartitionID:     rapid.Uint32Range(1, 10).Draw(t, "max_partition_id"),
	}
}
