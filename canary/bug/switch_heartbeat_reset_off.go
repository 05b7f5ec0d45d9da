//go:build !canary_heartbeat_reset

package bug

// HeartbeatReset is the switch of canary_heartbeat_reset (canary/README.md): off, as in every build
// without its tag.
const HeartbeatReset = false
