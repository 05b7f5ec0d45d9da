//go:build !canary_slots_reused_early

package bug

// SlotsReusedEarly is the switch of canary_slots_reused_early (canary/README.md): off, as in every build
// without its tag.
const SlotsReusedEarly = false
