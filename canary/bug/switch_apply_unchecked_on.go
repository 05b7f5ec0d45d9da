//go:build canary_apply_unchecked

package bug

// ApplyUnchecked is the switch of canary_apply_unchecked (canary/README.md): on in this build.
const ApplyUnchecked = true
