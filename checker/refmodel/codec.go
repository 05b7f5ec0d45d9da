package refmodel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Bounds of the encodings (client-ops.md 1.1, 1.2, 1.8, 5.7, 5.11).
const (
	nameMax         = 255     // a Name or string Identifier
	optionPairsMax  = 1024    // pairs in one options block
	optionBlockMax  = 100_000 // bytes of one options block
	optionDataMax   = 255     // bytes of one entry's data
	partitionsMax   = 1000    // partitions one request may create
	optionEntryHead = 5       // [kind u8][len u32]
)

// requestBodyMax is the longest request body of the supported set, the
// bound replica/metadata's doc.go states: a CreateTopic with a 255-byte
// string stream id and name and a full options block. A fixed-layout body
// may carry ignored trailing bytes (1.10) up to this length.
const requestBodyMax = 2 + nameMax + 4 + 1 + nameMax + optionBlockMax

// errBody is the rule every decode failure wraps.
var errBody = errors.New("refmodel: undecodable body")

func bodyErr(what string, at int, format string, args ...any) error {
	return fmt.Errorf("%w: %s at byte %d: %s", errBody, what, at, fmt.Sprintf(format, args...))
}

// reader walks a body front to back; every read checks its length.
type reader struct {
	what string // the body, for errors
	b    []byte
	at   int
}

func (r *reader) rest() int { return len(r.b) - r.at }

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || r.rest() < n {
		return nil, bodyErr(r.what, r.at, "need %d bytes, have %d", n, r.rest())
	}
	out := r.b[r.at : r.at+n]
	r.at += n
	return out, nil
}

func (r *reader) u8() (uint8, error) {
	b, err := r.bytes(1)
	if err != nil {
		return 0, err
	}
	return b[0], nil
}

func (r *reader) u32() (uint32, error) {
	b, err := r.bytes(4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (r *reader) u64() (uint64, error) {
	b, err := r.bytes(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// name reads a Name: [len u8][bytes], 1..=255 bytes of UTF-8 (1.1).
func (r *reader) name() (string, error) {
	at := r.at
	n, err := r.u8()
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", bodyErr(r.what, at, "empty name")
	}
	b, err := r.bytes(int(n))
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", bodyErr(r.what, at, "name is not UTF-8")
	}
	return string(b), nil
}

// identifier is a stream or topic address (1.2): a numeric slab key or an
// exact name.
type identifier struct {
	numeric bool
	id      uint32 // numeric
	name    string // !numeric
}

// identifier reads [kind u8][len u8][value]: kind 1 with len 4 (u32), or
// kind 2 with len 1..=255 of UTF-8.
func (r *reader) identifier() (identifier, error) {
	at := r.at
	kind, err := r.u8()
	if err != nil {
		return identifier{}, err
	}
	n, err := r.u8()
	if err != nil {
		return identifier{}, err
	}
	switch kind {
	case 1:
		if n != 4 {
			return identifier{}, bodyErr(r.what, at, "numeric identifier of %d bytes", n)
		}
		v, err := r.u32()
		return identifier{numeric: true, id: v}, err
	case 2:
		if n == 0 {
			return identifier{}, bodyErr(r.what, at, "empty string identifier")
		}
		b, err := r.bytes(int(n))
		if err != nil {
			return identifier{}, err
		}
		if !utf8.Valid(b) {
			return identifier{}, bodyErr(r.what, at, "identifier is not UTF-8")
		}
		return identifier{name: string(b)}, nil
	}
	return identifier{}, bodyErr(r.what, at, "identifier kind %d", kind)
}

// block reads the rest of the body as an options block and checks it.
func (r *reader) block() ([]byte, error) {
	b := r.b[r.at:]
	if _, err := decodeBlock(b); err != nil {
		return nil, fmt.Errorf("%s: %w", r.what, err)
	}
	r.at = len(r.b)
	return b, nil
}

func (r *reader) done() error {
	if r.rest() != 0 {
		return bodyErr(r.what, r.at, "%d trailing bytes", r.rest())
	}
	return nil
}

func appendName(b []byte, s string) []byte {
	return append(append(b, byte(len(s))), s...)
}

func appendIdentifier(b []byte, id identifier) []byte {
	if id.numeric {
		return binary.LittleEndian.AppendUint32(append(b, 1, 4), id.id)
	}
	return append(append(b, 2, byte(len(id.name))), id.name...)
}

// option is one key/value pair of an options block (1.8).
type option struct {
	key   string
	kind  uint8 // of the value
	value []byte
}

// decodeBlock checks an options block against 1.8 and returns its pairs in
// block order: entries [kind u8][len u32][data], every kind nonzero, every
// len 1..=255, consumed exactly, in key/value pairs, keys of kind String (2)
// and UTF-8, no duplicate key, at most 1024 pairs and 100 000 bytes.
func decodeBlock(b []byte) ([]option, error) {
	if len(b) > optionBlockMax {
		return nil, bodyErr("options", 0, "%d bytes", len(b))
	}
	var pairs []option
	seen := make(map[string]bool)
	var key *option
	for at := 0; at < len(b); {
		if len(b)-at < optionEntryHead {
			return nil, bodyErr("options", at, "entry cut")
		}
		kind := b[at]
		n := binary.LittleEndian.Uint32(b[at+1:])
		if kind == 0 {
			return nil, bodyErr("options", at, "kind 0")
		}
		if n == 0 || n > optionDataMax {
			return nil, bodyErr("options", at, "len %d", n)
		}
		if uint32(len(b)-at-optionEntryHead) < n {
			return nil, bodyErr("options", at, "data cut")
		}
		data := b[at+optionEntryHead : at+optionEntryHead+int(n)]
		if key == nil {
			if kind != uint8(wire.OptionString) || !utf8.Valid(data) {
				return nil, bodyErr("options", at, "key of kind %d", kind)
			}
			if seen[string(data)] {
				return nil, bodyErr("options", at, "duplicate key %q", data)
			}
			if len(pairs) == optionPairsMax {
				return nil, bodyErr("options", at, "more than %d pairs", optionPairsMax)
			}
			seen[string(data)] = true
			pairs = append(pairs, option{key: string(data)})
			key = &pairs[len(pairs)-1]
		} else {
			key.kind, key.value = kind, data
			key = nil
		}
		at += optionEntryHead + int(n)
	}
	if key != nil {
		return nil, bodyErr("options", len(b), "key %q without a value", key.key)
	}
	return pairs, nil
}

// encodeBlock encodes pairs in the given order.
func encodeBlock(pairs []option) []byte {
	b := []byte{}
	for _, p := range pairs {
		b = append(b, uint8(wire.OptionString))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p.key)))
		b = append(b, p.key...)
		b = append(b, p.kind)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p.value)))
		b = append(b, p.value...)
	}
	return b
}

