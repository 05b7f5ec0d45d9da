//go:build canary_reconcile_unsynced

package canary

// Tag is the canary this build turns on.
const Tag = "canary_reconcile_unsynced"
