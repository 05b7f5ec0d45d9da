//go:build canary_ack_before_sync

package bug

// AckBeforeSync is the switch of canary_ack_before_sync (canary/README.md): on in this build.
const AckBeforeSync = true
