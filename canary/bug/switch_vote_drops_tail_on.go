//go:build canary_vote_drops_tail

package bug

// VoteDropsTail is the switch of canary_vote_drops_tail (canary/README.md): on in this build.
const VoteDropsTail = true
