//go:build !canary_partition_reply_before_commit

package replica

// canaryPartitionReplyBeforeCommit is the canary canary_partition_reply_before_commit, off (see canary_partition_reply_before_commit_on.go): the normal build.
const canaryPartitionReplyBeforeCommit = false
