//go:build canary_stale_startview_accepted

package canary

// Tag is the canary this build turns on.
const Tag = "canary_stale_startview_accepted"
