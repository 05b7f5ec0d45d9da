package metadata

import (
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// The topic option catalog (client-ops.md 1.8). Keys are numbered in the
// byte order of their names, so walking them in number order writes a block
// ordered by key bytes, as Iggy's BTreeMap does.
type topicKey uint8

const (
	keyCompression topicKey = iota
	keyEnforceFsync
	keyMaxTopicSize
	keyMessageExpiry
	keyMessagesRequiredToSave
	keyPreallocateSegments
	keySegmentSize
	keySizeOfMessagesRequiredToSave
	topicKeyCount
)

var topicKeyNames = [topicKeyCount]string{
	"compression_algorithm",
	"enforce_fsync",
	"max_topic_size",
	"message_expiry",
	"messages_required_to_save",
	"preallocate_segments",
	"segment_size",
	"size_of_messages_required_to_save",
}

func topicKeyOf(name string) (topicKey, bool) {
	for k, n := range topicKeyNames {
		if n == name {
			return topicKey(k), true
		}
	}
	return 0, false
}

// Catalog bounds and defaults (Iggy's core/common/src/types/options).
const (
	CompressionNone uint8 = 1
	CompressionGzip uint8 = 2

	DefaultMessageExpiry                uint64 = math.MaxUint64 // never
	DefaultMaxTopicSize                 uint64 = math.MaxUint64 // unlimited
	DefaultSegmentSize                  uint64 = 1 << 30
	DefaultMessagesRequiredToSave       uint32 = 1024
	DefaultSizeOfMessagesRequiredToSave uint64 = 1 << 20

	SegmentSizeMin               uint64 = 1 << 20
	SegmentSizeMax               uint64 = 1 << 30
	MessagesRequiredToSaveMax    uint32 = 16 << 20
	SizeOfMessagesRequiredToSave uint64 = 1 << 30 // the largest accepted value
)

// topicSettings are the typed values of the catalog keys present in a block.
// A zero sentinel (message_expiry, max_topic_size, segment_size,
// size_of_messages_required_to_save) counts as absent.
type topicSettings struct {
	has                          [topicKeyCount]bool
	compression                  uint8
	messageExpiry                uint64
	maxTopicSize                 uint64
	segmentSize                  uint64
	enforceFsync                 bool
	messagesRequiredToSave       uint32
	sizeOfMessagesRequiredToSave uint64
	preallocateSegments          bool
}

// parseTopicOptions reads a topic options block with the catalog's rules.
// strict (the primary's admission): the first unknown key gives
// UnsupportedOptionKey, the first bad value InvalidOptionValue. Lenient (the
// apply side, Iggy's parse_committed): a key that fails is skipped. pairs
// must come from a valid block.
func parseTopicOptions(pairs []wire.Option, strict bool) (topicSettings, uint32) {
	var s topicSettings
	for _, p := range pairs {
		if code := s.absorb(p); code != CodeOK && strict {
			return topicSettings{}, code
		}
	}
	return s, CodeOK
}

func (s *topicSettings) absorb(p wire.Option) uint32 {
	k, ok := topicKeyOf(p.Key)
	if !ok {
		return CodeUnsupportedOptionKey
	}
	const bad = CodeInvalidOptionValue
	switch k {
	case keyCompression:
		c, ok := parseCompression(p)
		if !ok {
			return bad
		}
		s.compression = c
	case keyMessageExpiry:
		v, ok := parseU64Or(p, parseExpiry)
		if !ok {
			return bad
		}
		s.messageExpiry = v
	case keyMaxTopicSize:
		v, ok := parseU64Or(p, parseMaxTopicSize)
		if !ok {
			return bad
		}
		s.maxTopicSize = v
	case keySegmentSize:
		v, ok := parseU64Or(p, parseByteSize)
		if !ok {
			return bad
		}
		s.segmentSize = v
	case keyEnforceFsync:
		v, ok := parseBool(p)
		if !ok {
			return bad
		}
		s.enforceFsync = v
	case keyMessagesRequiredToSave:
		v, ok := parseU32(p)
		if !ok || v == 0 || v > MessagesRequiredToSaveMax {
			return bad
		}
		s.messagesRequiredToSave = v
	case keySizeOfMessagesRequiredToSave:
		v, ok := parseU64Or(p, parseByteSize)
		if !ok || v > SizeOfMessagesRequiredToSave {
			return bad
		}
		s.sizeOfMessagesRequiredToSave = v
	case keyPreallocateSegments:
		v, ok := parseBool(p)
		if !ok {
			return bad
		}
		s.preallocateSegments = v
	}
	// The zero sentinels mean "absent" (the server default).
	switch k {
	case keyMessageExpiry:
		s.has[k] = s.messageExpiry != 0
	case keyMaxTopicSize:
		s.has[k] = s.maxTopicSize != 0
	case keySegmentSize:
		s.has[k] = s.segmentSize != 0
	case keySizeOfMessagesRequiredToSave:
		s.has[k] = s.sizeOfMessagesRequiredToSave != 0
	default:
		s.has[k] = true
	}
	return CodeOK
}

// resolvedOver returns s with every absent key taken from d.
func (s topicSettings) resolvedOver(d topicSettings) topicSettings {
	r := s
	for k := range topicKeyCount {
		if !r.has[k] && d.has[k] {
			r.set(k, d)
		}
	}
	return r
}

// set copies key k's value from o and marks it present.
func (s *topicSettings) set(k topicKey, o topicSettings) {
	switch k {
	case keyCompression:
		s.compression = o.compression
	case keyMessageExpiry:
		s.messageExpiry = o.messageExpiry
	case keyMaxTopicSize:
		s.maxTopicSize = o.maxTopicSize
	case keySegmentSize:
		s.segmentSize = o.segmentSize
	case keyEnforceFsync:
		s.enforceFsync = o.enforceFsync
	case keyMessagesRequiredToSave:
		s.messagesRequiredToSave = o.messagesRequiredToSave
	case keySizeOfMessagesRequiredToSave:
		s.sizeOfMessagesRequiredToSave = o.sizeOfMessagesRequiredToSave
	case keyPreallocateSegments:
		s.preallocateSegments = o.preallocateSegments
	}
	s.has[k] = true
}

// catalogDefaults holds every key at its default (client-ops.md 1.8).
func catalogDefaults() topicSettings {
	d := topicSettings{
		compression:                  CompressionNone,
		messageExpiry:                DefaultMessageExpiry,
		maxTopicSize:                 DefaultMaxTopicSize,
		segmentSize:                  DefaultSegmentSize,
		messagesRequiredToSave:       DefaultMessagesRequiredToSave,
		sizeOfMessagesRequiredToSave: DefaultSizeOfMessagesRequiredToSave,
	}
	for k := range topicKeyCount {
		d.has[k] = true
	}
	return d
}

// option returns key k's canonical typed entry: compression as the String
// "none"/"gzip", the sizes and expiry as Uint64, the count as Uint32, the
// flags as Bool.
func (s topicSettings) option(k topicKey) wire.Option {
	name := topicKeyNames[k]
	u64 := func(v uint64) wire.Option {
		return wire.Option{Key: name, Kind: wire.OptionUint64, Value: binary.LittleEndian.AppendUint64(nil, v)}
	}
	boolean := func(v bool) wire.Option {
		b := byte(0)
		if v {
			b = 1
		}
		return wire.Option{Key: name, Kind: wire.OptionBool, Value: []byte{b}}
	}
	switch k {
	case keyCompression:
		return wire.Option{Key: name, Kind: wire.OptionString, Value: []byte(compressionName(s.compression))}
	case keyMessageExpiry:
		return u64(s.messageExpiry)
	case keyMaxTopicSize:
		return u64(s.maxTopicSize)
	case keySegmentSize:
		return u64(s.segmentSize)
	case keyEnforceFsync:
		return boolean(s.enforceFsync)
	case keyMessagesRequiredToSave:
		return wire.Option{Key: name, Kind: wire.OptionUint32, Value: binary.LittleEndian.AppendUint32(nil, s.messagesRequiredToSave)}
	case keySizeOfMessagesRequiredToSave:
		return u64(s.sizeOfMessagesRequiredToSave)
	case keyPreallocateSegments:
		return boolean(s.preallocateSegments)
	}
	panic("metadata: unknown topic key")
}

// pairs returns the canonical entries of the keys present (want == true) or
// absent (want == false), in key order.
func (s topicSettings) pairs(want bool) []wire.Option {
	var out []wire.Option
	for k := range topicKeyCount {
		if s.has[k] == want {
			out = append(out, s.option(k))
		}
	}
	return out
}

func compressionName(c uint8) string {
	switch c {
	case CompressionNone:
		return "none"
	case CompressionGzip:
		return "gzip"
	}
	panic("metadata: compression code " + strconv.Itoa(int(c)))
}

func parseCompression(p wire.Option) (uint8, bool) {
	switch p.Kind {
	case wire.OptionUint8:
		if len(p.Value) == 1 && (p.Value[0] == CompressionNone || p.Value[0] == CompressionGzip) {
			return p.Value[0], true
		}
	case wire.OptionString:
		// Iggy lowercases the text; only ASCII letters can lower to the
		// letters of "none" and "gzip" (its Unicode lowering of U+0130 keeps a
		// combining dot), so ASCII folding decides the same.
		switch asciiLower(string(p.Value)) {
		case "none":
			return CompressionNone, true
		case "gzip":
			return CompressionGzip, true
		}
	}
	return 0, false
}

func asciiLower(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + ('a' - 'A')
		}
		return r
	}, s)
}

