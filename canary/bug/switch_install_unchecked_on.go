//go:build canary_install_unchecked

package bug

// InstallUnchecked is the switch of canary_install_unchecked (canary/README.md): on in this build.
const InstallUnchecked = true
