package partition

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/iggy-vopr/vopr/canary/bug"

	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// PollMessagesCode is the NonReplicated command code of PollMessages
// (client-ops.md 5.28).
const PollMessagesCode uint32 = 100

// ErrPoll: a PollMessages body that does not decode (its reply is the
// 16-byte empty poll, client-ops.md 5.28).
var ErrPoll = errors.New("invalid PollMessages body")

// Strategy kinds (client-ops.md 1.6).
const (
	PollOffset    uint8 = 1
	PollTimestamp uint8 = 2
	PollFirst     uint8 = 3
	PollLast      uint8 = 4
	PollNext      uint8 = 5
)

// Consumer kinds (client-ops.md 1.3).
const (
	ConsumerSingle uint8 = 1
	ConsumerGroup  uint8 = 2
)

// Poll is a decoded PollMessages request body.
type Poll struct {
	ConsumerKind  uint8
	Consumer      metadata.Identifier
	Stream, Topic metadata.Identifier
	HasPartition  bool
	Partition     uint32
	Strategy      uint8
	Value         uint64 // Offset: the offset; Timestamp: µs; ignored otherwise
	Count         uint32
	AutoCommit    bool
}

// EncodePoll builds a PollMessages request body.
func EncodePoll(p Poll) []byte {
	b := append([]byte(nil), p.ConsumerKind)
	b = metadata.AppendIdentifier(b, p.Consumer)
	b = metadata.AppendIdentifier(b, p.Stream)
	b = metadata.AppendIdentifier(b, p.Topic)
	flag := byte(0)
	if p.HasPartition {
		flag = 1
	}
	b = binary.LittleEndian.AppendUint32(append(b, flag), p.Partition)
	b = binary.LittleEndian.AppendUint64(append(b, p.Strategy), p.Value)
	b = binary.LittleEndian.AppendUint32(b, p.Count)
	auto := byte(0)
	if p.AutoCommit {
		auto = 1
	}
	return append(b, auto)
}

// DecodePoll decodes a PollMessages request body.
func DecodePoll(body []byte) (Poll, error) {
	var p Poll
	if len(body) < 1 {
		return p, fmt.Errorf("partition: %w: empty", ErrPoll)
	}
	p.ConsumerKind = body[0]
	if p.ConsumerKind != ConsumerSingle && p.ConsumerKind != ConsumerGroup {
		return p, fmt.Errorf("partition: %w: consumer kind %d", ErrPoll, p.ConsumerKind)
	}
	at := 1
	for _, id := range []*metadata.Identifier{&p.Consumer, &p.Stream, &p.Topic} {
		v, n, err := metadata.ReadIdentifier(body[at:], "PollMessages")
		if err != nil {
			return p, fmt.Errorf("partition: %w: %w", ErrPoll, err)
		}
		*id, at = v, at+n
	}
	if len(body)-at != 5+9+4+1 {
		return p, fmt.Errorf("partition: %w: %d bytes after the topic, want 19", ErrPoll, len(body)-at)
	}
	p.HasPartition = body[at] == 1 // any other flag is None (client-ops.md 1.4)
	p.Partition = binary.LittleEndian.Uint32(body[at+1:])
	p.Strategy = body[at+5]
	if p.Strategy < PollOffset || p.Strategy > PollNext {
		return p, fmt.Errorf("partition: %w: strategy %d", ErrPoll, p.Strategy)
	}
	p.Value = binary.LittleEndian.Uint64(body[at+6:])
	p.Count = binary.LittleEndian.Uint32(body[at+14:])
	p.AutoCommit = body[at+18] == 1
	if !p.HasPartition {
		p.Partition = 0
	}
	return p, nil
}

// canaryWithJournal returns the committed batches and then those of the
// journal's SendMessages above the committed prefix.
func (p *Plane) canaryWithJournal() [][]byte {
	out := append([][]byte(nil), p.committed...)
	for o := p.commitMin() + 1; ; o++ {
		f, ok := p.journal.Frame(o)
		if !ok {
			return out
		}
		var h wire.PrepareHeader
		h.Decode(wire.HeaderOf(f))
		if h.Operation == wire.OperationSendMessages {
			out = append(out, f[wire.HeaderSize:])
		}
	}
}

// PollReplyHeaderSize is the fixed front of a poll reply body.
const PollReplyHeaderSize = 16

// PollReply builds a poll reply body: partition_id u32, current_offset
// u64, messages_count u32, then the batch records (client-ops.md 5.28).
func PollReply(partitionID uint32, current uint64, batches [][]byte) []byte {
	count := uint32(0)
	size := PollReplyHeaderSize
	for _, b := range batches {
		h, _ := wire.ReadBatchHeader(b)
		count += h.MessageCount
		size += len(b)
	}
	out := binary.LittleEndian.AppendUint32(make([]byte, 0, size), partitionID)
	out = binary.LittleEndian.AppendUint64(out, current)
	out = binary.LittleEndian.AppendUint32(out, count)
	for _, b := range batches {
		out = append(out, b...)
	}
	return out
}

// Poll serves a poll from the committed batches only (the local commit
// offset bounds it, so a poll never returns what is not committed here):
// the whole batches that hold an offset at or after the strategy's start,
// in offset order, until count messages are covered or the next batch would
// take the reply past bytesMax. It returns the current offset (the last
// committed offset, 0 when empty) and the batches (read-only).
//
// Starts: Offset its value; First 0; Last the offset count messages before
// the end; Timestamp the first batch stamped at or after the value; Next
// consumer's stored offset plus one, 0 when it stored none.
func (p *Plane) Poll(strategy uint8, value uint64, count uint32, bytesMax int, consumer uint32) (uint64, [][]byte) {
	current := uint64(0)
	if p.end > 0 {
		current = p.end - 1
	}
	start := uint64(0)
	switch strategy {
	case PollOffset:
		start = value
	case PollLast:
		start = p.end - min(p.end, uint64(count))
	case PollNext:
		if stored, ok := p.offsets[consumer]; ok {
			start = stored + 1
		}
	case PollTimestamp:
		start = p.end
		for _, b := range p.committed {
			if h, _ := wire.ReadBatchHeader(b); h.BaseTimestamp >= value {
				start = h.BaseOffset
				break
			}
		}
	}
	// The first batch that ends after start: batches are contiguous, so a
	// binary search over their base offsets finds it.
	lo, hi := 0, len(p.committed)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		h, _ := wire.ReadBatchHeader(p.committed[mid])
		if h.BaseOffset+uint64(h.MessageCount) <= start {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	var out [][]byte
	covered, size := uint64(0), PollReplyHeaderSize
	batches := p.committed
	if bug.PollUncommitted {
		batches = p.canaryWithJournal() // canary_poll_uncommitted: the journal above the commit too
	}
	for i := lo; i < len(batches) && covered < uint64(count); i++ {
		b := batches[i]
		if size+len(b) > bytesMax {
			break
		}
		h, _ := wire.ReadBatchHeader(b)
		covered += h.BaseOffset + uint64(h.MessageCount) - max(h.BaseOffset, start)
		size += len(b)
		out = append(out, b)
	}
	return current, out
}
