//go:build canary_offset_at_prepare

package bug

// OffsetAtPrepare is the switch of canary_offset_at_prepare (canary/README.md): on in this build.
const OffsetAtPrepare = true
