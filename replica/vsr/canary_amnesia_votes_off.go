//go:build !canary_amnesia_votes

package vsr

// canaryAmnesiaVotes is the canary canary_amnesia_votes, off (see canary_amnesia_votes_on.go): the normal build.
const canaryAmnesiaVotes = false
