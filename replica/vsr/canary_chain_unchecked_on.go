//go:build canary_chain_unchecked

package vsr

// canaryChainUnchecked turns on the canary canary_chain_unchecked: extendCanonDown takes the frame the journal holds below a canonical op as canonical without checking that its identity is that op's parent.
// A deliberate bug for the canary suite (see canary/README.md); never set in
// a normal build.
const canaryChainUnchecked = true
