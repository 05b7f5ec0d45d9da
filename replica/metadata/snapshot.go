package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// SnapshotVersion is the MetadataSnapshot version Iggy's decoder accepts
// (wire.md 8.2: it peeks the first array element and refuses any other).
const SnapshotVersion uint32 = 3

// SnapshotWriterRelease is the writer_release this build stamps.
const SnapshotWriterRelease uint32 = 0

// Errors of DecodeSnapshot, each a rule a payload broke.
var (
	// ErrSnapshotVersion: the first element is not version 3.
	ErrSnapshotVersion = errors.New("metadata snapshot: version is not 3")
	// ErrSnapshotShape: an array of the wrong length, a value of the wrong
	// type, or bytes left after the payload.
	ErrSnapshotShape = errors.New("metadata snapshot: malformed payload")
	// ErrSnapshotNonCanonical: the payload decodes, but not to the bytes
	// EncodeSnapshot writes for what it decodes to (an integer in another
	// width, a string header longer than needed, bin where str belongs).
	ErrSnapshotNonCanonical = errors.New("metadata snapshot: not in canonical encoding")
	// ErrSnapshotState: the payload describes no state Apply could reach:
	// keys out of order or above the limits, a name twice, option entries
	// out of order, a partition group id above the highest.
	ErrSnapshotState = errors.New("metadata snapshot: inconsistent state")
)

// SnapshotMeta is the envelope of a snapshot around the state.
type SnapshotMeta struct {
	// CreatedAt is the timestamp of the prepare at SequenceNumber, so that
	// every replica that checkpoints at one op writes the same bytes (Iggy
	// stamps the wall clock).
	CreatedAt uint64
	// SequenceNumber is the op the snapshot holds the state after (the
	// manifest entry's frontier).
	SequenceNumber uint64
	// ClientTable is the client_table field's MessagePack value verbatim
	// (nil encodes nil); package clients reads and writes it.
	ClientTable []byte
}

// EncodeSnapshot returns the MetadataSnapshot payload of s (wire.md 8.2,
// the artifact of kind 0): rmp_serde's positional arrays
//
//	[version u32, created_at u64, sequence_number u64, users, streams,
//	 client_table, writer_release u32]
//
// in a canonical encoding: every integer in the width of its field (u8
// 0xcc, u32 0xce, u64 0xcf, whatever the value), strings as str in the
// shortest header, byte strings as bin, arrays in key order. Replicas at one
// op with one state write identical bytes. users is nil (this slice models
// no users but root), streams is
//
//	[revision u64, highest_group_id u64, [stream...]]
//	stream    = [key u32, name, created_at u64, [option...], [topic...]]
//	topic     = [key u32, name, created_at u64, message_expiry u64,
//	             compression u8, max_topic_size u64, [option...], [partition...]]
//	partition = [id u32, group_id u64, created_at u64, created_revision u64]
//	option    = [key, kind u8, value bin, explicit bool]
//
// (DEVIATIONS.md 60 records where this differs from Iggy's schema).
func (s *State) EncodeSnapshot(meta SnapshotMeta) []byte {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	must := func(err error) {
		if err != nil { // a bytes.Buffer never fails a write
			panic(fmt.Sprintf("metadata snapshot: encode: %v", err))
		}
	}
	must(e.EncodeArrayLen(7))
	must(e.EncodeUint32(SnapshotVersion))
	must(e.EncodeUint64(meta.CreatedAt))
	must(e.EncodeUint64(meta.SequenceNumber))
	must(e.EncodeNil()) // users
	s.encodeStreams(e, &buf, must)
	if meta.ClientTable == nil {
		must(e.EncodeNil())
	} else {
		buf.Write(meta.ClientTable) // the encoder does not buffer over a bytes.Buffer
	}
	must(e.EncodeUint32(SnapshotWriterRelease))
	return buf.Bytes()
}

func (s *State) encodeStreams(e *msgpack.Encoder, buf *bytes.Buffer, must func(error)) {
	encodeOptions := func(m optionMap) {
		must(e.EncodeArrayLen(len(m)))
		for _, o := range m {
			must(e.EncodeArrayLen(4))
			must(e.EncodeString(o.Key))
			must(e.EncodeUint8(uint8(o.Kind)))
			must(e.EncodeBytesLen(len(o.Value))) // bin even when empty: EncodeBytes writes nil for a nil slice
			buf.Write(o.Value)
			must(e.EncodeBool(o.Explicit))
		}
	}
	must(e.EncodeArrayLen(3))
	must(e.EncodeUint64(s.revision))
	must(e.EncodeUint64(s.highestGroupID))
	must(e.EncodeArrayLen(s.streams.len()))
	s.streams.each(func(sk int, st *stream) {
		must(e.EncodeArrayLen(5))
		must(e.EncodeUint32(uint32(sk)))
		must(e.EncodeString(st.name))
		must(e.EncodeUint64(st.createdAt))
		encodeOptions(st.options)
		must(e.EncodeArrayLen(st.topics.len()))
		st.topics.each(func(tk int, t *topic) {
			must(e.EncodeArrayLen(8))
			must(e.EncodeUint32(uint32(tk)))
			must(e.EncodeString(t.name))
			must(e.EncodeUint64(t.createdAt))
			must(e.EncodeUint64(t.messageExpiry))
			must(e.EncodeUint8(t.compression))
			must(e.EncodeUint64(t.maxTopicSize))
			encodeOptions(t.options)
			must(e.EncodeArrayLen(len(t.partitions)))
			for _, p := range t.partitions {
				must(e.EncodeArrayLen(4))
				must(e.EncodeUint32(p.id))
				must(e.EncodeUint64(p.groupID))
				must(e.EncodeUint64(p.createdAt))
				must(e.EncodeUint64(p.createdRevision))
			}
		})
	})
}

