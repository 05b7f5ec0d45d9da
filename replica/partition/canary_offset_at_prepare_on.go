//go:build canary_offset_at_prepare

package partition

// canaryOffsetAtPrepare turns on the canary canary_offset_at_prepare: the partition primary applies a Quorum consumer offset store or delete when it prepares it, not when it commits. A deliberate bug for the canary
// suite (canary/README.md); false in a normal build.
const canaryOffsetAtPrepare = true
