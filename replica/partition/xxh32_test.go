package partition

import "testing"

// TestXXH32: the reference vectors of XXH32 with seed 0 (xxHash's own
// sanity checks and xxhsum), across the short and the 16-byte-stripe paths.
func TestXXH32(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"", 0x02cc5d05},
		{"a", 0x550d7456},
		{"abc", 0x32d153ff},
		{"message digest", 0x7c948494},
		{"abcdefghijklmnopqrstuvwxyz", 0x63a14d5f},
		{"Nobody inspects the spammish repetition", 0xe2293b2f},
	} {
		if got := xxh32([]byte(tc.in)); got != tc.want {
			t.Errorf("XXH32(%q) = %#08x, want %#08x", tc.in, got, tc.want)
		}
	}
}
