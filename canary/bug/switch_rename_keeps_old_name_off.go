//go:build !canary_rename_keeps_old_name

package bug

// RenameKeepsOldName is the switch of canary_rename_keeps_old_name (canary/README.md): off, as in every build
// without its tag.
const RenameKeepsOldName = false
