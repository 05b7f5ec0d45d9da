//go:build !canary_vote_drops_tail

package vsr

// canaryVoteDropsTail is false in a normal build; the build tag
// canary_vote_drops_tail turns on a deliberate bug (canary/README.md).
const canaryVoteDropsTail = false
