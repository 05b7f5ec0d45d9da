//go:build canary_truncate_without_quorum

package vsr

// canaryTruncateWithoutQuorum turns on the canary
// canary_truncate_without_quorum: the view-change merge truncates an op on
// q_nack-1 nacks instead of a nack quorum. A deliberate bug for the canary
// suite (canary/README.md); false in a normal build.
const canaryTruncateWithoutQuorum = true
