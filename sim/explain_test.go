package sim

import (
	"github.com/iggy-vopr/vopr/network"
	"regexp"
	"strings"
	"testing"

	"github.com/iggy-vopr/vopr/replica/journal"
	"github.com/iggy-vopr/vopr/replica/wire"
)

// TestMissingPrepare: the liveness phase excuses a stall only when an op
// above the core's commit is held by no core replica and fewer than a nack
// quorum of core replicas can prove they never acknowledged it.
func TestMissingPrepare(t *testing.T) {
	// log builds a core replica whose journal answers k for every op in
	// (commitMax, op], except the ops in special, every copy of an op with
	// the same identity.
	log := func(replica uint8, op, commitMax uint64, k journal.Knowledge, special map[uint64]journal.Knowledge) coreLog {
		return coreLog{replica: replica, op: op, commitMax: commitMax, knows: func(o uint64) journal.Knowledge {
			if s, ok := special[o]; ok {
				return s
			}
			return k
		}, identity: func(uint64) (wire.U128, bool) { return wire.U128{Lo: 1}, true }}
	}
	// versioned gives a core replica its log_view and the identity of its
	// copy of each op: 1 unless other says otherwise (0: it knows none).
	// Every copy of identity 1 names identity 1 as its parent.
	versioned := func(c coreLog, logView uint32, other map[uint64]uint64) coreLog {
		c.logView = logView
		c.identity = func(o uint64) (wire.U128, bool) {
			if id, ok := other[o]; ok {
				return wire.U128{Lo: id}, id != 0
			}
			return wire.U128{Lo: 1}, true
		}
		c.parent = func(o uint64) (wire.U128, bool) {
			if id, known := c.identity(o); !known || id.Lo != 1 {
				return wire.U128{}, false
			}
			return wire.U128{Lo: 1}, true
		}
		return c
	}
	tests := []struct {
		name       string
		core       []coreLog
		nackQuorum int
		want       string // a substring of the explanation; "" for none
	}{
		{"every op held", []coreLog{
			log(0, 10, 8, journal.Held, nil),
			log(1, 10, 8, journal.Held, nil),
		}, 2, ""},
		{"one copy held is enough", []coreLog{
			log(0, 10, 8, journal.Unknown, nil),
			log(1, 10, 8, journal.Held, nil),
		}, 2, ""},
		{"a nack quorum lets the view change truncate", []coreLog{
			log(0, 10, 8, journal.Nackable, nil),
			log(1, 10, 8, journal.HeaderUnacked, nil),
		}, 2, ""},
		{"a replica below the op nacks it", []coreLog{
			log(0, 10, 8, journal.Unknown, map[uint64]journal.Knowledge{9: journal.Held, 10: journal.Nackable}),
			log(1, 9, 8, journal.Held, nil),
		}, 2, ""},
		{"seed 815: one corrupt copy, one unacked header", []coreLog{
			log(0, 32, 28, journal.Held, map[uint64]journal.Knowledge{31: journal.Unknown}),
			log(1, 32, 28, journal.Held, map[uint64]journal.Knowledge{31: journal.HeaderUnacked}),
		}, 2, "op 31 is held by no core replica, and only 1 of the 2 nacks"},
		{"a header copy without body proves nothing", []coreLog{
			log(0, 12, 8, journal.HeaderOnly, nil),
			log(1, 12, 8, journal.HeaderOnly, nil),
			log(2, 12, 8, journal.Nackable, nil),
		}, 3, "op 9 is held by no core replica, and only 1 of the 3 nacks that would prove it uncommitted exist (replicas [0 1] cannot read it)"},
		{"ops at or below the lowest commit_max are not asked", []coreLog{
			log(0, 12, 10, journal.Unknown, map[uint64]journal.Knowledge{11: journal.Held, 12: journal.Held}),
			log(1, 12, 11, journal.Unknown, map[uint64]journal.Knowledge{11: journal.Held, 12: journal.Held}),
		}, 2, ""},
		{"no core replica up", nil, 2, ""},
		{"seed 26: the only body is a prepare a later log replaced", []coreLog{
			versioned(log(0, 20, 16, journal.Held, map[uint64]journal.Knowledge{19: journal.HeaderOnly}), 12, nil),
			versioned(log(1, 20, 16, journal.Held, nil), 10, map[uint64]uint64{19: 0xbad, 20: 0xbad}),
		}, 2, "op 19 is held by no core replica, and only 0 of the 2 nacks that would prove it uncommitted exist (replicas [0] cannot read it; replicas [1] hold a prepare a later log replaced)"},
		{"a body of the highest log_view counts, whoever holds it", []coreLog{
			versioned(log(0, 20, 16, journal.Held, map[uint64]journal.Knowledge{19: journal.HeaderOnly}), 12, nil),
			versioned(log(1, 20, 16, journal.Held, nil), 10, nil),
		}, 2, ""},
		{"seed 11971028900399579235: the highest log_view's head is unreadable, older logs hold another prepare there", []coreLog{
			versioned(log(0, 98, 93, journal.Held, map[uint64]journal.Knowledge{98: journal.Unknown}), 11, map[uint64]uint64{98: 0}),
			versioned(log(2, 97, 93, journal.Held, nil), 11, nil),
			versioned(log(3, 100, 62, journal.Held, nil), 9, map[uint64]uint64{98: 0xa3d3, 99: 0x37d6, 100: 0xae5b}),
			versioned(log(4, 98, 94, journal.Held, nil), 9, map[uint64]uint64{98: 0xa3d3}),
		}, 4, "op 98 is held by no core replica, and only 1 of the 4 nacks that would prove it uncommitted exist (replicas [0] cannot read it; no core replica knows its identity in log_view 11, so the older prepare replicas [3 4] hold may have been replaced)"},
		{"ops above the highest log_view's head are not asked", []coreLog{
			versioned(log(0, 97, 93, journal.Held, nil), 11, nil),
			versioned(log(3, 100, 62, journal.Unknown, nil), 9, nil),
		}, 2, ""},
		{"the op above names the canonical identity an older log holds", []coreLog{
			versioned(log(0, 20, 16, journal.Held, map[uint64]journal.Knowledge{19: journal.Unknown}), 12, map[uint64]uint64{19: 0}),
			versioned(log(1, 20, 16, journal.Held, nil), 10, nil),
		}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := missingPrepare(tt.core, tt.nackQuorum, true)
			switch {
			case tt.want == "" && got != "":
				t.Fatalf("excused %q, want no excuse", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Fatalf("explanation %q, want it to contain %q", got, tt.want)
			}
		})
	}
	// With no replica outside the core, the acknowledgements that may have
	// committed the op are the core's own, their copies lost since.
	core := tests[0].core
	for _, tt := range tests {
		if tt.name == "a header copy without body proves nothing" {
			core = tt.core
		}
	}
	for _, outside := range []bool{true, false} {
		got := missingPrepare(core, 3, outside)
		if strings.Contains(got, "outside the core") != outside || strings.Contains(got, "acknowledged by core replicas") == outside {
			t.Errorf("outside %v: explanation %q", outside, got)
		}
	}
}

