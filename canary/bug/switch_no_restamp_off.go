//go:build !canary_no_restamp

package bug

// NoRestamp is the switch of canary_no_restamp (canary/README.md): off, as in every build
// without its tag.
const NoRestamp = false
