//go:build !canary_no_restamp

package vsr

// canaryNoRestamp is the canary canary_no_restamp, off (see
// canary_no_restamp_on.go): the normal build.
const canaryNoRestamp = false
