package checker_test

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/iggy-vopr/vopr/checker"
	"github.com/iggy-vopr/vopr/replica/vsr"
	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/iggy-vopr/vopr/workload"
	"pgregory.net/rapid"
)

// A rapid state machine over the fake cluster: random correct histories
// with several replicas, crashes and replays from op 1, view changes that
// drop uncommitted prepares, Register retries that commit twice, retried
// requests answered from the cache, evictions (indefinite completions that
// later commit, or never), denials, and the workload's own operation mix
// (projected CreateTopic and CreatePartitions included). None of it may
// produce a violation.

type rclient struct {
	cl         *fakeClient
	registered bool
	pending    *req // the invocation in flight
}

// admits reports whether the primary may prepare r: the last prepare of
// its client id is committed at the primary, or of another view (the
// primary admits nothing more of a client while a prepare of it is in its
// pipeline, client-ops.md 2.4).
func (w *correctWorld) admits(r *req) bool {
	last := w.last[r.inv.ClientID]
	return last == nil || last.x.View != w.f.view || last.op() < w.f.next[w.f.primary()]
}

// propose proposes r and remembers it as its client id's last prepare.
func (w *correctWorld) propose(r *req) {
	w.last[r.inv.ClientID] = w.f.propose(r)
}

type correctWorld struct {
	f       *fakeCluster
	mix     *workload.Mix
	clients []*rclient
	orphans []*req              // requests of evicted sessions, which may still commit
	last    map[wire.U128]*prep // by client id, its last prepare
	// Counters, to see that the paths are reached.
	crashes, viewChanges, evictions, registerRetries, replays int
}

// skip ends an action that does not apply in the current state.
type skip struct{}

