package refmodel

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
	"pgregory.net/rapid"
)

// Generators of client requests for the differential tests. They draw
// valid and invalid bodies alike, from small pools so that names collide
// and ids exist, and they are written against the replica's request types
// (metadata.CreateStream{...}.Encode()) so that a mistake in this package's
// decoders shows up as a disagreement.

// namePool holds names that collide across requests, a numeric-looking one
// (a numeric identifier never matches a name, 1.2), multi-byte UTF-8 and
// the longest name.
var namePool = []string{"a", "b", "orders", "événements", "1", "0", strings.Repeat("n", 255)}

// rare reports a draw that comes true about once in n. rapid favours the
// smallest and largest values of a range, and shrinks toward the smallest,
// so the rare outcome is a value in the middle and the common one is 0.
func rare(t *rapid.T, label string, n int) bool {
	return rapid.IntRange(0, n-1).Draw(t, label) == n/2
}

func genName(t *rapid.T, label string) string {
	if rare(t, label+"_fresh", 10) {
		return rapid.StringOfN(rapid.Rune(), 1, 12, 255).Draw(t, label)
	}
	return rapid.SampledFrom(namePool).Draw(t, label)
}

// target draws the stream (and topic) a request addresses: mostly one that
// exists in the replica's state, by id or by name, else anything.
type target struct {
	streams []metadata.StreamInfo
}

func (w target) stream(t *rapid.T, label string) (metadata.Identifier, *metadata.StreamInfo) {
	if len(w.streams) > 0 && rapid.IntRange(0, 9).Draw(t, label+"_live") < 7 {
		s := &w.streams[rapid.IntRange(0, len(w.streams)-1).Draw(t, label+"_index")]
		if rapid.Bool().Draw(t, label+"_by_name") {
			return metadata.Named(s.Name), s
		}
		return metadata.ID(s.ID), s
	}
	return genIdentifier(t, label), nil
}

func (w target) topic(t *rapid.T, s *metadata.StreamInfo, label string) (metadata.Identifier, *metadata.TopicInfo) {
	if s != nil && len(s.Topics) > 0 && rapid.IntRange(0, 9).Draw(t, label+"_live") < 8 {
		tp := &s.Topics[rapid.IntRange(0, len(s.Topics)-1).Draw(t, label+"_index")]
		if rapid.Bool().Draw(t, label+"_by_name") {
			return metadata.Named(tp.Name), tp
		}
		return metadata.ID(tp.ID), tp
	}
	return genIdentifier(t, label), nil
}

// name draws a name for a new stream or topic: sometimes one in use (a
// collision), else from the pool.
func (w target) name(t *rapid.T, taken []string, label string) string {
	if len(taken) > 0 && rapid.IntRange(0, 4).Draw(t, label+"_taken") == 0 {
		return rapid.SampledFrom(taken).Draw(t, label+"_taken_name")
	}
	return genName(t, label)
}

func (w target) streamNames() []string {
	var out []string
	for _, s := range w.streams {
		out = append(out, s.Name)
	}
	return out
}

func topicNames(s *metadata.StreamInfo) []string {
	var out []string
	if s != nil {
		for _, tp := range s.Topics {
			out = append(out, tp.Name)
		}
	}
	return out
}

func genIdentifier(t *rapid.T, label string) metadata.Identifier {
	switch rapid.IntRange(0, 9).Draw(t, label+"_shape") {
	case 0, 1, 2, 3:
		return metadata.ID(rapid.Uint32Range(0, 4).Draw(t, label))
	case 5:
		return metadata.ID(rapid.SampledFrom([]uint32{7, 1 << 20, math.MaxUint32}).Draw(t, label+"_far"))
	}
	return metadata.Named(genName(t, label))
}

// entry is one raw options entry, so that a generator can also build blocks
// that break the rules of 1.8.
type entry struct {
	kind uint8
	data []byte
}

func rawBlock(entries ...entry) []byte {
	b := []byte{}
	for _, e := range entries {
		b = append(b, e.kind)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e.data)))
		b = append(b, e.data...)
	}
	return b
}

func key(s string) entry { return entry{kind: uint8(wire.OptionString), data: []byte(s)} }

func u64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// genValue draws an option value of any kind: mostly the right length for a
// fixed-size kind, sometimes not, sometimes a kind with no meaning (16, 99,
// 200), which a stored map skips.
func genValue(t *rapid.T, label string) entry {
	kind := rapid.SampledFrom([]uint8{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 99, 200}).Draw(t, label+"_kind")
	n := valueSize(kind)
	if n <= 0 || rare(t, label+"_badlen", 8) {
		n = rapid.IntRange(1, 17).Draw(t, label+"_len")
	}
	return entry{kind: kind, data: rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, label)}
}

