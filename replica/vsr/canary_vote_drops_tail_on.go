//go:build canary_vote_drops_tail

package vsr

// canaryVoteDropsTail turns on the canary canary_vote_drops_tail: a
// replica's DoViewChange ends at its commit_max, leaving out the ops above
// it that it acknowledged (an implicit nack of each). A deliberate bug for
// the canary suite (canary/README.md); false in a normal build.
const canaryVoteDropsTail = true
