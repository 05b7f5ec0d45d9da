package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// A primary prepares nothing of a client while that client's earlier
// prepare is in its pipeline; once the primary committed it, or in a later
// view, it may.
func TestTwoRequestsOfOneClientInFlight(t *testing.T) {
	for _, tc := range []struct {
		name string
		step func(f *fakeCluster, first *prep)
		bad  bool
	}{
		{"the first still in flight", func(*fakeCluster, *prep) {}, true},
		{"a backup committed the first, the primary did not", func(f *fakeCluster, p *prep) { f.commitPrep(1, p) }, true},
		{"the primary committed the first", func(f *fakeCluster, p *prep) { f.commitPrep(0, p) }, false},
		{"the primary crashed and came back", func(f *fakeCluster, p *prep) { f.crash(0) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, cls := started(t, 3, 1)
			first := f.propose(f.invoke(cls[0], createStream("a")))
			tc.step(f, first)
			f.propose(f.invoke(cls[0], createStream("b")))
			if tc.bad {
				wantViolation(t, f, checker.TwoInFlight)
				return
			}
			wantPass(t, f)
		})
	}
}

// A Logout committed again after the first removed its session is a no-op,
// not a second apply; any other request committed twice is.
func TestLogoutCommittedAgainIsANoOp(t *testing.T) {
	for _, logout := range []bool{true, false} {
		f := newFake(t, 3)
		f.c.SetClientTableCapacity(4)
		f.status(0, vsr.StatusNormal, 0)
		cls := []*fakeClient{f.client(0)}
		f.do(f.register(cls[0]))
		c := call{op: wire.OperationLogout}
		if !logout {
			c = createStream("a")
		}
		r := f.do(f.invoke(cls[0], c))
		f.propose(r) // the retry, forwarded by another backup, proposed again
		f.commitAll()
		if logout {
			wantPass(t, f)
			continue
		}
		wantViolation(t, f, checker.DuplicateApply)
	}
}
