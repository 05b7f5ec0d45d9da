//go:build !canary_reconcile_unsynced

package bug

// ReconcileUnsynced is the switch of canary_reconcile_unsynced (canary/README.md): off, as in every build
// without its tag.
const ReconcileUnsynced = false
