//go:build canary_commit_one_ack

package canary

// Tag is the canary this build turns on.
const Tag = "canary_commit_one_ack"
