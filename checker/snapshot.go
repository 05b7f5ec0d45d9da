package checker

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/iggy-vopr/vopr/checker/refmodel"
)

// snapshotMatchesModel compares the first snapshot recorded at op with the
// checker's own model at op (kept when the model applied op, a multiple of
// the checkpoint interval), read by the checker's own reading of the
// payload (readSnapshot), not the replica's decoder.
func (c *Checker) snapshotMatchesModel(r uint8, op uint64, payload []byte) {
	want, ok := c.checkpointViews[op]
	if !ok {
		return // no interval set, or not a multiple of it
	}
	delete(c.checkpointViews, op)
	got, seq, err := readSnapshot(payload)
	if err == nil && seq != op {
		err = fmt.Errorf("its sequence_number is %d", seq)
	}
	if err != nil {
		c.fail(Violation{Name: SnapshotWrong, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d's snapshot at op %d does not read as a snapshot of it: %v", r, op, err)})
		return
	}
	if !reflect.DeepEqual(got, want) {
		c.fail(Violation{Name: SnapshotWrong, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d's snapshot at op %d holds %s; the model has %s", r, op, viewDiff(got, want), viewDiff(want, got))})
		return
	}
	c.snapshotTableMatches(r, op, payload)
}

// viewDiff names the first stream (or the highest group id) where a
// differs from b, as a's side of it.
func viewDiff(a, b refmodel.View) string {
	if a.HighestGroup != b.HighestGroup {
		return fmt.Sprintf("highest group %d", a.HighestGroup)
	}
	for i := range max(len(a.Streams), len(b.Streams)) {
		switch {
		case i >= len(a.Streams):
			return fmt.Sprintf("%d streams", len(a.Streams))
		case i >= len(b.Streams) || !reflect.DeepEqual(a.Streams[i], b.Streams[i]):
			return fmt.Sprintf("stream %+v", a.Streams[i])
		}
	}
	return "the same streams"
}

var errSnapshotShape = errors.New("not the snapshot schema")

// readSnapshot reads a MetadataSnapshot payload (wire.md 8.2, with the
// nested schema DEVIATIONS.md 60 writes down) into a model View, through a
// generic MessagePack decode: what the checker reads is the schema, not the
// replica's decoder. The partition-set revision is not compared (the model
// keeps none); the client table is, by snapshottable.go.
func readSnapshot(payload []byte) (refmodel.View, uint64, error) {
	var root any
	if err := msgpack.Unmarshal(payload, &root); err != nil {
		return refmodel.View{}, 0, err
	}
	top, ok := root.([]any)
	if !ok || len(top) != 7 || num(top[0]) != 3 {
		return refmodel.View{}, 0, fmt.Errorf("%w: the envelope is %T of %d, version %v", errSnapshotShape, root, len(top), top)
	}
	seq := num(top[2])
	streams, ok := top[4].([]any)
	if !ok || len(streams) != 3 {
		return refmodel.View{}, 0, fmt.Errorf("%w: streams", errSnapshotShape)
	}
	v := refmodel.View{HighestGroup: num(streams[1])}
	list, _ := streams[2].([]any)
	for _, x := range list {
		s, ok := x.([]any)
		if !ok || len(s) != 5 {
			return refmodel.View{}, 0, fmt.Errorf("%w: a stream", errSnapshotShape)
		}
		sv := refmodel.StreamView{Key: uint32(num(s[0])), Name: str(s[1]), CreatedAt: num(s[2]), Options: options(s[3])}
		topics, _ := s[4].([]any)
		for _, y := range topics {
			t, ok := y.([]any)
			if !ok || len(t) != 8 {
				return refmodel.View{}, 0, fmt.Errorf("%w: a topic", errSnapshotShape)
			}
			tv := refmodel.TopicView{Key: uint32(num(t[0])), Name: str(t[1]), CreatedAt: num(t[2]), MessageExpiry: num(t[3]),
				Compression: uint8(num(t[4])), MaxTopicSize: num(t[5]), Options: options(t[6])}
			parts, _ := t[7].([]any)
			for _, z := range parts {
				p, ok := z.([]any)
				if !ok || len(p) != 4 {
					return refmodel.View{}, 0, fmt.Errorf("%w: a partition", errSnapshotShape)
				}
				tv.Partitions = append(tv.Partitions, refmodel.PartitionView{ID: uint32(num(p[0])), Group: num(p[1]), CreatedAt: num(p[2])})
			}
			sv.Topics = append(sv.Topics, tv)
		}
		v.Streams = append(v.Streams, sv)
	}
	return v, seq, nil
}

func options(x any) []refmodel.OptionView {
	list, _ := x.([]any)
	var out []refmodel.OptionView
	for _, y := range list {
		o, ok := y.([]any)
		if !ok || len(o) != 4 {
			out = append(out, refmodel.OptionView{Key: "(malformed option)"})
			continue
		}
		var value string
		switch b := o[2].(type) {
		case []byte:
			value = string(b)
		case string:
			value = b
		}
		explicit, _ := o[3].(bool)
		out = append(out, refmodel.OptionView{Key: str(o[0]), Kind: uint8(num(o[1])), Value: value, Explicit: explicit})
	}
	return out
}

// num reads any MessagePack integer as a u64 (negative ones wrap, and fail
// the comparison).
func num(x any) uint64 {
	switch n := x.(type) {
	case uint8:
		return uint64(n)
	case uint16:
		return uint64(n)
	case uint32:
		return uint64(n)
	case uint64:
		return n
	case int8:
		return uint64(n)
	case int16:
		return uint64(n)
	case int32:
		return uint64(n)
	case int64:
		return uint64(n)
	}
	return 1<<64 - 1
}

func str(x any) string {
	s, _ := x.(string)
	return s
}