// genBadBlock draws a block that breaks one rule of 1.8.
func genBadBlock(t *rapid.T, label string) []byte {
	switch rapid.IntRange(0, 6).Draw(t, label+"_rule") {
	case 0:
		return rawBlock(key("k"), entry{kind: 0, data: []byte{1}}) // kind 0
	case 1:
		return rawBlock(key("k")) // a key without a value
	case 2:
		return rawBlock(key("k"), entry{kind: 9, data: []byte{1}}, key("k"), entry{kind: 9, data: []byte{2}}) // duplicate
	case 3:
		return rawBlock(entry{kind: 9, data: []byte("k")}, entry{kind: 9, data: []byte{1}}) // key not a String
	case 4:
		return rawBlock(entry{kind: 2, data: []byte{0xff}}, entry{kind: 9, data: []byte{1}}) // key not UTF-8
	case 5:
		return append(rawBlock(key("k"), entry{kind: 9, data: []byte{1}}), 2, 1, 0) // cut entry
	}
	b := rawBlock(key("k"))
	return append(b, 9, 0, 0, 0, 0) // len 0
}

// genStreamOptions draws a stream block: mostly empty, any keys otherwise.
func genStreamOptions(t *rapid.T, label string) []byte {
	switch rapid.IntRange(0, 19).Draw(t, label+"_shape") {
	case 10:
		return genBadBlock(t, label+"_bad")
	case 8, 12:
		return genBigBlock(t, label+"_big")
	case 5, 6, 7, 13, 14:
		n := rapid.IntRange(1, 3).Draw(t, label+"_n")
		keys := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"x", "y", "retention", "é"}), n, n, func(s string) string { return s }).Draw(t, label+"_keys")
		var es []entry
		for i, k := range keys {
			es = append(es, key(k), genValue(t, label+"_v"+string(rune('0'+i))))
		}
		return rawBlock(es...)
	}
	return []byte{}
}

// genBigBlock draws a block near the limits of one block, so that an
// UpdateStream patch can push the stored map past them (DEVIATIONS 16):
// many pairs of a key family, with long or short values.
func genBigBlock(t *rapid.T, label string) []byte {
	family := rapid.SampledFrom([]string{"p", "q", "r"}).Draw(t, label+"_family")
	pairs := rapid.SampledFrom([]int{300, 350, 370, 600, 1024}).Draw(t, label+"_pairs")
	valueLen := 255
	if pairs > 370 {
		valueLen = 1
	}
	var es []entry
	for i := range pairs {
		es = append(es, key(family+string(rune('A'+i/64))+string(rune('A'+i%64))), entry{kind: 1, data: make([]byte, valueLen)})
	}
	return rawBlock(es...)
}

var topicKeys = []string{
	"compression_algorithm", "message_expiry", "max_topic_size", "segment_size", "enforce_fsync",
	"messages_required_to_save", "size_of_messages_required_to_save", "preallocate_segments",
	"partitions_count", "unknown", "Segment_size",
}

// textValues are String values for the catalog: humantime durations (with
// fractions, overflow, every unit family), byte sizes and their keywords,
// booleans, counts, compression names in any case (and U+0130, which Rust
// lowercases to two characters).
var textValues = []string{
	"none", "gzip", "GZip", "NONE", "GZİP", "zstd", "true", "false", "True", "1",
	"0", "+7", "+16", " 5", "-1", "16777216", "16777217", "4294967296", "",
	"unlimited", "Unlimited", "None", "never_expire", "default", "Default", "server_default", "Server_default",
	"1048576", "1048577", "1073741824", "1073741825", "2097152", "128MiB", "1 GiB", "1e3", "18446744073709551615", "18446744073709551616",
	"10s", "1h 30m", "1h30m", "1.5h", "0.5us", "1.3ns", "2 days", "1M", "1y", "3 wks", "7nanos", "5µs", "5μs", "0s",
	"4294967295s", "4294967295s 999ms", "4294967296s", "100", "1s 2", "1.", "1.h", " 1m ", "1 .5s", "1ms 999999999ns",
}

