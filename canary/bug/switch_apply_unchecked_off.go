//go:build !canary_apply_unchecked

package bug

// ApplyUnchecked is the switch of canary_apply_unchecked (canary/README.md): off, as in every build
// without its tag.
const ApplyUnchecked = false
