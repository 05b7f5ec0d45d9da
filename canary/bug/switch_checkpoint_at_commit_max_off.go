//go:build !canary_checkpoint_at_commit_max

package bug

// CheckpointAtCommitMax is the switch of canary_checkpoint_at_commit_max (canary/README.md): off, as in every build
// without its tag.
const CheckpointAtCommitMax = false
