package sim

import (
	"testing"
)

// TestScenarioRegisterAtABackup: a client whose first replica is a backup
// logs in there. The backup forwards the login to the primary, which
// commits the Register and tells the backup; the backup binds the
// connection and answers with the committed reply (the checker holds it to
// the model's). The client's metadata requests at the backup are refused
// TransientNotAccepted, so it moves on to the primary at once instead of
// waiting out a timeout.
func TestScenarioRegisterAtABackup(t *testing.T) {
	c := newScenario(t, 21, 3, 2)
	w := watchCluster(c)
	cl := c.Clients[1] // client 1 dials replica 1 first: a backup of view 0
	if p := c.Primary(); p == nil || p.ID() != 0 {
		t.Fatal("replica 0 does not lead view 0")
	}
	submitStreams(cl, "fw", 3)
	settleAll(t, c, 30*second)
	expectAllCommitted(t, c)
	if got := w.probes[0]["forwarded register proposed"]; got != 1 {
		t.Fatalf("the primary proposed %d forwarded logins, want 1", got)
	}
	if got := w.probes[1]["forwarded register committed"]; got != 1 {
		t.Fatalf("the backup saw %d forwarded logins commit, want 1", got)
	}
	wl := cl.Workload()
	if wl.Session() == 0 || len(cl.Completions) != 4 {
		t.Fatalf("session %d, %d completions: want a session and the Register plus 3 requests answered", wl.Session(), len(cl.Completions))
	}
	if wl.Transients == 0 || wl.Timeouts != 0 {
		t.Fatalf("%d transient refusals, %d timeouts: want the backup to refuse and no timeout", wl.Transients, wl.Timeouts)
	}
}
