package wire

import (
	"fmt"
	"strconv"
)

// Rule names one rule of the wire format that an input can break. Every error
// this package returns wraps exactly one Rule, so callers match with
// errors.Is(err, wire.ErrSealMismatch) and printers show the rule's text.
type Rule uint8

// Framing rules (wire.md 1.1): breaking one closes the connection.
const (
	ErrSizeBelowHeader Rule = iota + 1
	ErrSizeAboveMax
	ErrCommandUnknown
	ErrTruncated
	ErrSizeMismatch

	// Dispatch (wire.md 4.1 step 3): the frame is not typed on this plane.
	ErrNotReplicaPlane

	// Typed bit-pattern checks (wire.md 4.1 step 4).
	ErrOperationUndefined
	ErrOutcomeUndefined
	ErrReasonUndefined

	// Integrity (wire.md 3).
	ErrSealMismatch
	ErrIdentityMismatch
	ErrBodySealMismatch

	// validate() rules (wire.md 5).
	ErrCommandMismatch
	ErrReservedFrameNonzero
	ErrReservedNonzero
	ErrReleaseNonzero
	ErrSizeNotHeader
	ErrSizeNotMultiple
	ErrSuffixTooLong
	ErrBitsetBeyondSuffix
	ErrLogViewAboveView
	ErrCommitAboveOp
	ErrFromOpZero
	ErrFromOpAboveToOp
	ErrLenZero
	ErrAvailableInvalid
	ErrTransientInvalid
	ErrAvailableAndTransient
	ErrRefusalHasBody
	ErrClientZero
	ErrNonceZero
	ErrSessionZero
	ErrRequestZero
	ErrOutcomeFieldsNonzero
	ErrOperationReserved
	ErrRegisterSessionNonzero
	ErrRegisterRequestNonzero
	ErrReasonReserved
	ErrProtocolWindow

	// View-change suffix (wire.md 5.5).
	ErrSuffixEntryCommand
	ErrSuffixEntryOp
	ErrSuffixEntryIdentity
	ErrSuffixTimestampOrder
	ErrSuffixChain
	ErrSuffixBeyondOp

	// Bodies and artifacts (wire.md 7, 8, 9).
	ErrShort
	ErrTrailingBytes
	ErrMagic
	ErrVersion
	ErrTrailerMismatch
	ErrCountTooLarge
	ErrEntryLenTooSmall
	ErrBatchLength
	ErrMessageCountZero
	ErrMessageFrameOverrun
	ErrMessageReservedNonzero
	ErrMessageChecksum
	ErrBatchChecksum
	ErrMessagesTrailing
	ErrDuplicateClient
	ErrRingLen
	ErrReplyFrame
	ErrIDOrder
	ErrPayloadTooLarge
	ErrPayloadLen
	ErrLogViewAboveViewState
	ErrOptionEntry
	ErrOptionKey
	ErrArtifactLen
	ErrArtifactChecksum

	ruleCount
)

