//go:build !canary_offset_at_prepare

package bug

// OffsetAtPrepare is the switch of canary_offset_at_prepare (canary/README.md): off, as in every build
// without its tag.
const OffsetAtPrepare = false
