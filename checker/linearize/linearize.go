// Package linearize checks a VOPR run's client history of metadata
// operations for linearizability with porcupine, under the checker's
// independent reference model (checker/refmodel) as the sequential
// specification. It is a cross-check of the checker's own verdict, which
// demands that the committed order itself explain every reply: porcupine
// searches for any order that does, so "the checker passes" must imply
// "porcupine finds the history linearizable", and a reply no order
// explains must fail both.
//
// The history is what clients saw: each request from its first send to
// its reply, the reply header's op and timestamp (the primary's stamp, which
// the reply carries) and body. A request denied before consensus changed
// nothing and is left out. One whose outcome the client never learned may
// have committed or not, and the model steps it both ways: before the
// client heard that its session was evicted, or at any time after it was
// sent if it never heard. Register and Logout change no metadata state,
// and the partition planes' requests are checked elsewhere; both are left
// out.
package linearize

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/iggy-vopr/vopr/checker/refmodel"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
	"github.com/zeebo/xxh3"
)

// Verdict is porcupine's answer for one history.
type Verdict struct {
	Result     porcupine.CheckResult // Ok, Illegal, or Unknown (the timeout ran out)
	Operations int                   // metadata operations checked
	Indefinite int                   // of which the client never learned the outcome
	Denied     int                   // requests left out: denied before consensus
	// First, for an Illegal verdict found on a prefix: the reply that no
	// order of the operations before it explains.
	First string
}

// String is the verdict as `vopr` prints it.
func (v Verdict) String() string {
	s := fmt.Sprintf("porcupine=%s operations=%d indefinite=%d denied=%d", v.Word(), v.Operations, v.Indefinite, v.Denied)
	if v.First != "" {
		s += " first: " + v.First
	}
	return s
}

// Word is the result as one word: ok, illegal or unknown.
func (v Verdict) Word() string {
	switch v.Result {
	case porcupine.Ok:
		return "ok"
	case porcupine.Illegal:
		return "illegal"
	}
	return "unknown"
}

// input is one request as porcupine sees it.
type input struct {
	client    int
	request   uint64
	operation wire.Operation
	body      []byte
}

// output is what its client saw: a reply, or nothing (indefinite).
type output struct {
	known     bool
	op        uint64
	timestamp uint64
	operation wire.Operation // the reply header's: the committed operation
	body      []byte
}

// state is one model state with its fingerprint, so that porcupine's
// equality and hash are cheap.
type state struct {
	m  *refmodel.Model
	fp []byte
}

func newState(m *refmodel.Model) state { return state{m: m, fp: m.Fingerprint()} }

// metadataOperation reports whether op is a metadata request the model
// checks.
func metadataOperation(op wire.Operation) bool {
	switch op {
	case wire.OperationCreateStream, wire.OperationUpdateStream, wire.OperationDeleteStream,
		wire.OperationCreateTopic, wire.OperationDeleteTopic,
		wire.OperationCreatePartitions, wire.OperationDeletePartitions:
		return true
	}
	return false
}

// Operations converts a history into porcupine operations (in invocation
// order) and counts what it left out. An invocation's completion is the one
// of the same client and request; a Replied completion must carry a Reply
// frame.
func Operations(invocations []workload.Invocation, completions []workload.Completion) ([]porcupine.Operation, Verdict, error) {
	// A client that registers again (its session evicted) may take a new
	// client id; requests are numbered per client id.
	type key struct {
		client  wire.U128
		request uint64
	}
	done := make(map[key]workload.Completion, len(completions))
	for _, c := range completions {
		if c.Request != 0 {
			done[key{c.ClientID, c.Request}] = c
		}
	}
	var ops []porcupine.Operation
	var v Verdict
	for _, inv := range invocations {
		if !metadataOperation(inv.Operation) {
			continue
		}
		in := input{client: inv.Client, request: inv.Request, operation: inv.Operation, body: inv.Body}
		op := porcupine.Operation{ClientId: inv.Client, Input: in, Call: inv.AtNs, Return: math.MaxInt64, Output: output{}}
		c, ok := done[key{inv.ClientID, inv.Request}]
		switch {
		case ok && c.Kind == workload.Denied:
			v.Denied++
			continue
		case ok && c.Kind == workload.Replied:
			if len(c.Frame) < wire.HeaderSize {
				return nil, v, fmt.Errorf("linearize: request %d of client %d replied with a %d-byte frame", inv.Request, inv.Client, len(c.Frame))
			}
			var h wire.ReplyHeader
			h.Decode(wire.HeaderOf(c.Frame))
			op.Output = output{known: true, op: h.Op, timestamp: h.Timestamp, operation: h.Operation,
				body: c.Frame[wire.HeaderSize:]}
			op.Return = c.AtNs
		case ok && c.Kind == workload.Indefinite:
			// The session was evicted in flight. A replica says so only
			// once it applied the eviction, and no request of the session
			// commits above the eviction's op (a primary admits none of a
			// session it no longer holds): if it committed at all, it did
			// before the client heard of the eviction.
			op.Return = c.AtNs
			v.Indefinite++
		default:
			v.Indefinite++ // never answered: it may commit at any time
		}
		ops = append(ops, op)
	}
	v.Operations = len(ops)
	return ops, v, nil
}

