//go:build canary_segment_lost_flush

package canary

// Tag is the canary this build turns on.
const Tag = "canary_segment_lost_flush"