var ruleText = [ruleCount]string{
	ErrSizeBelowHeader:        "size must be at least 256",
	ErrSizeAboveMax:           "size must not exceed the maximum frame size",
	ErrCommandUnknown:         "command must be 0..29",
	ErrTruncated:              "stream ends inside a frame",
	ErrSizeMismatch:           "size must equal the length of the delimited frame",
	ErrNotReplicaPlane:        "not a replica-plane frame",
	ErrOperationUndefined:     "operation must be a defined discriminant",
	ErrOutcomeUndefined:       "outcome must be a defined discriminant",
	ErrReasonUndefined:        "eviction reason must be a defined discriminant (0..15)",
	ErrSealMismatch:           "frame seal (checksum) must equal XXH3 of header bytes 16..256",
	ErrIdentityMismatch:       "prepare identity (checksum) must match the header",
	ErrBodySealMismatch:       "checksum_body must equal XXH3 of the body",
	ErrCommandMismatch:        "command byte must match the header type",
	ErrReservedFrameNonzero:   "reserved_frame (bytes 62..128) must be zero",
	ErrReservedNonzero:        "reserved bytes must be zero",
	ErrReleaseNonzero:         "release must be 0",
	ErrSizeNotHeader:          "size must be exactly 256",
	ErrSizeNotMultiple:        "size must be 256 plus a multiple of 256",
	ErrSuffixTooLong:          "suffix must hold at most 128 entries",
	ErrBitsetBeyondSuffix:     "no bitset bit may be set at or beyond the suffix length",
	ErrLogViewAboveView:       "log_view must be <= view",
	ErrCommitAboveOp:          "commit must be <= op",
	ErrFromOpZero:             "from_op must be >= 1",
	ErrFromOpAboveToOp:        "from_op must be <= to_op",
	ErrLenZero:                "len must be nonzero",
	ErrAvailableInvalid:       "available must be 0 or 1",
	ErrTransientInvalid:       "unavailable_transient must be 0 or 1",
	ErrAvailableAndTransient:  "available and unavailable_transient must not both be 1",
	ErrRefusalHasBody:         "a refusal (available = 0) must have size 256",
	ErrClientZero:             "client must be nonzero",
	ErrNonceZero:              "nonce must be nonzero",
	ErrSessionZero:            "session must be nonzero",
	ErrRequestZero:            "request must be nonzero",
	ErrOutcomeFieldsNonzero:   "a non-Ok outcome must carry zero result fields",
	ErrOperationReserved:      "operation must not be Reserved",
	ErrRegisterSessionNonzero: "register: session must be 0",
	ErrRegisterRequestNonzero: "register: request must be 0",
	ErrReasonReserved:         "eviction reason must not be Reserved",
	ErrProtocolWindow:         "protocol window must be 1 <= min <= max on reason 14 and zero otherwise",
	ErrSuffixEntryCommand:     "suffix entry must be a valid prepare header (command 6, defined operation, reserved zero)",
	ErrSuffixEntryOp:          "suffix entry i must carry op - i",
	ErrSuffixEntryIdentity:    "suffix entry identity must verify",
	ErrSuffixTimestampOrder:   "suffix timestamps must strictly decrease going down",
	ErrSuffixChain:            "suffix parent must equal the identity of the entry below",
	ErrSuffixBeyondOp:         "suffix must not reach below op 0",
	ErrShort:                  "input ends before the structure does",
	ErrTrailingBytes:          "no bytes may follow the last entry",
	ErrMagic:                  "magic must match",
	ErrVersion:                "version must be supported",
	ErrTrailerMismatch:        "trailer must equal XXH3 of the bytes before it",
	ErrCountTooLarge:          "count exceeds its maximum",
	ErrEntryLenTooSmall:       "entry_len must be at least 25",
	ErrBatchLength:            "batch_length must be >= 256 and equal the batch's size",
	ErrMessageCountZero:       "message_count must be > 0",
	ErrMessageFrameOverrun:    "message frame must fit inside the batch",
	ErrMessageReservedNonzero: "message reserved field must be zero",
	ErrMessageChecksum:        "message checksum must equal XXH3 of the frame",
	ErrBatchChecksum:          "batch_checksum must match",
	ErrMessagesTrailing:       "message frames must tile the blob exactly",
	ErrDuplicateClient:        "client ids must be unique",
	ErrRingLen:                "ring_len must be 1..5",
	ErrReplyFrame:             "cached reply must be a Reply frame with 256 <= size <= reply_len",
	ErrIDOrder:                "ids must strictly ascend",
	ErrPayloadTooLarge:        "payload_len must be <= 4096",
	ErrPayloadLen:             "payload must be 66 bytes (or the 58-byte legacy form)",
	ErrLogViewAboveViewState:  "log_view must be <= view",
	ErrOptionEntry:            "option entry kind must be nonzero and len 1..255",
	ErrOptionKey:              "option keys must be unique UTF-8 strings, each followed by a value",
	ErrArtifactLen:            "artifact length must equal its manifest entry's len",
	ErrArtifactChecksum:       "artifact XXH3 must equal its manifest entry's checksum",
}

