//go:build !canary_commit_one_ack

package vsr

// canaryCommitOneAck is the canary canary_commit_one_ack, off (see
// canary_commit_one_ack_on.go): the normal build.
const canaryCommitOneAck = false
