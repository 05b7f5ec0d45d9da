//go:build canary_chain_unchecked

package canary

// Tag is the canary this build turns on.
const Tag = "canary_chain_unchecked"