// The request bodies of the supported operations (section 5).

type createStreamBody struct {
	name    string
	options []byte
}

type updateStreamBody struct {
	stream  identifier
	name    string
	options []byte
}

type streamBody struct{ stream identifier } // DeleteStream

type createTopicBody struct {
	stream  identifier
	count   uint32
	name    string
	options []byte
}

type topicBody struct{ stream, topic identifier } // DeleteTopic

type partitionsBody struct { // CreatePartitions, DeletePartitions
	stream, topic identifier
	count         uint32
}

// assignment is one partition of a replicated CreateTopic (the partition
// id) or CreatePartitions (an offset from the topic's next id), with the
// consensus group id the primary minted (section 3).
type assignment struct {
	id    uint32
	group uint64
}

const assignmentSize = 4 + 8

// createTopicReplicated is the body of operation 64 (5.7):
// [req_len u32][CreateTopic body][derived_len u32][derived][n u32][n x {id u32, group u64}].
type createTopicReplicated struct {
	request createTopicBody
	derived []byte
	parts   []assignment
}

// createPartitionsReplicated is the body of operation 65 (5.11):
// [req_len u32][CreatePartitions body][n u32][n x {offset u32, group u64}].
type createPartitionsReplicated struct {
	request partitionsBody
	parts   []assignment
}

func decodeCreateStream(b []byte) (createStreamBody, error) {
	r := &reader{what: "CreateStream", b: b}
	var x createStreamBody
	var err error
	if x.name, err = r.name(); err != nil {
		return x, err
	}
	x.options, err = r.block()
	return x, err
}

func decodeUpdateStream(b []byte) (updateStreamBody, error) {
	r := &reader{what: "UpdateStream", b: b}
	var x updateStreamBody
	var err error
	if x.stream, err = r.identifier(); err != nil {
		return x, err
	}
	if x.name, err = r.name(); err != nil {
		return x, err
	}
	x.options, err = r.block()
	return x, err
}

// decodeStream decodes a DeleteStream body; trailing bytes are ignored
// (1.10).
func decodeStream(b []byte) (streamBody, error) {
	r := &reader{what: "DeleteStream", b: b}
	id, err := r.identifier()
	return streamBody{stream: id}, err
}

func (r *reader) createTopic() (createTopicBody, error) {
	var x createTopicBody
	var err error
	if x.stream, err = r.identifier(); err != nil {
		return x, err
	}
	if x.count, err = r.u32(); err != nil {
		return x, err
	}
	if x.name, err = r.name(); err != nil {
		return x, err
	}
	x.options, err = r.block()
	return x, err
}

