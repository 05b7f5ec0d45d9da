package vsr

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// tickLog records what a lone group sends, stamped with its tick.
type tickLog struct {
	g    *Group
	sent []string
}

func (l *tickLog) Send(to uint8, frame []byte) {
	l.sent = append(l.sent, fmt.Sprintf("tick %d to %d %v view %d", l.g.Now(), to, wire.HeaderOf(frame).Command(), wire.HeaderOf(frame).View()))
}
func (l *tickLog) Commit([]byte) {}
func (l *tickLog) Event(e Event) {}

// loneGroup is replica id of a five-replica group that hears nobody: its
// timers alone drive it (heartbeat suspicion, view changes, election
// retries, probes), so what it sends is a function of when its timers fire.
func loneGroup(id uint8, fresh bool) (*Group, *tickLog, *[]func()) {
	later := new([]func())
	log := &tickLog{}
	cfg := testConfig(id, 5)
	g := New(cfg, Deps{Out: log, Journal: NewMemJournal(func(f func()) { *later = append(*later, f) }), Machine: log, Sink: log,
		Rand: rand.New(rand.NewPCG(uint64(id), 3)), RealtimeUs: func() uint64 { return 1 }},
		Recovered{Fresh: fresh, Tick: 100})
	log.g = g
	return g, log, later
}

// TestTickToMatchesTick: a group ticked only at the ticks NextDue names
// sends exactly what the same group ticked every tick sends, at the same
// ticks: deadlines instead of counters change nothing but the work of
// idle ticks (a host of many partition groups skips those).
func TestTickToMatchesTick(t *testing.T) {
	const ticks = 20_000
	for _, tc := range []struct {
		id    uint8
		fresh bool
	}{{1, true}, {0, true}, {3, false}} {
		every, everyLog, everyLater := loneGroup(tc.id, tc.fresh)
		due, dueLog, dueLater := loneGroup(tc.id, tc.fresh)
		run := func(later *[]func()) {
			for len(*later) > 0 {
				f := (*later)[0]
				*later = (*later)[1:]
				f()
			}
		}
		skipped := 0
		for now := uint64(101); now <= 100+ticks; now++ {
			every.Tick()
			run(everyLater)
			if at, ok := due.NextDue(); ok && at <= now {
				if at < now {
					t.Fatalf("replica %d: a timer was due at tick %d and missed until %d", tc.id, at, now)
				}
				due.TickTo(now)
				run(dueLater)
			} else {
				skipped++
			}
		}
		if len(everyLog.sent) == 0 || len(everyLog.sent) != len(dueLog.sent) {
			t.Fatalf("replica %d: %d frames ticked every tick, %d ticked when due", tc.id, len(everyLog.sent), len(dueLog.sent))
		}
		for i := range everyLog.sent {
			if everyLog.sent[i] != dueLog.sent[i] {
				t.Fatalf("replica %d frame %d: %q ticked every tick, %q ticked when due", tc.id, i, everyLog.sent[i], dueLog.sent[i])
			}
		}
		if skipped < ticks/2 {
			t.Fatalf("replica %d: only %d of %d ticks skipped", tc.id, skipped, ticks)
		}
	}
}
