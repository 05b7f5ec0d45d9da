//go:build canary_stale_startview_accepted

package bug

// StaleStartViewAccepted is the switch of canary_stale_startview_accepted (canary/README.md): on in this build.
const StaleStartViewAccepted = true
