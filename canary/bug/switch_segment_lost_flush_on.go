//go:build canary_segment_lost_flush

package bug

// SegmentLostFlush is the switch of canary_segment_lost_flush (canary/README.md): on in this build.
const SegmentLostFlush = true
