//go:build canary_slots_reused_early

package canary

// Tag is the canary this build turns on.
const Tag = "canary_slots_reused_early"
