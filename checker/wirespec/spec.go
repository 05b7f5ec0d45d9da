// Package wirespec is the checker's own reading of the replica plane's wire
// format, written from ../shared/spec/wire.md and nothing else: the byte
// offsets of every header field, the seals, the prepare identity, the body
// seals, the reserved areas, each command's size and field rules, and the
// message batch (section 7). It imports no code of the replica (not even
// replica/wire), so a replica whose encoder and decoder agree with each
// other but not with Iggy's layout (a field at the wrong offset, a reserved
// byte set, a seal over the wrong bytes) is caught by the frames it sends,
// where a check that decodes with the replica's own codec would see nothing
// wrong (issue 26).
//
// Check judges one frame on its own; the checker (conform.go) adds the
// rules that need more than one frame (echoes of a request's nonce, a
// PrepareOk's echo of its prepare).
package wirespec

import (
	"encoding/binary"
	"fmt"

	"github.com/zeebo/xxh3"
)

// HeaderSize is every header's length (wire.md 2).
const HeaderSize = 256

// Command bytes (wire.md 4).
const (
	Request               = 5
	Prepare               = 6
	PrepareOk             = 7
	Reply                 = 8
	Commit                = 9
	StartViewChange       = 10
	DoViewChange          = 11
	StartView             = 12
	Eviction              = 13
	ReplicaHello          = 14
	ReplicaChallenge      = 15
	ReplicaFinish         = 16
	RequestStartView      = 17
	RequestPrepares       = 18
	RepairPrepare         = 19
	RepairDone            = 20
	RangeEvicted          = 21
	RequestStateTransfer  = 22
	StateTransferTarget   = 23
	RequestStateChunk     = 24
	StateChunk            = 25
	ForwardRegister       = 26
	ForwardRegisterResult = 27
	ForwardLogout         = 28
	ForwardLogoutResult   = 29
)

// MetadataGroup is the metadata plane's consensus group (wire.md 10.2).
const MetadataGroup = uint64(1) << 63

// SuffixEntriesMax bounds a DoViewChange or StartView suffix (wire.md 11).
const SuffixEntriesMax = 128

// The generic prefix (wire.md 2).
const (
	OffChecksum     = 0
	OffChecksumBody = 16
	OffCluster      = 32
	OffSize         = 48
	OffView         = 52
	OffRelease      = 56
	OffCommand      = 60
	OffReplica      = 61
)

// U128 is a 16-byte little-endian field as two halves.
type U128 struct{ Lo, Hi uint64 }

// IsZero reports whether both halves are zero.
func (u U128) IsZero() bool { return u.Lo == 0 && u.Hi == 0 }

func (u U128) String() string { return fmt.Sprintf("0x%016x%016x", u.Hi, u.Lo) }

// U8, U32, U64 and Get128 read little-endian fields of b at off.
func U8(b []byte, off int) uint8   { return b[off] }
func U32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func U64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
func Get128(b []byte, off int) U128 {
	return U128{Lo: binary.LittleEndian.Uint64(b[off:]), Hi: binary.LittleEndian.Uint64(b[off+8:])}
}

// Seal is a sealed command's checksum: XXH3 of header bytes 16..256, in
// the low half (wire.md 3.2).
func Seal(h []byte) U128 { return U128{Lo: xxh3.Hash(h[16:HeaderSize])} }

// Identity is a prepare's identity: XXH3 of its 256 header bytes with the
// checksum (0..16) and the view (52..56) zeroed and the command read as
// Prepare (wire.md 3.3; a RepairPrepare verifies as its Prepare).
func Identity(h []byte) U128 {
	var c [HeaderSize]byte
	copy(c[:], h[:HeaderSize])
	clear(c[0:16])
	clear(c[52:56])
	c[OffCommand] = Prepare
	return U128{Lo: xxh3.Hash(c[:])}
}

