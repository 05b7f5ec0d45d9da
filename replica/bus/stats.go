package bus

import "strconv"

// SendDrop names why Bus.Send dropped a frame.
type SendDrop uint8

// Send drop causes.
const (
	// SendDropNotEstablished: no established connection to the peer.
	SendDropNotEstablished SendDrop = iota
	// SendDropQueueFull: PeerQueueFramesMax frames already in flight.
	SendDropQueueFull
	// SendDropTransport: the transport refused the frame (the connection
	// died and its Closed has not arrived yet).
	SendDropTransport
	// SendDropCount is the number of causes.
	SendDropCount
)

var sendDropNames = [SendDropCount]string{"not_established", "queue_full", "transport"}

// String returns the cause's snake_case name.
func (d SendDrop) String() string {
	if d < SendDropCount {
		return sendDropNames[d]
	}
	return "send_drop_" + strconv.Itoa(int(d))
}

// DropRule names a receive-side rule of the bus itself (not of the wire
// codec) under which a frame from an established peer is dropped.
type DropRule uint8

// Bus receive rules (wire.md 4.1 step 3, section 15 and correction 6).
const (
	// DropNotReplicaPlane: commands 0-4 never carry traffic.
	DropNotReplicaPlane DropRule = iota
	// DropRequest: Request (5) has no replica-plane sender (wire.md 15).
	DropRequest
	// DropClientBound: Reply (8) and Eviction (13) travel only to clients.
	DropClientBound
	// DropHandshake: handshake frames (14-16) after the handshake.
	DropHandshake
	// DropReplicaRange: the header's replica field is >= ReplicaCount.
	DropReplicaRange
	// DropRuleCount is the number of bus rules.
	DropRuleCount
)

var dropRuleNames = [DropRuleCount]string{"not_replica_plane", "request", "client_bound", "handshake",
	"replica_range"}

// String returns the rule's snake_case name.
func (r DropRule) String() string {
	if r < DropRuleCount {
		return dropRuleNames[r]
	}
	return "drop_rule_" + strconv.Itoa(int(r))
}

// HandshakeFailure names why a handshake did not complete. The first five are
// a dialer reading a reject Challenge, named by its status byte as Iggy's
// reader names it (wire.md correction 4); the rest are detected locally.
type HandshakeFailure uint8

// Handshake failures.
const (
	// FailRejectedUnknownCommand: Challenge status 1 or 6..255.
	FailRejectedUnknownCommand HandshakeFailure = iota
	// FailRejectedClusterMismatch: Challenge status 2.
	FailRejectedClusterMismatch
	// FailRejectedDirectionalRule: Challenge status 3.
	FailRejectedDirectionalRule
	// FailRejectedAuthRequired: Challenge status 4 (never sent by Iggy).
	FailRejectedAuthRequired
	// FailRejectedMACMismatch: Challenge status 5 (never sent by Iggy).
	FailRejectedMACMismatch
	// FailUnknownCommand: the acceptor's first frame was not a Hello.
	FailUnknownCommand
	// FailClusterMismatch: a Hello from another cluster.
	FailClusterMismatch
	// FailDirectionalRule: a Hello from an id not below ours, or out of range.
	FailDirectionalRule
	// FailAuthRequired: auth on and the Hello carried no nonce.
	FailAuthRequired
	// FailMACMismatch: a Challenge's or a Finish's MAC failed verification
	// under the current and the previous key.
	FailMACMismatch
	// FailUnexpectedCommand: the dialer's reply was not a Challenge, or the
	// acceptor's second frame was not a Finish.
	FailUnexpectedCommand
	// FailFraming: a frame broke the framing rules during the handshake.
	FailFraming
	// FailTimeout: HandshakeGraceTicks passed.
	FailTimeout
	// FailClosed: the connection closed mid-handshake.
	FailClosed
	// FailSendRefused: the transport refused a handshake frame.
	FailSendRefused
	// HandshakeFailureCount is the number of failures.
	HandshakeFailureCount
)

var handshakeFailureNames = [HandshakeFailureCount]string{
	"rejected_unknown_command", "rejected_cluster_mismatch", "rejected_directional_rule",
	"rejected_auth_required", "rejected_mac_mismatch", "unknown_command", "cluster_mismatch",
	"directional_rule", "auth_required", "mac_mismatch", "unexpected_command", "framing", "timeout",
	"closed", "send_refused",
}

// String returns the failure's snake_case name.
func (f HandshakeFailure) String() string {
	if f < HandshakeFailureCount {
		return handshakeFailureNames[f]
	}
	return "handshake_failure_" + strconv.Itoa(int(f))
}

// PeerStats counts one peer's traffic and connections.
type PeerStats struct {
	// FramesSent counts frames Send handed to the transport.
	FramesSent uint64
	// SendDropped counts frames Send dropped, by cause.
	SendDropped [SendDropCount]uint64
	// FramesReceived counts frames received on an established connection,
	// before any check.
	FramesReceived uint64
	// FramesDelivered counts frames handed to the Handler.
	FramesDelivered uint64
	// WireRejected counts received frames rejected by a rule of the wire
	// codec, indexed by wire.Rule: framing rules (which also closed the
	// connection) and the rules of wire.Validate (the frame was dropped).
	WireRejected [256]uint64
	// BusDropped counts received frames dropped by a rule of the bus.
	BusDropped [DropRuleCount]uint64
	// Dials counts dials to this peer; DialsFailed those the transport
	// refused.
	Dials, DialsFailed uint64
	// HandshakesOK counts completed handshakes (connections established).
	HandshakesOK uint64
	// HandshakeFailures counts failed handshakes attributed to this peer:
	// every outbound one, and inbound ones whose Hello named this peer in
	// our cluster.
	HandshakeFailures [HandshakeFailureCount]uint64
	// ConnectionsClosed counts established connections that closed, by
	// either side; ConnectionsReplaced those among them closed because a
	// newer inbound connection from the peer completed its handshake.
	ConnectionsClosed, ConnectionsReplaced uint64
}

// Stats is a snapshot of the bus's counters.
type Stats struct {
	// Peers is indexed by replica id (len ReplicaCount); this replica's own
	// entry stays zero.
	Peers []PeerStats
	// Accepted counts inbound connections; AcceptsRefused those closed at
	// once because AcceptsPendingMax handshakes were already in progress.
	Accepted, AcceptsRefused uint64
	// HandshakeFailuresAnonymous counts failed inbound handshakes that
	// named no peer of this cluster (framing, not a Hello, another cluster,
	// an id out of range or equal to ours, timeout or close before a Hello).
	HandshakeFailuresAnonymous [HandshakeFailureCount]uint64
	// StaleEvents counts events for connections the bus no longer tracks
	// (it closed them itself), which it ignores.
	StaleEvents uint64
}

// HandshakeFailures returns the total of every failure counter, per peer and
// anonymous.
func (s *Stats) HandshakeFailures() [HandshakeFailureCount]uint64 {
	total := s.HandshakeFailuresAnonymous
	for i := range s.Peers {
		for f, n := range s.Peers[i].HandshakeFailures {
			total[f] += n
		}
	}
	return total
}
