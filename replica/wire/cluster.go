package wire

import "lukechampine.com/blake3"

// ClusterID returns the cluster id of a cluster name: the first 16 bytes of
// BLAKE3 of its UTF-8 bytes, read as a little-endian u128 (wire.md 3.6). On
// the wire the 16 bytes appear in digest order.
func ClusterID(name string) U128 {
	sum := blake3.Sum256([]byte(name))
	return getU128(sum[:16])
}
