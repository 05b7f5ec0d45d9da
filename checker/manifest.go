package checker

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// The state manifest ISM1 (wire.md 8.1; DEVIATIONS.md 62 and 64: entries
// of 41 and 49 bytes, Iggy's 25 then the frontier op's identity and
// timestamp), the body of an offering StateTransferTarget (wire.md 5.12),
// read by the checker's own code. Every offer a replica sends must read as
// one, and list what its plane offers in wire.md 8.1's order: a metadata
// offer the snapshot (kind 0) at the offer's commit_op, then the client
// table (kind 1); a partition offer its segments (kind 2) from offset 0 in
// ascending offsets, then exactly one consumer offsets artifact (kind 3)
// at commit_op ("state manifest off the format"). A replica that took its
// peer's kinds at their word would pull a segment as a client table
// (issue 26: wire/manifest.go:14, the segment log's kind written as 1 by
// every replica alike).

// ManifestWrong names an offer whose manifest breaks wire.md 8.1.
const ManifestWrong = "state manifest off the format"

// Manifest kinds (wire.md 8.1).
const (
	artifactSnapshot    = 0
	artifactClientTable = 1
	artifactSegment     = 2
	artifactOffsets     = 3
)

// manifestEntry is one artifact an offer lists.
type manifestEntry struct {
	kind                       uint8
	frontier, length, checksum uint64
}

const (
	ism1HeaderLen  = 4 + 4 + 1
	ism1EntryMin   = 25
	ism1TrailerLen = 8
	ism1EntriesMax = 1 << 16
	sttCommitOpAt  = 144
	sttGroupAt     = 152
	sttAvailableAt = 160
)

var errISM1 = errors.New("ISM1")

// readISM1 reads a manifest by wire.md 8.1.
func readISM1(b []byte) ([]manifestEntry, error) {
	le := binary.LittleEndian
	if len(b) < ism1HeaderLen+ism1TrailerLen || string(b[:4]) != "ISM1" {
		return nil, fmt.Errorf("%w: %d bytes, magic %q", errISM1, len(b), b[:min(4, len(b))])
	}
	count, entryLen := le.Uint32(b[4:]), int(b[8])
	if count > ism1EntriesMax || entryLen < ism1EntryMin {
		return nil, fmt.Errorf("%w: %d entries of %d bytes", errISM1, count, entryLen)
	}
	if want := ism1HeaderLen + int(count)*entryLen + ism1TrailerLen; len(b) != want {
		return nil, fmt.Errorf("%w: %d bytes, %d entries of %d make %d", errISM1, len(b), count, entryLen, want)
	}
	end := len(b) - ism1TrailerLen
	if le.Uint64(b[end:]) != xxh3.Hash(b[:end]) {
		return nil, fmt.Errorf("%w: trailer", errISM1)
	}
	es := make([]manifestEntry, count)
	for i := range es {
		at := ism1HeaderLen + i*entryLen
		es[i] = manifestEntry{kind: b[at], frontier: le.Uint64(b[at+1:]), length: le.Uint64(b[at+9:]), checksum: le.Uint64(b[at+17:])}
	}
	return es, nil
}

// manifestSent checks the manifest of an offering StateTransferTarget
// replica r sent.
func (c *Checker) manifestSent(r uint8, frame []byte) {
	if c.violation != nil || len(frame) <= wire.HeaderSize || wire.HeaderOf(frame).Command() != wire.CommandStateTransferTarget ||
		frame[sttAvailableAt] != 1 {
		return
	}
	le := binary.LittleEndian
	commitOp, group := le.Uint64(frame[sttCommitOpAt:]), le.Uint64(frame[sttGroupAt:])
	es, err := readISM1(frame[wire.HeaderSize:])
	problem := ""
	switch {
	case err != nil:
		problem = err.Error()
	case group == wire.MetadataGroup:
		problem = metadataManifestProblem(es, commitOp)
	default:
		problem = partitionManifestProblem(es, commitOp)
	}
	if problem != "" {
		c.fail(Violation{Name: ManifestWrong, Replicas: []uint8{r}, Ops: []uint64{commitOp},
			Detail: fmt.Sprintf("replica %d offered the state of group %d at op %d with a manifest that %s", r, group, commitOp, problem)})
	}
}

// metadataManifestProblem: a metadata offer lists the snapshot at
// commit_op, then the client table at or below it.
func metadataManifestProblem(es []manifestEntry, commitOp uint64) string {
	switch {
	case len(es) != 2 || es[0].kind != artifactSnapshot || es[1].kind != artifactClientTable:
		return fmt.Sprintf("lists kinds %v, a metadata offer [0 1]", kinds(es))
	case es[0].frontier != commitOp:
		return fmt.Sprintf("puts the snapshot's frontier at %d", es[0].frontier)
	case es[1].frontier > commitOp:
		return fmt.Sprintf("puts the client table's frontier at %d, above commit_op", es[1].frontier)
	}
	return ""
}

// partitionManifestProblem: a partition offer lists its segments from
// offset 0 in ascending offsets, then one consumer offsets artifact at
// commit_op, last.
func partitionManifestProblem(es []manifestEntry, commitOp uint64) string {
	n := len(es)
	if n == 0 || es[n-1].kind != artifactOffsets {
		return fmt.Sprintf("lists kinds %v, a partition offer its segments (2) then one consumer offsets artifact (3)", kinds(es))
	}
	for i, e := range es[:n-1] {
		switch {
		case e.kind != artifactSegment:
			return fmt.Sprintf("lists kinds %v, a partition offer its segments (2) then one consumer offsets artifact (3)", kinds(es))
		case i == 0 && e.frontier != 0:
			return fmt.Sprintf("starts its segments at offset %d, not 0", e.frontier)
		case i > 0 && e.frontier <= es[i-1].frontier:
			return fmt.Sprintf("lists a segment at offset %d after one at %d", e.frontier, es[i-1].frontier)
		}
	}
	if es[n-1].frontier != commitOp {
		return fmt.Sprintf("puts the consumer offsets' frontier at %d", es[n-1].frontier)
	}
	return ""
}

func kinds(es []manifestEntry) []uint8 {
	out := make([]uint8, len(es))
	for i, e := range es {
		out[i] = e.kind
	}
	return out
}
