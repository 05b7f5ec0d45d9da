package wire

// HeaderSize is the size of every frame header, and the smallest frame.
const HeaderSize = 256

// MaxFrameSizeDefault is Iggy's default message_bus.max_message_size (64 MiB).
const MaxFrameSizeDefault = 64 << 20

// Offsets of the generic prefix shared by every header (wire.md 2).
const (
	offChecksum      = 0
	offChecksumBody  = 16
	offCluster       = 32
	offSize          = 48
	offView          = 52
	offRelease       = 56
	offCommand       = 60
	offReplica       = 61
	offReservedFrame = 62
	offCommandArea   = 128
)

// Header is the raw 256-byte header of a frame. Its methods read and write the
// generic prefix; the typed headers (PrepareHeader, CommitHeader, ...) read
// and write the per-command area.
type Header [HeaderSize]byte

// HeaderOf returns the header at the front of frame, without copying.
// frame must hold at least HeaderSize bytes.
func HeaderOf(frame []byte) *Header { return (*Header)(frame[:HeaderSize]) }

// Checksum returns bytes 0..16: the frame seal, the prepare identity, or 0.
func (h *Header) Checksum() U128 { return getU128(h[offChecksum:]) }

// ChecksumBody returns bytes 16..32, the body seal.
func (h *Header) ChecksumBody() U128 { return getU128(h[offChecksumBody:]) }

// Cluster returns the cluster id, bytes 32..48.
func (h *Header) Cluster() U128 { return getU128(h[offCluster:]) }

// Size returns the total frame length, header included.
func (h *Header) Size() uint32 { return u32(h[offSize:]) }

// View returns the view field (its meaning depends on the command).
func (h *Header) View() uint32 { return u32(h[offView:]) }

// Release returns the release field (always 0 on this plane).
func (h *Header) Release() uint32 { return u32(h[offRelease:]) }

// Command returns the command byte.
func (h *Header) Command() Command { return Command(h[offCommand]) }

// Replica returns the replica byte: the sender, or for a prepare the primary
// that built it.
func (h *Header) Replica() uint8 { return h[offReplica] }

// SetChecksum overwrites bytes 0..16.
func (h *Header) SetChecksum(v U128) { putU128(h[offChecksum:], v) }

// SetChecksumBody overwrites bytes 16..32.
func (h *Header) SetChecksumBody(v U128) { putU128(h[offChecksumBody:], v) }

// SetSize overwrites the size field.
func (h *Header) SetSize(size uint32) { put32(h[offSize:], size) }

// SetView overwrites the view field and nothing else. On a prepare this is
// the re-stamp of a retransmission (wire.md 3.5): the identity excludes view,
// so it stays valid and is not recomputed.
func (h *Header) SetView(view uint32) { put32(h[offView:], view) }

// SetCommand overwrites the command byte. Prepare <-> RepairPrepare is the
// only conversion that keeps a frame valid (see ToRepairPrepare).
func (h *Header) SetCommand(c Command) { h[offCommand] = byte(c) }

// Prefix holds the generic fields of every header (bytes 0..62). The
// reserved_frame bytes 62..128 are not part of it: encoders write them zero,
// and the commands that validate them check the raw bytes.
type Prefix struct {
	Checksum     U128
	ChecksumBody U128
	Cluster      U128
	Size         uint32
	View         uint32
	Release      uint32
	Command      Command
	Replica      uint8
}

// Prefix reads the generic fields.
func (h *Header) Prefix() Prefix {
	return Prefix{
		Checksum:     h.Checksum(),
		ChecksumBody: h.ChecksumBody(),
		Cluster:      h.Cluster(),
		Size:         h.Size(),
		View:         h.View(),
		Release:      h.Release(),
		Command:      h.Command(),
		Replica:      h.Replica(),
	}
}

// encodePrefix zeroes h and writes p with command c.
func (p *Prefix) encodePrefix(h *Header, c Command) {
	*h = Header{}
	putU128(h[offChecksum:], p.Checksum)
	putU128(h[offChecksumBody:], p.ChecksumBody)
	putU128(h[offCluster:], p.Cluster)
	put32(h[offSize:], p.Size)
	put32(h[offView:], p.View)
	put32(h[offRelease:], p.Release)
	h[offCommand] = byte(c)
	h[offReplica] = p.Replica
}

// Typed is implemented by every typed header: it writes itself into a raw
// header (zeroing every byte it does not set) and reads itself back.
type Typed interface {
	Encode(h *Header)
	Decode(h *Header)
}

// TypedFor returns a new zero typed header for command c, to Decode into; nil
// for commands without a layout on this plane (0-4) and outside the registry.
func TypedFor(c Command) Typed {
	switch c {
	case CommandRequest:
		return &RequestHeader{}
	case CommandPrepare, CommandRepairPrepare:
		return &PrepareHeader{}
	case CommandPrepareOk:
		return &PrepareOkHeader{}
	case CommandReply:
		return &ReplyHeader{}
	case CommandCommit:
		return &CommitHeader{}
	case CommandStartViewChange:
		return &StartViewChangeHeader{}
	case CommandDoViewChange:
		return &DoViewChangeHeader{}
	case CommandStartView:
		return &StartViewHeader{}
	case CommandEviction:
		return &EvictionHeader{}
	case CommandReplicaHello, CommandReplicaChallenge, CommandReplicaFinish:
		return &HandshakeHeader{}
	case CommandRequestStartView:
		return &RequestStartViewHeader{}
	case CommandRequestPrepares:
		return &RequestPreparesHeader{}
	case CommandRepairDone, CommandRangeEvicted:
		return &RepairRangeHeader{}
	case CommandRequestStateTransfer:
		return &RequestStateTransferHeader{}
	case CommandStateTransferTarget:
		return &StateTransferTargetHeader{}
	case CommandRequestStateChunk:
		return &RequestStateChunkHeader{}
	case CommandStateChunk:
		return &StateChunkHeader{}
	case CommandForwardRegister:
		return &ForwardRegisterHeader{}
	case CommandForwardRegisterResult:
		return &ForwardRegisterResultHeader{}
	case CommandForwardLogout:
		return &ForwardLogoutHeader{}
	case CommandForwardLogoutResult:
		return &ForwardLogoutResultHeader{}
	}
	return nil
}
