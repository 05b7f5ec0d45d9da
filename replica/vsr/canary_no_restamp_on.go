//go:build canary_no_restamp

package vsr

// canaryNoRestamp turns on the canary canary_no_restamp: the primary
// retransmits a pipeline prepare with the view it was built in, not re-
// stamped with the current view. A deliberate bug for the canary suite
// (canary/README.md); false in a normal build.
const canaryNoRestamp = true
