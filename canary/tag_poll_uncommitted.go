//go:build canary_poll_uncommitted

package canary

// Tag is the canary this build turns on.
const Tag = "canary_poll_uncommitted"
