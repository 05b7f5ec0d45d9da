//go:build canary_partition_reply_before_commit

package bug

// PartitionReplyBeforeCommit is the switch of canary_partition_reply_before_commit (canary/README.md): on in this build.
const PartitionReplyBeforeCommit = true
