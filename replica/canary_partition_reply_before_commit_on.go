//go:build canary_partition_reply_before_commit

package replica

// canaryPartitionReplyBeforeCommit turns on the canary canary_partition_reply_before_commit: the partition primary answers a send as soon as it has prepared it, before it commits. A deliberate bug for the canary
// suite (canary/README.md); false in a normal build.
const canaryPartitionReplyBeforeCommit = true
