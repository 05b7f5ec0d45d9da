//go:build canary_amnesia_votes

package canary

// Tag is the canary this build turns on.
const Tag = "canary_amnesia_votes"
