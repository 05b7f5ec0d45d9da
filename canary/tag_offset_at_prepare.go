//go:build canary_offset_at_prepare

package canary

// Tag is the canary this build turns on.
const Tag = "canary_offset_at_prepare"