// Error returns the rule's text.
func (r Rule) Error() string {
	if r == 0 || r >= ruleCount {
		return "wire rule " + strconv.Itoa(int(r))
	}
	return ruleText[r]
}

// FramingError is a violation of the framing rules of wire.md 1.1. The stream
// cannot be resynchronised after one: the connection must be closed.
type FramingError struct {
	Rule    Rule
	Offset  int64   // stream offset of the frame's first byte
	Size    uint32  // the size field, when the header was read
	Command Command // the command byte, when the header was read
	Max     uint32  // the maximum frame size in force
	Have    int     // bytes of the frame present (for ErrTruncated)
}

func (e *FramingError) Error() string {
	switch e.Rule {
	case ErrSizeBelowHeader:
		return fmt.Sprintf("framing error at offset %d: %s (size %d)", e.Offset, e.Rule, e.Size)
	case ErrSizeAboveMax:
		return fmt.Sprintf("framing error at offset %d: %s (size %d > %d)", e.Offset, e.Rule, e.Size, e.Max)
	case ErrCommandUnknown:
		return fmt.Sprintf("framing error at offset %d: %s (command %d)", e.Offset, e.Rule, uint8(e.Command))
	case ErrTruncated:
		if e.Have < HeaderSize {
			return fmt.Sprintf("framing error at offset %d: %s (%d of 256 header bytes)", e.Offset, e.Rule, e.Have)
		}
		return fmt.Sprintf("framing error at offset %d: %s (%d of %d bytes)", e.Offset, e.Rule, e.Have, e.Size)
	}
	return fmt.Sprintf("framing error at offset %d: %s", e.Offset, e.Rule)
}

// Unwrap returns the rule, for errors.Is.
func (e *FramingError) Unwrap() error { return e.Rule }

// FrameError is a frame that was framed correctly but fails the typed decode
// of wire.md 4.1 (bit patterns, seal, validate). The receiver drops the frame
// and keeps the connection.
type FrameError struct {
	Command Command
	Rule    Rule
	Detail  string // the values involved, when they help ("log_view 7, view 3")
}

func (e *FrameError) Error() string {
	if e.Detail == "" {
		return e.Command.SnakeName() + ": " + e.Rule.Error()
	}
	return e.Command.SnakeName() + ": " + e.Rule.Error() + " (" + e.Detail + ")"
}

// Unwrap returns the rule, for errors.Is.
func (e *FrameError) Unwrap() error { return e.Rule }

// FormatError is a body or artifact (batch, suffix, ISM1, ICT2, ICO1,
// superblock record) that breaks its format.
type FormatError struct {
	Format string // "batch", "suffix", "ISM1", "artifact", "ICT2", "ICO1", "superblock", "VsrState"
	Rule   Rule
	Offset int    // byte offset inside the input where the rule was checked
	Detail string // the values involved
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("%s at byte %d: %s", e.Format, e.Offset, e.Rule)
	if e.Detail != "" {
		s += " (" + e.Detail + ")"
	}
	return s
}

// Unwrap returns the rule, for errors.Is.
func (e *FormatError) Unwrap() error { return e.Rule }

func frameErr(c Command, r Rule) *FrameError { return &FrameError{Command: c, Rule: r} }

func frameErrf(c Command, r Rule, format string, args ...any) *FrameError {
	return &FrameError{Command: c, Rule: r, Detail: fmt.Sprintf(format, args...)}
}

func formatErr(format string, r Rule, offset int) *FormatError {
	return &FormatError{Format: format, Rule: r, Offset: offset}
}

func formatErrf(format string, r Rule, offset int, detail string, args ...any) *FormatError {
	return &FormatError{Format: format, Rule: r, Offset: offset, Detail: fmt.Sprintf(detail, args...)}
}
