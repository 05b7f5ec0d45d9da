//go:build canary_vote_drops_tail

package canary

// Tag is the canary this build turns on.
const Tag = "canary_vote_drops_tail"
