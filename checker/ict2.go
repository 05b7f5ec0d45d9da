package checker

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// The client table artifact ICT2 (wire.md 8.3), read by the checker's own
// code: what a replica offers with its checkpoint in a state transfer (the
// whole rings as they were at the checkpoint's op, DEVIATIONS.md 62),
// reported with the checkpoint it goes with (EventCheckpoint,
// EventRestored, EventInstalled). It must read as ICT2 and hold the
// model's client table at the op (clienttable.go): the same sessions, each
// with the model's epoch and watermark, a ring of one to five replies of
// that client, its newest the reply its newest commit built ("client
// table artifact differs from the model"). A receiver installs the
// sessions from it.

// ClientTableWrong names an ICT2 that breaks wire.md 8.3 or differs from
// the model's table at its op.
const ClientTableWrong = "client table artifact differs from the model"

// ict2Entry is one session of an ICT2.
type ict2Entry struct {
	client            wire.U128
	epoch             uint64
	user              uint32
	watermark         uint64
	watermarkChecksum wire.U128
	replies           [][]byte // oldest first
}

const (
	ict2Magic      = "ICT2"
	ict2CountMax   = 1 << 16
	ict2FixedLen   = 16 + 8 + 4 + 8 + 16 + 1
	ict2RingMax    = 5
	ict2TrailerLen = 8
	ict2ReplyMin   = wire.HeaderSize
	replyCommand   = 8 // wire.md 4: Reply
	replyCommandAt = 60
	replySizeAt    = 48
	replyClientAt  = 160 // wire.md 5.20: the Reply's client
)

var errICT2 = errors.New("ICT2")

// readICT2 reads a client table artifact by wire.md 8.3.
func readICT2(b []byte) ([]ict2Entry, error) {
	le := binary.LittleEndian
	if len(b) < 8+ict2TrailerLen || string(b[:4]) != ict2Magic {
		return nil, fmt.Errorf("%w: %d bytes, magic %q", errICT2, len(b), b[:min(4, len(b))])
	}
	end := len(b) - ict2TrailerLen
	if le.Uint64(b[end:]) != xxh3.Hash(b[:end]) {
		return nil, fmt.Errorf("%w: trailer", errICT2)
	}
	count := le.Uint32(b[4:])
	if count > ict2CountMax {
		return nil, fmt.Errorf("%w: %d entries", errICT2, count)
	}
	at := 8
	seen := map[wire.U128]bool{}
	var es []ict2Entry
	for i := range count {
		if at+ict2FixedLen > end {
			return nil, fmt.Errorf("%w: entry %d runs past the trailer", errICT2, i)
		}
		e := ict2Entry{client: wire.U128{Lo: le.Uint64(b[at:]), Hi: le.Uint64(b[at+8:])}, epoch: le.Uint64(b[at+16:]),
			user: le.Uint32(b[at+24:]), watermark: le.Uint64(b[at+28:]),
			watermarkChecksum: wire.U128{Lo: le.Uint64(b[at+36:]), Hi: le.Uint64(b[at+44:])}}
		ring := int(b[at+52])
		at += ict2FixedLen
		if ring < 1 || ring > ict2RingMax || seen[e.client] {
			return nil, fmt.Errorf("%w: entry %d: ring of %d, client %s (seen %v)", errICT2, i, ring, e.client, seen[e.client])
		}
		seen[e.client] = true
		for k := range ring {
			if at+4 > end {
				return nil, fmt.Errorf("%w: entry %d reply %d runs past the trailer", errICT2, i, k)
			}
			n := int(le.Uint32(b[at:]))
			at += 4
			if n < ict2ReplyMin || at+n > end {
				return nil, fmt.Errorf("%w: entry %d reply %d of %d bytes", errICT2, i, k, n)
			}
			r := b[at : at+n]
			if r[replyCommandAt] != replyCommand || int(le.Uint32(r[replySizeAt:])) < ict2ReplyMin || int(le.Uint32(r[replySizeAt:])) > n {
				return nil, fmt.Errorf("%w: entry %d reply %d is not a Reply frame", errICT2, i, k)
			}
			e.replies = append(e.replies, r)
			at += n
		}
		es = append(es, e)
	}
	if at != end {
		return nil, fmt.Errorf("%w: %d bytes between the last entry and the trailer", errICT2, end-at)
	}
	return es, nil
}

// clientTableArtifact checks the ICT2 replica r offers with the checkpoint
// at op (what: which report).
func (c *Checker) clientTableArtifact(r uint8, what string, op uint64, artifact []byte) {
	if c.violation != nil || c.table == nil || artifact == nil {
		return
	}
	want, ok := c.art.tables[op]
	if !ok {
		return
	}
	problem := c.ict2Problem(artifact, want)
	if problem != "" {
		c.fail(Violation{Name: ClientTableWrong, Replicas: []uint8{r}, Ops: []uint64{op},
			Detail: fmt.Sprintf("replica %d's client table artifact with %s at op %d: %s", r, what, op, problem)})
	}
}

// ict2Problem describes the first way artifact breaks the format or
// differs from want, or returns "".
func (c *Checker) ict2Problem(artifact []byte, want checkpointTable) string {
	es, err := readICT2(artifact)
	if err != nil {
		return err.Error()
	}
	if len(es) != len(want.entries) {
		return fmt.Sprintf("%d sessions; the model holds %d", len(es), len(want.entries))
	}
	model := map[wire.U128]tableEntry{}
	for _, w := range want.entries {
		model[w.client] = w
	}
	for _, e := range es {
		w, ok := model[e.client]
		switch {
		case !ok:
			return fmt.Sprintf("client %s holds a session the model does not", e.client)
		case e.epoch != w.epoch || e.watermark != w.watermark:
			return fmt.Sprintf("client %s at epoch %d, watermark %d; the model's %d, %d", e.client, e.epoch, e.watermark, w.epoch, w.watermark)
		case e.watermarkChecksum != w.watermarkChecksum:
			return fmt.Sprintf("client %s's watermark request %d has request_checksum %s; the model's %s", e.client, e.watermark, e.watermarkChecksum, w.watermarkChecksum)
		}
		for k, reply := range e.replies {
			if (wire.U128{Lo: binary.LittleEndian.Uint64(reply[replyClientAt:]), Hi: binary.LittleEndian.Uint64(reply[replyClientAt+8:])}) != e.client {
				return fmt.Sprintf("client %s's reply %d is another client's", e.client, k)
			}
		}
		if w.latestCommit > 0 && w.latestCommit <= uint64(len(c.canon)) {
			if newest := e.replies[len(e.replies)-1]; string(newest) != string(c.canon[w.latestCommit-1].reply) {
				return fmt.Sprintf("client %s's newest reply is not the reply op %d built, its newest commit", e.client, w.latestCommit)
			}
		}
	}
	return ""
}