// Model is the nondeterministic sequential specification: the reference
// model, stepping a replied request to the reply it must have produced, and
// an indefinite one both ways.
func Model(limits refmodel.Limits) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []interface{} { return []interface{}{newState(refmodel.New(limits))} },
		Step: func(st, in, out interface{}) []interface{} {
			s, x, y := st.(state), in.(input), out.(output)
			if !y.known {
				next := []interface{}{s}
				// Committed, at a timestamp the client never saw: no reply
				// of another request shows an entity's created_at but its
				// own creation's.
				if applied, ok := apply(s, x, 0, 0); ok {
					next = append(next, applied.state)
				}
				return next
			}
			applied, ok := apply(s, x, y.op, y.timestamp)
			if !ok || !bytes.Equal(applied.reply, y.body) || applied.operation != y.operation {
				return nil
			}
			return []interface{}{applied.state}
		},
		Equal: func(a, b interface{}) bool { return bytes.Equal(a.(state).fp, b.(state).fp) },
		Hash:  func(a interface{}) uint64 { return xxh3.Hash(a.(state).fp) },
		DescribeOperation: func(in, out interface{}) string {
			x, y := in.(input), out.(output)
			if !y.known {
				return fmt.Sprintf("client %d request %d %v -> ?", x.client, x.request, x.operation)
			}
			return fmt.Sprintf("client %d request %d %v -> op %d %x", x.client, x.request, x.operation, y.op, y.body)
		},
	}
	return nm.ToModel()
}

// step is a request applied: the next state, the reply body and the
// operation committed.
type step struct {
	state
	reply     []byte
	operation wire.Operation
}

// apply steps x on a copy of s as a correct primary would propose it:
// projected with the next group ids, stamped with op and timestamp, by root
// (the workload's only user). False when a correct primary would not have
// replicated it at all.
func apply(s state, x input, op, timestamp uint64) (step, bool) {
	m := s.m.Clone()
	committedOp, body, ok := refmodel.Project(x.operation, x.body, m.HighestGroupID()+1)
	if !ok {
		return step{}, false
	}
	h := wire.PrepareHeader{Operation: committedOp, Op: op, Timestamp: timestamp, Request: x.request}
	reply, err := m.TryApply(h, body)
	if err != nil {
		return step{}, false
	}
	return step{state: newState(m), reply: reply, operation: committedOp}, true
}

// searchSliceMin is the least wall time one porcupine search gets. A
// linearizable history of a swarm seed is found in milliseconds to a few
// seconds (a history with many indefinite operations takes longest);
// proving a history illegal means searching every order, which can take
// longer than any budget, so Check gives the whole history half of its
// timeout (at least this) and then looks for the shortest illegal prefix.
const searchSliceMin = 5 * time.Second

// Check runs porcupine over the history with the model of limits, within
// timeout of wall time (0: as long as it takes). It searches the whole
// history first; if that does not decide, it checks growing prefixes (the
// operations invoked by the time of each reply, those not yet answered
// then taken as of unknown outcome), whose first illegal one proves the
// whole illegal and names the reply no order explains (an illegal
// history is searched so too, for that name). A search that runs
// out of time is Unknown, so the verdict is the checker's cross-check, not
// part of a run's deterministic result.
func Check(invocations []workload.Invocation, completions []workload.Completion, limits refmodel.Limits, timeout time.Duration) (Verdict, error) {
	ops, v, err := Operations(invocations, completions)
	if err != nil {
		return v, err
	}
	model := Model(limits)
	start := time.Now()
	sliceMax := max(searchSliceMin, timeout/2)
	slice := func() time.Duration {
		if timeout == 0 {
			return sliceMax
		}
		return max(min(timeout-time.Since(start), sliceMax), time.Millisecond)
	}
	v.Result = porcupine.CheckOperationsTimeout(model, ops, slice())
	if v.Result == porcupine.Ok {
		return v, nil
	}
	// Illegal, or undecided: the first illegal prefix proves it and names
	// the reply.
	var returns []int64
	for _, op := range ops {
		if op.Return != math.MaxInt64 {
			returns = append(returns, op.Return)
		}
	}
	slices.Sort(returns)
	returns = slices.Compact(returns)
	for _, at := range returns {
		if timeout != 0 && time.Since(start) >= timeout {
			return v, nil // as the whole history's search left it
		}
		prefix, last := prefixAt(ops, at)
		switch porcupine.CheckOperationsTimeout(model, prefix, slice()) {
		case porcupine.Illegal:
			v.Result = porcupine.Illegal
			v.First = model.DescribeOperation(last.Input, last.Output)
			return v, nil
		case porcupine.Unknown:
			return v, nil // as the whole history's search left it
		}
	}
	return v, nil
}

// prefixAt returns the operations invoked by time at, with the outputs of
// those answered later hidden (of unknown outcome, pending for ever), and
// the operation answered at at.
func prefixAt(ops []porcupine.Operation, at int64) ([]porcupine.Operation, porcupine.Operation) {
	var prefix []porcupine.Operation
	var last porcupine.Operation
	for _, op := range ops {
		if op.Call > at {
			continue
		}
		if op.Return == at {
			last = op
		}
		if op.Return > at {
			op.Output, op.Return = output{}, math.MaxInt64
		}
		prefix = append(prefix, op)
	}
	return prefix, last
}
