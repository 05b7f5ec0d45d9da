//go:build !canary_chain_unchecked

package vsr

// canaryChainUnchecked is the canary canary_chain_unchecked, off: see canary_chain_unchecked_on.go.
const canaryChainUnchecked = false
