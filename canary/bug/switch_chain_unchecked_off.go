//go:build !canary_chain_unchecked

package bug

// ChainUnchecked is the switch of canary_chain_unchecked (canary/README.md): off, as in every build
// without its tag.
const ChainUnchecked = false
