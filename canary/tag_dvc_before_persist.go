//go:build canary_dvc_before_persist

package canary

// Tag is the canary this build turns on.
const Tag = "canary_dvc_before_persist"
