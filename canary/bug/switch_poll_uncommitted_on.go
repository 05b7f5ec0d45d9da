//go:build canary_poll_uncommitted

package bug

// PollUncommitted is the switch of canary_poll_uncommitted (canary/README.md): on in this build.
const PollUncommitted = true
