package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Bad requests: what a client may send that the default mix never does
// (issue 26), so that the replica's preflight, decoders, option parsers and
// limit checks run and the checker's model (checker/refmodel) predicts each
// answer: CreateTopic options with values right and wrong (humantime
// expiries above all, client-ops.md 1.8), names and identifiers at and past
// their bounds (1.1, 1.2), partition counts past the limits (5.7, 5.11,
// 5.12), bodies cut short or run long, stream options blocks at the block's
// limits (1.8; DEVIATIONS.md 16), internal operations 64-68 and operations
// outside the slice, a Logout with a body, requests under a wrong or a zero
// request_checksum (6.3), SendMessages that do not decode (5.25: dropped
// unanswered), consumer offset requests that do not decode (5.26, 5.27) and
// polls of what does not exist or that do not decode (5.28).
// Every body is written here, byte by byte, with the workload's own
// encoders (encode.go); none comes from the replica's.

// BadMix draws bad requests from a stream of its own, so that a seed
// without them draws nothing from it and runs as before.
type BadMix struct {
	rng *rand.Rand
	// probability: per request a client would draw from the mix, the
	// chance it sends a bad one instead.
	probability float64
	names       int  // the mix's pool sizes: the bad requests meet its names
	sends       bool // the mix sends (a hot topic with partitions exists)
	nextID      uint64
}

// NewBadMix returns a bad-request mix drawing from rng, taking the place of
// a draw of mix with the given probability.
func NewBadMix(rng *rand.Rand, mix *Mix, probability float64) *BadMix {
	return &BadMix{rng: rng, probability: probability, names: mix.names, sends: mix.sends}
}

// Take reports whether the next request is a bad one.
func (b *BadMix) Take() bool { return b.rng.Float64() < b.probability }

// The kinds of bad request, drawn uniformly.
const (
	badTopicOptions = iota
	badCounts
	badNames
	badCut
	badStreamOptions
	badInternal
	badOutsideSlice
	badLogoutBody
	badChecksum
	badSend
	badOffset
	badPoll
	badKinds
)

// Next draws a bad request: every kind alike, topic options three times as
// often (their values have the most rules) and stream options twice (a
// block past its limits takes a create, then an update).
func (b *BadMix) Next() Op {
	kind := b.rng.IntN(badKinds + 3)
	switch {
	case kind == badKinds+2:
		kind = badStreamOptions
	case kind >= badKinds:
		kind = badTopicOptions
	}
	switch kind {
	case badTopicOptions:
		return Op{Operation: wire.OperationCreateTopic, Body: encodeCreateTopic(b.stream(), uint32(b.rng.IntN(3)), b.freshName("wl-x"), b.topicOptions())}
	case badCounts:
		return b.counts()
	case badNames:
		return b.badName()
	case badCut:
		return b.cut()
	case badStreamOptions:
		return b.streamOptions()
	case badInternal:
		// 64-68 (68 included, client-ops.md 10 item 11): evicted.
		op := wire.OperationCreateTopicWithAssignments + wire.Operation(b.rng.IntN(5))
		return Op{Operation: op, Body: b.anyBody()}
	case badOutsideSlice:
		outside := []wire.Operation{wire.OperationPurgeStream, wire.OperationUpdateTopic, wire.OperationPurgeTopic,
			wire.OperationDeleteSegments, wire.OperationCreateConsumerGroup, wire.OperationCreateUser}
		return Op{Operation: outside[b.rng.IntN(len(outside))], Body: b.anyBody()}
	case badLogoutBody:
		return Op{Operation: wire.OperationLogout, Body: b.bytes(1 + b.rng.IntN(8))}
	case badChecksum:
		op := Op{Operation: wire.OperationCreateStream, Body: encodeCreateStream(b.freshName("wl-c"), nil), SetChecksum: true}
		if b.rng.IntN(2) == 0 {
			op.Checksum = wire.U128{Lo: b.rng.Uint64() | 1, Hi: b.rng.Uint64()} // not the body's: raw path, not checked
		}
		return op
	case badSend:
		return b.send()
	case badPoll:
		return b.poll()
	default:
		return b.offset()
	}
}

// stream names a stream of the mix's pool, by name mostly.
func (b *BadMix) stream() ident {
	if b.rng.IntN(4) == 0 {
		return numeric(uint32(b.rng.IntN(b.names)))
	}
	return named(fmt.Sprintf("wl-s-%d", b.rng.IntN(b.names)))
}

