//go:build canary_rename_keeps_old_name

package bug

// RenameKeepsOldName is the switch of canary_rename_keeps_old_name (canary/README.md): on in this build.
const RenameKeepsOldName = true
