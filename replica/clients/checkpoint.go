package clients

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// ErrCheckpoint: a checkpoint's client-table section breaks a rule of
// EncodeCheckpoint's format (its text names which).
var ErrCheckpoint = errors.New("clients: malformed checkpoint client table")

// EncodeCheckpoint returns what a checkpoint keeps of the table, as the
// MessagePack value of the metadata snapshot's client_table field:
//
//	[capacity u32, [entry...]]
//	entry = [client bin16, epoch u64, user_id u32,
//	         watermark u64, watermark_checksum bin16, reply bin]
//
// entries in client id order (u128, high half first), u128s as 16
// little-endian bytes, integers in their field's width. Only each entry's
// newest reply survives a checkpoint (client-ops.md 6.4): a retry of an
// older request after a restart from it gets RequestAlreadyApplied.
//
// The slots are not kept: a slot is unobservable (a full table evicts by
// the oldest newest reply, and no two entries share that op), and a
// replica that installed a state transfer's ICT2 (wire.md 8.3: slot order,
// compacted) holds its entries in other slots than one that applied the
// log, so a checkpoint that kept them differed between replicas at the
// same op once a Logout had left a hole (issue 26, DEVIATIONS.md 60).
func (t *Table) EncodeCheckpoint() []byte {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	must := func(err error) {
		if err != nil { // a bytes.Buffer never fails a write
			panic(fmt.Sprintf("clients: encode checkpoint: %v", err))
		}
	}
	u128 := func(v wire.U128) {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], v.Lo)
		binary.LittleEndian.PutUint64(b[8:], v.Hi)
		must(e.EncodeBytes(b[:]))
	}
	must(e.EncodeArrayLen(2))
	must(e.EncodeUint32(uint32(len(t.slots))))
	must(e.EncodeArrayLen(len(t.index)))
	for _, en := range t.byClient() {
		must(e.EncodeArrayLen(6))
		u128(en.client)
		must(e.EncodeUint64(en.epoch))
		must(e.EncodeUint32(en.user))
		must(e.EncodeUint64(en.watermark))
		u128(en.watermarkChecksum)
		must(e.EncodeBytes(en.ring[len(en.ring)-1].frame))
	}
	return buf.Bytes()
}

// DecodeCheckpoint rebuilds a table from EncodeCheckpoint's bytes. It
// refuses a capacity other than the configured one, slots out of order or
// out of range, a client twice or 0, a reply that is not a committed Reply
// of the entry's client, and any bytes that would not re-encode to
// themselves.
func DecodeCheckpoint(b []byte, capacity int) (*Table, error) {
	rd := bytes.NewReader(b)
	d := msgpack.NewDecoder(rd)
	fail := func(format string, args ...any) (*Table, error) {
		return nil, fmt.Errorf("%w: %s", ErrCheckpoint, fmt.Sprintf(format, args...))
	}
	if n, err := d.DecodeArrayLen(); err != nil || n != 2 {
		return fail("want an array of 2, got %d (%v)", n, err)
	}
	if c, err := d.DecodeUint32(); err != nil || int(c) != capacity {
		return fail("capacity %d, configured %d (%v)", c, capacity, err)
	}
	n, err := d.DecodeArrayLen()
	if err != nil || n < 0 || n > capacity {
		return fail("%d entries in a table of %d (%v)", n, capacity, err)
	}
	u128 := func() (wire.U128, error) {
		v, err := d.DecodeBytes()
		if err != nil || len(v) != 16 {
			return wire.U128{}, fmt.Errorf("a u128 of %d bytes (%v)", len(v), err)
		}
		return wire.U128{Lo: binary.LittleEndian.Uint64(v[:8]), Hi: binary.LittleEndian.Uint64(v[8:])}, nil
	}
	t := New(capacity)
	var prev wire.U128
	for i := range n {
		slot := i
		if k, err := d.DecodeArrayLen(); err != nil || k != 6 {
			return fail("entry %d: want an array of 6, got %d (%v)", i, k, err)
		}
		en := &entry{ring: make([]cached, 0, RingCapacity)}
		var errs [6]error
		en.client, errs[0] = u128()
		en.epoch, errs[1] = d.DecodeUint64()
		en.user, errs[2] = d.DecodeUint32()
		en.watermark, errs[3] = d.DecodeUint64()
		en.watermarkChecksum, errs[4] = u128()
		var reply []byte
		reply, errs[5] = d.DecodeBytes()
		if err := errors.Join(errs[:]...); err != nil {
			return fail("entry %d: %v", i, err)
		}
		if en.client.IsZero() {
			return fail("entry %d: client id 0", i)
		}
		if i > 0 && !lessU128(prev, en.client) {
			return fail("entry %d: client %s after %s (ascending client ids)", i, en.client, prev)
		}
		prev = en.client
		if _, dup := t.index[en.client]; dup {
			return fail("entry %d: client %s twice", i, en.client)
		}
		h, c, ok := checkpointReply(reply)
		if !ok || h.Client != en.client {
			return fail("entry %d: the reply is not a committed Reply of client %s", i, en.client)
		}
		en.ring = append(en.ring, c)
		en.latestCommit = c.commit
		t.slots[slot] = en
		t.index[en.client] = slot
	}
	if rd.Len() != 0 {
		return fail("%d bytes after the table", rd.Len())
	}
	if !bytes.Equal(t.EncodeCheckpoint(), b) {
		return fail("not in canonical encoding")
	}
	return t, nil
}

// checkpointReply reads a stored reply without panicking on a bad one.
func checkpointReply(reply []byte) (wire.ReplyHeader, cached, bool) {
	var h wire.ReplyHeader
	if len(reply) < wire.HeaderSize {
		return h, cached{}, false
	}
	h.Decode(wire.HeaderOf(reply))
	if h.Command != wire.CommandReply || int(h.Size) != len(reply) || h.Status != 0 || h.Client.IsZero() {
		return h, cached{}, false
	}
	return h, cached{frame: append([]byte(nil), reply...), request: h.Request, commit: h.Commit, checksum: h.RequestChecksum}, true
}

// byClient returns the entries in client id order.
func (t *Table) byClient() []*entry {
	es := make([]*entry, 0, len(t.index))
	for _, e := range t.slots {
		if e != nil {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b *entry) int {
		switch {
		case lessU128(a.client, b.client):
			return -1
		case lessU128(b.client, a.client):
			return 1
		}
		return 0
	})
	return es
}

func lessU128(a, b wire.U128) bool { return a.Hi < b.Hi || a.Hi == b.Hi && a.Lo < b.Lo }