func (b *BadMix) topic() ident {
	if b.rng.IntN(4) == 0 {
		return numeric(uint32(b.rng.IntN(b.names)))
	}
	return named(fmt.Sprintf("wl-t-%d", b.rng.IntN(b.names)))
}

// freshName is a name of a pool of the bad requests' own, small enough to
// collide.
func (b *BadMix) freshName(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, b.rng.IntN(4))
}

func (b *BadMix) bytes(n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(b.rng.Uint32())
	}
	return out
}

// anyBody is a body for an operation that is refused whatever it holds:
// empty, random bytes, or a valid stream identifier.
func (b *BadMix) anyBody() []byte {
	switch b.rng.IntN(3) {
	case 0:
		return nil
	case 1:
		return b.bytes(1 + b.rng.IntN(24))
	}
	return encodeStreamID(b.stream())
}

// humantimeUnits are humantime 2.4.0's units, and a few it does not know.
var humantimeUnits = []string{"ns", "nsec", "nanos", "us", "usec", "µs", "ms", "msec", "millis", "s", "sec", "secs",
	"second", "seconds", "m", "min", "mins", "minute", "minutes", "h", "hr", "hrs", "hour", "hours", "d", "day", "days",
	"w", "wk", "wks", "week", "weeks", "M", "month", "months", "y", "yr", "yrs", "year", "years",
	"x", "sek", "H", "mon", ""}

// humantimeEdges are texts at the grammar's edges: zero, leading zeros,
// fractions, a carry of nanoseconds into seconds, overflow, the expiry's
// u32::MAX seconds, keywords, and text that is not a duration.
var humantimeEdges = []string{"0", "0s", "00", "05m", "0h 5m", "007ms", "10s", "100ms", "1h 30m", "1h30m", " 1s", "1s ", "1 s", "1d2h3m4s",
	"1.5h", "1.5s", "0.5ms", "1.5ns", "1.", ".5s", "1999999999ns", "1999999998ns", "2999999997ns", "999999999ns 999999999ns",
	"1500ms 999999999ns", "3999999996 ns",
	"4294967295s", "4294967296s", "136y", "18446744073709551615s", "18446744073709551616s", "99999999999999999999ns",
	"1e3s", "-1s", "+1s", "1s-", "", "s", "1", "never_expire", "unlimited", "server_default", "Default", "1 h 2 m", "1hh"}

// humantimeFractionWraps are fractions whose product with their unit
// overflows a u64 and wraps to an exact multiple of their denominator
// (2^64 mod 10^k is not 0, so such numerators exist): a parser that checks
// the overflow only together with the remainder takes each for one second
// instead of refusing it. One per branch of the fraction's scaling: below a
// second (nanoseconds), below an hour (seconds in nanoseconds), from the
// hour up (seconds).
var humantimeFractionWraps = []string{"0.288230376151711744ms", "0.036028797018963968s", "0.256482556579299328h"}

// humantime draws a duration text: an edge, or terms from the grammar
// (right or wrong).
func (b *BadMix) humantime() string {
	switch b.rng.IntN(4) {
	case 0:
		return humantimeEdges[b.rng.IntN(len(humantimeEdges))]
	case 1:
		return b.humantimeOverflow()
	case 2:
		// Nanoseconds just short of k whole seconds: the carry of
		// nanoseconds into seconds, where nanos / 999_999_999 and
		// nanos / 1_000_000_000 part.
		k := uint64(2 + b.rng.IntN(3))
		return fmt.Sprintf("%dns", k*1_000_000_000-1-uint64(b.rng.IntN(int(k))))
	}
	var s strings.Builder
	for i := range 1 + b.rng.IntN(3) {
		if i > 0 && b.rng.IntN(2) == 0 {
			s.WriteByte(' ')
		}
		s.WriteString([]string{"0", "1", "07", "59", "60", "999", "1000", "86400", "4294967296", "18446744073709551615", "0001"}[b.rng.IntN(11)])
		if b.rng.IntN(6) == 0 {
			fmt.Fprintf(&s, ".%d", b.rng.IntN(1000))
		}
		if b.rng.IntN(8) == 0 {
			s.WriteByte(' ')
		}
		s.WriteString(humantimeUnits[b.rng.IntN(len(humantimeUnits))])
	}
	return s.String()
}

