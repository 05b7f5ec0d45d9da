//go:build canary_nack_corrupt

package bug

// NackCorrupt is the switch of canary_nack_corrupt (canary/README.md): on in this build.
const NackCorrupt = true
