package checker_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/iggy-vopr/vopr/replica/clients"
	"github.com/iggy-vopr/vopr/replica/metadata"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// The porcupine cross-check. Small random histories of CreateStream and
// DeleteStream by name (a set of names, each holding the lowest free stream
// id) come from four kinds of system; for each, the Checker's verdict (the
// history fed as events) is compared with porcupine's (the client-visible
// history: call and return times, inputs, reply bodies) under an
// independent sequential model of the same semantics.
//
// The implication that must hold is "the checker passes => porcupine finds
// the history linearizable" (equivalently: not linearizable => the checker
// fails). The converse need not hold: the checker demands that the
// canonical order itself be the witness, because the replicas computed the
// replies in that order, while porcupine accepts any witness. Those cases
// are counted as strictness.

// The systems.
const (
	sysCorrect    = iota // ops applied in an order that respects real time, replies from it
	sysShuffled          // the log respects real time, replies from a shuffled order
	sysSwapped           // the log respects real time, replies from it with two ops swapped
	sysLogOutOfRT        // the log is a random order (often against real time), replies from it
	sysCount
)

var sysNames = [sysCount]string{"correct", "shuffled replies", "swapped replies", "log against real time"}

// xop is one generated client operation.
type xop struct {
	client     int
	create     bool
	name       string
	call, ret  int64 // in units; ret is the reply, or the eviction of an indefinite op
	indefinite bool
	// settled, for an indefinite op: when every copy of its request had
	// been delivered or lost (what the simulator knows): it commits before
	// then, or never.
	settled int64
	commits bool
	point   int64 // when it commits (a linearization point for a correct system)

	r     *req
	reply []byte // the reply body the client saw
}

func (o *xop) request() call {
	if o.create {
		return createStream(o.name)
	}
	return deleteStream(o.name)
}

const unitNs = 1_000_000 // a unit of generated time; every event group fits in one

// genHistory draws 2-4 clients and up to 8 operations; each client runs its
// operations one after the other, and stops after an eviction.
func genHistory(rng *rand.Rand) (int, []*xop) {
	nc := 2 + rng.IntN(3)
	nops := 1 + rng.IntN(8)
	names := []string{"a", "b", "c"}[:2+rng.IntN(2)]
	next := make([]int64, nc)
	stopped := make([]bool, nc)
	for i := range next {
		next[i] = 100 * int64(1+rng.IntN(3))
	}
	var ops []*xop
	for len(ops) < nops && slices.Contains(stopped, false) {
		c := rng.IntN(nc)
		if stopped[c] {
			continue
		}
		o := &xop{client: c, create: rng.IntN(2) == 0, name: names[rng.IntN(len(names))], commits: true}
		o.call = next[c]
		o.ret = o.call + 100*int64(1+rng.IntN(6))
		if rng.IntN(8) == 0 {
			o.indefinite, o.commits = true, rng.IntN(2) == 0
			stopped[c] = true
		}
		next[c] = o.ret + 100*int64(rng.IntN(3))
		ops = append(ops, o)
	}
	used := map[int64]bool{}
	for _, o := range ops {
		if o.indefinite {
			// Its last copy may arrive after the eviction.
			o.settled = o.call + 100*int64(1+rng.IntN(8))
		}
		if !o.commits {
			continue
		}
		hi := o.ret
		if o.indefinite {
			hi = o.settled
		}
		for {
			p := o.call + 1 + rng.Int64N(hi-o.call-1)
			if p%100 != 0 && !used[p] {
				o.point, used[p] = p, true
				break
			}
		}
	}
	return nc, ops
}

