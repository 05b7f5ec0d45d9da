package wire

import "testing"

func TestGroupOf(t *testing.T) {
	const g = 0x1234_5678
	p := func(c Command) Prefix { return Prefix{Command: c, View: 3, Replica: 1} }
	for _, tc := range []struct {
		name  string
		frame []byte
		group uint64
		ok    bool
	}{
		{"prepare", BuildFrame(&PrepareHeader{Prefix: p(CommandPrepare), Op: 1, Group: g}, nil), g, true},
		{"prepare_ok", BuildFrame(&PrepareOkHeader{Prefix: p(CommandPrepareOk), Op: 1, Group: g}, nil), g, true},
		{"commit", BuildFrame(&CommitHeader{Prefix: p(CommandCommit), Group: g}, nil), g, true},
		{"start_view_change", BuildFrame(&StartViewChangeHeader{Prefix: p(CommandStartViewChange), Group: g}, nil), g, true},
		{"do_view_change", BuildFrame(&DoViewChangeHeader{Prefix: p(CommandDoViewChange), Group: g}, nil), g, true},
		{"start_view", BuildFrame(&StartViewHeader{Prefix: p(CommandStartView), Group: g}, nil), g, true},
		{"request_start_view", BuildFrame(&RequestStartViewHeader{Prefix: p(CommandRequestStartView), Group: g}, nil), g, true},
		{"request_prepares", BuildFrame(&RequestPreparesHeader{Prefix: p(CommandRequestPrepares), FromOp: 1, ToOp: 2, Group: g}, nil), g, true},
		{"repair_done", BuildFrame(&RepairRangeHeader{Prefix: p(CommandRepairDone), Group: g}, nil), g, true},
		{"range_evicted", BuildFrame(&RepairRangeHeader{Prefix: p(CommandRangeEvicted), Group: g}, nil), g, true},
		{"request_state_transfer", BuildFrame(&RequestStateTransferHeader{Prefix: p(CommandRequestStateTransfer), Nonce: U128{Lo: 1}, Group: g}, nil), g, true},
		{"state_transfer_target", BuildFrame(&StateTransferTargetHeader{Prefix: p(CommandStateTransferTarget), Nonce: U128{Lo: 1}, Group: g}, nil), g, true},
		{"request_state_chunk", BuildFrame(&RequestStateChunkHeader{Prefix: p(CommandRequestStateChunk), Nonce: U128{Lo: 1}, Len: 1, Group: g}, nil), g, true},
		{"state_chunk", BuildFrame(&StateChunkHeader{Prefix: p(CommandStateChunk), Nonce: U128{Lo: 1}, Group: g}, nil), g, true},
		{"request (no group of its own)", BuildFrame(&RequestHeader{Prefix: p(CommandRequest), Operation: OperationCreateStream}, nil), 0, false},
	} {
		got, ok := GroupOf(tc.frame)
		if got != tc.group || ok != tc.ok {
			t.Errorf("%s: GroupOf = %#x, %v; want %#x, %v", tc.name, got, ok, tc.group, tc.ok)
		}
	}
}
