package wire

import (
	"encoding/binary"
	"fmt"
)

// U128 is an unsigned 128-bit integer as it sits on the wire: 16 bytes,
// little-endian, the low 64 bits first.
type U128 struct {
	Lo uint64
	Hi uint64
}

// U128From64 zero-extends v: the value in the low half, zero in the high half.
// This is how every XXH3-64 checksum is widened to a u128 field (wire.md conventions).
func U128From64(v uint64) U128 { return U128{Lo: v} }

// IsZero reports whether every bit of u is zero.
func (u U128) IsZero() bool { return u.Lo == 0 && u.Hi == 0 }

// String formats u as "0x" followed by 32 lowercase hex digits of its value.
func (u U128) String() string { return fmt.Sprintf("0x%016x%016x", u.Hi, u.Lo) }

// Bit reports whether bit i (0..127) is set. Bit i of a u128 field is bit i%8
// of byte i/8 of its little-endian encoding.
func (u U128) Bit(i int) bool {
	assertBitIndex(i)
	if i < 64 {
		return u.Lo>>uint(i)&1 == 1
	}
	return u.Hi>>uint(i-64)&1 == 1
}

// WithBit returns u with bit i (0..127) set.
func (u U128) WithBit(i int) U128 {
	assertBitIndex(i)
	if i < 64 {
		u.Lo |= 1 << uint(i)
	} else {
		u.Hi |= 1 << uint(i-64)
	}
	return u
}

// WithoutBit returns u with bit i (0..127) clear.
func (u U128) WithoutBit(i int) U128 {
	assertBitIndex(i)
	if i < 64 {
		u.Lo &^= 1 << uint(i)
	} else {
		u.Hi &^= 1 << uint(i-64)
	}
	return u
}

// BitsFrom reports whether any bit at position n or above is set (0 <= n <= 128).
func (u U128) BitsFrom(n int) bool {
	if n < 0 || n > 128 {
		panic(fmt.Sprintf("wire: bit position %d outside 0..128", n))
	}
	switch {
	case n >= 128:
		return false
	case n >= 64:
		return u.Hi>>uint(n-64) != 0
	default:
		return u.Hi != 0 || u.Lo>>uint(n) != 0
	}
}

func assertBitIndex(i int) {
	if i < 0 || i >= 128 {
		panic(fmt.Sprintf("wire: bit index %d outside 0..127", i))
	}
}

func getU128(b []byte) U128 {
	return U128{Lo: binary.LittleEndian.Uint64(b[0:8]), Hi: binary.LittleEndian.Uint64(b[8:16])}
}

func putU128(b []byte, u U128) {
	binary.LittleEndian.PutUint64(b[0:8], u.Lo)
	binary.LittleEndian.PutUint64(b[8:16], u.Hi)
}

func u64(b []byte) uint64      { return binary.LittleEndian.Uint64(b) }
func u32(b []byte) uint32      { return binary.LittleEndian.Uint32(b) }
func u16(b []byte) uint16      { return binary.LittleEndian.Uint16(b) }
func put64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }
func put32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }
func put16(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }

// allZero reports whether every byte of b is zero.
func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// MarshalText encodes u as String does, so JSON carries a u128 as the string
// "0x" followed by 32 lowercase hex digits.
func (u U128) MarshalText() ([]byte, error) { return []byte(u.String()), nil }
