//go:build canary_partition_reply_before_commit

package canary

// Tag is the canary this build turns on.
const Tag = "canary_partition_reply_before_commit"
