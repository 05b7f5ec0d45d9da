package journal

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestAppendCrashEveryPoint crashes at every point of an append (between any
// two loop events, from before the first I/O completes to after done), under
// each crash fate of the non-durable sectors (all lost, all kept, all torn),
// with and without an acknowledged older op in the slot, and checks that
// recovery lands on an allowed outcome: never Nackable for an op whose done
// ran (the older one, or the new one once done ran), and a held frame always
// byte-identical.
func TestAppendCrashEveryPoint(t *testing.T) {
	cfg := testConfig()
	S := cfg.SlotCount
	const slot = 3
	seen := map[string]int{}
	for _, mode := range crashModes {
		for _, prior := range []bool{false, true} {
			older := prepareFrame(cfg, slot, 0, 1200)
			op := uint64(slot)
			if prior {
				op += S
			}
			frame := prepareFrame(cfg, op, 0, 2500)
			for k := 0; ; k++ {
				e := newEnv(t, cfg, envOptions{seed: uint64(k), crash: mode})
				e.format()
				j, _ := e.mustOpen()
				if prior {
					appendWait(e, j, older)
				}
				fired := 0
				j.Append(frame, func() { fired++ })
				steps := 0
				for steps < k && e.loop.Step() {
					steps++
				}
				finished := e.loop.Pending() == 0
				e.crash()
				_, r := e.mustOpen()
				s := r.Slot(slot)
				outcome := fmt.Sprintf("%s/%v/%s/written=%v/header=%s/prepare=%s", mode, prior, s.Class, s.HeaderWritten, s.Header.State, s.Prepare.State)
				seen[outcome]++
				where := fmt.Sprintf("%s prior=%v crash after %d events (done %d): %+v", mode, prior, steps, fired, s)

				if fired > 1 {
					t.Fatalf("%s: done ran %d times", where, fired)
				}
				if fired == 1 && (s.Class != ClassClean || s.Op != op || !s.HeaderWritten) {
					t.Fatalf("%s: done ran but the op is not clean and written", where)
				}
				if prior && r.Knowledge(slot) == Nackable {
					t.Fatalf("%s: the acknowledged older op is nackable", where)
				}
				if fired == 1 && r.Knowledge(op) != Held {
					t.Fatalf("%s: the acknowledged op is %s", where, r.Knowledge(op))
				}
				switch s.Class {
				case ClassClean:
					want := frame
					if s.Op != op {
						want = older
					}
					if (s.Op != op && !prior) || !bytes.Equal(mustFrame(t, e, s.Op), want) {
						t.Fatalf("%s: clean slot holds the wrong frame", where)
					}
					if s.Op == op && !s.HeaderWritten && s.Header.State == SectorValid && s.Header.Op != slot {
						t.Fatalf("%s: header copy of an unexpected op", where)
					}
				case ClassEmpty:
					if prior {
						t.Fatalf("%s: empty after an acknowledged op", where)
					}
				case ClassTorn, ClassCorrupt:
					// A prepare write tore: over the marker (Torn, nothing
					// acknowledged), or over the older op, whose header copy
					// remains (header-only).
					if s.Prepare.State != SectorDamaged || (prior && (s.Op != slot || r.Knowledge(slot) != HeaderOnly)) || (!prior && s.Class != ClassTorn) {
						t.Fatalf("%s: unexpected", where)
					}
				default:
					t.Fatalf("%s: class impossible without faults", where)
				}
				if finished {
					break
				}
			}
		}
	}
	// Every fate must have been reached: the tear of each write, the loss of
	// each, and the clean end.
	for _, want := range []string{
		"torn/false/torn/written=false/header=empty/prepare=damaged",
		"torn/false/clean/written=true/header=damaged/prepare=valid",
		"torn/true/corrupt/written=false/header=valid/prepare=damaged",
		"torn/true/clean/written=true/header=damaged/prepare=valid",
		"lost/false/empty/written=false/header=empty/prepare=empty",
		"lost/false/clean/written=false/header=empty/prepare=valid",
		"lost/true/clean/written=false/header=valid/prepare=valid",
		"kept/false/clean/written=true/header=valid/prepare=valid",
		"kept/true/clean/written=true/header=valid/prepare=valid",
	} {
		if seen[want] == 0 {
			t.Errorf("never reached %s; reached %v", want, seen)
		}
	}
}

func mustFrame(t *testing.T, e *env, op uint64) []byte {
	t.Helper()
	j, _ := e.mustOpen()
	f, ok := j.Frame(op)
	if !ok {
		t.Fatalf("op %d not held", op)
	}
	return f
}

// TestReplaceCrashEveryPoint: replacing an acknowledged op with another
// identity (a view change) and crashing at every point: the op is never
// nackable, and what is held or header-only is one of the two identities.
func TestReplaceCrashEveryPoint(t *testing.T) {
	cfg := testConfig()
	const op = 5
	x := prepareFrame(cfg, op, 0, 800)
	y := prepareFrame(cfg, op, 1, 1900)
	conflicts := 0
	for _, mode := range crashModes {
		for k := 0; ; k++ {
			e := newEnv(t, cfg, envOptions{seed: uint64(k), crash: mode})
			e.format()
			j, _ := e.mustOpen()
			appendWait(e, j, x)
			j.Truncate(op - 1)
			fired := 0
			j.Append(y, func() { fired++ })
			steps := 0
			for steps < k && e.loop.Step() {
				steps++
			}
			finished := e.loop.Pending() == 0
			e.crash()
			j2, r := e.mustOpen()
			s := r.Slot(op)
			where := fmt.Sprintf("%s after %d events: %+v", mode, steps, s)
			kn := r.Knowledge(op)
			if kn == Nackable {
				t.Fatalf("%s: nackable", where)
			}
			if fired == 1 && (kn != Held || s.Prepare.ID != identityOf(y) || !s.HeaderWritten) {
				t.Fatalf("%s: done ran but %s", where, kn)
			}
			switch kn {
			case Held:
				f, _ := j2.Frame(op)
				if !bytes.Equal(f, x) && !bytes.Equal(f, y) {
					t.Fatalf("%s: held frame is neither", where)
				}
			case HeaderOnly:
				h, _ := j2.Header(op)
				if !bytes.Equal(h[:], x[:wire.HeaderSize]) {
					t.Fatalf("%s: header-only header is not the acknowledged one", where)
				}
			case Unknown:
				if s.Class != ClassConflict && s.Header.State != SectorDamaged {
					t.Fatalf("%s: unknown without a conflict or a damaged header", where)
				}
			}
			if s.Class == ClassConflict {
				conflicts++
			}
			if finished {
				break
			}
		}
	}
	if conflicts == 0 {
		t.Fatal("never reached a conflict")
	}
}

// TestWriteStateCrashEveryPoint: an update of the superblock crashed at every
// point, under every crash fate, with no copy damaged or with any one copy
// corrupt or unreadable on top: Open always succeeds, with the state whose
// done ran or the newer one, never older.
func TestWriteStateCrashEveryPoint(t *testing.T) {
	cfg := testConfig()
	s1 := wire.VsrState{Cluster: cfg.Cluster, ReplicaID: cfg.Replica, ReplicaCount: cfg.ReplicaCount, View: 4, LogView: 3, CommitMax: 10}
	s2 := s1
	s2.View, s2.LogView, s2.CommitMax = 6, 6, 12
	newer := 0
	for _, mode := range crashModes {
		for bad := -1; bad < 2*SuperblockCopies; bad++ {
			for k := 0; ; k++ {
				e := newEnv(t, cfg, envOptions{seed: uint64(k), crash: mode})
				e.format()
				j, _ := e.mustOpen()
				fired := 0
				j.WriteState(s1, func() { fired++ })
				e.drain()
				if fired != 1 || j.State() != s1 {
					t.Fatal("first state not durable")
				}
				j.WriteState(s2, func() { fired++ })
				steps := 0
				for steps < k && e.loop.Step() {
					steps++
				}
				finished := e.loop.Pending() == 0
				e.crash()
				switch {
				case bad >= SuperblockCopies:
					e.dev.InjectLatent(e.geo.superblockSector(bad - SuperblockCopies))
				case bad >= 0:
					e.dev.InjectCorruption(e.geo.superblockSector(bad))
				}
				j2, r, err := e.open()
				where := fmt.Sprintf("%s bad=%d after %d events (dones %d)", mode, bad, steps, fired)
				if err != nil {
					t.Fatalf("%s: %v (copies %+v)", where, err, r)
				}
				if r.State != s1 && r.State != s2 {
					t.Fatalf("%s: state %+v", where, r.State)
				}
				if fired == 2 && r.State != s2 {
					t.Fatalf("%s: the done state was lost", where)
				}
				if j2.State() != r.State {
					t.Fatalf("%s: journal state differs", where)
				}
				if r.State == s2 && fired == 1 {
					newer++
				}
				// A state written after recovery gets a fresh sequence and
				// wins the next open.
				s3 := r.State
				s3.View++
				fired3 := 0
				j2.WriteState(s3, func() { fired3++ })
				e.drain()
				if _, r3 := e.mustOpen(); fired3 != 1 || r3.State != s3 || r3.Sequence != r.Sequence+1 {
					t.Fatalf("%s: after recovery: %+v", where, r3.State)
				}
				if finished {
					break
				}
			}
		}
	}
	if newer == 0 {
		t.Fatal("never recovered a state whose done had not run")
	}
}
