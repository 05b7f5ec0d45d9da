//go:build canary_apply_unchecked

package vsr

// canaryApplyUnchecked turns on the canary canary_apply_unchecked:
// commitJournal applies the journal's frame for an op even when its identity
// differs from the canonical header. A deliberate bug for the canary suite
// (canary/README.md); false in a normal build.
const canaryApplyUnchecked = true
