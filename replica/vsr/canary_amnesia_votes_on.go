//go:build canary_amnesia_votes

package vsr

// canaryAmnesiaVotes turns on the canary canary_amnesia_votes: a replica that lost its memory journal at a restart votes in view changes at once, as if it held what it lost. A deliberate bug for the canary
// suite (canary/README.md); false in a normal build.
const canaryAmnesiaVotes = true
