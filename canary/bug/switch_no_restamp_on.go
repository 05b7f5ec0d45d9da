//go:build canary_no_restamp

package bug

// NoRestamp is the switch of canary_no_restamp (canary/README.md): on in this build.
const NoRestamp = true
