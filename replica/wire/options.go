package wire

import (
	"fmt"
	"unicode/utf8"
)

// OptionKind is the kind byte of an options-block entry (the user-header
// kinds of Iggy's binary protocol).
type OptionKind uint8

// Option kinds. Keys are always OptionString.
const (
	OptionRaw     OptionKind = 1
	OptionString  OptionKind = 2
	OptionBool    OptionKind = 3
	OptionInt8    OptionKind = 4
	OptionInt16   OptionKind = 5
	OptionInt32   OptionKind = 6
	OptionInt64   OptionKind = 7
	OptionInt128  OptionKind = 8
	OptionUint8   OptionKind = 9
	OptionUint16  OptionKind = 10
	OptionUint32  OptionKind = 11
	OptionUint64  OptionKind = 12
	OptionUint128 OptionKind = 13
	OptionFloat32 OptionKind = 14
	OptionFloat64 OptionKind = 15
)

// Limits of an options block (client-ops.md 1.8).
const (
	OptionPairsMax  = 1024
	OptionBlockMax  = 100_000
	optionDataMax   = 255
	optionEntryHead = 5 // kind u8 + len u32
)

// Option is one key/value pair of an options block. Value is the entry's
// data bytes as sent (a Uint64 is 8 little-endian bytes, a Bool one byte).
type Option struct {
	Key   string
	Kind  OptionKind
	Value []byte
}

// EncodeOptions encodes pairs as an options block: entries [kind u8][len
// u32][data], alternating key (kind String) and value (wire.md 12.A5). The
// pairs must already satisfy the block's rules.
func EncodeOptions(pairs []Option) []byte {
	if len(pairs) > OptionPairsMax {
		panic("wire: more than 1024 option pairs")
	}
	var b []byte
	entry := func(kind OptionKind, data []byte) {
		if kind == 0 || len(data) == 0 || len(data) > optionDataMax {
			panic(fmt.Sprintf("wire: option entry of kind %d with %d bytes", kind, len(data)))
		}
		b = append(b, byte(kind), 0, 0, 0, 0)
		put32(b[len(b)-4:], uint32(len(data)))
		b = append(b, data...)
	}
	for _, p := range pairs {
		entry(OptionString, []byte(p.Key))
		entry(p.Kind, p.Value)
	}
	if len(b) > OptionBlockMax {
		panic("wire: options block above 100 000 bytes")
	}
	return b
}

// DecodeOptions decodes a whole options block and applies its rules: every
// kind nonzero, every len 1..255, the entries consume the block exactly and
// come in pairs, keys are valid UTF-8 strings without duplicates, at most
// 1024 pairs and 100 000 bytes. Values alias b.
func DecodeOptions(b []byte) ([]Option, error) {
	const format = "options"
	if len(b) > OptionBlockMax {
		return nil, formatErrf(format, ErrCountTooLarge, 0, "%d bytes", len(b))
	}
	var pairs []Option
	var key *Option
	for at := 0; at < len(b); {
		if len(b)-at < optionEntryHead {
			return nil, formatErr(format, ErrShort, at)
		}
		kind, n := OptionKind(b[at]), int(u32(b[at+1:]))
		if kind == 0 {
			return nil, formatErrf(format, ErrOptionEntry, at, "kind 0")
		}
		if n == 0 || n > optionDataMax {
			return nil, formatErrf(format, ErrOptionEntry, at, "len %d", n)
		}
		if len(b)-at-optionEntryHead < n {
			return nil, formatErr(format, ErrShort, at)
		}
		data := b[at+optionEntryHead : at+optionEntryHead+n]
		if key == nil {
			if kind != OptionString || !utf8.Valid(data) {
				return nil, formatErrf(format, ErrOptionKey, at, "kind %d", kind)
			}
			for _, p := range pairs {
				if p.Key == string(data) {
					return nil, formatErrf(format, ErrOptionKey, at, "duplicate key %q", data)
				}
			}
			if len(pairs) == OptionPairsMax {
				return nil, formatErrf(format, ErrCountTooLarge, at, "more than %d pairs", OptionPairsMax)
			}
			pairs = append(pairs, Option{Key: string(data)})
			key = &pairs[len(pairs)-1]
		} else {
			key.Kind, key.Value = kind, data
			key = nil
		}
		at += optionEntryHead + n
	}
	if key != nil {
		return nil, formatErrf(format, ErrOptionKey, len(b), "key %q has no value", key.Key)
	}
	return pairs, nil
}
