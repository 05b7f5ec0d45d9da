//go:build canary_commit_one_ack

package bug

// CommitOneAck is the switch of canary_commit_one_ack (canary/README.md): on in this build.
const CommitOneAck = true
