package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Decode errors. Every decoder returns a *DecodeError wrapping one of these.
var (
	ErrShort      = errors.New("body too short")
	ErrName       = errors.New("invalid name")
	ErrIdentifier = errors.New("invalid identifier")
	ErrOptions    = errors.New("invalid options block")
	ErrTooLong    = errors.New("body too long")
	ErrLength     = errors.New("inconsistent length field")
	ErrTrailing   = errors.New("trailing bytes")
)

// DecodeError names the body, the byte offset and the rule that failed.
type DecodeError struct {
	Body   string // e.g. "CreateTopic"
	Offset int
	Rule   error
	Detail string
}

func (e *DecodeError) Error() string {
	s := fmt.Sprintf("metadata: %s body at byte %d: %v", e.Body, e.Offset, e.Rule)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

func (e *DecodeError) Unwrap() error { return e.Rule }

// reader walks a body. The first failure sticks; later reads return zero
// values, so decoders read field after field and check err once.
type reader struct {
	body string
	b    []byte
	at   int
	err  error
}

func (r *reader) fail(rule error, at int, detail string, args ...any) {
	if r.err == nil {
		r.err = &DecodeError{Body: r.body, Offset: at, Rule: rule, Detail: fmt.Sprintf(detail, args...)}
	}
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b)-r.at < n {
		r.fail(ErrShort, r.at, "need %d bytes, have %d", n, len(r.b)-r.at)
		return nil
	}
	v := r.b[r.at : r.at+n]
	r.at += n
	return v
}

func (r *reader) u8() uint8 {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *reader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (r *reader) u64() uint64 {
	if v := r.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

// rest returns every remaining byte.
func (r *reader) rest() []byte {
	if r.err != nil {
		return nil
	}
	v := r.b[r.at:]
	r.at = len(r.b)
	return v
}

// name reads a Name: [len u8][bytes], 1..=255 bytes of valid UTF-8
// (client-ops.md 1.1).
func (r *reader) name() string {
	at := r.at
	n := int(r.u8())
	if r.err != nil {
		return ""
	}
	if n == 0 {
		r.fail(ErrName, at, "empty name")
		return ""
	}
	v := r.take(n)
	if r.err != nil {
		return ""
	}
	if !utf8.Valid(v) {
		r.fail(ErrName, at, "name is not valid UTF-8")
		return ""
	}
	return string(v)
}

// identifier reads an Identifier (client-ops.md 1.2).
func (r *reader) identifier() Identifier {
	at := r.at
	kind := IdentifierKind(r.u8())
	n := int(r.u8())
	v := r.take(n)
	if r.err != nil {
		return Identifier{}
	}
	switch kind {
	case IdentifierNumeric:
		if n != 4 {
			r.fail(ErrIdentifier, at, "numeric identifier of %d bytes", n)
			return Identifier{}
		}
		return Identifier{Kind: kind, Numeric: binary.LittleEndian.Uint32(v)}
	case IdentifierString:
		if n == 0 {
			r.fail(ErrIdentifier, at, "empty string identifier")
			return Identifier{}
		}
		if !utf8.Valid(v) {
			r.fail(ErrIdentifier, at, "string identifier is not valid UTF-8")
			return Identifier{}
		}
		return Identifier{Kind: kind, Name: string(v)}
	}
	r.fail(ErrIdentifier, at, "kind %d", kind)
	return Identifier{}
}

// options reads the rest of the body as an options block and validates it
// (client-ops.md 1.8). The block is returned as sent, copied.
func (r *reader) options() []byte {
	at := r.at
	v := r.rest()
	if r.err != nil {
		return nil
	}
	if _, err := wire.DecodeOptions(v); err != nil {
		r.fail(ErrOptions, at, "%v", err)
		return nil
	}
	return append([]byte{}, v...)
}

// IdentifierKind is the kind byte of an Identifier.
type IdentifierKind uint8

// Identifier kinds.
const (
	IdentifierNumeric IdentifierKind = 1
	IdentifierString  IdentifierKind = 2
)

// Identifier addresses a stream or a topic: by numeric id (the slab key; 0
// is a real id) or by exact name (client-ops.md 1.2).
type Identifier struct {
	Kind    IdentifierKind
	Numeric uint32 // Kind == IdentifierNumeric
	Name    string // Kind == IdentifierString: 1..255 bytes of UTF-8
}

// ID returns a numeric identifier.
func ID(id uint32) Identifier { return Identifier{Kind: IdentifierNumeric, Numeric: id} }

// Named returns a string identifier.
func Named(name string) Identifier { return Identifier{Kind: IdentifierString, Name: name} }

// String formats the identifier for messages.
func (id Identifier) String() string {
	if id.Kind == IdentifierNumeric {
		return fmt.Sprintf("#%d", id.Numeric)
	}
	return fmt.Sprintf("%q", id.Name)
}

// appendIdentifier encodes id. An identifier that would not decode is a
// programming error.
func appendIdentifier(b []byte, id Identifier) []byte {
	switch id.Kind {
	case IdentifierNumeric:
		b = append(b, byte(IdentifierNumeric), 4)
		return binary.LittleEndian.AppendUint32(b, id.Numeric)
	case IdentifierString:
		checkName(id.Name)
		b = append(b, byte(IdentifierString), byte(len(id.Name)))
		return append(b, id.Name...)
	}
	panic(fmt.Sprintf("metadata: identifier of kind %d", id.Kind))
}

func checkName(name string) {
	if len(name) == 0 || len(name) > NameMax || !utf8.ValidString(name) {
		panic(fmt.Sprintf("metadata: invalid name %q", name))
	}
}

// appendName encodes a Name.
func appendName(b []byte, name string) []byte {
	checkName(name)
	b = append(b, byte(len(name)))
	return append(b, name...)
}

// appendOptions appends a block that must already be valid.
func appendOptions(b, block []byte) []byte {
	if _, err := wire.DecodeOptions(block); err != nil {
		panic(fmt.Sprintf("metadata: encoding an invalid options block: %v", err))
	}
	return append(b, block...)
}

// NameMax is the longest Name or string Identifier, in bytes.
const NameMax = 255

// ReadIdentifier reads the Identifier at the front of b (client-ops.md 1.2)
// and returns it with the bytes it took, for bodies of the other planes that
// name a stream or topic (SendMessages' routing prefix). what names the
// body in the error.
func ReadIdentifier(b []byte, what string) (Identifier, int, error) {
	r := reader{body: what, b: b}
	id := r.identifier()
	if r.err != nil {
		return Identifier{}, 0, r.err
	}
	return id, r.at, nil
}

// AppendIdentifier appends id's encoding to b.
func AppendIdentifier(b []byte, id Identifier) []byte { return appendIdentifier(b, id) }
