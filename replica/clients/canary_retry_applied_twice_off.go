//go:build !canary_retry_applied_twice

package clients

// canaryRetryAppliedTwice is the canary canary_retry_applied_twice, off (see
// canary_retry_applied_twice_on.go): the normal build.
const canaryRetryAppliedTwice = false
