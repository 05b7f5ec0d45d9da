//go:build canary_segment_lost_flush

package partition

// canarySegmentLostFlush turns on the canary canary_segment_lost_flush: every segment flush after a log's first only syncs, never writing its unit, and counts it written. A deliberate bug for the canary
// suite (canary/README.md); false in a normal build.
const canarySegmentLostFlush = true
