//go:build canary_no_restamp

package canary

// Tag is the canary this build turns on.
const Tag = "canary_no_restamp"
