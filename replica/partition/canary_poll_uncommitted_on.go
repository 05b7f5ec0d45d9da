//go:build canary_poll_uncommitted

package partition

// canaryPollUncommitted turns on the canary canary_poll_uncommitted: a poll also returns the batches of the journal above the committed prefix. A deliberate bug for the canary
// suite (canary/README.md); false in a normal build.
const canaryPollUncommitted = true
