//go:build !canary_torn_trusted

package journal

// canaryTornTrusted is the canary canary_torn_trusted, off (see
// canary_torn_trusted_on.go): the normal build.
const canaryTornTrusted = false
