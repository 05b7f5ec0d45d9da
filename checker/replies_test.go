package checker_test

import (
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica"
)

// Every replica's reply to a committed op is the model's: a backup that
// builds another one (a state machine gone wrong where no client looks) is
// named at the op.
func TestReplyDiverged(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 1)
		a := f.invoke(cls[0], createStream("a"))
		p := f.propose(a)
		f.commitPrep(0, p)
		frame := append([]byte(nil), p.reply...)
		if bad {
			frame[len(frame)-1] ^= 1
		}
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventReply, Replica: 1, Client: a.inv.ClientID, Request: a.inv.Request, Op: p.op(), Frame: frame})
		f.commitPrep(1, p)
		if bad {
			wantViolation(t, f, checker.ReplyDiverged)
			continue
		}
		f.commitPrep(2, p)
		f.reply(a)
		wantPass(t, f)
	}
}

// A replay resends the reply its request committed with, and no other.
func TestReplayWrong(t *testing.T) {
	for _, bad := range []bool{false, true} {
		f, cls := started(t, 3, 2)
		a := f.do(f.invoke(cls[0], createStream("a")))
		b := f.do(f.invoke(cls[1], createStream("b")))
		frame := a.p.reply
		if bad {
			frame = b.p.reply // another request's reply
		}
		f.c.Replica(f.tick(), replica.Event{Kind: replica.EventReplay, Replica: 0, Client: a.inv.ClientID, Request: a.inv.Request, Frame: frame})
		if bad {
			wantViolation(t, f, checker.ReplayWrong)
			continue
		}
		wantPass(t, f)
	}
}
