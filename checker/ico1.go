package checker

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/zeebo/xxh3"
)

// The consumer offsets artifact ICO1 (wire.md 8.5), read by the checker's
// own code: a partition state transfer's kind-3 artifact. Read with
// replica/wire's decoder, a bug in the layout both ends share (the header
// one byte longer, issue 26: wire/offsets.go:19) went unseen: encoder and
// decoder agreed with each other and not with the wire format.

// ico1 is a decoded ICO1 artifact.
type ico1 struct {
	purgeGeneration, nextOffset uint64
	consumers, groups           []ico1Entry
}

// ico1Entry is one consumer's (or consumer group's) offset.
type ico1Entry struct {
	id     uint32
	offset uint64
}

const (
	ico1Magic      = "ICO1"
	ico1Version    = 1
	ico1HeaderLen  = 4 + 1 + 8 + 8 + 4 + 4 // magic, version, purge_generation, next_offset, two counts
	ico1EntryLen   = 4 + 8
	ico1TrailerLen = 8
	ico1CountMax   = 1 << 20
)

var errICO1 = errors.New("ICO1")

// readICO1 reads an ICO1 artifact by wire.md 8.5: the magic, version 1,
// counts at most 1<<20, each section's ids strictly ascending, the XXH3
// trailer over every byte before it, and nothing else.
func readICO1(b []byte) (ico1, error) {
	le := binary.LittleEndian
	if len(b) < ico1HeaderLen+ico1TrailerLen {
		return ico1{}, fmt.Errorf("%w: %d bytes, the header and trailer alone are %d", errICO1, len(b), ico1HeaderLen+ico1TrailerLen)
	}
	if string(b[:4]) != ico1Magic || b[4] != ico1Version {
		return ico1{}, fmt.Errorf("%w: magic %q version %d", errICO1, b[:4], b[4])
	}
	out := ico1{purgeGeneration: le.Uint64(b[5:]), nextOffset: le.Uint64(b[13:])}
	nc, ng := le.Uint32(b[21:]), le.Uint32(b[25:])
	if nc > ico1CountMax || ng > ico1CountMax {
		return ico1{}, fmt.Errorf("%w: %d consumers and %d groups", errICO1, nc, ng)
	}
	want := ico1HeaderLen + (int(nc)+int(ng))*ico1EntryLen + ico1TrailerLen
	if len(b) != want {
		return ico1{}, fmt.Errorf("%w: %d bytes, its counts make %d", errICO1, len(b), want)
	}
	end := len(b) - ico1TrailerLen
	if le.Uint64(b[end:]) != xxh3.Hash(b[:end]) {
		return ico1{}, fmt.Errorf("%w: trailer", errICO1)
	}
	at := ico1HeaderLen
	section := func(n uint32, what string) ([]ico1Entry, error) {
		var es []ico1Entry
		for i := range n {
			e := ico1Entry{id: le.Uint32(b[at:]), offset: le.Uint64(b[at+4:])}
			if i > 0 && e.id <= es[i-1].id {
				return nil, fmt.Errorf("%w: %s id %d after %d", errICO1, what, e.id, es[i-1].id)
			}
			es = append(es, e)
			at += ico1EntryLen
		}
		return es, nil
	}
	var err error
	if out.consumers, err = section(nc, "consumer"); err != nil {
		return ico1{}, err
	}
	if out.groups, err = section(ng, "group"); err != nil {
		return ico1{}, err
	}
	return out, nil
}