// parseU64Or reads a Uint64 value, or a String through fromText.
func parseU64Or(p wire.Option, fromText func(string) (uint64, bool)) (uint64, bool) {
	switch p.Kind {
	case wire.OptionUint64:
		if len(p.Value) == 8 {
			return binary.LittleEndian.Uint64(p.Value), true
		}
	case wire.OptionString:
		return fromText(string(p.Value))
	}
	return 0, false
}

func parseU32(p wire.Option) (uint32, bool) {
	switch p.Kind {
	case wire.OptionUint32:
		if len(p.Value) == 4 {
			return binary.LittleEndian.Uint32(p.Value), true
		}
	case wire.OptionString:
		v, ok := parseRustUint(string(p.Value), 32)
		return uint32(v), ok
	}
	return 0, false
}

func parseBool(p wire.Option) (bool, bool) {
	switch p.Kind {
	case wire.OptionBool:
		if len(p.Value) == 1 && p.Value[0] <= 1 {
			return p.Value[0] == 1, true
		}
	case wire.OptionString:
		switch string(p.Value) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	return false, false
}

// parseRustUint parses as Rust's str::parse for an unsigned integer: an
// optional '+', then at least one ASCII digit, no overflow.
func parseRustUint(s string, bits int) (uint64, bool) {
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, bits)
	return v, err == nil
}

