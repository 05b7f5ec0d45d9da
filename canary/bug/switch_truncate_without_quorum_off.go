//go:build !canary_truncate_without_quorum

package bug

// TruncateWithoutQuorum is the switch of canary_truncate_without_quorum (canary/README.md): off, as in every build
// without its tag.
const TruncateWithoutQuorum = false
