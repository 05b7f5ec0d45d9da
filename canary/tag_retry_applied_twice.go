//go:build canary_retry_applied_twice

package canary

// Tag is the canary this build turns on.
const Tag = "canary_retry_applied_twice"
