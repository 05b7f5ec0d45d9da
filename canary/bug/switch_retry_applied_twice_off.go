//go:build !canary_retry_applied_twice

package bug

// RetryAppliedTwice is the switch of canary_retry_applied_twice (canary/README.md): off, as in every build
// without its tag.
const RetryAppliedTwice = false
