//go:build canary_delete_keeps_name

package canary

// Tag is the canary this build turns on.
const Tag = "canary_delete_keeps_name"
