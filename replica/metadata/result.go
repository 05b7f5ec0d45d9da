package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Result codes (IggyError numbers, client-ops.md 2.7) that this package
// produces or names.
const (
	CodeOK                        uint32 = 0
	CodeInvalidCommand            uint32 = 3
	CodeFeatureUnavailable        uint32 = 5
	CodeUnauthorized              uint32 = 41
	CodeTransientNotCommitted     uint32 = 57
	CodeTransientNotAccepted      uint32 = 58
	CodeRequestAlreadyApplied     uint32 = 59
	CodeStreamIDNotFound          uint32 = 1009
	CodeStreamNameAlreadyExists   uint32 = 1012
	CodeTooManyStreams            uint32 = 1020
	CodeTopicIDNotFound           uint32 = 2010
	CodeTopicNameAlreadyExists    uint32 = 2013
	CodeTooManyPartitions         uint32 = 2015
	CodeInvalidPartitionsCount    uint32 = 2019
	CodeTooManyTopics             uint32 = 2021
	CodePartitionIDSpaceExhausted uint32 = 3013
	CodeUnsupportedOptionKey      uint32 = 4041
	CodeInvalidOptionValue        uint32 = 4042
)

// ErrMalformedResult: a reply body that is not a result section.
var ErrMalformedResult = errors.New("metadata: malformed result section")

const (
	resultCountLen = 4
	resultEntryLen = 8
	// resultEntriesMax bounds how many result entries ParseResult accepts;
	// Iggy writes at most one.
	resultEntriesMax = 1 << 16
)

// ResultOK returns a success reply body: count 0, then the payload
// (client-ops.md 2.2). An op with no payload has the body 00 00 00 00.
func ResultOK(payload []byte) []byte {
	b := make([]byte, resultCountLen, resultCountLen+len(payload))
	return append(b, payload...)
}

// ResultRejection returns a rejection reply body: count 1, index 0, the code,
// no payload (12 bytes). It is also the body of a B-shape result-only
// refusal (57, 58, 59).
func ResultRejection(code uint32) []byte {
	if code == CodeOK {
		panic("metadata: a rejection with code 0")
	}
	b := binary.LittleEndian.AppendUint32(nil, 1)
	b = binary.LittleEndian.AppendUint32(b, 0)
	return binary.LittleEndian.AppendUint32(b, code)
}

// ResultEntry is one {index, result} pair of a result section.
type ResultEntry struct {
	Index  uint32
	Result uint32
}

// Result is a parsed result section.
type Result struct {
	Entries []ResultEntry
	// Payload is what follows the entries; it is the typed payload of a
	// success (no entries).
	Payload []byte
}

// Code returns 0 for a success and the first entry's result otherwise.
func (r Result) Code() uint32 {
	if len(r.Entries) == 0 {
		return CodeOK
	}
	return r.Entries[0].Result
}

// ParseResult parses a result section. A body shorter than 4 bytes, or than
// 4 + 8 x count, is malformed and never a success (client-ops.md 2.2); so is
// an entry whose result is 0 (a rejection must name a code). Payload aliases
// body.
func ParseResult(body []byte) (Result, error) {
	if len(body) < resultCountLen {
		return Result{}, fmt.Errorf("%w: %d bytes", ErrMalformedResult, len(body))
	}
	count := binary.LittleEndian.Uint32(body)
	if count > resultEntriesMax || uint64(len(body)-resultCountLen) < uint64(count)*resultEntryLen {
		return Result{}, fmt.Errorf("%w: count %d in %d bytes", ErrMalformedResult, count, len(body))
	}
	var r Result
	at := resultCountLen
	for range count {
		e := ResultEntry{Index: binary.LittleEndian.Uint32(body[at:]), Result: binary.LittleEndian.Uint32(body[at+4:])}
		if e.Result == CodeOK {
			return Result{}, fmt.Errorf("%w: entry %d has result 0", ErrMalformedResult, len(r.Entries))
		}
		r.Entries = append(r.Entries, e)
		at += resultEntryLen
	}
	r.Payload = body[at:]
	return r, nil
}
