//go:build !canary_nack_corrupt

package vsr

// canaryNackCorrupt is the canary canary_nack_corrupt, off (see
// canary_nack_corrupt_on.go): the normal build.
const canaryNackCorrupt = false
