//go:build !canary_nack_corrupt

package bug

// NackCorrupt is the switch of canary_nack_corrupt (canary/README.md): off, as in every build
// without its tag.
const NackCorrupt = false
