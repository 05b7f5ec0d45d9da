//go:build canary_rename_keeps_old_name

package canary

// Tag is the canary this build turns on.
const Tag = "canary_rename_keeps_old_name"