func decodeCreateTopic(b []byte) (createTopicBody, error) {
	return (&reader{what: "CreateTopic", b: b}).createTopic()
}

// decodeTopic decodes a DeleteTopic body; trailing bytes are ignored.
func decodeTopic(b []byte) (topicBody, error) {
	r := &reader{what: "DeleteTopic", b: b}
	var x topicBody
	var err error
	if x.stream, err = r.identifier(); err != nil {
		return x, err
	}
	x.topic, err = r.identifier()
	return x, err
}

func (r *reader) partitions() (partitionsBody, error) {
	var x partitionsBody
	var err error
	if x.stream, err = r.identifier(); err != nil {
		return x, err
	}
	if x.topic, err = r.identifier(); err != nil {
		return x, err
	}
	x.count, err = r.u32()
	return x, err
}

// decodePartitions decodes a CreatePartitions or DeletePartitions body;
// trailing bytes are ignored.
func decodePartitions(what string, b []byte) (partitionsBody, error) {
	return (&reader{what: what, b: b}).partitions()
}

func (x createTopicBody) encode() []byte {
	b := appendIdentifier(nil, x.stream)
	b = binary.LittleEndian.AppendUint32(b, x.count)
	b = appendName(b, x.name)
	return append(b, x.options...)
}

func (x partitionsBody) encode() []byte {
	b := appendIdentifier(nil, x.stream)
	b = appendIdentifier(b, x.topic)
	return binary.LittleEndian.AppendUint32(b, x.count)
}

// section reads [len u32][len bytes] and returns a reader over the bytes.
func (r *reader) section(what string) (*reader, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	b, err := r.bytes(int(n))
	if err != nil {
		return nil, err
	}
	return &reader{what: what, b: b}, nil
}

// assignments reads [n u32][n x {u32, u64}]; n is at most the partitions one
// request may create.
func (r *reader) assignments() ([]assignment, error) {
	at := r.at
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	if n > partitionsMax {
		return nil, bodyErr(r.what, at, "%d assignments", n)
	}
	if r.rest() < int(n)*assignmentSize {
		return nil, bodyErr(r.what, at, "%d assignments cut", n)
	}
	parts := make([]assignment, n)
	for i := range parts {
		id, _ := r.u32()
		group, _ := r.u64()
		parts[i] = assignment{id: id, group: group}
	}
	return parts, nil
}

func appendAssignments(b []byte, parts []assignment) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(parts)))
	for _, p := range parts {
		b = binary.LittleEndian.AppendUint32(b, p.id)
		b = binary.LittleEndian.AppendUint64(b, p.group)
	}
	return b
}

// decodeCreateTopicReplicated decodes a body of operation 64. Only a primary
// writes it, so it must be consumed exactly, its request section included
// (replica/metadata doc.go).
func decodeCreateTopicReplicated(b []byte) (createTopicReplicated, error) {
	r := &reader{what: "CreateTopicWithAssignments", b: b}
	var x createTopicReplicated
	req, err := r.section("CreateTopicWithAssignments request")
	if err != nil {
		return x, err
	}
	if x.request, err = req.createTopic(); err != nil {
		return x, err
	}
	derived, err := r.section("CreateTopicWithAssignments derived options")
	if err != nil {
		return x, err
	}
	if x.derived, err = derived.block(); err != nil {
		return x, err
	}
	if x.parts, err = r.assignments(); err != nil {
		return x, err
	}
	return x, r.done()
}

func (x createTopicReplicated) encode() []byte {
	req := x.request.encode()
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(req)))
	b = append(b, req...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(x.derived)))
	b = append(b, x.derived...)
	return appendAssignments(b, x.parts)
}

// decodeCreatePartitionsReplicated decodes a body of operation 65, which
// must be consumed exactly.
func decodeCreatePartitionsReplicated(b []byte) (createPartitionsReplicated, error) {
	r := &reader{what: "CreatePartitionsWithAssignments", b: b}
	var x createPartitionsReplicated
	req, err := r.section("CreatePartitionsWithAssignments request")
	if err != nil {
		return x, err
	}
	if x.request, err = req.partitions(); err != nil {
		return x, err
	}
	if err := req.done(); err != nil {
		return x, err
	}
	if x.parts, err = r.assignments(); err != nil {
		return x, err
	}
	return x, r.done()
}

func (x createPartitionsReplicated) encode() []byte {
	req := x.request.encode()
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(req)))
	b = append(b, req...)
	return appendAssignments(b, x.parts)
}
