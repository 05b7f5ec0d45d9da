package refmodel

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Value kinds of an options entry that the catalog reads (1.8; the
// user-header kinds of Iggy's protocol).
const (
	kindString = uint8(wire.OptionString)
	kindBool   = uint8(wire.OptionBool)
	kindUint8  = uint8(wire.OptionUint8)
	kindUint32 = uint8(wire.OptionUint32)
	kindUint64 = uint8(wire.OptionUint64)
)

// valueSize is the exact data length of a fixed-size kind, 0 for Raw and
// String (any length) and -1 for a kind with no meaning.
func valueSize(kind uint8) int {
	switch wire.OptionKind(kind) {
	case wire.OptionRaw, wire.OptionString:
		return 0
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
	return -1
}

// stored is one entry of a resource's stored options map.
type stored struct {
	option
	explicit bool // the client named the key (topics; always true for streams)
}

// readStored reads an options block (already checked as a block) as a
// stored map: "options unreadable" in the committed rejections of 5.3, 5.4
// and 5.7. An entry of a fixed-size kind whose data has another length is
// unreadable; an entry of a kind with no meaning is skipped, so that a
// build that predates a kind still applies what its peers applied (Iggy's
// resource_options_from_wire). The result is ordered by key bytes, the
// order of Iggy's map and of every block a reply encodes (5.7).
func readStored(block []byte, explicit bool) ([]stored, bool) {
	pairs, err := decodeBlock(block)
	if err != nil {
		return nil, false
	}
	var out []stored
	for _, p := range pairs {
		switch n := valueSize(p.kind); {
		case n < 0:
			continue
		case n > 0 && len(p.value) != n:
			return nil, false
		}
		out = append(out, stored{option: p, explicit: explicit})
	}
	slices.SortFunc(out, func(a, b stored) int { return strings.Compare(a.key, b.key) })
	return out, true
}

// patch returns m with every entry of with put in: a present key takes the
// new value (and provenance), an absent key stays (5.4: the options are a
// patch). Both are ordered by key, and so is the result.
func patch(m, with []stored) []stored {
	out := slices.Clone(m)
	for _, e := range with {
		i, found := slices.BinarySearchFunc(out, e.key, func(s stored, k string) int { return strings.Compare(s.key, k) })
		if found {
			out[i] = e
		} else {
			out = slices.Insert(out, i, e)
		}
	}
	return out
}

// fitsOneBlock reports whether the entries encode as one options block
// (1024 pairs, 100 000 bytes: DEVIATIONS 16).
func fitsOneBlock(m []stored) bool {
	if len(m) > optionPairsMax {
		return false
	}
	size := 0
	for _, e := range m {
		size += 2*optionEntryHead + len(e.key) + len(e.value)
	}
	return size <= optionBlockMax
}

// encodeStored encodes the entries of the given provenance in key order.
func encodeStored(m []stored, explicit bool) []byte {
	var pairs []option
	for _, e := range m {
		if e.explicit == explicit {
			pairs = append(pairs, e.option)
		}
	}
	return encodeBlock(pairs)
}

// The topic catalog (1.8): its keys, defaults and bounds.
const (
	keyCompression    = "compression_algorithm"
	keyMessageExpiry  = "message_expiry"
	keyMaxTopicSize   = "max_topic_size"
	keySegmentSize    = "segment_size"
	keyEnforceFsync   = "enforce_fsync"
	keyMessagesToSave = "messages_required_to_save"
	keySizeToSave     = "size_of_messages_required_to_save"
	keyPreallocate    = "preallocate_segments"

	compressionNone = 1
	compressionGzip = 2

	defaultMessageExpiry  = math.MaxUint64 // never
	defaultMaxTopicSize   = math.MaxUint64 // unlimited
	defaultSegmentSize    = 1 << 30
	defaultMessagesToSave = 1024
	defaultSizeToSave     = 1 << 20

	segmentSizeMin    = 1 << 20
	segmentSizeMax    = 1 << 30
	segmentSizeAlign  = 512
	messagesToSaveMax = 16 << 20
	sizeToSaveMax     = 1 << 30
	expirySecondsMax  = math.MaxUint32 // an expiry as text: at most u32::MAX seconds
)

var (
	errUnknownKey = errors.New("unknown topic option key") // UnsupportedOptionKey (4041)
	errBadValue   = errors.New("bad topic option value")   // InvalidOptionValue (4042)
)

// setting is an optional catalog value: set false means absent, which
// resolves to the default.
type setting[T any] struct {
	set bool
	v   T
}

func some[T any](v T) setting[T] { return setting[T]{set: true, v: v} }

func (s setting[T]) or(v T) T {
	if s.set {
		return s.v
	}
	return v
}

func (s setting[T]) over(d setting[T]) setting[T] {
	if s.set {
		return s
	}
	return d
}

// catalog is a typed view of a topic options block. A zero sentinel (an
// expiry or size of 0, "server default"; a segment or flush size of 0,
// "absent") reads as absent (5.7: "a 0 sentinel is dropped").
type catalog struct {
	compression    setting[uint8]
	messageExpiry  setting[uint64]
	maxTopicSize   setting[uint64]
	segmentSize    setting[uint64]
	enforceFsync   setting[bool]
	messagesToSave setting[uint32]
	sizeToSave     setting[uint64]
	preallocate    setting[bool]
}

// absorb reads one entry into c. An unknown key or a value the catalog
// refuses is an error and leaves c as it was, which is what lets a
// committed block be read leniently (absorb's error discarded: Iggy's
// parse_committed).
func (c *catalog) absorb(p option) error {
	switch p.key {
	case keyCompression:
		v, err := compressionValue(p)
		if err != nil {
			return err
		}
		c.compression = some(v)
	case keyMessageExpiry:
		v, err := u64Value(p, expiryText)
		if err != nil {
			return err
		}
		c.messageExpiry = nonzero(v)
	case keyMaxTopicSize:
		v, err := u64Value(p, maxTopicSizeText)
		if err != nil {
			return err
		}
		c.maxTopicSize = nonzero(v)
	case keySegmentSize:
		v, err := u64Value(p, byteSizeText)
		if err != nil {
			return err
		}
		c.segmentSize = nonzero(v)
	case keyEnforceFsync:
		v, err := boolValue(p)
		if err != nil {
			return err
		}
		c.enforceFsync = some(v)
	case keyMessagesToSave:
		v, err := u32Value(p)
		if err != nil {
			return err
		}
		if v == 0 || v > messagesToSaveMax {
			return errBadValue
		}
		c.messagesToSave = some(v)
	case keySizeToSave:
		v, err := u64Value(p, byteSizeText)
		if err != nil {
			return err
		}
		if v > sizeToSaveMax {
			return errBadValue
		}
		c.sizeToSave = nonzero(v)
	case keyPreallocate:
		v, err := boolValue(p)
		if err != nil {
			return err
		}
		c.preallocate = some(v)
	default:
		return errUnknownKey
	}
	return nil
}

func nonzero(v uint64) setting[uint64] {
	if v == 0 {
		return setting[uint64]{}
	}
	return some(v)
}

// parseCatalog reads a client's block strictly, as the primary's projection
// does: the first unknown key or bad value refuses the whole request.
func parseCatalog(block []byte) (catalog, error) {
	pairs, err := decodeBlock(block)
	if err != nil {
		return catalog{}, err
	}
	var c catalog
	for _, p := range pairs {
		if err := c.absorb(p); err != nil {
			return catalog{}, err
		}
	}
	return c, nil
}

// readCatalog reads a committed block leniently: what the catalog refuses is
// skipped, since admission already judged the block once and a replica must
// not refuse what its peers committed.
func readCatalog(block []byte) catalog {
	pairs, _ := decodeBlock(block)
	var c catalog
	for _, p := range pairs {
		_ = c.absorb(p)
	}
	return c
}

// over is c with every absent key taken from d.
func (c catalog) over(d catalog) catalog {
	return catalog{
		compression:    c.compression.over(d.compression),
		messageExpiry:  c.messageExpiry.over(d.messageExpiry),
		maxTopicSize:   c.maxTopicSize.over(d.maxTopicSize),
		segmentSize:    c.segmentSize.over(d.segmentSize),
		enforceFsync:   c.enforceFsync.over(d.enforceFsync),
		messagesToSave: c.messagesToSave.over(d.messagesToSave),
		sizeToSave:     c.sizeToSave.over(d.sizeToSave),
		preallocate:    c.preallocate.over(d.preallocate),
	}
}

// withDefaults is c with every absent key at its default (1.8). The
// primary resolves max_topic_size before it builds the derived block, so
// the default of an absent one is the resolved value, which is unlimited.
func (c catalog) withDefaults() catalog {
	return c.over(catalog{
		compression:    some(uint8(compressionNone)),
		messageExpiry:  some(uint64(defaultMessageExpiry)),
		maxTopicSize:   some(uint64(defaultMaxTopicSize)),
		segmentSize:    some(uint64(defaultSegmentSize)),
		enforceFsync:   some(false),
		messagesToSave: some(uint32(defaultMessagesToSave)),
		sizeToSave:     some(uint64(defaultSizeToSave)),
		preallocate:    some(false),
	})
}

// canonical returns the set keys as options in their canonical kinds (the
// kinds of the derived defaults of 5.7: compression as the String "none" or
// "gzip", booleans as Bool, counts as Uint32, the rest as Uint64), in key
// order.
func (c catalog) canonical() []option {
	var out []option
	u64 := func(key string, s setting[uint64]) {
		if s.set {
			out = append(out, option{key: key, kind: kindUint64, value: binary.LittleEndian.AppendUint64(nil, s.v)})
		}
	}
	boolean := func(key string, s setting[bool]) {
		if s.set {
			v := byte(0)
			if s.v {
				v = 1
			}
			out = append(out, option{key: key, kind: kindBool, value: []byte{v}})
		}
	}
	if c.compression.set {
		name := "none"
		if c.compression.v == compressionGzip {
			name = "gzip"
		}
		out = append(out, option{key: keyCompression, kind: kindString, value: []byte(name)})
	}
	u64(keyMessageExpiry, c.messageExpiry)
	u64(keyMaxTopicSize, c.maxTopicSize)
	u64(keySegmentSize, c.segmentSize)
	boolean(keyEnforceFsync, c.enforceFsync)
	if c.messagesToSave.set {
		out = append(out, option{key: keyMessagesToSave, kind: kindUint32, value: binary.LittleEndian.AppendUint32(nil, c.messagesToSave.v)})
	}
	u64(keySizeToSave, c.sizeToSave)
	boolean(keyPreallocate, c.preallocate)
	slices.SortFunc(out, func(a, b option) int { return strings.Compare(a.key, b.key) })
	return out
}

// unset returns the catalog keys c does not set, at the values of d.
func (c catalog) unset(d catalog) catalog {
	var out catalog
	if !c.compression.set {
		out.compression = d.compression
	}
	if !c.messageExpiry.set {
		out.messageExpiry = d.messageExpiry
	}
	if !c.maxTopicSize.set {
		out.maxTopicSize = d.maxTopicSize
	}
	if !c.segmentSize.set {
		out.segmentSize = d.segmentSize
	}
	if !c.enforceFsync.set {
		out.enforceFsync = d.enforceFsync
	}
	if !c.messagesToSave.set {
		out.messagesToSave = d.messagesToSave
	}
	if !c.sizeToSave.set {
		out.sizeToSave = d.sizeToSave
	}
	if !c.preallocate.set {
		out.preallocate = d.preallocate
	}
	return out
}

// text returns a String value as text; any other kind, or bytes that are
// not UTF-8, is a bad value.
func text(p option) (string, bool) {
	if p.kind != kindString || !utf8.Valid(p.value) {
		return "", false
	}
	return string(p.value), true
}

// compressionValue: Uint8 code 1 or 2, or the String "none" or "gzip" in
// any letter case (1.8).
func compressionValue(p option) (uint8, error) {
	if p.kind == kindUint8 {
		if len(p.value) == 1 && (p.value[0] == compressionNone || p.value[0] == compressionGzip) {
			return p.value[0], nil
		}
		return 0, errBadValue
	}
	s, ok := text(p)
	switch {
	case !ok:
		return 0, errBadValue
	case asciiEqualFold(s, "none"):
		return compressionNone, nil
	case asciiEqualFold(s, "gzip"):
		return compressionGzip, nil
	}
	return 0, errBadValue
}

// asciiEqualFold compares s with the lowercase ASCII word w, ignoring the
// case of ASCII letters only: Iggy lowercases the text with Unicode rules,
// and no non-ASCII character lowercases to exactly one of the ASCII letters
// of "none" or "gzip" (U+0130 lowercases to "i" and a combining dot).
func asciiEqualFold(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// boolValue: Bool of exactly one byte 0 or 1, or the String "true" or
// "false" (exactly, as Rust's bool parse).
func boolValue(p option) (bool, error) {
	if p.kind == kindBool {
		if len(p.value) == 1 && p.value[0] <= 1 {
			return p.value[0] == 1, nil
		}
		return false, errBadValue
	}
	switch s, _ := text(p); s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, errBadValue
}

// u32Value: Uint32 of 4 bytes, or a String in Rust's u32 syntax.
func u32Value(p option) (uint32, error) {
	if p.kind == kindUint32 {
		if len(p.value) != 4 {
			return 0, errBadValue
		}
		return binary.LittleEndian.Uint32(p.value), nil
	}
	s, ok := text(p)
	if !ok {
		return 0, errBadValue
	}
	v, ok := parseUint(s)
	if !ok || v > math.MaxUint32 {
		return 0, errBadValue
	}
	return uint32(v), nil
}

// u64Value: Uint64 of 8 bytes verbatim, or a String read by fromText.
func u64Value(p option, fromText func(string) (uint64, bool)) (uint64, error) {
	if p.kind == kindUint64 {
		if len(p.value) != 8 {
			return 0, errBadValue
		}
		return binary.LittleEndian.Uint64(p.value), nil
	}
	s, ok := text(p)
	if !ok {
		return 0, errBadValue
	}
	v, ok := fromText(s)
	if !ok {
		return 0, errBadValue
	}
	return v, nil
}

// parseUint reads Rust's unsigned integer syntax: an optional '+', then one
// or more ASCII digits, nothing else; overflow fails.
func parseUint(s string) (uint64, bool) {
	s = strings.TrimPrefix(s, "+")
	if s == "" {
		return 0, false
	}
	var v uint64
	for i := range len(s) {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if v > (math.MaxUint64-uint64(c-'0'))/10 {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// byteSizeText reads a byte size written as text (Iggy's IggyByteSize):
// the keywords "0", "unlimited", "Unlimited", "none" and "None" are 0; any
// other text must be a plain number of bytes: ASCII digits only (Iggy's
// byte_unit requires a leading digit, so no sign). Iggy also takes unit
// suffixes ("128MiB"), fractions and surrounding spaces; vopr refuses them
// as a bad value (replica/metadata doc.go).
func byteSizeText(s string) (uint64, bool) {
	switch s {
	case "0", "unlimited", "Unlimited", "none", "None":
		return 0, true
	}
	if s == "" || s[0] == '+' {
		return 0, false
	}
	return parseUint(s)
}

// maxTopicSizeText reads a max_topic_size written as text (Iggy's
// MaxTopicSize): "unlimited" is u64::MAX, "0" and "server_default" are the
// server default 0, anything else a byte size (so "Unlimited", "none" and
// "None" are 0 too, as in Iggy).
func maxTopicSizeText(s string) (uint64, bool) {
	switch s {
	case "unlimited":
		return math.MaxUint64, true
	case "0", "server_default":
		return 0, true
	}
	return byteSizeText(s)
}

// expiryText reads a message_expiry written as text (Iggy's IggyExpiry), in
// microseconds: the keywords of "never" are u64::MAX, those of "server
// default" 0, anything else a humantime duration of at most u32::MAX
// seconds, truncated to whole microseconds.
func expiryText(s string) (uint64, bool) {
	switch s {
	case "unlimited", "none", "None", "Unlimited", "never_expire":
		return math.MaxUint64, true
	case "default", "server_default", "Default", "Server_default":
		return 0, true
	}
	secs, nanos, ok := parseHumantime(s)
	if !ok || secs > expirySecondsMax {
		return 0, false
	}
	return secs*1_000_000 + uint64(nanos)/1000, true
}
