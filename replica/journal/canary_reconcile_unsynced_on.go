//go:build canary_reconcile_unsynced

package journal

// canaryReconcileUnsynced turns on the canary canary_reconcile_unsynced:
// Reconcile does not wait for the appends of canonical ops it holds only in
// memory, so its caller persists the new log_view while they can still be
// lost (the bug behind VOPR seeds 11918477101899531798 and
// 11918477101899531114). A deliberate bug for the canary suite
// (canary/README.md); false in a normal build.
const canaryReconcileUnsynced = true
