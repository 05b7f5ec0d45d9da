//go:build canary_chain_unchecked

package bug

// ChainUnchecked is the switch of canary_chain_unchecked (canary/README.md): on in this build.
const ChainUnchecked = true
