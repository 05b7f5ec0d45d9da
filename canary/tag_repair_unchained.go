//go:build canary_repair_unchained

package canary

// Tag is the canary this build turns on.
const Tag = "canary_repair_unchained"
