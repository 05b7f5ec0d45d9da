//go:build canary_install_unchecked

package canary

// Tag is the canary this build turns on.
const Tag = "canary_install_unchecked"
