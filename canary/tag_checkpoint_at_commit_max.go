//go:build canary_checkpoint_at_commit_max

package canary

// Tag is the canary this build turns on.
const Tag = "canary_checkpoint_at_commit_max"
