package linearize

import (
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/iggy-vopr/vopr/checker/refmodel"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
)

// A scripted history: requests with their times, and the replies a model
// applying them in a chosen order produced.
type scripted struct {
	invocations []workload.Invocation
	completions []workload.Completion
	model       *refmodel.Model
	op          uint64
}

func newScripted() *scripted { return &scripted{model: refmodel.New(refmodel.DefaultLimits())} }

func clientID(client int) wire.U128 { return wire.U128{Lo: uint64(client) + 1} }

func createStream(name string) (wire.Operation, []byte) {
	return wire.OperationCreateStream, append([]byte{byte(len(name))}, name...)
}

func deleteStream(name string) (wire.Operation, []byte) {
	return wire.OperationDeleteStream, append([]byte{2, byte(len(name))}, name...)
}

// invoke records a request of client sent at callNs.
func (s *scripted) invoke(client int, request uint64, callNs int64, op wire.Operation, body []byte) {
	s.invocations = append(s.invocations, workload.Invocation{Client: client, ClientID: clientID(client), Session: 1,
		Request: request, Operation: op, Body: body, AtNs: callNs})
}

// commit applies the request to the script's model (the commit order) and
// returns the reply frame it produced.
func (s *scripted) commit(client int, request uint64, op wire.Operation, body []byte) []byte {
	s.op++
	h := wire.PrepareHeader{Operation: op, Op: s.op, Timestamp: 1000 + s.op, Request: request, Client: clientID(client)}
	return refmodel.Reply(h, s.model.Apply(h, body))
}

// reply records the client's reply at returnNs.
func (s *scripted) reply(client int, request uint64, returnNs int64, frame []byte) {
	s.completions = append(s.completions, workload.Completion{Client: client, ClientID: clientID(client), Request: request,
		Kind: workload.Replied, Frame: frame, AtNs: returnNs})
}

// evicted records that the client's session was evicted at atNs with the
// request in flight.
func (s *scripted) evicted(client int, request uint64, atNs int64) {
	s.completions = append(s.completions, workload.Completion{Client: client, ClientID: clientID(client), Request: request,
		Kind: workload.Indefinite, AtNs: atNs})
}

func (s *scripted) check(t *testing.T) Verdict {
	t.Helper()
	v, err := Check(s.invocations, s.completions, refmodel.DefaultLimits(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAReplyNoOrderExplainsIsIllegal: a stream deleted, then created again
// under its name once the delete returned; the create's reply is "already
// exists", as a state machine whose delete kept the name would answer
// (canary_delete_keeps_name). No order of the three explains it.
func TestAReplyNoOrderExplainsIsIllegal(t *testing.T) {
	for _, tc := range []struct {
		name       string
		concurrent bool // the second create is sent before the delete returns
		want       porcupine.CheckResult
	}{
		{"sequential", false, porcupine.Illegal},
		{"concurrent: the create may come first", true, porcupine.Ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScripted()
			op, body := createStream("a")
			s.invoke(0, 1, 0, op, body)
			s.reply(0, 1, 10, s.commit(0, 1, op, body))
			dop, dbody := deleteStream("a")
			s.invoke(1, 1, 20, dop, dbody)
			// The bug: the create is answered as if the name were kept.
			stale := refmodel.New(refmodel.DefaultLimits())
			h := wire.PrepareHeader{Operation: op, Op: 1, Timestamp: 1001}
			stale.Apply(h, body)
			h = wire.PrepareHeader{Operation: op, Op: 3, Timestamp: 1003, Request: 2, Client: clientID(0)}
			wrong := refmodel.Reply(h, stale.Apply(h, body))
			deleted := s.commit(1, 1, dop, dbody)
			callNs := int64(40)
			if tc.concurrent {
				callNs = 25
			}
			s.reply(1, 1, 30, deleted)
			s.invoke(0, 2, callNs, op, body)
			s.reply(0, 2, 50, wrong)
			v := s.check(t)
			if v.Result != tc.want || v.Operations != 3 {
				t.Fatalf("verdict %v, want %v over 3 operations", v, tc.want)
			}
		})
	}
}

// TestCorrectRepliesAreLinearizable: the replies of the order the model
// applied are explained by that order.
func TestCorrectRepliesAreLinearizable(t *testing.T) {
	s := newScripted()
	for i, name := range []string{"a", "b", "a", "c"} {
		op, body := createStream(name)
		s.invoke(i%2, uint64(i+1), int64(10*i), op, body)
		s.reply(i%2, uint64(i+1), int64(10*i+5), s.commit(i%2, uint64(i+1), op, body))
	}
	if v := s.check(t); v.Result != porcupine.Ok || v.Operations != 4 {
		t.Fatalf("verdict %v", v)
	}
}

// TestAnEvictedRequestMayHaveCommitted: a create whose session was evicted
// in flight explains a later "already exists", but only if it was sent
// before the eviction was heard of: with the eviction heard before the
// other create is sent, it committed (if at all) before, and explains it.
// Without it the reply is illegal.
func TestAnEvictedRequestMayHaveCommitted(t *testing.T) {
	for _, tc := range []struct {
		name    string
		evicted bool
		want    porcupine.CheckResult
	}{
		{"with the evicted create", true, porcupine.Ok},
		{"without it", false, porcupine.Illegal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newScripted()
			op, body := createStream("a")
			if tc.evicted {
				s.invoke(2, 1, 0, op, body)
				s.commit(2, 1, op, body) // committed; the client never heard
				s.evicted(2, 1, 15)
			} else {
				s.commit(2, 1, wire.OperationCreateStream, append([]byte{1}, 'z')) // another stream holds key 0
			}
			s.invoke(0, 1, 20, op, body)
			s.reply(0, 1, 30, s.commit(0, 1, op, body))
			v := s.check(t)
			if v.Result != tc.want {
				t.Fatalf("verdict %v, want %v", v, tc.want)
			}
			if tc.want == porcupine.Illegal && !strings.Contains(v.First, "client 0 request 1") {
				t.Errorf("the first reply none explains is %q, want client 0's request 1", v.First)
			}
		})
	}
}

// TestDeniedAndOtherRequestsAreLeftOut: a request denied before consensus,
// a Register and a send to a partition change no metadata state and are
// not operations of the history.
func TestDeniedAndOtherRequestsAreLeftOut(t *testing.T) {
	s := newScripted()
	op, body := createStream("a")
	s.invoke(0, 1, 0, op, body)
	s.completions = append(s.completions, workload.Completion{Client: 0, ClientID: clientID(0), Request: 1, Kind: workload.Denied, AtNs: 5})
	s.invocations = append(s.invocations, workload.Invocation{Client: 1, ClientID: clientID(1), Operation: wire.OperationRegister},
		workload.Invocation{Client: 1, ClientID: clientID(1), Request: 1, Operation: wire.OperationSendMessages})
	v := s.check(t)
	if v.Result != porcupine.Ok || v.Operations != 0 || v.Denied != 1 {
		t.Fatalf("verdict %v", v)
	}
}
