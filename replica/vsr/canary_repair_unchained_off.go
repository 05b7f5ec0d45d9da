//go:build !canary_repair_unchained

package vsr

// canaryRepairUnchained is the canary canary_repair_unchained, off (see
// canary_repair_unchained_on.go): the normal build.
const canaryRepairUnchained = false
