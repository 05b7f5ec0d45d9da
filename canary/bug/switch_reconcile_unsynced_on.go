//go:build canary_reconcile_unsynced

package bug

// ReconcileUnsynced is the switch of canary_reconcile_unsynced (canary/README.md): on in this build.
const ReconcileUnsynced = true
