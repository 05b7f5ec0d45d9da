//go:build canary_repair_unchained

package vsr

// canaryRepairUnchained turns on the canary canary_repair_unchained: a
// repaired prepare whose identity is checked by the hash chain is accepted
// without comparing it with the parent of the canonical op above it. A
// deliberate bug for the canary suite (canary/README.md); false in a normal
// build.
const canaryRepairUnchained = true
