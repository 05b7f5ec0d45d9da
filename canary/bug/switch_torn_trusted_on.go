//go:build canary_torn_trusted

package bug

// TornTrusted is the switch of canary_torn_trusted (canary/README.md): on in this build.
const TornTrusted = true