// BodySeal is XXH3 of a body, in the low half (wire.md 3.4): not zero for
// an empty body.
func BodySeal(body []byte) U128 { return U128{Lo: xxh3.Hash(body)} }

// Problem is a rule of wire.md a frame breaks.
type Problem struct {
	Rule   string // which rule, as wire.md states it (section and field)
	Detail string
}

func (p *Problem) Error() string { return p.Rule + ": " + p.Detail }

func problem(rule, format string, a ...any) *Problem {
	return &Problem{Rule: rule, Detail: fmt.Sprintf(format, a...)}
}

// CommandName names a command byte as wire.md 4 does.
func CommandName(c uint8) string {
	if int(c) < len(commandNames) && commandNames[c] != "" {
		return commandNames[c]
	}
	return fmt.Sprintf("command %d", c)
}

var commandNames = [...]string{
	Request: "Request", Prepare: "Prepare", PrepareOk: "PrepareOk", Reply: "Reply", Commit: "Commit",
	StartViewChange: "StartViewChange", DoViewChange: "DoViewChange", StartView: "StartView", Eviction: "Eviction",
	ReplicaHello: "ReplicaHello", ReplicaChallenge: "ReplicaChallenge", ReplicaFinish: "ReplicaFinish",
	RequestStartView: "RequestStartView", RequestPrepares: "RequestPrepares", RepairPrepare: "RepairPrepare",
	RepairDone: "RepairDone", RangeEvicted: "RangeEvicted", RequestStateTransfer: "RequestStateTransfer",
	StateTransferTarget: "StateTransferTarget", RequestStateChunk: "RequestStateChunk", StateChunk: "StateChunk",
	ForwardRegister: "ForwardRegister", ForwardRegisterResult: "ForwardRegisterResult", ForwardLogout: "ForwardLogout",
	ForwardLogoutResult: "ForwardLogoutResult",
}

// sealed: the commands whose checksum is the frame seal (wire.md 3.2).
func sealed(c uint8) bool {
	switch c {
	case PrepareOk, Commit, StartViewChange, DoViewChange, StartView, RequestStartView, RequestPrepares,
		RepairDone, RangeEvicted, RequestStateTransfer, StateTransferTarget, RequestStateChunk, StateChunk,
		ForwardRegister, ForwardRegisterResult, ForwardLogout, ForwardLogoutResult:
		return true
	}
	return false
}

// headerOnly: the commands always sent with size 256 (wire.md 4, and
// DEVIATIONS 24: "not checked" sizes are sent as 256 too).
func headerOnly(c uint8) bool {
	switch c {
	case PrepareOk, Commit, StartViewChange, ReplicaHello, ReplicaChallenge, ReplicaFinish, RequestStartView,
		RequestPrepares, RepairDone, RangeEvicted, RequestStateTransfer, RequestStateChunk, ForwardRegister,
		ForwardRegisterResult, ForwardLogout, ForwardLogoutResult, Eviction:
		return true
	}
	return false
}

// IsMetadataOperation: the metadata plane's operations (wire.md 10.1):
// Register, Logout, 64..68, 128..137 and 139..149.
func IsMetadataOperation(op uint8) bool {
	return op == 1 || op == 3 || op >= 64 && op <= 68 || op >= 128 && op <= 137 || op >= 139 && op <= 149
}

// IsPartitionOperation: SendMessages, StoreConsumerOffset, DeleteConsumerOffset.
func IsPartitionOperation(op uint8) bool { return op >= 160 && op <= 162 }

// validOperation: a defined discriminant (wire.md 10.1).
func validOperation(op uint8) bool {
	return IsMetadataOperation(op) || IsPartitionOperation(op) || op == 2 || op == 138
}

// zero checks that b[from:to] is all zero.
func zero(f []byte, from, to int, rule string) *Problem {
	for i := from; i < to; i++ {
		if f[i] != 0 {
			return problem(rule, "byte %d is 0x%02x (bytes %d..%d must be zero)", i, f[i], from, to)
		}
	}
	return nil
}
