//go:build !canary_poll_uncommitted

package partition

// canaryPollUncommitted is the canary canary_poll_uncommitted, off (see canary_poll_uncommitted_on.go): the normal build.
const canaryPollUncommitted = false
