//go:build canary_repair_unchained

package bug

// RepairUnchained is the switch of canary_repair_unchained (canary/README.md): on in this build.
const RepairUnchained = true
