package partition

import (
	"encoding/binary"
	"math/bits"
)

// XXH32 with seed 0, for MessagesKey partitioning (client-ops.md 1.5:
// Iggy's calculate_32). The module's xxh3 has no 32-bit variant.
func xxh32(b []byte) uint32 {
	const (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	n := len(b)
	var h uint32
	if n >= 16 {
		prime1, prime2 := p1, p2 // variables: the sums wrap, as the algorithm wants
		v1, v2, v3, v4 := prime1+prime2, prime2, uint32(0), 0-prime1
		round := func(v, x uint32) uint32 { return bits.RotateLeft32(v+x*p2, 13) * p1 }
		for len(b) >= 16 {
			v1 = round(v1, binary.LittleEndian.Uint32(b[0:]))
			v2 = round(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(b[12:]))
			b = b[16:]
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
	}
	h += uint32(n)
	for len(b) >= 4 {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*p3, 17) * p4
		b = b[4:]
	}
	for _, c := range b {
		h = bits.RotateLeft32(h+uint32(c)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}

// KeyIndex is the partition index a MessagesKey send goes to among count
// partitions: XXH32(key, seed 0) mod count (client-ops.md 1.5).
func KeyIndex(key []byte, count int) int {
	if count < 1 {
		panic("partition: KeyIndex over no partitions")
	}
	return int(xxh32(key) % uint32(count))
}
