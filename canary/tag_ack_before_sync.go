//go:build canary_ack_before_sync

package canary

// Tag is the canary this build turns on.
const Tag = "canary_ack_before_sync"
