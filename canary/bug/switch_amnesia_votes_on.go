//go:build canary_amnesia_votes

package bug

// AmnesiaVotes is the switch of canary_amnesia_votes (canary/README.md): on in this build.
const AmnesiaVotes = true
