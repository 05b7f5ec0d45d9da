//go:build !canary_partition_reply_before_commit

package bug

// PartitionReplyBeforeCommit is the switch of canary_partition_reply_before_commit (canary/README.md): off, as in every build
// without its tag.
const PartitionReplyBeforeCommit = false
