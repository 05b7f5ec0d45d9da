//go:build canary_heartbeat_reset

package canary

// Tag is the canary this build turns on.
const Tag = "canary_heartbeat_reset"
