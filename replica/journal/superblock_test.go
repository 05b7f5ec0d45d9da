package journal

import (
	"errors"
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

func stateAt(cfg Config, seq uint64) wire.VsrState {
	return wire.VsrState{Cluster: cfg.Cluster, ReplicaID: cfg.Replica, ReplicaCount: cfg.ReplicaCount, View: uint32(seq), CommitMax: seq}
}

func validCopy(cfg Config, seq uint64) CopyReport {
	return CopyReport{Valid: true, Sequence: seq, State: stateAt(cfg, seq)}
}

// TestSuperblockRuleModel enumerates the fault model exhaustively: the last
// done sequence s in every copy, an update to s+1 cut after k of the four
// copies (k = 0..4, in every rotation), the copy being written lost, kept or
// torn, and at most one bad copy (invalid, or stale at s-1, or holding s+1
// from a misdirected write). The rule must accept, with s or s+1.
func TestSuperblockRuleModel(t *testing.T) {
	cfg := testConfig()
	const s = 10
	type badKind int
	const (
		badNone badKind = iota
		badInvalid
		badStale
		badMisplaced
	)
	cases := 0
	for rotation := range uint64(SuperblockCopies) {
		for k := 0; k <= SuperblockCopies; k++ {
			for flux := 0; flux < 3; flux++ { // lost, kept, torn
				for bad := badNone; bad <= badMisplaced; bad++ {
					for badCopy := range SuperblockCopies {
						if bad == badNone && badCopy > 0 {
							continue
						}
						var copies [SuperblockCopies]CopyReport
						for i := range SuperblockCopies {
							copies[i] = validCopy(cfg, s)
						}
						for w := 0; w < k; w++ {
							copies[copyOrder(s+1+rotation, w)] = validCopy(cfg, s+1)
						}
						if k < SuperblockCopies {
							c := copyOrder(s+1+rotation, k)
							switch flux {
							case 1:
								copies[c] = validCopy(cfg, s+1)
							case 2:
								copies[c] = CopyReport{Problem: "torn"}
							}
						}
						switch bad {
						case badInvalid:
							copies[badCopy] = CopyReport{Problem: "corrupt"}
						case badStale:
							copies[badCopy] = validCopy(cfg, s-1)
						case badMisplaced:
							copies[badCopy] = validCopy(cfg, s+1)
						}
						chosen, err := chooseSuperblock(cfg, &copies)
						state, seq := chosen.State, chosen.Sequence
						where := fmt.Sprintf("k=%d flux=%d bad=%d@%d: %+v", k, flux, bad, badCopy, copies)
						if err != nil {
							t.Fatalf("%s: %v", where, err)
						}
						if seq != s && seq != s+1 || state != stateAt(cfg, seq) {
							t.Fatalf("%s: chose %d", where, seq)
						}
						if k == SuperblockCopies && seq != s+1 {
							t.Fatalf("%s: every copy written but chose %d", where, seq)
						}
						cases++
					}
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}

// TestSuperblockRuleRefuses: what the model excludes and the rule can see.
func TestSuperblockRuleRefuses(t *testing.T) {
	cfg := testConfig()
	bad := CopyReport{Problem: "corrupt"}
	for _, c := range []struct {
		name   string
		copies [SuperblockCopies]CopyReport
		want   error
	}{
		{"none valid", [SuperblockCopies]CopyReport{bad, bad, bad, bad}, ErrSuperblockQuorum},
		{"one valid", [SuperblockCopies]CopyReport{bad, validCopy(cfg, 5), bad, bad}, ErrSuperblockQuorum},
		{"far apart", [SuperblockCopies]CopyReport{validCopy(cfg, 9), bad, validCopy(cfg, 5), bad}, ErrSuperblockQuorum},
	} {
		if _, err := chooseSuperblock(cfg, &c.copies); !errors.Is(err, c.want) {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	// The "two copies agree" rule would refuse this; ours takes s+1.
	copies := [SuperblockCopies]CopyReport{validCopy(cfg, 6), bad, validCopy(cfg, 5), bad}
	if chosen, err := chooseSuperblock(cfg, &copies); err != nil || chosen.Sequence != 6 {
		t.Fatalf("one new, one old: %d %v", chosen.Sequence, err)
	}
	// Another replica's copy refuses even among good ones.
	other := validCopy(cfg, 5)
	other.State.ReplicaID++
	copies = [SuperblockCopies]CopyReport{validCopy(cfg, 5), validCopy(cfg, 5), other, validCopy(cfg, 5)}
	if _, err := chooseSuperblock(cfg, &copies); !errors.Is(err, ErrSuperblockMismatch) {
		t.Fatalf("mismatch: %v", err)
	}
}

// TestSuperblockOnDevice: damage on the device itself.
func TestSuperblockOnDevice(t *testing.T) {
	cfg := testConfig()
	for _, c := range []struct {
		name    string
		corrupt []int
		latent  []int
		want    error
	}{
		{"clean", nil, nil, nil},
		{"one corrupt", []int{2}, nil, nil},
		{"one unreadable", nil, []int{0}, nil},
		{"two bad", []int{1}, []int{3}, nil},
		{"three bad", []int{0, 1}, []int{3}, ErrSuperblockQuorum},
		{"all bad", []int{0, 1, 2, 3}, nil, ErrSuperblockQuorum},
	} {
		e := newEnv(t, cfg, envOptions{seed: 300})
		e.format()
		for _, i := range c.corrupt {
			e.dev.InjectCorruption(e.geo.superblockSector(i))
		}
		for _, i := range c.latent {
			e.dev.InjectLatent(e.geo.superblockSector(i))
		}
		_, r, err := e.open()
		if !errors.Is(err, c.want) || (err == nil) != (c.want == nil) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err == nil && (r.Sequence != FormatSequence || r.Copies[0].Valid == contains(append(c.corrupt, c.latent...), 0)) {
			t.Fatalf("%s: %+v", c.name, r.Copies)
		}
	}
	// Another configuration's device.
	e := newEnv(t, cfg, envOptions{seed: 301})
	e.format()
	for _, mutate := range []func(*Config){
		func(c *Config) { c.Cluster = wire.ClusterID("other") },
		func(c *Config) { c.Replica = 2 },
		func(c *Config) { c.ReplicaCount = 5 },
	} {
		other := cfg
		mutate(&other)
		e.cfg = other
		if _, _, err := e.open(); !errors.Is(err, ErrSuperblockMismatch) {
			t.Fatalf("open with %+v: %v", other, err)
		}
	}
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// TestWriteStateCoalesces: updates issued while one is in flight are
// coalesced into the latest; every done runs, in order, once a state at
// least as new as its own is durable.
func TestWriteStateCoalesces(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 302})
	e.format()
	j, _ := e.mustOpen()
	var order []uint32
	var states []wire.VsrState
	for v := uint32(1); v <= 5; v++ {
		s := stateAt(cfg, uint64(v))
		j.WriteState(s, func() {
			order = append(order, v)
			states = append(states, j.State())
		})
	}
	if j.StateWritesWaiting() != 5 {
		t.Fatalf("waiting %d", j.StateWritesWaiting())
	}
	writesBefore := e.dev.Stats().Writes
	e.drain()
	if fmt.Sprint(order) != "[1 2 3 4 5]" {
		t.Fatalf("dones %v", order)
	}
	for i, s := range states {
		if s.View < order[i] {
			t.Fatalf("done %d ran with durable view %d", order[i], s.View)
		}
	}
	// Two updates: the first, then 2..5 coalesced into 5.
	if w := e.dev.Stats().Writes - writesBefore; w != 2*SuperblockCopies {
		t.Fatalf("%d copy writes", w)
	}
	if j.State() != stateAt(cfg, 5) || j.StateSequence() != FormatSequence+2 {
		t.Fatalf("state %+v seq %d", j.State(), j.StateSequence())
	}
	// A done that issues the next update.
	fired := 0
	j.WriteState(stateAt(cfg, 6), func() {
		j.WriteState(stateAt(cfg, 7), func() { fired++ })
	})
	e.drain()
	_, r := e.mustOpen()
	if fired != 1 || r.State != stateAt(cfg, 7) || r.Sequence != FormatSequence+4 {
		t.Fatalf("reentrant: fired %d, %+v seq %d", fired, r.State, r.Sequence)
	}
	for i, c := range r.Copies {
		if !c.Valid || c.Sequence != r.Sequence {
			t.Fatalf("copy %d: %+v", i, c)
		}
	}
}

func TestWriteStateAssertions(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 303})
	e.format()
	j, _ := e.mustOpen()
	nop := func() {}
	j.WriteState(stateAt(cfg, 5), nop)
	for _, c := range []struct {
		name   string
		mutate func(*wire.VsrState)
	}{
		{"view back", func(s *wire.VsrState) { s.View = 4 }},
		{"commit back", func(s *wire.VsrState) { s.CommitMax = 4 }},
		{"log_view above view", func(s *wire.VsrState) { s.LogView = s.View + 1 }},
		{"another replica", func(s *wire.VsrState) { s.ReplicaID++ }},
		{"another cluster", func(s *wire.VsrState) { s.Cluster.Lo++ }},
		{"another count", func(s *wire.VsrState) { s.ReplicaCount++ }},
	} {
		s := stateAt(cfg, 6)
		c.mutate(&s)
		expectPanic(t, c.name, func() { j.WriteState(s, nop) })
	}
	high := stateAt(cfg, 8)
	high.LogView, high.CheckpointOp = 7, 3
	j.WriteState(high, nop)
	back := high
	back.LogView = 6
	expectPanic(t, "log_view back", func() { j.WriteState(back, nop) })
	back = high
	back.CheckpointOp = 2
	expectPanic(t, "checkpoint back", func() { j.WriteState(back, nop) })
	expectPanic(t, "nil done", func() { j.WriteState(high, nil) })
	for j.StateWritesWaiting() < cfg.StateWritesMax {
		j.WriteState(high, nop)
	}
	expectPanic(t, "beyond StateWritesMax", func() { j.WriteState(high, nop) })
	e.drain()
	if j.State() != high {
		t.Fatalf("state %+v", j.State())
	}
}

// TestSuperblockSequenceCollision: faults beyond the reading rule's one bad
// copy can hide an update's newest copy from an open, and the next update
// then writes its sequence again: two valid copies share a sequence. Their
// states are equal (neither update's done fired, and the replica redid
// the same one); their log heads may differ, the same prepare with another
// view field or a higher op. Open takes the higher head instead of
// panicking (VOPR seed 2023995627795171867).
func TestSuperblockSequenceCollision(t *testing.T) {
	cfg := testConfig()
	e := newEnv(t, cfg, envOptions{seed: 301})
	e.format()
	j, _ := e.mustOpen()
	f1, f2 := prepareFrame(cfg, 1, 0, 100), prepareFrame(cfg, 2, 0, 100)
	appendWait(e, j, f1)
	appendWait(e, j, f2)
	state := stateAt(cfg, FormatSequence+1)
	chunk := make([]byte, int(e.geo.superblockChunkSectors)*e.geo.sectorBytes)
	e.geo.encodeSuperblockChunk(chunk, FormatSequence+1, state, InitialFormattedSlots(cfg), LogHead{Op: 1, Header: *wire.HeaderOf(f1)})
	e.writeRaw(e.geo.superblockSector(0), chunk)
	e.geo.encodeSuperblockChunk(chunk, FormatSequence+1, state, InitialFormattedSlots(cfg), LogHead{Op: 2, Header: *wire.HeaderOf(f2)})
	e.writeRaw(e.geo.superblockSector(3), chunk)

	_, r := e.mustOpen()
	if r.Sequence != FormatSequence+1 || r.State != state || r.Head.Op != 2 {
		t.Fatalf("recovered sequence %d, state %+v, head op %d; want %d, %+v, head op 2", r.Sequence, r.State, r.Head.Op, FormatSequence+1, state)
	}
}
