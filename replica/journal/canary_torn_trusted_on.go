//go:build canary_torn_trusted

package journal

// canaryTornTrusted turns on the canary canary_torn_trusted: Open trusts a
// prepare chunk whose header is valid without checking the chunk's seal or
// the body's checksum, so a prepare write torn by a crash is recovered as a
// Clean, held prepare. A deliberate bug for the canary suite
// (canary/README.md); false in a normal build.
const canaryTornTrusted = true
