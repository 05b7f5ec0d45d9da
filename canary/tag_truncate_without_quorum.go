//go:build canary_truncate_without_quorum

package canary

// Tag is the canary this build turns on.
const Tag = "canary_truncate_without_quorum"
