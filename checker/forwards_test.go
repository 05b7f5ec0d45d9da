package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// A backup that knows no primary answers a login at once; one in Normal
// status forwards it (perhaps later: the bus queues the frame) and owes
// nothing at once, nor for a retry of a parked forward.
func TestLoginDroppedByABackup(t *testing.T) {
	client := wire.U128{Lo: 77, Hi: 7}
	register := wire.BuildFrame(&wire.RequestHeader{Client: client, Operation: wire.OperationRegister}, nil)
	answer := wire.BuildFrame(&wire.ReplyHeader{Client: client, Operation: wire.OperationRegister, Prefix: wire.Prefix{Replica: 1}},
		[]byte{1, 0, 0, 0, 0, 0, 0, 0, 58, 0, 0, 0})
	for _, tc := range []struct {
		name   string
		status vsr.Status
		parked bool // a forward of the client's Register is parked at replica 1
		answer bool
		want   string
	}{
		{name: "view change, answered", status: vsr.StatusViewChange, answer: true},
		{name: "view change, dropped", status: vsr.StatusViewChange, want: checker.ForwardDropped},
		{name: "view change, a retry of a parked forward", status: vsr.StatusViewChange, parked: true},
		{name: "normal: forwarded", status: vsr.StatusNormal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := started(t, 3, 1)
			f.status(1, vsr.StatusNormal, 0)
			if tc.parked {
				f.c.ClientDelivered(f.tick(), 1, 5, register)
				f.c.ClientHandled(f.now, 1)
			}
			f.status(1, tc.status, 1)
			f.c.ClientDelivered(f.tick(), 1, 6, register)
			if tc.answer {
				f.c.ToClient(f.now, 1, answer)
			}
			f.c.ClientHandled(f.now, 1)
			if tc.want != "" {
				wantViolation(t, f, tc.want)
				return
			}
			wantPass(t, f)
		})
	}
}

// The primary's refusal of a forward is passed on to the client as it
// arrives; a Logout's Ok at a commit the backup has applied is answered
// then, one at a later commit leaves the request parked until it.
func TestForwardRefusalPassedOn(t *testing.T) {
	client := wire.U128{Lo: 78, Hi: 7}
	nonce := wire.U128{Lo: 1, Hi: 1}
	logout := wire.BuildFrame(&wire.RequestHeader{Client: client, Operation: wire.OperationLogout, Session: 3, Request: 4}, nil)
	forward := wire.BuildFrame(&wire.ForwardLogoutHeader{Prefix: wire.Prefix{Replica: 1}, Client: client, Nonce: nonce, Session: 3, Request: 4}, nil)
	answer := wire.BuildFrame(&wire.ReplyHeader{Client: client, Request: 4, Operation: wire.OperationLogout, Status: 57,
		Prefix: wire.Prefix{Replica: 1}}, nil)
	for _, tc := range []struct {
		name    string
		outcome wire.ForwardLogoutOutcome
		commit  uint64 // an Ok's commit (replica 1 has applied op 1)
		other   bool   // the result names another nonce
		answer  bool
		want    string
	}{
		{name: "in progress, answered", outcome: wire.ForwardLogoutInProgress, answer: true},
		{name: "in progress, not answered", outcome: wire.ForwardLogoutInProgress, want: checker.ForwardRefusalUnanswered},
		{name: "not primary, not answered", outcome: wire.ForwardLogoutNotPrimary, want: checker.ForwardRefusalUnanswered},
		{name: "another forward's result", outcome: wire.ForwardLogoutCanceled, other: true},
		{name: "ok: answered at its commit", outcome: wire.ForwardLogoutOk, commit: 2},
		{name: "ok at a commit applied, answered", outcome: wire.ForwardLogoutOk, commit: 1, answer: true},
		{name: "ok at a commit applied, not answered", outcome: wire.ForwardLogoutOk, commit: 1, want: checker.ForwardLogoutUnsettled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := started(t, 3, 1)
			f.c.SetFrameSizeMax(1 << 20)
			f.status(1, vsr.StatusNormal, 0)
			f.c.ClientDelivered(f.tick(), 1, 5, logout)
			f.c.ClientHandled(f.now, 1)
			f.c.Sent(f.tick(), 1, 0, forward)
			x := wire.ForwardLogoutResultHeader{Prefix: wire.Prefix{Replica: 0}, Client: client, Nonce: nonce, Outcome: tc.outcome}
			x.Commit = tc.commit
			if tc.other {
				x.Nonce.Lo++
			}
			result := wire.BuildFrame(&x, nil)
			at := f.tick()
			if tc.answer {
				f.c.ToClient(at, 1, answer)
			}
			f.c.PeerFrame(at, 0, 1, result, false, checker.Receipt{Counted: true, Delivered: true})
			if tc.want != "" {
				wantViolation(t, f, tc.want)
				return
			}
			wantPass(t, f)
		})
	}
}
