//go:build !canary_amnesia_votes

package bug

// AmnesiaVotes is the switch of canary_amnesia_votes (canary/README.md): off, as in every build
// without its tag.
const AmnesiaVotes = false
