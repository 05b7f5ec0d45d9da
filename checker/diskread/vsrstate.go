package diskread

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/iggy-vopr/vopr/replica/wire"
	"github.com/zeebo/xxh3"
)

// The superblock record (format 10.1, wire.md 9.2) and its VsrState
// payload, read by this package's own code: the record's framing, its
// XXH3 trailer and the state's fields at the offsets the documents give.
// Reading them with replica/wire's decoders would make a bug there (a
// field read from the wrong offset) the checker's bug too, and invisible
// to it (issue 26: wire/superblock.go's DecodeVsrState reading
// checkpoint_op one byte late made the checker's durable checkpoint as
// wrong as the replica's).
const (
	recordMagic      uint32 = 0x53424C4B // "KLBS" on disk
	recordVersion    uint16 = 1
	recordFrameBytes        = 28 // magic, version, reserved, sequence, parent_checksum, payload_len
	recordTrailer           = 8
	recordPayloadMax        = 4096
	vsrStateBytes           = 66
	vsrStateLegacy          = 58 // without offset_frontier
)

// errRecord is why a superblock record does not read.
var errRecord = errors.New("superblock record")

// recordLen reads the framing at the front of b and returns the record's
// length, 36 + payload_len (format 10.2 step 2).
func recordLen(b []byte) (int, error) {
	le := binary.LittleEndian
	switch {
	case len(b) < recordFrameBytes+recordTrailer:
		return 0, fmt.Errorf("%w: %d bytes", errRecord, len(b))
	case le.Uint32(b) != recordMagic:
		return 0, fmt.Errorf("%w: magic %#08x", errRecord, le.Uint32(b))
	case le.Uint16(b[4:]) != recordVersion:
		return 0, fmt.Errorf("%w: version %d", errRecord, le.Uint16(b[4:]))
	case le.Uint32(b[24:]) > recordPayloadMax:
		return 0, fmt.Errorf("%w: payload_len %d", errRecord, le.Uint32(b[24:]))
	}
	n := recordFrameBytes + int(le.Uint32(b[24:])) + recordTrailer
	if len(b) < n {
		return 0, fmt.Errorf("%w: payload_len needs %d bytes, %d there", errRecord, n, len(b))
	}
	return n, nil
}

// readRecord verifies exactly one record (format 10.2 step 8: its XXH3,
// then reserved and parent_checksum zero) and returns its sequence and
// payload.
func readRecord(b []byte) (uint64, []byte, error) {
	n, err := recordLen(b)
	if err != nil {
		return 0, nil, err
	}
	le := binary.LittleEndian
	end := n - recordTrailer
	switch {
	case n != len(b):
		return 0, nil, fmt.Errorf("%w: %d bytes after it", errRecord, len(b)-n)
	case le.Uint64(b[end:]) != xxh3.Hash(b[:end]):
		return 0, nil, fmt.Errorf("%w: trailer", errRecord)
	case le.Uint16(b[6:]) != 0 || le.Uint64(b[16:]) != 0:
		return 0, nil, fmt.Errorf("%w: reserved or parent_checksum nonzero", errRecord)
	}
	return le.Uint64(b[8:]), b[recordFrameBytes:end], nil
}

// readVsrState reads a VsrState payload (format 10.1: 66 bytes, or the
// 58-byte legacy form with offset_frontier 0) and requires log_view <= view.
func readVsrState(b []byte) (wire.VsrState, error) {
	if len(b) != vsrStateBytes && len(b) != vsrStateLegacy {
		return wire.VsrState{}, fmt.Errorf("%w: a VsrState of %d bytes", errRecord, len(b))
	}
	le := binary.LittleEndian
	u128 := func(at int) wire.U128 { return wire.U128{Lo: le.Uint64(b[at:]), Hi: le.Uint64(b[at+8:])} }
	s := wire.VsrState{
		Cluster:            u128(0),
		ReplicaID:          b[16],
		ReplicaCount:       b[17],
		View:               le.Uint32(b[18:]),
		LogView:            le.Uint32(b[22:]),
		CommitMax:          le.Uint64(b[26:]),
		CheckpointOp:       le.Uint64(b[34:]),
		CheckpointChecksum: u128(42),
	}
	if len(b) == vsrStateBytes {
		s.OffsetFrontier = le.Uint64(b[58:])
	}
	if s.LogView > s.View {
		return wire.VsrState{}, fmt.Errorf("%w: log_view %d above view %d", errRecord, s.LogView, s.View)
	}
	return s, nil
}