// humantimeOverflow draws a number just past u64::MAX, in a unit: its
// first 19 digits fit a u64 and ten times them does not (the parser's
// overflow check on the last digit refuses it; client-ops.md 1.8), mostly
// below 2.05e19, where a check off by a little lets the product wrap to a
// small, valid duration.
func (b *BadMix) humantimeOverflow() string {
	if b.rng.IntN(3) == 0 {
		return humantimeFractionWraps[b.rng.IntN(len(humantimeFractionWraps))]
	}
	const first = math.MaxUint64/10 + 1 // the least 19-digit prefix whose tenfold overflows
	prefix, digit := first+b.rng.Uint64N(first/9), b.rng.IntN(10)
	if b.rng.IntN(4) == 0 {
		prefix, digit = math.MaxUint64/10, 6+b.rng.IntN(4) // 18446744073709551616..9
	}
	return fmt.Sprintf("%d%d%s", prefix, digit, []string{"ns", "ns", "us", "s"}[b.rng.IntN(4)])
}

// topicOptions draws a CreateTopic options block: pairs of the catalog's
// keys with values of the right kind and the wrong, an unknown key now and
// then, and sometimes a block that breaks the block's own rules.
func (b *BadMix) topicOptions() []byte {
	var entries []optionEntry
	seen := map[string]bool{}
	for range 1 + b.rng.IntN(3) {
		key, value := b.topicOption()
		if seen[key] && b.rng.IntN(4) > 0 {
			continue // mostly no duplicate key: a duplicate only refuses the block
		}
		seen[key] = true
		entries = append(entries, keyEntry(key), value)
	}
	switch b.rng.IntN(10) {
	case 0:
		entries = entries[:len(entries)-1] // a key without its value
	case 1:
		entries[len(entries)-1].kind = 0
	case 2:
		entries = append(entries, optionEntry{kind: uint8(wire.OptionRaw), data: []byte("k")}, u8Entry(1)) // a key of kind Raw
	case 3:
		// A max_topic_size about an explicit segment_size (5.7): below
		// it refused, at or above it taken.
		if !seen["segment_size"] && !seen["max_topic_size"] {
			const mib = 1 << 20
			segment := uint64(1+b.rng.IntN(1024)) * mib
			limit := []uint64{segment - 512, segment - 1, segment, segment + 512}[b.rng.IntN(4)]
			entries = append(entries, keyEntry("segment_size"), u64Entry(segment), keyEntry("max_topic_size"), u64Entry(limit))
		}
	}
	return appendEntries(nil, entries...)
}

// topicOption draws one catalog key and a value for it (client-ops.md 1.8).
func (b *BadMix) topicOption() (string, optionEntry) {
	const gib, mib = 1 << 30, 1 << 20
	switch b.rng.IntN(12) {
	case 0, 1, 8, 9, 10:
		if b.rng.IntN(4) == 0 {
			return "message_expiry", u64Entry([]uint64{0, 1, 1_000_000, math.MaxUint64}[b.rng.IntN(4)])
		}
		return "message_expiry", textEntry(b.humantime())
	case 2:
		return "compression_algorithm", []optionEntry{u8Entry(1), u8Entry(2), u8Entry(3), textEntry("gzip"), textEntry("GZIP"),
			textEntry("none"), textEntry("zstd"), u32Entry(2)}[b.rng.IntN(8)]
	case 3:
		return "segment_size", []optionEntry{u64Entry(mib), u64Entry(mib - 512), u64Entry(gib), u64Entry(gib + 512),
			u64Entry(mib + 512), u64Entry(mib + 100), u64Entry(0), textEntry("1048576"), textEntry("1GiB"), textEntry("1073741824")}[b.rng.IntN(10)]
	case 4:
		return "max_topic_size", []optionEntry{u64Entry(0), u64Entry(math.MaxUint64), u64Entry(mib), u64Entry(gib), u64Entry(gib - 1),
			textEntry("unlimited"), textEntry("server_default"), textEntry("128MiB"), textEntry("2147483648"), textEntry("none")}[b.rng.IntN(10)]
	case 5:
		return "enforce_fsync", []optionEntry{boolEntry(0), boolEntry(1), boolEntry(2), textEntry("true"), textEntry("false"),
			textEntry("yes"), {kind: uint8(wire.OptionBool), data: []byte{1, 0}}}[b.rng.IntN(7)]
	case 6:
		return "messages_required_to_save", []optionEntry{u32Entry(0), u32Entry(1), u32Entry(16 << 20), u32Entry(16<<20 + 1),
			textEntry("1024"), textEntry("0"), u64Entry(5)}[b.rng.IntN(7)]
	case 7:
		return "size_of_messages_required_to_save", []optionEntry{u64Entry(0), u64Entry(gib), u64Entry(gib + 1), textEntry("4096")}[b.rng.IntN(4)]
	}
	return []string{"preallocate_segments", "preallocate_segments", "retention", "message_expiry_ms"}[b.rng.IntN(4)],
		[]optionEntry{boolEntry(1), boolEntry(0), textEntry("true")}[b.rng.IntN(3)]
}