// genTopicOptions draws a CreateTopic block: catalog keys (and a few that
// are not) with typed or text values, good and bad.
func genTopicOptions(t *rapid.T, label string) []byte {
	switch rapid.IntRange(0, 29).Draw(t, label+"_shape") {
	case 0, 1, 2, 3, 4, 5, 6, 7, 8, 9:
		return []byte{}
	case 15:
		return genBadBlock(t, label+"_badblock")
	case 10, 11, 12, 13, 14, 16, 17, 18:
		return genGoodTopicOptions(t, label+"_good")
	}
	n := rapid.IntRange(1, 3).Draw(t, label+"_n")
	keys := rapid.SliceOfNDistinct(rapid.SampledFrom(topicKeys), n, n, func(s string) string { return s }).Draw(t, label+"_keys")
	var es []entry
	for _, k := range keys {
		var v entry
		switch rapid.IntRange(0, 6).Draw(t, label+"_shape") {
		case 0:
			v = genValue(t, label+"_raw")
		case 1, 2:
			v = entry{kind: 2, data: []byte(rapid.SampledFrom(textValues).Draw(t, label+"_text"))}
			if len(v.data) == 0 {
				v.data = []byte{0xff} // not UTF-8
			}
		case 3:
			v = entry{kind: 12, data: u64(rapid.SampledFrom([]uint64{0, 1, 512, 1 << 20, 1<<20 + 1, 1<<20 + 512, 5 << 20,
				1 << 29, 1 << 30, 1<<30 + 512, 1 << 31, 64 << 30, math.MaxUint64}).Draw(t, label+"_u64"))}
		case 4:
			v = entry{kind: 11, data: binary.LittleEndian.AppendUint32(nil, rapid.SampledFrom([]uint32{0, 1, 1024, 16 << 20, 16<<20 + 1}).Draw(t, label+"_u32"))}
		case 5:
			v = entry{kind: 3, data: []byte{rapid.ByteRange(0, 2).Draw(t, label+"_bool")}}
		default:
			v = entry{kind: 9, data: []byte{rapid.ByteRange(0, 3).Draw(t, label+"_u8")}}
		}
		es = append(es, key(k), v)
	}
	return rawBlock(es...)
}

// genGoodTopicOptions draws a block the catalog accepts, in any kinds and
// key order, so that topics with explicit options get created.
func genGoodTopicOptions(t *rapid.T, label string) []byte {
	good := map[string][]entry{
		"compression_algorithm": {{9, []byte{1}}, {9, []byte{2}}, {2, []byte("gzip")}, {2, []byte("None")}},
		"message_expiry": {{12, u64(0)}, {12, u64(5_000_000)}, {12, u64(math.MaxUint64)}, {2, []byte("1h 30m")},
			{2, []byte("server_default")}, {2, []byte("never_expire")}, {2, []byte("7ns")}, {2, []byte("4294967295s 999ms")}},
		"max_topic_size": {{12, u64(0)}, {12, u64(1 << 30)}, {12, u64(math.MaxUint64)}, {2, []byte("unlimited")},
			{2, []byte("None")}, {2, []byte("2147483648")}},
		"segment_size":                      {{12, u64(0)}, {12, u64(1 << 20)}, {12, u64(5 << 20)}, {2, []byte("1048576")}, {2, []byte("Unlimited")}},
		"enforce_fsync":                     {{3, []byte{0}}, {3, []byte{1}}, {2, []byte("true")}},
		"messages_required_to_save":         {{11, []byte{1, 0, 0, 0}}, {2, []byte("+16")}, {2, []byte("16777216")}},
		"size_of_messages_required_to_save": {{12, u64(0)}, {12, u64(1 << 30)}, {2, []byte("512")}, {2, []byte("none")}},
		"preallocate_segments":              {{3, []byte{1}}, {2, []byte("false")}},
	}
	n := rapid.IntRange(1, 8).Draw(t, label+"_n")
	keys := rapid.SliceOfNDistinct(rapid.SampledFrom(topicKeys[:8]), n, n, func(s string) string { return s }).Draw(t, label+"_keys")
	var es []entry
	for _, k := range keys {
		es = append(es, key(k), rapid.SampledFrom(good[k]).Draw(t, label+"_"+k))
	}
	return rawBlock(es...)
}

func genCount(t *rapid.T, label string, small int) uint32 {
	if rare(t, label+"_big", 20) {
		return rapid.SampledFrom([]uint32{999, 1000, 1001, math.MaxUint32}).Draw(t, label+"_big_count")
	}
	return uint32(rapid.IntRange(0, small).Draw(t, label))
}

// request is a client request: an operation and a body.
type request struct {
	op   wire.Operation
	body []byte
}

