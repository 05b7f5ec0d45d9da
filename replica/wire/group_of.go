package wire

// GroupOf reads the group a consensus frame is addressed to (false for a
// command that carries none: session forwarding, handshakes, client frames,
// which belong to the metadata plane). frame holds at least a header.
func GroupOf(frame []byte) (uint64, bool) {
	h := HeaderOf(frame)
	switch h.Command() {
	case CommandPrepare, CommandRepairPrepare:
		var x PrepareHeader
		x.Decode(h)
		return x.Group, true
	case CommandPrepareOk:
		var x PrepareOkHeader
		x.Decode(h)
		return x.Group, true
	case CommandCommit:
		var x CommitHeader
		x.Decode(h)
		return x.Group, true
	case CommandStartViewChange:
		var x StartViewChangeHeader
		x.Decode(h)
		return x.Group, true
	case CommandDoViewChange:
		var x DoViewChangeHeader
		x.Decode(h)
		return x.Group, true
	case CommandStartView:
		var x StartViewHeader
		x.Decode(h)
		return x.Group, true
	case CommandRequestStartView:
		var x RequestStartViewHeader
		x.Decode(h)
		return x.Group, true
	case CommandRequestPrepares:
		var x RequestPreparesHeader
		x.Decode(h)
		return x.Group, true
	case CommandRepairDone, CommandRangeEvicted:
		var x RepairRangeHeader
		x.Decode(h)
		return x.Group, true
	case CommandRequestStateTransfer:
		var x RequestStateTransferHeader
		x.Decode(h)
		return x.Group, true
	case CommandStateTransferTarget:
		var x StateTransferTargetHeader
		x.Decode(h)
		return x.Group, true
	case CommandRequestStateChunk:
		var x RequestStateChunkHeader
		x.Decode(h)
		return x.Group, true
	case CommandStateChunk:
		var x StateChunkHeader
		x.Decode(h)
		return x.Group, true
	}
	return 0, false
}
