//go:build canary_retry_applied_twice

package bug

// RetryAppliedTwice is the switch of canary_retry_applied_twice (canary/README.md): on in this build.
const RetryAppliedTwice = true
