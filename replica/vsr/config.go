package vsr

import (
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Config is what one group of one replica needs to know about itself.
type Config struct {
	Cluster      wire.U128
	Group        uint64 // wire.MetadataGroup, or a packed partition group
	Replica      uint8
	ReplicaCount uint8

	// PipelineMax bounds the prepares in flight at the primary (Iggy's
	// prepare_queue_depth; at most SuffixEntriesMax-1).
	PipelineMax int
	// RequestQueueMax bounds the requests waiting for a pipeline slot.
	RequestQueueMax int
	// RepairChunkMax bounds the prepares served for one RequestPrepares; it
	// must stay below the peer queue so a burst is not dropped.
	RepairChunkMax int
	// RepairAnyPeer: a Normal backup sends half of its first repair
	// requests to a peer drawn at random instead of its primary. Legal (a
	// frame from anyone but the primary is checked against the view's
	// headers and the hash chain) and off in production; the simulator turns
	// it on for some seeds, so that the chain check of repaired prepares
	// runs, which it otherwise reaches only after a stalled request.
	RepairAnyPeer bool
	// MemoryJournal: the group's journal lives in memory (a partition
	// plane's), so a replica can lose it at a restart and vote as one that
	// knows nothing (amnesiacVoteSafe): a vote of an empty log then nacks
	// nothing. A durable journal's empty log is what it says, and nacks.
	MemoryJournal bool

	Timeouts Timeouts
}

// Timeouts are in ticks of 10 ms (consensus.md, "Timeouts").
type Timeouts struct {
	PrepareRetransmitTicks int // 25: the only timer with backoff
	CommitMessageTicks     int // 50: the primary's heartbeat
	NormalHeartbeatTicks   int // 500: a backup without a heartbeat starts a view change
	StartViewChangeTicks   int // 50: SVC retransmit
	DoViewChangeTicks      int // 50: DVC retransmit
	ViewChangeStatusTicks  int // 500: a view change that does not finish moves to the next view
	RequestStartViewTicks  int // 100: probe retransmit; the 5th fire starts an election
	RepairTicks            int // 100: re-request a repair that stalled
}

// DefaultTimeouts are Iggy's production timeouts.
func DefaultTimeouts() Timeouts {
	return Timeouts{
		PrepareRetransmitTicks: 25,
		CommitMessageTicks:     50,
		NormalHeartbeatTicks:   500,
		StartViewChangeTicks:   50,
		DoViewChangeTicks:      50,
		ViewChangeStatusTicks:  500,
		RequestStartViewTicks:  100,
		RepairTicks:            100,
	}
}

// ProbeAttemptsMax is how many RequestStartView probes go unanswered before
// a recovering replica starts an election (consensus.md correction 4).
const ProbeAttemptsMax = 4

func (c *Config) validate() {
	n := int(c.ReplicaCount)
	switch {
	case n < 1 || n > 32:
		panic(fmt.Sprintf("vsr: replica count %d outside 1..32", n))
	case int(c.Replica) >= n:
		panic(fmt.Sprintf("vsr: replica %d of %d", c.Replica, n))
	case c.PipelineMax < 1 || c.PipelineMax > wire.SuffixEntriesMax-1:
		panic(fmt.Sprintf("vsr: pipeline %d outside 1..127", c.PipelineMax))
	case c.RequestQueueMax < 0:
		panic("vsr: negative request queue")
	case c.RepairChunkMax < 1:
		panic("vsr: repair chunk below 1")
	}
	t := c.Timeouts
	for _, v := range []int{t.PrepareRetransmitTicks, t.CommitMessageTicks, t.NormalHeartbeatTicks,
		t.StartViewChangeTicks, t.DoViewChangeTicks, t.ViewChangeStatusTicks, t.RequestStartViewTicks, t.RepairTicks} {
		if v < 1 {
			panic("vsr: a timeout below one tick")
		}
	}
	if t.NormalHeartbeatTicks < 4*t.CommitMessageTicks {
		panic("vsr: heartbeat timeout below four commit intervals")
	}
}

// QuorumReplication is how many replicas must hold a prepare before it
// commits: 2 when n = 2, else min(ceil(n/2), 3) (wire.md 11).
func QuorumReplication(n int) int {
	if n == 2 {
		return 2
	}
	return min((n+1)/2, 3)
}

// QuorumViewChange is how many DoViewChange messages a new primary needs:
// 2 when n = 2, else n - q_rep + 1, so that any view-change quorum meets any
// replication quorum.
func QuorumViewChange(n int) int {
	if n == 2 {
		return 2
	}
	return n - QuorumReplication(n) + 1
}

// QuorumNack is how many replicas must prove they never prepared an op
// before a view change may truncate it: n - q_rep + 1, so that no committed op
// (held by q_rep replicas) can gather it (consensus.md correction 3: 1 at n = 2).
func QuorumNack(n int) int { return n - QuorumReplication(n) + 1 }

// PrimaryIndex returns the primary of view in a cluster of n replicas.
func PrimaryIndex(view uint32, n uint8) uint8 { return uint8(view % uint32(n)) }