// snapshotReader decodes one payload and remembers the first rule broken.
type snapshotReader struct {
	d   *msgpack.Decoder
	err error
}

func (r *snapshotReader) fail(rule error, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: %s", rule, fmt.Sprintf(format, args...))
	}
}

func (r *snapshotReader) array(what string, want int) bool {
	if r.err != nil {
		return false
	}
	n, err := r.d.DecodeArrayLen()
	if err != nil || n != want {
		r.fail(ErrSnapshotShape, "%s: want an array of %d, got %d (%v)", what, want, n, err)
		return false
	}
	return true
}

// list reads an array length of at most max.
func (r *snapshotReader) list(what string, max int) int {
	if r.err != nil {
		return 0
	}
	n, err := r.d.DecodeArrayLen()
	if err != nil || n < 0 || n > max {
		r.fail(ErrSnapshotShape, "%s: want an array of at most %d, got %d (%v)", what, max, n, err)
		return 0
	}
	return n
}

func (r *snapshotReader) u64(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, err := r.d.DecodeUint64()
	if err != nil {
		r.fail(ErrSnapshotShape, "%s: %v", what, err)
	}
	return v
}

func (r *snapshotReader) u32(what string) uint32 {
	v := r.u64(what)
	if v > 1<<32-1 {
		r.fail(ErrSnapshotShape, "%s: %d does not fit u32", what, v)
	}
	return uint32(v)
}

func (r *snapshotReader) u8(what string) uint8 {
	v := r.u64(what)
	if v > 255 {
		r.fail(ErrSnapshotShape, "%s: %d does not fit u8", what, v)
	}
	return uint8(v)
}

func (r *snapshotReader) str(what string) string {
	if r.err != nil {
		return ""
	}
	v, err := r.d.DecodeString()
	if err != nil {
		r.fail(ErrSnapshotShape, "%s: %v", what, err)
	}
	return v
}

func (r *snapshotReader) bin(what string) []byte {
	if r.err != nil {
		return nil
	}
	v, err := r.d.DecodeBytes()
	if err != nil {
		r.fail(ErrSnapshotShape, "%s: %v", what, err)
	}
	return v
}

func (r *snapshotReader) boolean(what string) bool {
	if r.err != nil {
		return false
	}
	v, err := r.d.DecodeBool()
	if err != nil {
		r.fail(ErrSnapshotShape, "%s: %v", what, err)
	}
	return v
}

// DecodeSnapshot reads a payload EncodeSnapshot wrote into a state with the
// given limits (every replica and the checker's model use the same). It
// accepts exactly the canonical encodings of reachable-looking states: a
// payload that decodes but would re-encode to other bytes is refused with
// ErrSnapshotNonCanonical, so two replicas can never hold different bytes
// for one state. The client_table field comes back raw in the meta.
func DecodeSnapshot(payload []byte, limits Limits) (*State, SnapshotMeta, error) {
	var meta SnapshotMeta
	rd := bytes.NewReader(payload)
	r := &snapshotReader{d: msgpack.NewDecoder(rd)}
	if !r.array("MetadataSnapshot", 7) {
		return nil, meta, r.err
	}
	if v := r.u32("version"); r.err == nil && v != SnapshotVersion {
		return nil, meta, fmt.Errorf("%w: got %d", ErrSnapshotVersion, v)
	}
	meta.CreatedAt = r.u64("created_at")
	meta.SequenceNumber = r.u64("sequence_number")
	if r.err == nil {
		if err := r.d.DecodeNil(); err != nil {
			r.fail(ErrSnapshotShape, "users: want nil (%v)", err)
		}
	}
	s := newState(limits)
	r.streams(s)
	if r.err == nil {
		if c, err := r.d.PeekCode(); err == nil && c == 0xc0 {
			_ = r.d.DecodeNil()
		} else if raw, err := r.d.DecodeRaw(); err != nil {
			r.fail(ErrSnapshotShape, "client_table: %v", err)
		} else {
			meta.ClientTable = []byte(raw)
		}
	}
	if release := r.u32("writer_release"); r.err == nil && release != SnapshotWriterRelease {
		r.fail(ErrSnapshotShape, "writer_release: %d, this build reads %d", release, SnapshotWriterRelease)
	}
	if r.err == nil && rd.Len() != 0 {
		r.fail(ErrSnapshotShape, "%d bytes after the payload", rd.Len())
	}
	if r.err != nil {
		return nil, SnapshotMeta{}, r.err
	}
	if again := s.EncodeSnapshot(meta); !bytes.Equal(again, payload) {
		return nil, SnapshotMeta{}, fmt.Errorf("%w: %d bytes re-encode to %d other bytes", ErrSnapshotNonCanonical, len(payload), len(again))
	}
	return s, meta, nil
}