func (w *correctWorld) pick(t *rapid.T, label string, ok func(*rclient) bool) *rclient {
	var cands []*rclient
	for _, c := range w.clients {
		if ok(c) {
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		panic(skip{})
	}
	return rapid.SampledFrom(cands).Draw(t, label)
}

func (w *correctWorld) replica(t *rapid.T) uint8 {
	return uint8(rapid.IntRange(0, w.f.n-1).Draw(t, "replica"))
}

// unproposed says whether r may be proposed: invoked, not in the log, and
// not answered by a denial.
func unproposed(r *req) bool { return r != nil && r.p == nil }

// action is one kind of step, drawn with its weight.
type action struct {
	name   string
	weight int
	do     func(*rapid.T)
}

func (w *correctWorld) actions() []action {
	f := w.f
	weights := map[string]int{"invoke": 6, "propose": 6, "commit": 12, "reply": 6, "propose orphan": 1,
		"retry register": 1, "deny": 1, "evict": 1, "crash": 1, "view change": 1}
	m := map[string]func(*rapid.T){
		"invoke": func(t *rapid.T) {
			c := w.pick(t, "client", func(c *rclient) bool { return c.pending == nil })
			if !c.registered {
				c.pending = f.register(c.cl)
				return
			}
			op := w.mix.Next()
			c.pending = f.invoke(c.cl, call{op.Operation, op.Body})
		},
		"propose": func(t *rapid.T) {
			c := w.pick(t, "client", func(c *rclient) bool { return unproposed(c.pending) && w.admits(c.pending) })
			w.propose(c.pending)
		},
		"propose orphan": func(t *rapid.T) {
			var cands []*req
			for _, r := range w.orphans {
				if unproposed(r) && w.admits(r) {
					cands = append(cands, r)
				}
			}
			if len(cands) == 0 {
				panic(skip{})
			}
			w.propose(rapid.SampledFrom(cands).Draw(t, "orphan"))
		},
		"retry register": func(t *rapid.T) {
			// The Register's retry reaches the primary while the first is
			// in the log: a second Register prepare for the same id.
			c := w.pick(t, "client", func(c *rclient) bool {
				return c.pending != nil && c.pending.p != nil && c.pending.inv.Operation == wire.OperationRegister && w.admits(c.pending)
			})
			w.propose(c.pending)
			w.registerRetries++
		},
		"commit": func(t *rapid.T) {
			r := w.replica(t)
			if f.next[r] > uint64(len(f.log)) {
				panic(skip{})
			}
			n := rapid.IntRange(1, 4).Draw(t, "ops")
			for range n {
				if f.next[r] <= uint64(len(f.log)) {
					f.commit(r)
				}
			}
		},
		"reply": func(t *rapid.T) {
			c := w.pick(t, "client", func(c *rclient) bool {
				return c.pending != nil && c.pending.p != nil && c.pending.p.reply != nil
			})
			f.reply(c.pending)
			if rapid.Bool().Draw(t, "replayed") {
				f.complete(c.pending, c.pending.p.reply) // the same bytes, again
				w.replays++
			}
			if c.pending.inv.Operation == wire.OperationRegister {
				c.registered = true
			}
			c.pending = nil
		},
		"deny": func(t *rapid.T) {
			c := w.pick(t, "client", func(c *rclient) bool {
				return unproposed(c.pending) && c.pending.inv.Operation != wire.OperationRegister
			})
			f.denied(c.pending)
			c.pending = nil
		},
		"evict": func(t *rapid.T) {
			c := w.pick(t, "client", func(c *rclient) bool {
				return c.pending != nil && c.pending.inv.Operation != wire.OperationRegister
			})
			f.indefinite(c.pending)
			w.orphans = append(w.orphans, c.pending)
			c.pending, c.registered = nil, false
			w.evictions++
		},
		"crash": func(t *rapid.T) {
			r := w.replica(t)
			f.sent(r, f.view)
			f.crash(r)
			f.status(r, vsr.StatusRecovering, f.view)
			w.crashes++
		},
		"view change": func(t *rapid.T) {
			keep := uint64(rapid.IntRange(int(f.applied), len(f.log)).Draw(t, "keep"))
			f.viewChange(f.view+uint32(rapid.IntRange(1, 3).Draw(t, "views")), keep)
			w.viewChanges++
		},
	}
	var out []action
	for _, name := range slices.Sorted(maps.Keys(m)) {
		out = append(out, action{name, weights[name], m[name]})
	}
	return out
}

// step draws one action and runs it (nothing when it does not apply).
func (w *correctWorld) step(t *rapid.T, actions []action) {
	var deck []int
	for i, a := range actions {
		for range a.weight {
			deck = append(deck, i)
		}
	}
	a := actions[rapid.SampledFrom(deck).Draw(t, "action")]
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(skip); !ok {
				panic(r)
			}
		}
	}()
	a.do(t)
}

// finish heals the cluster: everything proposed commits everywhere, and
// every committed request in flight is answered.
func (w *correctWorld) finish(t *rapid.T) {
	f := w.f
	f.commitAll() // the primary admits a client's next request once it committed its last
	for _, c := range w.clients {
		if unproposed(c.pending) {
			f.propose(c.pending)
		}
	}
	f.commitAll()
	for _, c := range w.clients {
		if c.pending != nil {
			f.reply(c.pending)
		}
	}
	wantPass(t, f)
}

// correctHistory draws and runs one correct history, then heals it.
func correctHistory(t *rapid.T) *correctWorld {
	n := rapid.IntRange(1, 5).Draw(t, "replicas")
	nc := rapid.IntRange(1, 4).Draw(t, "clients")
	seed := rapid.Uint64().Draw(t, "seed")
	f := newFake(t, n)
	w := &correctWorld{f: f, mix: workload.NewMix(rand.New(rand.NewPCG(seed, 1)), false), last: map[wire.U128]*prep{}}
	f.status(0, vsr.StatusNormal, 0)
	for i := range nc {
		w.clients = append(w.clients, &rclient{cl: f.client(i)})
	}
	actions := w.actions()
	for range rapid.IntRange(10, 300).Draw(t, "steps") {
		w.step(t, actions)
		wantPass(t, f)
	}
	w.finish(t)
	return w
}

