package diskread

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// The superblock copy's parts (format 10.1): the wire record the journal
// writes (its framing around a 66-byte VsrState) and the format trailer.
const (
	superblockRecordBytes = recordFrameBytes + recordTrailer + vsrStateBytes

	// trailerMagic opens the format trailer ("vopjfmt2" on disk).
	trailerMagic uint64 = 0x32746d666a706f76
	// trailerBytes: magic, formatted, head op, head header, seal.
	trailerBytes  = 8 + 8 + 8 + wire.HeaderSize + 8
	trailerSealAt = trailerBytes - 8
)

// Errors of DurableView, ReadSuperblock and Recover: where the journal
// refuses to open, or panics.
var (
	// ErrNoQuorum: no valid copy, or the highest valid sequence has fewer
	// than two valid copies at it or one below (format 10.3, steps 2, 3).
	ErrNoQuorum = errors.New("diskread: no trustworthy superblock")
	// ErrMismatch: a valid copy names another cluster, replica or replica
	// count (format 10.3, step 1).
	ErrMismatch = errors.New("diskread: superblock of another cluster, replica or replica count")
	// ErrSplitSequence: two valid copies hold the highest sequence with
	// different states or extents (format 10.3, step 4), which the journal
	// takes for an impossible state and panics on.
	ErrSplitSequence = errors.New("diskread: two superblock states under one sequence")
	// ErrHeadUnformatted: the chosen copy's log head lies in a slot beyond
	// its formatted extent (format 12, step 5), which the journal panics on.
	ErrHeadUnformatted = errors.New("diskread: the log head lies beyond the formatted extent")
)

// LogHead is the log head a superblock copy records (format 10.4): an op
// and, when known, its header (all zero otherwise).
type LogHead struct {
	Op     uint64
	Header wire.Header
}

// Known reports whether the head's header is recorded.
func (h *LogHead) Known() bool { return h.Header != wire.Header{} }

// SuperblockCopy is one superblock copy as found.
type SuperblockCopy struct {
	Valid bool
	// Sequence, State, Formatted and Head are those of a valid copy.
	Sequence  uint64
	State     wire.VsrState
	Formatted uint64
	Head      LogHead
	// Problem says why a copy is not valid.
	Problem string
}

// Superblock is the superblock a restart opens with: the chosen copy, and
// every copy as found.
type Superblock struct {
	Sequence  uint64
	State     wire.VsrState
	Formatted uint64
	Head      LogHead
	Copies    [superblockCopies]SuperblockCopy
}

// readCopy reads and judges superblock copy i (format 10.2).
func (g Geometry) readCopy(peek Peek, i int) SuperblockCopy {
	b := make([]byte, int(g.superblockChunkSectors())*g.SectorSize)
	peek(g.superblockCopySector(i), b)
	return g.judgeCopy(b)
}

// judgeCopy judges the bytes of one superblock copy's chunk, by the steps
// of format 10.2 in order.
func (g Geometry) judgeCopy(b []byte) SuperblockCopy {
	bad := func(format string, args ...any) SuperblockCopy {
		return SuperblockCopy{Problem: fmt.Sprintf(format, args...)}
	}
	n, err := recordLen(b)
	if err != nil {
		return bad("record framing: %v", err)
	}
	if n+trailerBytes > len(b) {
		return bad("no room for the trailer after a %d-byte record", n)
	}
	t := b[n : n+trailerBytes]
	if binary.LittleEndian.Uint64(t) != trailerMagic {
		return bad("trailer magic")
	}
	if binary.LittleEndian.Uint64(t[trailerSealAt:]) != xxh3.HashSeed(t[:trailerSealAt], seedSeal) {
		return bad("trailer seal")
	}
	formatted := binary.LittleEndian.Uint64(t[8:])
	if formatted == 0 || formatted > g.SlotCount {
		return bad("%d slots formatted of %d", formatted, g.SlotCount)
	}
	var head LogHead
	head.Op = binary.LittleEndian.Uint64(t[16:])
	copy(head.Header[:], t[24:trailerSealAt])
	if head.Known() && (head.Op == 0 || opField(&head.Header) != head.Op) {
		return bad("log head op %d with a header of op %d", head.Op, opField(&head.Header))
	}
	if !zero(b[n+trailerBytes:]) {
		return bad("padding not zero")
	}
	seq, payload, err := readRecord(b[:n])
	if err != nil {
		return bad("record: %v", err)
	}
	state, err := readVsrState(payload)
	if err != nil {
		return bad("state: %v", err)
	}
	return SuperblockCopy{Valid: true, Sequence: seq, State: state, Formatted: formatted, Head: head}
}

// choose applies the rule of format 10.3 to the four copies.
func (g Geometry) choose(copies [superblockCopies]SuperblockCopy) (Superblock, error) {
	sb := Superblock{Copies: copies}
	for i, c := range copies {
		if !c.Valid {
			continue
		}
		s := c.State
		if s.Cluster != g.Cluster || s.ReplicaID != g.Replica || s.ReplicaCount != g.ReplicaCount {
			return sb, fmt.Errorf("%w: copy %d names cluster %s, replica %d of %d", ErrMismatch, i, s.Cluster, s.ReplicaID, s.ReplicaCount)
		}
	}
	top := -1
	for i, c := range copies {
		if c.Valid && (top < 0 || c.Sequence > copies[top].Sequence) {
			top = i
		}
	}
	if top < 0 {
		return sb, fmt.Errorf("%w: no valid copy", ErrNoQuorum)
	}
	sMax := copies[top].Sequence
	support := 0
	for _, c := range copies {
		if c.Valid && (c.Sequence == sMax || c.Sequence+1 == sMax) {
			support++
		}
	}
	if support < 2 {
		return sb, fmt.Errorf("%w: sequence %d has %d supporting copies", ErrNoQuorum, sMax, support)
	}
	chosen := copies[top]
	for i, c := range copies {
		if !c.Valid || c.Sequence != sMax {
			continue
		}
		if c.State != chosen.State || c.Formatted != chosen.Formatted {
			return sb, fmt.Errorf("%w: copies %d and %d at sequence %d", ErrSplitSequence, top, i, sMax)
		}
		if c.Head.Op > chosen.Head.Op {
			chosen = c
		}
	}
	sb.Sequence, sb.State, sb.Formatted, sb.Head = chosen.Sequence, chosen.State, chosen.Formatted, chosen.Head
	return sb, nil
}

// ReadSuperblock reads the four superblock copies and returns the one a
// restart opens with (format 10), or an error where the journal refuses to
// open (ErrNoQuorum, ErrMismatch) or panics (ErrSplitSequence). The copies
// as found are returned with the error too.
func ReadSuperblock(g Geometry, peek Peek) (Superblock, error) {
	g.check()
	var copies [superblockCopies]SuperblockCopy
	for i := range copies {
		copies[i] = g.readCopy(peek, i)
	}
	return g.choose(copies)
}

// DurableView returns the view and log_view a restart would open with, or
// an error when no superblock copy is valid, too few agree, or the copies
// are another replica's (see ReadSuperblock).
func DurableView(g Geometry, peek Peek) (view, logView uint32, err error) {
	sb, err := ReadSuperblock(g, peek)
	if err != nil {
		return 0, 0, err
	}
	return sb.State.View, sb.State.LogView, nil
}

// DurableCheckpoint returns the checkpoint op the durable superblock
// records (0: none), as Open would read it.
func DurableCheckpoint(g Geometry, peek Peek) (uint64, error) {
	sb, err := ReadSuperblock(g, peek)
	if err != nil {
		return 0, err
	}
	return sb.State.CheckpointOp, nil
}
