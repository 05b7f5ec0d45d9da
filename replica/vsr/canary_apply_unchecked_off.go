//go:build !canary_apply_unchecked

package vsr

// canaryApplyUnchecked is the canary canary_apply_unchecked, off (see
// canary_apply_unchecked_on.go): the normal build.
const canaryApplyUnchecked = false