func TestRapidCorrectHistoriesPass(t *testing.T) {
	var total correctWorld
	var commits uint64
	byOp := map[wire.Operation]int{}
	rapid.Check(t, func(t *rapid.T) {
		w := correctHistory(t)
		total.crashes += w.crashes
		total.viewChanges += w.viewChanges
		total.evictions += w.evictions
		total.registerRetries += w.registerRetries
		total.replays += w.replays
		commits += w.f.c.Committed()
		for op := uint64(1); op <= w.f.c.Committed(); op++ {
			h, _ := w.f.c.Header(op)
			var x wire.PrepareHeader
			x.Decode(&h)
			byOp[x.Operation]++
		}
	})
	t.Logf("committed by operation: %v", byOp)
	t.Logf("ops committed %d, crashes %d, view changes %d, evictions %d, register retries %d, replays %d",
		commits, total.crashes, total.viewChanges, total.evictions, total.registerRetries, total.replays)
}

// TestRapidMutationsCaught: a correct history, then one bent event; the
// checker names it (DESIGN.md: "checker catches generated violations").
func TestRapidMutationsCaught(t *testing.T) {
	seen := map[string]int{}
	rapid.Check(t, func(t *rapid.T) {
		w := correctHistory(t)
		f := w.f
		top := uint64(len(f.log)) // every replica committed it all
		var clientOps []*prep     // committed client ops (not Registers)
		for _, p := range f.log {
			if p.x.Operation != wire.OperationRegister && p.r != nil {
				clientOps = append(clientOps, p)
			}
		}
		stranger := f.client(99)
		f.do(f.register(stranger))
		top++
		r := uint8(rapid.IntRange(0, f.n-1).Draw(t, "replica"))
		op := uint64(rapid.IntRange(1, int(top)).Draw(t, "op"))
		fresh := f.invoke(stranger, createStream("mutant"))
		var want string
		switch kind := rapid.IntRange(0, 7).Draw(t, "mutation"); kind {
		case 0: // another prepare at a committed op, on a replica that had it
			f.crash(r)
			f.commitTo(r, op-1)
			f.commitPrep(r, f.forge(fresh, op))
			want = checker.CommittedOpReplaced
		case 1: // another prepare at an op another replica committed
			if f.n < 2 {
				t.Skip("one replica")
			}
			other := f.invoke(stranger, createStream("other"))
			f.propose(fresh)
			f.commit(r)
			f.commitPrep((r+1)%uint8(f.n), f.forge(other, top+1))
			want = checker.DivergentCommit
		case 2: // a gap
			if top < 2 {
				t.Skip("no gap to make")
			}
			f.crash(r)
			f.commitPrep(r, f.log[top-1])
			want = checker.LogGap
		case 3: // a broken chain
			f.append(f.build(fresh, func(x *wire.PrepareHeader, _ *[]byte) { x.Parent = wire.BodySeal([]byte("x")) }))
			f.commit(r)
			want = checker.HashChainBreak
		case 4: // a timestamp that does not increase
			prev := f.log[top-1].x.Timestamp
			f.append(f.build(fresh, func(x *wire.PrepareHeader, _ *[]byte) { x.Timestamp = prev }))
			f.commit(r)
			want = checker.TimestampRegression
		case 5: // a request applied twice
			if len(clientOps) == 0 {
				t.Skip("no client op")
			}
			p := rapid.SampledFrom(clientOps).Draw(t, "request")
			f.append(f.build(p.r, nil))
			f.commit(r)
			want = checker.DuplicateApply
		case 6: // a reply of another op
			if len(clientOps) == 0 {
				t.Skip("no client op")
			}
			p := rapid.SampledFrom(clientOps).Draw(t, "reply")
			f.complete(fresh, p.reply)
			want = checker.WrongReply
		case 7: // a phantom
			f.append(f.build(fresh, func(_ *wire.PrepareHeader, body *[]byte) { *body = createStream("other").body }))
			f.commit(r)
			want = checker.PhantomCommit
		}
		wantViolation(t, f, want)
		seen[want]++
	})
	t.Logf("caught: %v", seen)
}