func (r *snapshotReader) streams(s *State) {
	if !r.array("streams", 3) {
		return
	}
	s.revision = r.u64("revision")
	s.highestGroupID = r.u64("highest_group_id")
	n := r.list("streams", s.limits.Streams)
	prev := -1
	for i := 0; i < n && r.err == nil; i++ {
		if !r.array("stream", 5) {
			return
		}
		key := r.u32("stream key")
		st := &stream{name: r.str("stream name"), createdAt: r.u64("stream created_at"), topicByName: map[string]uint32{}}
		st.options = r.options("stream options")
		tn := r.list("topics", s.limits.TopicsPerStream)
		tprev := -1
		for j := 0; j < tn && r.err == nil; j++ {
			if !r.array("topic", 8) {
				return
			}
			tk := r.u32("topic key")
			t := &topic{name: r.str("topic name"), createdAt: r.u64("topic created_at"),
				messageExpiry: r.u64("message_expiry"), compression: r.u8("compression"),
				maxTopicSize: r.u64("max_topic_size")}
			t.options = r.options("topic options")
			pn := r.list("partitions", int(s.limits.PartitionID))
			for k := 0; k < pn && r.err == nil; k++ {
				if !r.array("partition", 4) {
					return
				}
				p := partition{id: r.u32("partition id"), groupID: r.u64("group_id"),
					createdAt: r.u64("partition created_at"), createdRevision: r.u64("created_revision")}
				r.checkPartition(s, t, p)
				t.partitions = append(t.partitions, p)
			}
			if r.err != nil {
				return
			}
			if int(tk) <= tprev || int(tk) >= s.limits.TopicsPerStream {
				r.fail(ErrSnapshotState, "stream %d: topic key %d after %d (limit %d)", key, tk, tprev, s.limits.TopicsPerStream)
				return
			}
			if _, dup := st.topicByName[t.name]; dup || t.name == "" {
				r.fail(ErrSnapshotState, "stream %d: topic name %q empty or twice", key, t.name)
				return
			}
			tprev = int(tk)
			st.topics.insertAt(int(tk), t)
			st.topicByName[t.name] = tk
		}
		if r.err != nil {
			return
		}
		if int(key) <= prev || int(key) >= s.limits.Streams {
			r.fail(ErrSnapshotState, "stream key %d after %d (limit %d)", key, prev, s.limits.Streams)
			return
		}
		if _, dup := s.streamByName[st.name]; dup || st.name == "" {
			r.fail(ErrSnapshotState, "stream name %q empty or twice", st.name)
			return
		}
		prev = int(key)
		s.streams.insertAt(int(key), st)
		s.streamByName[st.name] = key
	}
}

func (r *snapshotReader) checkPartition(s *State, t *topic, p partition) {
	if r.err != nil {
		return
	}
	if p.id >= s.limits.PartitionID || p.groupID == 0 || p.groupID > s.highestGroupID || p.createdRevision > s.revision {
		r.fail(ErrSnapshotState, "topic %q: partition %d (group %d, revision %d) outside the limit %d, the highest group %d or the revision %d",
			t.name, p.id, p.groupID, p.createdRevision, s.limits.PartitionID, s.highestGroupID, s.revision)
		return
	}
	for _, q := range t.partitions {
		if q.id == p.id {
			r.fail(ErrSnapshotState, "topic %q: partition id %d twice", t.name, p.id)
			return
		}
	}
}

func (r *snapshotReader) options(what string) optionMap {
	n := r.list(what, wire.OptionPairsMax)
	m := make(optionMap, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		if !r.array("option", 4) {
			return nil
		}
		o := storedOption{Key: r.str("option key"), Kind: wire.OptionKind(r.u8("option kind")), Value: r.bin("option value"), Explicit: r.boolean("option explicit")}
		if r.err != nil {
			return nil
		}
		if o.Value == nil {
			o.Value = []byte{}
		}
		if len(m) > 0 && strings.Compare(m[len(m)-1].Key, o.Key) >= 0 {
			r.fail(ErrSnapshotState, "%s: key %q not after %q", what, o.Key, m[len(m)-1].Key)
			return nil
		}
		if o.Kind < wire.OptionRaw || o.Kind > wire.OptionFloat64 {
			r.fail(ErrSnapshotState, "%s: key %q has kind %d", what, o.Key, o.Kind)
			return nil
		}
		if size := fixedSize(o.Kind); size != 0 && len(o.Value) != size {
			r.fail(ErrSnapshotState, "%s: key %q of kind %d holds %d bytes", what, o.Key, o.Kind, len(o.Value))
			return nil
		}
		m = append(m, o)
	}
	if r.err == nil && !m.fitsBlock() {
		r.fail(ErrSnapshotState, "%s: %d entries do not fit one options block", what, len(m))
	}
	return m
}
