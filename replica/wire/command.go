package wire

import "strconv"

// Command is the command byte of a frame (header offset 60), wire.md section 4.
type Command uint8

// The command registry. Values above CommandMax close the connection.
const (
	CommandReserved              Command = 0
	CommandPing                  Command = 1
	CommandPong                  Command = 2
	CommandPingClient            Command = 3
	CommandPongClient            Command = 4
	CommandRequest               Command = 5
	CommandPrepare               Command = 6
	CommandPrepareOk             Command = 7
	CommandReply                 Command = 8
	CommandCommit                Command = 9
	CommandStartViewChange       Command = 10
	CommandDoViewChange          Command = 11
	CommandStartView             Command = 12
	CommandEviction              Command = 13
	CommandReplicaHello          Command = 14
	CommandReplicaChallenge      Command = 15
	CommandReplicaFinish         Command = 16
	CommandRequestStartView      Command = 17
	CommandRequestPrepares       Command = 18
	CommandRepairPrepare         Command = 19
	CommandRepairDone            Command = 20
	CommandRangeEvicted          Command = 21
	CommandRequestStateTransfer  Command = 22
	CommandStateTransferTarget   Command = 23
	CommandRequestStateChunk     Command = 24
	CommandStateChunk            Command = 25
	CommandForwardRegister       Command = 26
	CommandForwardRegisterResult Command = 27
	CommandForwardLogout         Command = 28
	CommandForwardLogoutResult   Command = 29

	// CommandMax is the highest command byte the framing layer accepts.
	CommandMax = CommandForwardLogoutResult
)

type commandInfo struct {
	name   string // as in Iggy's registry
	snake  string // as `vopr decode -json` prints it
	sealed bool   // FRAME_SEALED: checksum is the frame seal of wire.md 3.2
}

var commandTable = [CommandMax + 1]commandInfo{
	{"Reserved", "reserved", false},
	{"Ping", "ping", false},
	{"Pong", "pong", false},
	{"PingClient", "ping_client", false},
	{"PongClient", "pong_client", false},
	{"Request", "request", false},
	{"Prepare", "prepare", false},
	{"PrepareOk", "prepare_ok", true},
	{"Reply", "reply", false},
	{"Commit", "commit", true},
	{"StartViewChange", "start_view_change", true},
	{"DoViewChange", "do_view_change", true},
	{"StartView", "start_view", true},
	{"Eviction", "eviction", false},
	{"ReplicaHello", "replica_hello", false},
	{"ReplicaChallenge", "replica_challenge", false},
	{"ReplicaFinish", "replica_finish", false},
	{"RequestStartView", "request_start_view", true},
	{"RequestPrepares", "request_prepares", true},
	{"RepairPrepare", "repair_prepare", false},
	{"RepairDone", "repair_done", true},
	{"RangeEvicted", "range_evicted", true},
	{"RequestStateTransfer", "request_state_transfer", true},
	{"StateTransferTarget", "state_transfer_target", true},
	{"RequestStateChunk", "request_state_chunk", true},
	{"StateChunk", "state_chunk", true},
	{"ForwardRegister", "forward_register", true},
	{"ForwardRegisterResult", "forward_register_result", true},
	{"ForwardLogout", "forward_logout", true},
	{"ForwardLogoutResult", "forward_logout_result", true},
}

// Valid reports whether c is inside the registry (0..29).
func (c Command) Valid() bool { return c <= CommandMax }

// String returns the registry name ("DoViewChange"), or "Command(n)" outside it.
func (c Command) String() string {
	if !c.Valid() {
		return "Command(" + strconv.Itoa(int(c)) + ")"
	}
	return commandTable[c].name
}

// SnakeName returns the snake_case name ("do_view_change") used in JSON output,
// or "command_n" outside the registry.
func (c Command) SnakeName() string {
	if !c.Valid() {
		return "command_" + strconv.Itoa(int(c))
	}
	return commandTable[c].snake
}

// Sealed reports whether frames of this command carry the frame seal of
// wire.md 3.2 in their checksum field.
func (c Command) Sealed() bool { return c.Valid() && commandTable[c].sealed }

// IsPrepare reports whether c is Prepare or RepairPrepare, the two commands
// whose checksum field is the prepare identity (wire.md 3.3).
func (c Command) IsPrepare() bool { return c == CommandPrepare || c == CommandRepairPrepare }

// IsHandshake reports whether c is one of the three handshake frames (14..16).
func (c Command) IsHandshake() bool { return c >= CommandReplicaHello && c <= CommandReplicaFinish }

// IsClientBound reports whether c only ever travels from a server to a client
// (Reply, Eviction); such frames are dropped on the replica plane.
func (c Command) IsClientBound() bool { return c == CommandReply || c == CommandEviction }

// IsReplicaPlane reports whether c has a header layout on this plane: every
// command from Request (5) to ForwardLogoutResult (29). Commands 0-4 never
// carry traffic.
func (c Command) IsReplicaPlane() bool { return c >= CommandRequest && c <= CommandMax }
