//go:build canary_nack_corrupt

package canary

// Tag is the canary this build turns on.
const Tag = "canary_nack_corrupt"