// counts draws a partition count past a limit: more than one request may
// create (1000, 5.7 and 5.11), more than the live partitions' ceiling
// (DEVIATIONS.md 54), zero, or more than a topic has.
func (b *BadMix) counts() Op {
	counts := []uint32{0, 257, 1000, 1001, 4096, math.MaxUint32}
	n := counts[b.rng.IntN(len(counts))]
	switch b.rng.IntN(3) {
	case 0:
		if n == 0 {
			n = 1001
		}
		return Op{Operation: wire.OperationCreateTopic, Body: encodeCreateTopic(b.stream(), n, b.freshName("wl-x"), nil)}
	case 1:
		return Op{Operation: wire.OperationCreatePartitions, Body: encodePartitions(b.stream(), b.topic(), n)}
	}
	return Op{Operation: wire.OperationDeletePartitions, Body: encodePartitions(b.stream(), b.topic(), n)}
}

// badName draws a name or identifier at or past its bounds: 255 bytes (the
// longest), 0 bytes, not UTF-8, a length past the body's end, a numeric
// identifier of 3 or 5 bytes, an unknown identifier kind.
func (b *BadMix) badName() Op {
	long := "wl-l-" + strings.Repeat(string(rune('a'+b.rng.IntN(3))), 250)
	switch b.rng.IntN(8) {
	case 0:
		return Op{Operation: wire.OperationCreateStream, Body: encodeCreateStream(long, nil)}
	case 1:
		return Op{Operation: wire.OperationUpdateStream, Body: encodeUpdateStream(named(long), b.freshName("wl-r"), nil)}
	case 2:
		return Op{Operation: wire.OperationCreateStream, Body: []byte{0}} // an empty name
	case 3:
		return Op{Operation: wire.OperationCreateStream, Body: append([]byte{3, 'w', 0xff}, 'x')} // not UTF-8
	case 4:
		return Op{Operation: wire.OperationCreateStream, Body: append([]byte{200}, "wl-short"...)} // runs past the end
	case 5:
		return Op{Operation: wire.OperationDeleteStream, Body: []byte{1, byte(3 + 2*b.rng.IntN(2)), 0, 0, 0, 0, 0}} // numeric of 3 or 5 bytes
	case 6:
		return Op{Operation: wire.OperationDeleteTopic, Body: append([]byte{byte(b.rng.IntN(2) * 3), 4, 0, 0, 0, 0}, encodeStreamID(b.topic())...)} // kind 0 or 3
	}
	return Op{Operation: wire.OperationDeleteTopic, Body: append(encodeStreamID(b.stream()), 2, 0)} // an empty string identifier
}

// cut draws a valid metadata body, then cuts it short or runs it long:
// fixed-layout bodies ignore what follows (client-ops.md 1.10), bodies that
// end with an options block do not.
func (b *BadMix) cut() Op {
	var op Op
	switch b.rng.IntN(6) {
	case 0:
		op = Op{Operation: wire.OperationCreateStream, Body: encodeCreateStream(b.freshName("wl-x"), nil)}
	case 1:
		op = Op{Operation: wire.OperationUpdateStream, Body: encodeUpdateStream(b.stream(), b.freshName("wl-x"), nil)}
	case 2:
		op = Op{Operation: wire.OperationDeleteStream, Body: encodeStreamID(named(b.freshName("wl-x")))}
	case 3:
		op = Op{Operation: wire.OperationCreateTopic, Body: encodeCreateTopic(b.stream(), 1, b.freshName("wl-x"), nil)}
	case 4:
		op = Op{Operation: wire.OperationDeleteTopic, Body: encodeTopicID(b.stream(), named(b.freshName("wl-x")))}
	default:
		op = Op{Operation: wire.OperationDeletePartitions, Body: encodePartitions(b.stream(), named(b.freshName("wl-x")), 1)}
	}
	if b.rng.IntN(2) == 0 {
		op.Body = op.Body[:b.rng.IntN(len(op.Body))]
	} else {
		op.Body = append(op.Body, b.bytes(1+b.rng.IntN(6))...)
	}
	return op
}

