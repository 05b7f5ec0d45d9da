//go:build !canary_install_unchecked

package bug

// InstallUnchecked is the switch of canary_install_unchecked (canary/README.md): off, as in every build
// without its tag.
const InstallUnchecked = false
