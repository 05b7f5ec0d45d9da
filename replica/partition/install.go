package partition

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// Settled reports whether the plane has applied every batch it holds: a
// restarted plane seeded from its segment log holds batches its log has not
// committed again yet, and offers no state until it has (its batches would
// run ahead of its commit_min).
func (p *Plane) Settled() bool { return p.applied == len(p.committed) && p.next == p.end }

// Offsets returns the stored consumer offsets in ascending consumer order
// (the ICO1 consumers section, wire.md 8.5).
func (p *Plane) Offsets() []wire.OffsetEntry {
	keys := make([]uint32, 0, len(p.offsets))
	for k := range p.offsets {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]wire.OffsetEntry, len(keys))
	for i, k := range keys {
		out[i] = wire.OffsetEntry{ID: k, Offset: p.offsets[k]}
	}
	return out
}

// InstallKind says what an install did to the segment log.
type InstallKind uint8

// What Install did to the segment log.
const (
	// InstallExtended: the log held a prefix of the installed batches; the
	// rest are appended.
	InstallExtended InstallKind = iota
	// InstallBelowSegment: the log already holds the installed batches and
	// more (a replica that committed further before it restarted, Iggy's
	// OfferRewindsDurableData, which Iggy refuses): the log is kept, and
	// its batches above the installed op wait to be committed again, as a
	// restarted plane's do (SeedSegment).
	InstallBelowSegment
	// InstallReset: the log held a batch the installed log replaced
	// (beyond the memory-loss bound); it is written again from offset 0.
	InstallReset
)

// Install makes the state a partition state transfer brought the plane's:
// batches (every committed batch from offset 0, verified by the caller) and
// the stored consumer offsets. The segment log hears what it must make
// durable (InstallKind); the offset records hear every consumer whose
// offset changed or went.
func (p *Plane) Install(batches [][]byte, offsets []wire.OffsetEntry) InstallKind {
	next, messages := uint64(0), uint64(0)
	for i, b := range batches {
		h, err := wire.ReadBatchHeader(b)
		if err != nil || h.BaseOffset != next || h.MessageCount == 0 {
			panic(fmt.Sprintf("partition: installed batch %d at offset %d, the log is at %d (%v)", i, h.BaseOffset, next, err))
		}
		next += uint64(h.MessageCount)
		messages += uint64(h.MessageCount)
	}
	held := p.committed
	kind := InstallExtended
	switch {
	case len(held) > len(batches) && prefixOf(batches, held):
		kind = InstallBelowSegment
		p.applied, p.next, p.messages = len(batches), next, messages
	default:
		installed := make([][]byte, len(batches))
		for i, b := range batches {
			installed[i] = append([]byte(nil), b...)
		}
		if !prefixOf(held, installed) {
			kind = InstallReset
		}
		p.committed, p.applied, p.next, p.end, p.messages = installed, len(installed), next, next, messages
		if p.segment != nil && kind == InstallReset {
			p.segment.Reset(p.committed)
		} else if p.segment != nil {
			for _, b := range p.committed[len(held):] {
				p.segment.Append(0, b)
			}
		}
	}
	want := make(map[uint32]uint64, len(offsets))
	for _, e := range offsets {
		want[e.ID] = e.Offset
	}
	// In consumer order, so the offset records are written the same way on
	// every run.
	for _, e := range p.Offsets() {
		if _, kept := want[e.ID]; !kept && p.offsetSink != nil {
			p.offsetSink(e.ID, 0, true)
		}
	}
	for _, e := range offsets {
		if v, ok := p.offsets[e.ID]; (!ok || v != e.Offset) && p.offsetSink != nil {
			p.offsetSink(e.ID, e.Offset, false)
		}
	}
	p.offsets = want
	return kind
}

// prefixOf reports whether a is a prefix of b, batch for batch.
func prefixOf(a, b [][]byte) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