// committedByPoint returns the committed ops' indexes by commit point: the
// order of a correct system.
func committedByPoint(ops []*xop) []int {
	var order []int
	for i, o := range ops {
		if o.commits {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(a, b int) bool { return ops[order[a]].point < ops[order[b]].point })
	return order
}

// run feeds one history to a fresh fake cluster (3 replicas): Registers
// first, then the operations. logOrder is the order the ops commit in;
// with timeOrdered, every event is fed at its time (Invoke at call, the
// commit at point, the completion at ret), which needs logOrder to be the
// points' order; otherwise (a log against real time cannot be fed in time
// order: an op would commit before its invocation) every Invoke is fed
// first, at its call time, then the commits in log order, then the
// completions at their return times. replies, when set, overrides the reply
// body a client sees (op index -> body).
func run(t tb, nc int, ops []*xop, logOrder []int, timeOrdered bool, replies map[int][]byte) *fakeCluster {
	f, cls := started(t, 3, nc)
	for _, o := range ops {
		o.r, o.reply = nil, nil
	}
	invoke := func(o *xop) {
		f.at(o.call*unitNs - 1000)
		o.r = f.invoke(cls[o.client], o.request())
	}
	commit := func(o *xop) {
		f.propose(o.r)
		f.commitAll()
	}
	complete := func(i int) {
		o := ops[i]
		f.at(o.ret*unitNs - 1000)
		if o.indefinite {
			f.indefinite(o.r)
			return
		}
		frame := o.r.p.reply
		if body, ok := replies[i]; ok {
			frame = clients.BuildReply(o.r.p.x, body)
		}
		o.reply = frame[wire.HeaderSize:]
		f.complete(o.r, frame)
	}
	type event struct {
		at   int64
		kind int // 0 complete, 1 invoke, 2 commit
		i    int
	}
	var evs []event
	for i, o := range ops {
		evs = append(evs, event{o.ret, 0, i}, event{o.call, 1, i})
	}
	if timeOrdered {
		for _, i := range logOrder {
			evs = append(evs, event{ops[i].point, 2, i})
		}
		sort.SliceStable(evs, func(a, b int) bool {
			if evs[a].at != evs[b].at {
				return evs[a].at < evs[b].at
			}
			return evs[a].kind < evs[b].kind
		})
		for _, e := range evs {
			switch e.kind {
			case 0:
				complete(e.i)
			case 1:
				invoke(ops[e.i])
			case 2:
				f.at(e.at*unitNs - 1000)
				commit(ops[e.i])
			}
		}
		return f
	}
	sort.SliceStable(evs, func(a, b int) bool { return evs[a].at < evs[b].at })
	for _, e := range evs {
		if e.kind == 1 {
			invoke(ops[e.i])
		}
	}
	for _, i := range logOrder {
		commit(ops[i])
	}
	for _, e := range evs {
		if e.kind == 0 {
			complete(e.i)
		}
	}
	return f
}

// repliesIn returns the reply body of each op of order when the ops'
// prepares (as committed) are applied in that order.
func repliesIn(ops []*xop, order []int) map[int][]byte {
	s := metadata.NewState()
	out := map[int][]byte{}
	for _, i := range order {
		out[i] = s.Apply(ops[i].r.p.x, ops[i].r.p.body)
	}
	return out
}

// The porcupine model: an independent sequential specification of
// CreateStream and DeleteStream by name. The state is the stream name held
// by each id (the lowest free id is the next one taken), as a comparable
// array; the output is the reply body.

const setSlots = 8

type setState [setSlots]string

type setInput struct {
	create bool
	name   string
	ts     uint64 // the prepare timestamp: a new stream's created_at
}

type setOutput struct {
	known bool // false: an indefinite op, whose reply nobody saw
	body  string
}

func setStep(st setState, in setInput) (setState, []byte) {
	at := slices.Index(st[:], in.name)
	if in.create {
		if at >= 0 {
			return st, metadata.ResultRejection(metadata.CodeStreamNameAlreadyExists)
		}
		id := slices.Index(st[:], "")
		if id < 0 {
			panic("set model: out of slots")
		}
		st[id] = in.name
		return st, metadata.ResultOK(metadata.StreamResponse{ID: uint32(id), CreatedAt: in.ts, Name: in.name,
			Options: []byte{}}.Append(nil))
	}
	if at < 0 {
		return st, metadata.ResultRejection(metadata.CodeStreamIDNotFound)
	}
	st[at] = ""
	return st, metadata.ResultOK(nil)
}

// setModel is nondeterministic in one place: an op whose output nobody saw
// (indefinite) may have taken effect or not.
var setModel = (&porcupine.NondeterministicModel{
	Init: func() []any { return []any{setState{}} },
	Step: func(state, input, output any) []any {
		st := state.(setState)
		next, body := setStep(st, input.(setInput))
		out := output.(setOutput)
		switch {
		case !out.known:
			return []any{next, st}
		case string(body) == out.body:
			return []any{next}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(setInput), output.(setOutput)
		verb := "delete"
		if in.create {
			verb = "create"
		}
		if !out.known {
			return fmt.Sprintf("%s(%s) -> ?", verb, in.name)
		}
		return fmt.Sprintf("%s(%s) -> %x", verb, in.name, out.body)
	},
}).ToModel()

// clientHistory is the client-visible history of ops, for porcupine. An
// indefinite op is bounded as DESIGN.md says, by what the simulator knows:
// it returns when every copy of its request had been delivered or lost
// (settled), with its output unknown; the model (setModel) lets such an op
// take effect or not, since an op that never commits must linearize too.
func clientHistory(ops []*xop) []porcupine.Operation {
	var h []porcupine.Operation
	for _, o := range ops {
		in := setInput{create: o.create, name: o.name}
		if o.r.p != nil {
			in.ts = o.r.p.x.Timestamp
		}
		op := porcupine.Operation{ClientId: o.client, Input: in, Call: o.call, Return: o.ret,
			Output: setOutput{known: true, body: string(o.reply)}}
		if o.indefinite {
			op.Return, op.Output = o.settled, setOutput{}
		}
		h = append(h, op)
	}
	return h
}

type crossStats struct {
	histories, checkerFails, notLinearizable, agree, strict int
	violations                                              map[string]int
}

func TestPorcupineCrossCheck(t *testing.T) {
	const perSystem = 1000
	var stats [sysCount]crossStats
	for sys := range sysCount {
		st := &stats[sys]
		st.violations = map[string]int{}
		for i := range perSystem {
			rng := rand.New(rand.NewPCG(0x9e3779b97f4a7c15, uint64(sys)<<32|uint64(i)))
			nc, ops := genHistory(rng)
			order := committedByPoint(ops)
			var f *fakeCluster
			switch sys {
			case sysCorrect:
				f = run(t, nc, ops, order, true, nil)
			case sysShuffled, sysSwapped:
				// A dry run builds the prepares; the replies then come from
				// another order of them, and the same (deterministic) run
				// is fed again with those replies.
				run(t, nc, ops, order, true, nil)
				ids := make([]wire.U128, len(ops))
				for k, o := range ops {
					if o.r.p != nil {
						ids[k] = o.r.p.x.Checksum
					}
				}
				alt := slices.Clone(order)
				if sys == sysShuffled {
					rng.Shuffle(len(alt), func(a, b int) { alt[a], alt[b] = alt[b], alt[a] })
				} else if len(alt) >= 2 {
					a := rng.IntN(len(alt) - 1)
					b := a + 1 + rng.IntN(len(alt)-a-1)
					alt[a], alt[b] = alt[b], alt[a]
				}
				replies := repliesIn(ops, alt)
				f = run(t, nc, ops, order, true, replies)
				for k, o := range ops {
					if o.r.p != nil && o.r.p.x.Checksum != ids[k] {
						t.Fatalf("%s #%d: the fake is not deterministic", sysNames[sys], i)
					}
				}
			case sysLogOutOfRT:
				alt := slices.Clone(order)
				rng.Shuffle(len(alt), func(a, b int) { alt[a], alt[b] = alt[b], alt[a] })
				f = run(t, nc, ops, alt, false, nil)
			}
			v := f.c.Violation()
			lin := porcupine.CheckOperations(setModel, clientHistory(ops))
			st.histories++
			if v != nil {
				st.checkerFails++
				st.violations[v.Name]++
			}
			if !lin {
				st.notLinearizable++
			}
			switch {
			case (v == nil) == lin:
				st.agree++
			case v != nil && lin:
				st.strict++
			default:
				t.Fatalf("%s #%d: the checker passes a history porcupine finds not linearizable\n%s",
					sysNames[sys], i, describe(ops))
			}
			if sys == sysCorrect && (v != nil || !lin) {
				t.Fatalf("correct #%d: checker %v, linearizable %v\n%s", i, v, lin, describe(ops))
			}
		}
	}
	total := crossStats{}
	for sys, st := range stats {
		t.Logf("%-22s histories %4d  checker fails %4d  not linearizable %4d  agree %4d  strict %4d  %v",
			sysNames[sys], st.histories, st.checkerFails, st.notLinearizable, st.agree, st.strict, st.violations)
		total.histories += st.histories
		total.agree += st.agree
		total.strict += st.strict
	}
	t.Logf("%-22s histories %4d  agree %4d  strict %4d", "all", total.histories, total.agree, total.strict)
	// The buggy systems must be caught, or the cross-check proves nothing.
	for sys := sysShuffled; sys < sysCount; sys++ {
		if stats[sys].notLinearizable == 0 || stats[sys].checkerFails == 0 {
			t.Fatalf("%s: no non-linearizable history generated", sysNames[sys])
		}
	}
	if stats[sysLogOutOfRT].violations["real-time order violation"] == 0 {
		t.Fatalf("no real-time order violation generated")
	}
}

func describe(ops []*xop) string {
	s := ""
	for i, o := range ops {
		verb := "delete"
		if o.create {
			verb = "create"
		}
		s += fmt.Sprintf("  #%d client %d %s(%s) [%d, %d] indefinite=%v commits=%v point=%d reply=%x\n",
			i, o.client, verb, o.name, o.call, o.ret, o.indefinite, o.commits, o.point, o.reply)
	}
	return s
}
