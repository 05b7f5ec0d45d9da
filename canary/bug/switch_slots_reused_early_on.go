//go:build canary_slots_reused_early

package bug

// SlotsReusedEarly is the switch of canary_slots_reused_early (canary/README.md): on in this build.
const SlotsReusedEarly = true
