//go:build canary_torn_trusted

package canary

// Tag is the canary this build turns on.
const Tag = "canary_torn_trusted"
