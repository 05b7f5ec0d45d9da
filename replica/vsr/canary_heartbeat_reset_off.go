//go:build !canary_heartbeat_reset

package vsr

// canaryHeartbeatReset is the canary canary_heartbeat_reset, off (see
// canary_heartbeat_reset_on.go): the normal build.
const canaryHeartbeatReset = false
