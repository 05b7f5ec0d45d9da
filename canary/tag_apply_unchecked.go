//go:build canary_apply_unchecked

package canary

// Tag is the canary this build turns on.
const Tag = "canary_apply_unchecked"
