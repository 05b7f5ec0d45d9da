//go:build canary_heartbeat_reset

package bug

// HeartbeatReset is the switch of canary_heartbeat_reset (canary/README.md): on in this build.
const HeartbeatReset = true
