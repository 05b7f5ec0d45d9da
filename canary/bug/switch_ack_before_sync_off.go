//go:build !canary_ack_before_sync

package bug

// AckBeforeSync is the switch of canary_ack_before_sync (canary/README.md): off, as in every build
// without its tag.
const AckBeforeSync = false
