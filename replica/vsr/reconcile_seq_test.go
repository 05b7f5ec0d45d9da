package vsr

import "testing"

// TestOnlyTheLatestReconcileGoesNormal scripts the interleaving behind long
// seed 1039472243: a replica in a view change started the reconcile of one
// log (a merge's), then, in the same view, the reconcile of another (the
// StartView's, one op longer). The journal completes the first before the
// second; its completion must not take the replica Normal (that persists
// the log_view before the second reconcile's writes are durable, and a
// crash then leaves a log_view whose log ends below the one adopted), nor
// mark the reconcile over. Only the second's completion goes on.
func TestOnlyTheLatestReconcileGoesNormal(t *testing.T) {
	c := newCluster(t, 3, 35)
	r1 := c.replicas[1]
	g := r1.group
	g.status = StatusViewChange // white-box: a view change under way
	first, second := false, false
	g.reconcileThen(func() { first = true })
	g.reconcileThen(func() { second = true })
	if len(c.later) < 2 {
		t.Fatalf("%d completions queued, want both reconciles'", len(c.later))
	}
	// The first reconcile's completion (the harness runs them in order).
	d := c.later[0]
	c.later = c.later[1:]
	d.fn()
	if first || second {
		t.Fatalf("the first reconcile's completion ran a continuation (first %v, second %v)", first, second)
	}
	if !g.vc.reconciling {
		t.Fatal("the first reconcile's completion marked the reconcile over while the second runs")
	}
	if c.probes["reconcile superseded by a later one: its completion does nothing"] == 0 {
		t.Fatalf("probe never fired (probes %v)", c.probes)
	}
	for len(c.later) > 0 && !second {
		d := c.later[0]
		c.later = c.later[1:]
		d.fn()
	}
	if first || !second || g.vc.reconciling {
		t.Fatalf("after the second completion: first %v, second %v, reconciling %v", first, second, g.vc.reconciling)
	}
}
