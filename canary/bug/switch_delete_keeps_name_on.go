//go:build canary_delete_keeps_name

package bug

// DeleteKeepsName is the switch of canary_delete_keeps_name (canary/README.md): on in this build.
const DeleteKeepsName = true
