//go:build !canary_segment_lost_flush

package partition

// canarySegmentLostFlush is false in a normal build; the build tag canary_segment_lost_flush turns on a deliberate bug (canary/README.md).
const canarySegmentLostFlush = false
