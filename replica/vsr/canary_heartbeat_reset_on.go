//go:build canary_heartbeat_reset

package vsr

// canaryHeartbeatReset turns on the canary canary_heartbeat_reset: a new
// primary restarts its heartbeat token (the Commit message's
// timestamp_monotonic) from zero, so its backups, which reset their timer
// only on a strictly newer token, ignore its heartbeats. A deliberate bug
// for the canary suite (canary/README.md); false in a normal build.
const canaryHeartbeatReset = true