// TestEvictedOpsCatchUpByStateTransfer scripts swarm seed 21 with a ring
// of four flushed ops: a replica restarted after its peers flushed and
// purged a partition group's first ops needs op 1 again (it commits its log
// from op 1), every peer answers RangeEvicted, and it pulls the partition's
// state from the group's primary: the run converges with partition state
// transfers completed. Before partition state transfer it ended
// liveness=explained ("cannot catch up without state transfer"). With
// Iggy's ring of 4096 the same seed converges without one.
func TestEvictedOpsCatchUpByStateTransfer(t *testing.T) {
	o := Swarm(21)
	o.EvictedRing = 4
	res := Run(o, nil)
	if res.Outcome != Pass || res.Liveness != LivenessConverged || res.StateTransfersPartition == 0 ||
		res.Probes["partition state transfer completed"] == 0 {
		t.Fatalf("outcome %v, liveness %v (%s %s), %d partition state transfers: want convergence through partition state transfer",
			res.Outcome, res.Liveness, res.Violation, res.Explanation, res.StateTransfersPartition)
	}
	o.EvictedRing = 0
	if res := Run(o, nil); res.Outcome != Pass || res.Liveness != LivenessConverged || res.StateTransfersPartition != 0 {
		t.Fatalf("with Iggy's ring: outcome %v, liveness %v (%s %s), %d partition state transfers",
			res.Outcome, res.Liveness, res.Violation, res.Explanation, res.StateTransfersPartition)
	}
}

// TestMemoryLossBeyondTheBoundExplainsTheStall scripts swarm seed
// 15397073285662094362 (no memory-loss bound): both replicas that had
// committed partition group 3's op 1 restarted and lost their memory
// journals. Beyond the bound that stall is explained (and counted), not
// failed. When the seed was found the new view's primary knew the op by
// header alone ("no core replica's memory journal holds its prepare");
// since checkpoints wait for the store instead of being skipped (issue 13)
// the timing moves, and the group stalls one step earlier, without a
// view-change quorum of replicas with memory. A search of 3,000 seeds
// found no new one for the first explanation, so both are accepted.
func TestMemoryLossBeyondTheBoundExplainsTheStall(t *testing.T) {
	o := Swarm(15397073285662094362)
	// The world of the seed as found, before the nemeses were drawn (the
	// view-change fault nemesis turns random partitions off), and as the
	// swarm drew its checkpoints then, before it drew journal rings.
	o.StaleAnswers, o.ViewChangeFaults, o.PartitionMode = false, false, network.PartitionUniformSize
	o.CheckpointInterval, o.JournalSlots, o.ChunkCorruptProbability = 69, 0, 0.270588
	o.LogoutProbability = 0 // drawn since, after every knob above
	o.BadFrames = false     // drawn since, from a stream of its own
	res := Run(o, nil)
	lost := regexp.MustCompile(`^beyond the memory-loss bound, 1 partition groups cannot elect: partition group 3: ` +
		`(op 1 is committed, and no core replica's memory journal holds its prepare|1 core replicas lost its memory journal and withhold their votes)`)
	if res.Outcome != Pass || res.Liveness != LivenessExplained || !lost.MatchString(res.Explanation) {
		t.Fatalf("outcome %v, liveness %v, explanation %q, violation %q: want the memory loss explained",
			res.Outcome, res.Liveness, res.Explanation, res.Violation)
	}
}
