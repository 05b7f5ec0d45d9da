package network_test

import (
	"slices"
	"testing"

	"github.com/iggy-vopr/vopr/network"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// delivered, as a statsSend's fate, means the frame arrives.
const delivered = network.LossCauseCount

// statsSend is one frame a stats scenario sends and what must become of it.
type statsSend struct {
	conn    int // index into the scenario's connections
	from    network.NodeID
	command uint8
	extra   int // bytes past the header, so byte counters are distinct per row
	fate    network.LossCause
}

// rawFrame is a frame of a header plus extra bytes, with command at byte 60
// (wire.md 2). The network reads nothing else of it with corruption off, so
// the command byte can be anything a test wants to count.
func rawFrame(command uint8, extra int) []byte {
	f := make([]byte, wire.HeaderSize+extra)
	f[60] = command
	return f
}

// TestStatsPerPathAndCommand: known frames on distinct paths with distinct
// commands, some delivered, some lost to a reset, a drop filter, an orderly
// close and a node going down, are booked exactly on their own path and
// their own command byte, under their own fate. Sums matching totals would
// not catch counters booked on the wrong path or command; this does.
func TestStatsPerPathAndCommand(t *testing.T) {
	w := newWorld(t, 5, quietOptions(), 3, 2) // replicas 0, 1, 2; clients 3, 4
	ends := [][2]network.NodeID{{0, 1}, {0, 2}, {3, 1}, {4, 0}, {1, 2}}
	conns := make([]network.ConnID, len(ends))
	for i, e := range ends {
		conns[i] = w.connect(e[0], e[1])
	}
	// Only command 6 on 0 -> 2: the same command on 0 -> 1 must pass.
	w.net.AddFilter(network.Filter{From: 0, To: 2, Action: network.Drop,
		Match: func(f []byte) bool { return f[60] == 6 }})

	phases := []struct {
		name  string
		sends []statsSend
		then  func() // runs right after the sends, while they are in flight
	}{
		{name: "delivered and filtered", sends: []statsSend{
			{conn: 0, from: 0, command: 9, extra: 0, fate: delivered},
			{conn: 0, from: 0, command: 9, extra: 16, fate: delivered},
			{conn: 0, from: 0, command: 6, extra: 32, fate: delivered},
			{conn: 0, from: 1, command: 7, extra: 8, fate: delivered},
			{conn: 0, from: 1, command: 7, extra: 8, fate: delivered},
			{conn: 1, from: 0, command: 6, extra: 32, fate: network.LostFiltered},
			{conn: 1, from: 0, command: 9, extra: 0, fate: delivered},
			{conn: 1, from: 0, command: 6, extra: 40, fate: network.LostFiltered},
			{conn: 2, from: 3, command: 5, extra: 64, fate: delivered},
			{conn: 2, from: 3, command: 5, extra: 64, fate: delivered},
		}},
		{name: "reset", sends: []statsSend{
			{conn: 2, from: 3, command: 5, extra: 64, fate: network.LostReset},
			{conn: 2, from: 3, command: 5, extra: 72, fate: network.LostReset},
			{conn: 2, from: 1, command: 8, extra: 128, fate: network.LostReset},
		}, then: func() { w.reset(conns[2]) }},
		{name: "orderly close", sends: []statsSend{
			// The closer's own frame still arrives; the peer's, towards it, do not.
			{conn: 4, from: 1, command: 11, extra: 0, fate: delivered},
			{conn: 4, from: 2, command: 10, extra: 4, fate: network.LostClosed},
			{conn: 4, from: 2, command: 10, extra: 4, fate: network.LostClosed},
		}, then: func() { w.close(conns[4], 1) }},
		{name: "node down", sends: []statsSend{
			{conn: 3, from: 4, command: 1, extra: 0, fate: network.LostDown},
			{conn: 3, from: 0, command: 2, extra: 0, fate: network.LostDown},
		}, then: func() { w.setUp(4, false) }},
	}

	type key struct{ from, to network.NodeID }
	wantPath := map[key]*network.Counters{}
	wantCommand := map[uint8]*network.Counters{}
	var wantTotal network.Counters
	for _, ph := range phases {
		for _, s := range ph.sends {
			e := ends[s.conn]
			to := e[0]
			if s.from == e[0] {
				to = e[1]
			}
			f := rawFrame(s.command, s.extra)
			if !w.send(conns[s.conn], s.from, f) {
				t.Fatalf("%s: send %+v refused", ph.name, s)
			}
			k := key{s.from, to}
			if wantPath[k] == nil {
				wantPath[k] = &network.Counters{}
			}
			if wantCommand[s.command] == nil {
				wantCommand[s.command] = &network.Counters{}
			}
			for _, c := range []*network.Counters{wantPath[k], wantCommand[s.command], &wantTotal} {
				c.FramesSent++
				c.BytesSent += uint64(len(f))
				if s.fate == delivered {
					c.FramesDelivered++
					c.BytesDelivered += uint64(len(f))
				} else {
					c.FramesLost[s.fate]++
				}
			}
		}
		if ph.then != nil {
			ph.then()
		}
		w.run(w.loop.Now() + 100*ms)
	}

	var paths []network.PathStats
	for k, c := range wantPath {
		paths = append(paths, network.PathStats{From: k.from, To: k.to, Counters: *c})
	}
	slices.SortFunc(paths, func(a, b network.PathStats) int {
		if a.From != b.From {
			return int(a.From - b.From)
		}
		return int(a.To - b.To)
	})
	var commands []network.CommandStats
	for c, k := range wantCommand {
		commands = append(commands, network.CommandStats{Command: c, Counters: *k})
	}
	slices.SortFunc(commands, func(a, b network.CommandStats) int { return int(a.Command) - int(b.Command) })

	if got := w.net.PathStats(); !slices.Equal(got, paths) {
		t.Errorf("path stats:\n got %+v\nwant %+v", got, paths)
	}
	if got := w.net.CommandStats(); !slices.Equal(got, commands) {
		t.Errorf("command stats:\n got %+v\nwant %+v", got, commands)
	}
	st := w.net.Stats()
	if st.Counters != wantTotal || st.FramesInFlight != 0 {
		t.Errorf("totals %+v (in flight %d), want %+v", st.Counters, st.FramesInFlight, wantTotal)
	}
	if st.Resets[network.ResetScripted] != 1 || st.Resets[network.ResetDown] != 1 || st.Closes != 1 {
		t.Errorf("resets %v closes %d, want one scripted reset, one down, one close", st.Resets, st.Closes)
	}
}
