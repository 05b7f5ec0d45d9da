//go:build canary_retry_applied_twice

package clients

// canaryRetryAppliedTwice turns on the canary canary_retry_applied_twice:
// CheckRequest says New for a retried request at or below the client's
// watermark, so a retry is prepared and applied again. A deliberate bug for
// the canary suite (canary/README.md); false in a normal build.
const canaryRetryAppliedTwice = true
