//go:build !canary_ack_before_sync

package vsr

// canaryAckBeforeSync is the canary canary_ack_before_sync, off (see
// canary_ack_before_sync_on.go): the normal build.
const canaryAckBeforeSync = false
