//go:build !canary_truncate_without_quorum

package vsr

// canaryTruncateWithoutQuorum is the canary canary_truncate_without_quorum,
// off (see canary_truncate_without_quorum_on.go): the normal build.
const canaryTruncateWithoutQuorum = false
