package checker

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// The client table inside a checkpoint's snapshot (DEVIATIONS.md 60:
// client_table = [capacity, [entry...]], each entry [client, epoch,
// user_id, watermark, watermark_checksum, newest reply], in client id
// order), read by the checker's own generic MessagePack decode and held to
// its client table model (clienttable.go) at the checkpoint's op: the same
// sessions, in client id order, each with the model's epoch and watermark,
// and as its newest reply the reply the op of its newest commit built
// ("snapshot differs from the model"). A restart or a state transfer
// restores sessions from it: a wrong one resurrects or loses a session,
// or replays another reply.

// checkpointTable is the model's client table at a checkpoint op.
type checkpointTable struct {
	entries []tableEntry // in client id order
}

// keepCheckpointTable keeps the model's client table once op is applied,
// for the snapshot at op.
func (c *Checker) keepCheckpointTable(op uint64) {
	if c.table == nil || c.checkpointInterval == 0 || op%c.checkpointInterval != 0 {
		return
	}
	var es []tableEntry
	for _, e := range c.table.slots {
		if e != nil {
			es = append(es, *e)
		}
	}
	slices.SortFunc(es, func(a, b tableEntry) int { return compareU128(a.client, b.client) })
	if c.art.tables == nil {
		c.art.tables = map[uint64]checkpointTable{}
	}
	c.art.tables[op] = checkpointTable{entries: es}
}

func compareU128(a, b wire.U128) int {
	switch {
	case a.Hi != b.Hi:
		if a.Hi < b.Hi {
			return -1
		}
		return 1
	case a.Lo < b.Lo:
		return -1
	case a.Lo > b.Lo:
		return 1
	}
	return 0
}

// snapshotTableMatches compares the client table of the first snapshot
// recorded at op with the model's at op.
func (c *Checker) snapshotTableMatches(r uint8, op uint64, payload []byte) {
	want, ok := c.art.tables[op]
	if !ok {
		return
	}
	problem := c.snapshotTableProblem(payload, want)
	if problem != "" {
		c.fail(Violation{Name: SnapshotWrong, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d's snapshot at op %d holds a client table where %s", r, op, problem)})
	}
}

// snapshotTableProblem describes the first difference between the
// snapshot's client table and want, or returns "".
func (c *Checker) snapshotTableProblem(payload []byte, want checkpointTable) string {
	var root any
	if err := msgpack.Unmarshal(payload, &root); err != nil {
		return fmt.Sprintf("the payload does not decode: %v", err)
	}
	top, ok := root.([]any)
	if !ok || len(top) != 7 {
		return "the envelope is not the snapshot's"
	}
	table, ok := top[5].([]any)
	if !ok || len(table) != 2 {
		return fmt.Sprintf("client_table is %T, not [capacity, entries]", top[5])
	}
	if capacity := num(table[0]); capacity != uint64(len(c.table.slots)) {
		return fmt.Sprintf("the capacity is %d, the replicas' %d", capacity, len(c.table.slots))
	}
	entries, _ := table[1].([]any)
	if len(entries) != len(want.entries) {
		return fmt.Sprintf("%d sessions are held; the model holds %d", len(entries), len(want.entries))
	}
	for i, x := range entries {
		e, ok := x.([]any)
		w := want.entries[i]
		if !ok || len(e) != 6 {
			return fmt.Sprintf("entry %d is not [client, epoch, user_id, watermark, watermark_checksum, reply]", i)
		}
		client, reply := u128Of(e[0]), bytesOf(e[5])
		switch {
		case client != w.client:
			return fmt.Sprintf("entry %d is client %s; the model's (in client id order) is %s", i, client, w.client)
		case num(e[1]) != w.epoch:
			return fmt.Sprintf("client %s's epoch is %d; the model's %d", client, num(e[1]), w.epoch)
		case num(e[3]) != w.watermark:
			return fmt.Sprintf("client %s's watermark is %d; the model's %d", client, num(e[3]), w.watermark)
		case w.latestCommit == 0 || w.latestCommit > uint64(len(c.canon)):
			continue
		case string(reply) != string(c.canon[w.latestCommit-1].reply):
			return fmt.Sprintf("client %s's newest reply (%d bytes) is not the reply op %d built, its newest commit (%d bytes)",
				client, len(reply), w.latestCommit, len(c.canon[w.latestCommit-1].reply))
		}
	}
	return ""
}

// u128Of reads a MessagePack bin of 16 bytes as a u128 (zero otherwise).
func u128Of(x any) wire.U128 {
	b := bytesOf(x)
	if len(b) != 16 {
		return wire.U128{}
	}
	return wire.U128{Lo: binary.LittleEndian.Uint64(b[:8]), Hi: binary.LittleEndian.Uint64(b[8:])}
}

func bytesOf(x any) []byte {
	switch b := x.(type) {
	case []byte:
		return b
	case string:
		return []byte(b)
	}
	return nil
}