// streamOptions draws a stream with an options block (the stream catalog
// has no keys; the raw path keeps the block as sent), sometimes one near
// the block's limits (1024 pairs, 100 000 bytes), which an UpdateStream
// then patches past them (DEVIATIONS.md 16: InvalidOptionValue).
func (b *BadMix) streamOptions() Op {
	const big = "wl-o-0"
	switch b.rng.IntN(4) {
	case 0:
		return Op{Operation: wire.OperationCreateStream, Body: encodeCreateStream(b.freshName("wl-x"), b.smallBlock())}
	case 1:
		pairs, value := 1020+b.rng.IntN(5), 1
		if b.rng.IntN(2) == 0 {
			pairs, value = 370+b.rng.IntN(4), 255 // near 100 000 bytes
		}
		return Op{Operation: wire.OperationCreateStream, Body: encodeCreateStream(big, b.block(0, pairs, value))}
	case 2:
		// New keys on top of a big stream's (its keys are k0000...).
		return Op{Operation: wire.OperationUpdateStream, Body: encodeUpdateStream(named(big), big, b.block(2000, 1+b.rng.IntN(12), 1+b.rng.IntN(64)))}
	}
	return Op{Operation: wire.OperationUpdateStream, Body: encodeUpdateStream(b.stream(), fmt.Sprintf("wl-s-%d", b.rng.IntN(b.names)), b.smallBlock())}
}

// block is pairs distinct keys from k<first> on, each with a value of
// size bytes.
func (b *BadMix) block(first, pairs, size int) []byte {
	var out []byte
	value := optionEntry{kind: uint8(wire.OptionRaw), data: []byte(strings.Repeat("v", size))}
	for i := range pairs {
		out = appendEntries(out, keyEntry(fmt.Sprintf("k%04d", first+i)), value)
	}
	return out
}

// smallBlock is a few pairs, of any kinds, sometimes broken.
func (b *BadMix) smallBlock() []byte {
	var entries []optionEntry
	for i := range 1 + b.rng.IntN(3) {
		entries = append(entries, keyEntry(fmt.Sprintf("key-%d", i)), optionEntry{kind: uint8(1 + b.rng.IntN(15)), data: b.bytes(1 + b.rng.IntN(8))})
	}
	if b.rng.IntN(4) == 0 {
		entries = entries[:len(entries)-1]
	}
	return appendEntries(nil, entries...)
}

// send draws a SendMessages: a valid one now and then (to a partition the
// pool may not have: ResourceNotFound), mostly one bent past the
// partition plane's admission (5.25: dropped unanswered), with messages of
// ids of its own.
func (b *BadMix) send() Op {
	msgs := make([]wire.Message, 1+b.rng.IntN(3))
	for i := range msgs {
		b.nextID++
		msgs[i] = wire.Message{ID: wire.U128{Hi: 0xbad, Lo: b.nextID}, OffsetDelta: uint32(i), TimestampDelta: uint32(i), Payload: b.bytes(b.rng.IntN(8))}
	}
	batch := encodeBatch(1, msgs)
	stream, topic := named(hotStream), named(hotTopic)
	if !b.sends || b.rng.IntN(3) == 0 {
		stream, topic = b.stream(), b.topic()
	}
	p := partitioning{kind: partitionByID, partition: uint32(b.rng.IntN(6))}
	count := uint32(len(msgs))
	silent := true
	switch b.rng.IntN(9) {
	case 0:
		silent = false // valid: a commit, or ResourceNotFound
		p = partitioning{kind: partitionByKey, key: b.bytes(1 + b.rng.IntN(255))}
	case 1:
		p = partitioning{kind: uint8(b.rng.IntN(2) * 4)} // kind 0 or 4
	case 2:
		return Op{Operation: wire.OperationSendMessages, Body: encodeSendMessages(append(appendIdent(appendIdent(nil, stream), topic), partitionByID, 3, 0, 0, 0), batch), Silent: true}
	case 3:
		count += uint32(1 + b.rng.IntN(2)) // messages_count past the batch's
	case 4:
		count = 0
	case 5:
		batch[len(batch)-1] ^= 0x40 // a message's checksum fails
	case 6:
		batch = append(batch, 0) // past the batch's length
	case 7:
		prefix := sendPrefix(stream, topic, p, count)
		body := encodeSendMessages(prefix, batch)
		body[0] += byte(1 + b.rng.IntN(2)) // metadata_length past the prefix
		return Op{Operation: wire.OperationSendMessages, Body: body, Silent: true}
	default:
		return Op{Operation: wire.OperationSendMessages, Body: b.bytes(b.rng.IntN(12)), Silent: true}
	}
	return Op{Operation: wire.OperationSendMessages, Body: encodeSendMessages(sendPrefix(stream, topic, p, count), batch), Silent: silent}
}

