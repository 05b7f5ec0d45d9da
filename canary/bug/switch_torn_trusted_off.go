//go:build !canary_torn_trusted

package bug

// TornTrusted is the switch of canary_torn_trusted (canary/README.md): off, as in every build
// without its tag.
const TornTrusted = false
