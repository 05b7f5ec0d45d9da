package metadata

import (
	"encoding/binary"
	"fmt"
)

// Reply payloads (client-ops.md 4). Each is what follows the result section
// of a success.

// StreamResponse describes a stream:
//
//	id u32 · created_at u64 · topics_count u32 · size_bytes u64 · messages_count u64 · name (u8 len) · options_len u32 · options
type StreamResponse struct {
	ID            uint32
	CreatedAt     uint64
	TopicsCount   uint32
	SizeBytes     uint64
	MessagesCount uint64
	Name          string
	Options       []byte
}

// TopicHeader describes a topic:
//
//	id u32 · created_at u64 · partitions_count u32 · message_expiry u64 · compression u8 · max_topic_size u64 ·
//	size_bytes u64 · messages_count u64 · name (u8 len) · explicit_len u32 · explicit · derived_len u32 · derived
type TopicHeader struct {
	ID              uint32
	CreatedAt       uint64
	PartitionsCount uint32
	MessageExpiry   uint64 // 0 = server default, MaxUint64 = never, else µs
	Compression     uint8  // 1 none, 2 gzip
	MaxTopicSize    uint64 // 0 = server default, MaxUint64 = unlimited, else bytes
	SizeBytes       uint64
	MessagesCount   uint64
	Name            string
	Explicit        []byte // options the client named
	Derived         []byte // options resolved by the primary
}

// PartitionResponse describes a partition (40 bytes):
//
//	id u32 · created_at u64 · segments_count u32 · current_offset u64 · size_bytes u64 · messages_count u64
type PartitionResponse struct {
	ID            uint32
	CreatedAt     uint64
	SegmentsCount uint32
	CurrentOffset uint64
	SizeBytes     uint64
	MessagesCount uint64
}

// LoginRegisterResponse is the payload of a shell-path Register reply:
//
//	user_id u32 · session u64 · server_protocol_version u32 · server_version (u8 len)
type LoginRegisterResponse struct {
	UserID                uint32
	Session               uint64
	ServerProtocolVersion uint32
	ServerVersion         string
}

// ProtocolVersion is the protocol version 0.11.0 packed as
// major<<20 | minor<<10 | patch (client-ops.md 5.1).
const ProtocolVersion uint32 = 11264

func appendLenBlock(b, block []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(block)))
	return appendOptions(b, block)
}

// Append appends the encoding to b.
func (x StreamResponse) Append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, x.ID)
	b = binary.LittleEndian.AppendUint64(b, x.CreatedAt)
	b = binary.LittleEndian.AppendUint32(b, x.TopicsCount)
	b = binary.LittleEndian.AppendUint64(b, x.SizeBytes)
	b = binary.LittleEndian.AppendUint64(b, x.MessagesCount)
	b = appendName(b, x.Name)
	return appendLenBlock(b, x.Options)
}

// Append appends the encoding to b.
func (x TopicHeader) Append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, x.ID)
	b = binary.LittleEndian.AppendUint64(b, x.CreatedAt)
	b = binary.LittleEndian.AppendUint32(b, x.PartitionsCount)
	b = binary.LittleEndian.AppendUint64(b, x.MessageExpiry)
	b = append(b, x.Compression)
	b = binary.LittleEndian.AppendUint64(b, x.MaxTopicSize)
	b = binary.LittleEndian.AppendUint64(b, x.SizeBytes)
	b = binary.LittleEndian.AppendUint64(b, x.MessagesCount)
	b = appendName(b, x.Name)
	b = appendLenBlock(b, x.Explicit)
	return appendLenBlock(b, x.Derived)
}

// Append appends the encoding to b.
func (x PartitionResponse) Append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, x.ID)
	b = binary.LittleEndian.AppendUint64(b, x.CreatedAt)
	b = binary.LittleEndian.AppendUint32(b, x.SegmentsCount)
	b = binary.LittleEndian.AppendUint64(b, x.CurrentOffset)
	b = binary.LittleEndian.AppendUint64(b, x.SizeBytes)
	return binary.LittleEndian.AppendUint64(b, x.MessagesCount)
}

// Append appends the encoding to b.
func (x LoginRegisterResponse) Append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, x.UserID)
	b = binary.LittleEndian.AppendUint64(b, x.Session)
	b = binary.LittleEndian.AppendUint32(b, x.ServerProtocolVersion)
	return appendName(b, x.ServerVersion)
}

func (r *reader) lenBlock() []byte {
	at := r.at
	block := r.sub()
	if r.err != nil {
		return nil
	}
	br := reader{body: r.body, b: block}
	v := br.options()
	if br.err != nil {
		r.fail(ErrOptions, at, "%v", br.err)
		return nil
	}
	return v
}

// DecodeCreateStreamReply decodes the payload of a successful CreateStream
// reply: a StreamResponse followed by its topics_count TopicHeaders (zero for
// a new stream; this decoder accepts no other count), exactly.
func DecodeCreateStreamReply(payload []byte) (StreamResponse, error) {
	r := reader{body: "StreamResponse", b: payload}
	x := StreamResponse{
		ID: r.u32(), CreatedAt: r.u64(), TopicsCount: r.u32(), SizeBytes: r.u64(), MessagesCount: r.u64(),
		Name: r.name(), Options: r.lenBlock(),
	}
	if r.err == nil && x.TopicsCount != 0 {
		r.fail(ErrLength, 4+8, "topics_count %d in a CreateStream reply", x.TopicsCount)
	}
	r.end()
	if r.err != nil {
		return StreamResponse{}, r.err
	}
	return x, nil
}

// DecodeCreateTopicReply decodes the payload of a successful CreateTopic
// reply: a TopicHeader, then partitions_count PartitionResponses, exactly.
func DecodeCreateTopicReply(payload []byte) (TopicHeader, []PartitionResponse, error) {
	r := reader{body: "TopicHeader", b: payload}
	x := TopicHeader{
		ID: r.u32(), CreatedAt: r.u64(), PartitionsCount: r.u32(), MessageExpiry: r.u64(), Compression: r.u8(),
		MaxTopicSize: r.u64(), SizeBytes: r.u64(), MessagesCount: r.u64(), Name: r.name(),
		Explicit: r.lenBlock(), Derived: r.lenBlock(),
	}
	if r.err != nil {
		return TopicHeader{}, nil, r.err
	}
	const partitionLen = 40
	if uint64(x.PartitionsCount)*partitionLen != uint64(len(payload)-r.at) {
		return TopicHeader{}, nil, &DecodeError{Body: "TopicHeader", Offset: r.at, Rule: ErrLength,
			Detail: fmt.Sprintf("%d partitions in %d bytes", x.PartitionsCount, len(payload)-r.at)}
	}
	ps := make([]PartitionResponse, x.PartitionsCount)
	for i := range ps {
		ps[i] = PartitionResponse{ID: r.u32(), CreatedAt: r.u64(), SegmentsCount: r.u32(), CurrentOffset: r.u64(),
			SizeBytes: r.u64(), MessagesCount: r.u64()}
	}
	return x, ps, r.err
}

// DecodeLoginRegisterResponse decodes a LoginRegisterResponse, exactly.
func DecodeLoginRegisterResponse(payload []byte) (LoginRegisterResponse, error) {
	r := reader{body: "LoginRegisterResponse", b: payload}
	x := LoginRegisterResponse{UserID: r.u32(), Session: r.u64(), ServerProtocolVersion: r.u32(), ServerVersion: r.name()}
	r.end()
	if r.err != nil {
		return LoginRegisterResponse{}, r.err
	}
	return x, nil
}
