//go:build !canary_reconcile_unsynced

package journal

// canaryReconcileUnsynced is the canary canary_reconcile_unsynced, off (see
// canary_reconcile_unsynced_on.go): the normal build.
const canaryReconcileUnsynced = false