// parseByteSize reads a byte-size text. vopr accepts Iggy's keywords ("0",
// "unlimited", "Unlimited", "none", "None", all meaning 0) and a plain
// decimal number of bytes. Iggy also accepts unit suffixes through the
// byte-unit crate ("128MiB", "1.5 GB"); vopr refuses those as
// InvalidOptionValue (recorded in the package documentation).
func parseByteSize(s string) (uint64, bool) {
	switch s {
	case "0", "unlimited", "Unlimited", "none", "None":
		return 0, true
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil && s != ""
}

// parseMaxTopicSize is MaxTopicSize::from_str: "unlimited" is MaxUint64,
// "0" and "server_default" are 0, anything else a byte size.
func parseMaxTopicSize(s string) (uint64, bool) {
	switch s {
	case "unlimited":
		return math.MaxUint64, true
	case "0", "server_default":
		return 0, true
	}
	return parseByteSize(s)
}

// parseExpiry is IggyExpiry::from_str followed by its u64 form: the
// never-expire words are MaxUint64, the server-default words 0, anything
// else a humantime duration of at most u32::MAX seconds, in microseconds.
func parseExpiry(s string) (uint64, bool) {
	switch s {
	case "unlimited", "none", "None", "Unlimited", "never_expire":
		return math.MaxUint64, true
	case "default", "server_default", "Default", "Server_default":
		return 0, true
	}
	secs, nanos, ok := parseHumantime(s)
	if !ok || secs > math.MaxUint32 {
		return 0, false
	}
	return secs*1_000_000 + uint64(nanos)/1000, true
}

// optionMap is a stored options map: entries ordered by key bytes, unique.
// Explicit records whether the client named the key (topics only).
type optionMap []storedOption

type storedOption struct {
	Key      string
	Kind     wire.OptionKind
	Value    []byte
	Explicit bool
}

// fixedSize is the value length a fixed-size kind requires (0: any).
func fixedSize(k wire.OptionKind) int {
	switch k {
	case wire.OptionBool, wire.OptionInt8, wire.OptionUint8:
		return 1
	case wire.OptionInt16, wire.OptionUint16:
		return 2
	case wire.OptionInt32, wire.OptionUint32, wire.OptionFloat32:
		return 4
	case wire.OptionInt64, wire.OptionUint64, wire.OptionFloat64:
		return 8
	case wire.OptionInt128, wire.OptionUint128:
		return 16
	}
	return 0
}

// optionMapFromPairs is Iggy's resource_options_from_wire: entries whose
// value kind has no meaning (above Float64) are skipped; a fixed-size kind
// of the wrong length makes the block unreadable (ok == false).
func optionMapFromPairs(pairs []wire.Option, explicit bool) (optionMap, bool) {
	m := make(optionMap, 0, len(pairs))
	for _, p := range pairs {
		if p.Kind < wire.OptionRaw || p.Kind > wire.OptionFloat64 {
			continue
		}
		if n := fixedSize(p.Kind); n != 0 && len(p.Value) != n {
			return nil, false
		}
		m = m.with(storedOption{Key: p.Key, Kind: p.Kind, Value: append([]byte(nil), p.Value...), Explicit: explicit})
	}
	return m, true
}

// with returns m with o inserted or replacing the entry of the same key.
func (m optionMap) with(o storedOption) optionMap {
	i, found := slices.BinarySearchFunc(m, o.Key, func(e storedOption, k string) int { return strings.Compare(e.Key, k) })
	if found {
		m[i] = o
		return m
	}
	return slices.Insert(m, i, o)
}

// get returns the entry of key.
func (m optionMap) get(key string) (int, bool) {
	return slices.BinarySearchFunc(m, key, func(e storedOption, k string) int { return strings.Compare(e.Key, k) })
}

// extend returns m patched with every entry of o (o wins).
func (m optionMap) extend(o optionMap) optionMap {
	for _, e := range o {
		m = m.with(e)
	}
	return m
}

// block encodes the entries whose Explicit equals explicit (all entries when
// all is set), in key order.
func (m optionMap) block(all, explicit bool) []byte {
	var pairs []wire.Option
	for _, e := range m {
		if all || e.Explicit == explicit {
			pairs = append(pairs, wire.Option{Key: e.Key, Kind: e.Kind, Value: e.Value})
		}
	}
	if len(pairs) == 0 {
		return []byte{}
	}
	return wire.EncodeOptions(pairs)
}

func (m optionMap) clone() optionMap {
	c := make(optionMap, len(m))
	copy(c, m) // values are never mutated in place
	return c
}
