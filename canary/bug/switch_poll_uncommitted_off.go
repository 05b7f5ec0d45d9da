//go:build !canary_poll_uncommitted

package bug

// PollUncommitted is the switch of canary_poll_uncommitted (canary/README.md): off, as in every build
// without its tag.
const PollUncommitted = false
