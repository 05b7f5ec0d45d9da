package refmodel

// View is the model's state in plain values, for comparing with a state a
// replica wrote down (a checkpoint's snapshot): every stream by ascending
// key, its topics by ascending key, each with its options in key order and
// its partitions in list order. Nil slices stand for empty ones.
type View struct {
	HighestGroup uint64
	Streams      []StreamView
}

// StreamView is one stream of a View.
type StreamView struct {
	Key       uint32
	Name      string
	CreatedAt uint64
	Options   []OptionView
	Topics    []TopicView
}

// TopicView is one topic of a View.
type TopicView struct {
	Key           uint32
	Name          string
	CreatedAt     uint64
	MessageExpiry uint64
	Compression   uint8
	MaxTopicSize  uint64
	Options       []OptionView
	Partitions    []PartitionView
}

// OptionView is one stored option: Explicit says the client named the key.
type OptionView struct {
	Key      string
	Kind     uint8
	Value    string
	Explicit bool
}

// PartitionView is one partition: its id, consensus group and creation time.
type PartitionView struct {
	ID        uint32
	Group     uint64
	CreatedAt uint64
}

// View returns the model's state as a View.
func (m *Model) View() View {
	v := View{HighestGroup: m.highestGroup}
	options := func(os []stored) []OptionView {
		var out []OptionView
		for _, o := range os {
			out = append(out, OptionView{Key: o.key, Kind: o.kind, Value: string(o.value), Explicit: o.explicit})
		}
		return out
	}
	for sk, s := range m.streams {
		if s == nil {
			continue
		}
		sv := StreamView{Key: uint32(sk), Name: s.name, CreatedAt: s.createdAt, Options: options(s.options)}
		for tk, t := range s.topics {
			if t == nil {
				continue
			}
			tv := TopicView{Key: uint32(tk), Name: t.name, CreatedAt: t.createdAt, MessageExpiry: t.messageExpiry,
				Compression: t.compression, MaxTopicSize: t.maxTopicSize, Options: options(t.options)}
			for _, p := range t.partitions {
				tv.Partitions = append(tv.Partitions, PartitionView{ID: p.id, Group: p.group, CreatedAt: p.createdAt})
			}
			sv.Topics = append(sv.Topics, tv)
		}
		v.Streams = append(v.Streams, sv)
	}
	return v
}
