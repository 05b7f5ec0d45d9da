package network

import "fmt"

// LossCause says why a frame accepted by Send was never delivered.
type LossCause uint8

const (
	// LostReset: in flight when its connection reset (randomly, on overflow,
	// on a TCP timeout, or by a scripted Reset).
	LostReset LossCause = iota
	// LostDown: in flight when an end's node went down.
	LostDown
	// LostClosed: sent towards, or in flight to, an end that had closed.
	LostClosed
	// LostFiltered: dropped by a Drop filter.
	LostFiltered
	// LossCauseCount is the number of causes.
	LossCauseCount
)

// String returns the cause's name.
func (c LossCause) String() string {
	switch c {
	case LostReset:
		return "reset"
	case LostDown:
		return "down"
	case LostClosed:
		return "closed"
	case LostFiltered:
		return "filtered"
	}
	return fmt.Sprintf("LossCause(%d)", uint8(c))
}

// ResetCause says why a connection reset.
type ResetCause uint8

const (
	// ResetRandom: the per-frame ResetProbability fault.
	ResetRandom ResetCause = iota
	// ResetTimeout: frames stalled across a partition past the TCP timeout.
	ResetTimeout
	// ResetOverflow: a Send exceeded the direction's in-flight bounds.
	ResetOverflow
	// ResetDown: an end's node went down.
	ResetDown
	// ResetScripted: a test called Reset.
	ResetScripted
	// ResetCauseCount is the number of causes.
	ResetCauseCount
)

// String returns the cause's name.
func (c ResetCause) String() string {
	switch c {
	case ResetRandom:
		return "random"
	case ResetTimeout:
		return "timeout"
	case ResetOverflow:
		return "overflow"
	case ResetDown:
		return "down"
	case ResetScripted:
		return "scripted"
	}
	return fmt.Sprintf("ResetCause(%d)", uint8(c))
}

// Counters count frames. Every frame Send accepts is counted sent and then,
// exactly once, delivered or lost (by cause), or it is still in flight:
// FramesSent = FramesDelivered + sum(FramesLost) + in flight.
type Counters struct {
	FramesSent, BytesSent           uint64
	FramesDelivered, BytesDelivered uint64
	FramesLost                      [LossCauseCount]uint64
	// FramesCorrupted counts frames that had a bit flipped in flight.
	FramesCorrupted uint64
	// ChunksCorrupted counts the StateChunk bodies among them (a bit of the
	// unsealed body, ChunkCorruptProbability).
	ChunksCorrupted uint64
}

// Lost returns the frames lost, whatever the cause.
func (k Counters) Lost() uint64 {
	var sum uint64
	for _, x := range k.FramesLost {
		sum += x
	}
	return sum
}

// PathStats are the counters of one ordered path.
type PathStats struct {
	From, To NodeID
	Counters
}

// CommandStats are the counters of one command byte (frame[60]).
type CommandStats struct {
	Command uint8
	Counters
}

// Stats are the network's totals.
type Stats struct {
	Counters
	// FramesInFlight: accepted by Send, not yet delivered or lost.
	FramesInFlight uint64
	// ConnectionsOpened: dials that completed.
	ConnectionsOpened uint64
	// DialsFailed: dials that were refused.
	DialsFailed uint64
	// Closes: orderly closes (Close on an open connection).
	Closes uint64
	// Resets: connection resets by cause.
	Resets [ResetCauseCount]uint64
	// Partitions: partitions started (random or scripted).
	Partitions uint64
	// Repartitions: random partitions that replaced another one without a
	// heal between them (counted in Partitions too).
	Repartitions uint64
	// Clogs: paths clogged.
	Clogs uint64
}

// ResetsTotal returns the resets, whatever the cause.
func (s Stats) ResetsTotal() uint64 {
	var sum uint64
	for _, x := range s.Resets {
		sum += x
	}
	return sum
}

// Stats returns the network's totals so far.
func (n *Network) Stats() Stats {
	s := n.stats
	s.FramesInFlight = s.FramesSent - s.FramesDelivered - s.Lost()
	return s
}

// PathStats returns the counters of every path that carried a frame, sorted
// by (From, To).
func (n *Network) PathStats() []PathStats {
	var out []PathStats
	for _, from := range n.byID {
		for _, to := range n.byID {
			if k := n.paths[from][to].stats; k.FramesSent != 0 {
				out = append(out, PathStats{From: n.nodes[from].id, To: n.nodes[to].id, Counters: k})
			}
		}
	}
	return out
}

// CommandStats returns the counters of every command byte seen, sorted by
// command.
func (n *Network) CommandStats() []CommandStats {
	var out []CommandStats
	for c := range n.commands {
		if k := n.commands[c]; k.FramesSent != 0 {
			out = append(out, CommandStats{Command: uint8(c), Counters: k})
		}
	}
	return out
}
