//go:build !canary_offset_at_prepare

package partition

// canaryOffsetAtPrepare is false in a normal build; the build tag canary_offset_at_prepare turns on a deliberate bug (canary/README.md).
const canaryOffsetAtPrepare = false
