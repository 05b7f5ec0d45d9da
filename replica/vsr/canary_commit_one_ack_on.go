//go:build canary_commit_one_ack

package vsr

// canaryCommitOneAck turns on the canary canary_commit_one_ack: the primary
// commits a prepare on its first acknowledgement (its own or a backup's),
// ignoring the replication quorum. A deliberate bug for the canary suite
// (canary/README.md); false in a normal build.
const canaryCommitOneAck = true