// genRequest draws a client request. Most are well formed bodies of the
// slice's operations; the rest are mutated bodies, bodies with ignored
// trailing bytes, operations outside the slice, internal operations and
// undefined operation bytes.
func genRequest(t *rapid.T, st *metadata.State) request {
	w := target{streams: st.Streams()}
	ops := []wire.Operation{
		wire.OperationCreateStream, wire.OperationCreateStream, wire.OperationCreateStream,
		wire.OperationUpdateStream, wire.OperationUpdateStream, wire.OperationDeleteStream,
		wire.OperationCreateTopic, wire.OperationCreateTopic, wire.OperationCreateTopic, wire.OperationCreateTopic,
		wire.OperationDeleteTopic, wire.OperationCreatePartitions, wire.OperationCreatePartitions,
		wire.OperationDeletePartitions, wire.OperationDeletePartitions,
	}
	var op wire.Operation
	switch rapid.IntRange(0, 39).Draw(t, "op_family") {
	case 19:
		op = rapid.SampledFrom([]wire.Operation{wire.OperationRegister, wire.OperationLogout}).Draw(t, "session_op")
	case 20:
		op = rapid.SampledFrom([]wire.Operation{wire.OperationNonReplicated, wire.OperationPurgeStream, wire.OperationUpdateTopic,
			wire.OperationDeleteSegments, wire.OperationCreateUser, wire.OperationSendMessages, wire.OperationJoinConsumerGroup}).Draw(t, "other_op")
	case 21:
		op = rapid.SampledFrom([]wire.Operation{64, 65, 66, 67, 68, 0, 4, 99, 150, 255}).Draw(t, "odd_op")
	default:
		op = rapid.SampledFrom(ops).Draw(t, "op")
	}
	var body []byte
	switch op {
	case wire.OperationCreateStream:
		// The block is the body's tail (1.8); it is appended rather than
		// passed to Encode, which refuses a block that breaks the rules.
		body = append(metadata.CreateStream{Name: w.name(t, w.streamNames(), "name")}.Encode(), genStreamOptions(t, "opts")...)
	case wire.OperationUpdateStream:
		sid, _ := w.stream(t, "stream")
		body = append(metadata.UpdateStream{Stream: sid, Name: w.name(t, w.streamNames(), "name")}.Encode(),
			genStreamOptions(t, "opts")...)
	case wire.OperationDeleteStream, wire.OperationPurgeStream:
		sid, _ := w.stream(t, "stream")
		body = metadata.DeleteStream{Stream: sid}.Encode()
	case wire.OperationCreateTopic:
		sid, s := w.stream(t, "stream")
		body = append(metadata.CreateTopic{Stream: sid, PartitionsCount: genCount(t, "count", 4),
			Name: w.name(t, topicNames(s), "name")}.Encode(), genTopicOptions(t, "opts")...)
	case wire.OperationDeleteTopic:
		sid, s := w.stream(t, "stream")
		tid, _ := w.topic(t, s, "topic")
		body = metadata.DeleteTopic{Stream: sid, Topic: tid}.Encode()
	case wire.OperationCreatePartitions:
		sid, s := w.stream(t, "stream")
		tid, _ := w.topic(t, s, "topic")
		body = metadata.CreatePartitions{Stream: sid, Topic: tid, PartitionsCount: genCount(t, "count", 4)}.Encode()
	case wire.OperationDeletePartitions:
		sid, s := w.stream(t, "stream")
		tid, tp := w.topic(t, s, "topic")
		n := 3
		if tp != nil {
			n = len(tp.Partitions) + 1
		}
		body = metadata.DeletePartitions{Stream: sid, Topic: tid, PartitionsCount: genCount(t, "count", n)}.Encode()
	case wire.OperationRegister, wire.OperationLogout:
		body = []byte{}
	default:
		body = rapid.SliceOfN(rapid.Byte(), 0, 8).Draw(t, "other_body")
	}
	switch rapid.IntRange(0, 39).Draw(t, "mutation") {
	case 17: // a flipped byte
		if len(body) > 0 {
			body[rapid.IntRange(0, len(body)-1).Draw(t, "flip_at")] = rapid.Byte().Draw(t, "flip")
		}
	case 18: // cut short
		body = body[:rapid.IntRange(0, len(body)).Draw(t, "cut")]
	case 19: // trailing bytes: ignored by fixed layouts (1.10), part of a block otherwise
		body = append(body, rapid.SliceOfN(rapid.Byte(), 1, 6).Draw(t, "trailing")...)
	case 20: // longer than any body of the slice
		if rare(t, "huge", 10) {
			body = append(body, make([]byte, requestBodyMax)...)
		}
	}
	return request{op: op, body: body}
}

// genLimits draws the replicas' ceilings: Iggy's, or small enough to reach.
func genLimits(t *rapid.T) metadata.Limits {
	if rapid.IntRange(0, 3).Draw(t, "default_limits") == 0 {
		return metadata.DefaultLimits()
	}
	return metadata.Limits{
		Streams:         rapid.IntRange(1, 4).Draw(t, "max_streams"),
		TopicsPerStream: rapid.IntRange(1, 3).Draw(t, "max_topics"),
		PartitionID:     rapid.Uint32Range(1, 10).Draw(t, "max_partition_id"),
		Partitions:      rapid.SampledFrom([]int{0, 0, 1, 3, 6, 10}).Draw(t, "max_partitions"),
	}
}

// genUser draws the acting user: root mostly, another user sometimes.
func genUser(t *rapid.T) uint32 {
	if rare(t, "other_user", 8) {
		return rapid.SampledFrom([]uint32{1, 2, math.MaxUint32}).Draw(t, "user")
	}
	return rootUser
}
