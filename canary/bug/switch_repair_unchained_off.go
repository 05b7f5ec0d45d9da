//go:build !canary_repair_unchained

package bug

// RepairUnchained is the switch of canary_repair_unchained (canary/README.md): off, as in every build
// without its tag.
const RepairUnchained = false