// offset draws a consumer offset request the partition plane refuses
// whatever the state (5.26, 5.27: ResourceNotFound): a consumer kind of
// 0, 2 (a group: none owns a partition) or 3, no partition named, an ack
// level past Quorum, a body cut short or run long; or a valid one.
func (b *BadMix) offset() Op {
	q := offsetRequest{consumerKind: consumerIndividual, consumer: numeric(uint32(1 + b.rng.IntN(4))),
		stream: named(hotStream), topic: named(hotTopic), hasPartition: true, partition: uint32(b.rng.IntN(3)),
		offset: uint64(b.rng.IntN(8)), ack: uint8(b.rng.IntN(2))}
	store := b.rng.IntN(2) == 0
	cut, long := false, false
	switch b.rng.IntN(7) {
	case 0:
		q.consumerKind = []uint8{0, 2, 3}[b.rng.IntN(3)]
	case 1:
		q.hasPartition = false
		if b.rng.IntN(2) == 0 {
			q.partition = 0
		}
	case 2:
		q.ack = uint8(2 + b.rng.IntN(254))
	case 3:
		cut = true
	case 4:
		long = true
	case 5:
		q.consumer = named(b.freshName("consumer"))
	}
	body := encodeOffsetRequest(q, store)
	switch {
	case cut:
		body = body[:b.rng.IntN(len(body))]
	case long:
		body = append(body, b.bytes(1+b.rng.IntN(4))...)
	}
	op := wire.OperationDeleteConsumerOffset
	if store {
		op = wire.OperationStoreConsumerOffset
	}
	return Op{Operation: op, Body: body}
}

// poll draws a PollMessages (5.28) of a stream, topic or partition that may
// not exist (1009, 2010, 3007), or one that does not decode or is a
// consumer group's (an empty poll): a consumer kind of 0, 2 or 3, a
// strategy of 0 or 6, a body cut short or run long, no partition (partition
// 0), a count of 0.
func (b *BadMix) poll() Op {
	q := poll{consumerKind: consumerIndividual, consumer: numeric(uint32(1 + b.rng.IntN(4))), stream: b.stream(), topic: b.topic(),
		hasPartition: true, partition: uint32(b.rng.IntN(6)), strategy: uint8(1 + b.rng.IntN(5)), count: uint32(1 + b.rng.IntN(8))}
	if b.sends && b.rng.IntN(2) == 0 {
		q.stream, q.topic = named(hotStream), named(hotTopic)
	}
	cut, long := false, false
	switch b.rng.IntN(8) {
	case 0:
		q.consumerKind = []uint8{0, 2, 3}[b.rng.IntN(3)]
	case 1:
		q.strategy = []uint8{0, 6}[b.rng.IntN(2)]
	case 2:
		cut = true
	case 3:
		long = true
	case 4:
		q.hasPartition = false
	case 5:
		q.count = 0
	}
	body := encodePoll(q)
	switch {
	case cut:
		body = body[:b.rng.IntN(len(body))]
	case long:
		body = append(body, b.bytes(1+b.rng.IntN(4))...)
	}
	return Op{Operation: wire.OperationNonReplicated, Body: body, Code: pollMessagesCode}
}
