package partition

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/iggy-vopr/vopr/replica/wire"
)

// installLog is a partition's committed log as its group commits it: batch
// k holds k+1 messages, is stamped at its offset and timestamp
// 100*(k+1)+skew, and is committed by op k+1 (prepares[k]). A skew other
// than 0 gives another log at the same offsets.
type installLog struct {
	batches  [][]byte
	prepares []wire.PrepareHeader
}

func newInstallLog(n int, skew uint64) installLog {
	var l installLog
	offset := uint64(0)
	for k := range n {
		msgs := make([]wire.Message, k+1)
		for i := range msgs {
			msgs[i] = wire.Message{ID: wire.U128{Lo: offset + uint64(i) + 1}, OffsetDelta: uint32(i),
				Payload: []byte{byte('a' + k), byte(skew)}}
		}
		ts := 100*uint64(k+1) + skew
		l.batches = append(l.batches, Stamp(wire.EncodeBatch(wire.BatchHeader{OriginTimestamp: 1}, msgs), 0, offset, ts))
		l.prepares = append(l.prepares, wire.PrepareHeader{Op: uint64(k + 1), Timestamp: ts, Operation: wire.OperationSendMessages})
		offset += uint64(len(msgs))
	}
	return l
}

// apply commits batch k of the log on p, as the group's commit does.
func (l installLog) apply(p *Plane, k int) []byte {
	return p.Apply(&l.prepares[k], l.batches[k], 0, 0)
}

// end is the offset after the first n batches; messages equals it.
func (l installLog) end(n int) uint64 {
	if n == 0 {
		return 0
	}
	return NextOffset(l.batches[n-1])
}

// segmentEvent is one call a SegmentSink heard: an Append of one batch, or
// a Reset with the log from offset 0.
type segmentEvent struct {
	reset   bool
	op      uint64
	batches [][]byte
}

func (e segmentEvent) String() string {
	var bases []uint64
	for _, b := range e.batches {
		h, _ := wire.ReadBatchHeader(b)
		bases = append(bases, h.BaseOffset)
	}
	if e.reset {
		return fmt.Sprintf("Reset(at %v)", bases)
	}
	return fmt.Sprintf("Append(op %d, at %v)", e.op, bases)
}

type recordingSegment struct{ events []segmentEvent }

func (r *recordingSegment) Append(op uint64, batch []byte) {
	r.events = append(r.events, segmentEvent{op: op, batches: [][]byte{append([]byte(nil), batch...)}})
}

func (r *recordingSegment) Reset(batches [][]byte) {
	cp := make([][]byte, len(batches))
	for i, b := range batches {
		cp[i] = append([]byte(nil), b...)
	}
	r.events = append(r.events, segmentEvent{reset: true, batches: cp})
}

func (r *recordingSegment) take() []segmentEvent {
	e := r.events
	r.events = nil
	return e
}

// appends is the Appends of batches, in order (ops unchecked).
func appends(batches ...[]byte) []segmentEvent {
	var out []segmentEvent
	for _, b := range batches {
		out = append(out, segmentEvent{batches: [][]byte{b}})
	}
	return out
}

func sameEvents(t *testing.T, what string, got, want []segmentEvent) {
	t.Helper()
	ok := len(got) == len(want)
	for i := 0; ok && i < len(got); i++ {
		ok = got[i].reset == want[i].reset && len(got[i].batches) == len(want[i].batches)
		for j := 0; ok && j < len(got[i].batches); j++ {
			ok = bytes.Equal(got[i].batches[j], want[i].batches[j])
		}
	}
	if !ok {
		t.Fatalf("%s: the segment heard %v, want %v", what, got, want)
	}
}

func newInstallPlane(seg *recordingSegment) *Plane {
	p := NewPlane(0, noJournal{}, func() uint64 { return 0 })
	p.SetSegment(seg)
	return p
}

// TestInstallKinds: what Install makes of the plane, and what its segment
// log hears, for a plane holding a prefix of the installed log, more than
// it, or another log.
func TestInstallKinds(t *testing.T) {
	log := newInstallLog(5, 0)
	other := newInstallLog(5, 7) // the same offsets, other batches
	mixed := [][]byte{log.batches[0], other.batches[1]}
	for _, tc := range []struct {
		name string
		// setup builds the plane before the install (its segment is seg).
		setup   func(t *testing.T, p *Plane)
		install [][]byte
		kind    InstallKind
		heard   []segmentEvent
		// After the install: what the plane holds and what polls see.
		batches  [][]byte
		next     uint64
		messages uint64
		settled  bool
		// then, when set, runs after the checks above.
		then func(t *testing.T, p *Plane, seg *recordingSegment)
	}{
		{
			name: "extended: committed b0..b1 installs b0..b4",
			setup: func(t *testing.T, p *Plane) {
				log.apply(p, 0)
				log.apply(p, 1)
			},
			install: log.batches, kind: InstallExtended, heard: appends(log.batches[2:]...),
			batches: log.batches, next: log.end(5), messages: log.end(5), settled: true,
			then: func(t *testing.T, p *Plane, seg *recordingSegment) {
				// The plane commits on from the installed log: b5 at its end.
				more := newInstallLog(6, 0)
				more.apply(p, 5)
				sameEvents(t, "applying b5", seg.take(), appends(more.batches[5]))
				if p.NextOffset() != more.end(6) || p.Messages() != more.end(6) || !p.Settled() {
					t.Fatalf("after b5: next %d, messages %d, settled %v; want %d, %d, true",
						p.NextOffset(), p.Messages(), p.Settled(), more.end(6), more.end(6))
				}
			},
		},
		{
			name:    "extended: an empty plane installs b0..b4",
			setup:   func(t *testing.T, p *Plane) {},
			install: log.batches, kind: InstallExtended, heard: appends(log.batches...),
			batches: log.batches, next: log.end(5), messages: log.end(5), settled: true,
		},
		{
			name:    "extended: a restart seeded with b0..b1 installs b0..b4",
			setup:   func(t *testing.T, p *Plane) { p.SeedSegment(slices.Clone(log.batches[:2])) },
			install: log.batches, kind: InstallExtended, heard: appends(log.batches[2:]...),
			batches: log.batches, next: log.end(5), messages: log.end(5), settled: true,
		},
		{
			name:    "extended: a restart seeded with b0..b4 installs b0..b4",
			setup:   func(t *testing.T, p *Plane) { p.SeedSegment(slices.Clone(log.batches)) },
			install: log.batches, kind: InstallExtended, heard: nil,
			batches: log.batches, next: log.end(5), messages: log.end(5), settled: true,
		},
		{
			name:    "extended: an empty plane installs nothing",
			setup:   func(t *testing.T, p *Plane) {},
			install: nil, kind: InstallExtended, heard: nil,
			batches: nil, next: 0, messages: 0, settled: true,
		},
		{
			name:    "below segment: a restart seeded with b0..b4 installs b0..b2",
			setup:   func(t *testing.T, p *Plane) { p.SeedSegment(slices.Clone(log.batches)) },
			install: log.batches[:3], kind: InstallBelowSegment, heard: nil,
			batches: log.batches, next: log.end(5), messages: log.end(3), settled: false,
			then: func(t *testing.T, p *Plane, seg *recordingSegment) {
				// The log commits b3 and b4 again: each is the batch the
				// segment kept, and counts.
				for k := 3; k < 5; k++ {
					if p.Settled() {
						t.Fatalf("settled before b%d was committed again", k)
					}
					reply := log.apply(p, k)
					if want := SendMessagesReply(0, 0, 0, log.end(k)); !bytes.Equal(reply, want) {
						t.Fatalf("b%d: reply %x, want %x", k, reply, want)
					}
					sameEvents(t, fmt.Sprintf("committing b%d again", k), seg.take(), nil)
					if p.Messages() != log.end(k+1) || p.NextOffset() != log.end(5) || len(p.Batches()) != 5 {
						t.Fatalf("after b%d: messages %d, next %d, %d batches; want %d, %d, 5",
							k, p.Messages(), p.NextOffset(), len(p.Batches()), log.end(k+1), log.end(5))
					}
				}
				if !p.Settled() {
					t.Fatal("not settled once b4 was committed again")
				}
				// And it commits on past the segment: b5 is appended.
				more := newInstallLog(6, 0)
				more.apply(p, 5)
				sameEvents(t, "applying b5", seg.take(), appends(more.batches[5]))
			},
		},
		{
			name: "below segment: a restart seeded with b0..b4 that committed b0 again installs b0..b2",
			setup: func(t *testing.T, p *Plane) {
				p.SeedSegment(slices.Clone(log.batches))
				log.apply(p, 0)
			},
			install: log.batches[:3], kind: InstallBelowSegment, heard: nil,
			batches: log.batches, next: log.end(5), messages: log.end(3), settled: false,
			then: func(t *testing.T, p *Plane, seg *recordingSegment) {
				log.apply(p, 3)
				log.apply(p, 4)
				sameEvents(t, "committing b3, b4 again", seg.take(), nil)
				if !p.Settled() || p.Messages() != log.end(5) {
					t.Fatalf("settled %v, messages %d; want true, %d", p.Settled(), p.Messages(), log.end(5))
				}
			},
		},
		{
			name:    "below segment: a restart seeded with b0..b4 installs b0..b2, then the log commits another b3",
			setup:   func(t *testing.T, p *Plane) { p.SeedSegment(slices.Clone(log.batches)) },
			install: log.batches[:3], kind: InstallBelowSegment, heard: nil,
			batches: log.batches, next: log.end(5), messages: log.end(3), settled: false,
			then: func(t *testing.T, p *Plane, seg *recordingSegment) {
				// another b3 at b2's end (same offsets, another timestamp)
				b3 := Stamp(producerBatch(t, 4), 0, log.end(3), 999)
				p.Apply(&wire.PrepareHeader{Op: 4, Timestamp: 999, Operation: wire.OperationSendMessages}, b3, 0, 0)
				want := append(slices.Clone(log.batches[:3]), b3)
				sameEvents(t, "committing another b3", seg.take(), []segmentEvent{{reset: true, batches: want}})
				sameBatches(t, "after another b3", p.Batches(), want)
				if !p.Settled() || p.NextOffset() != log.end(3)+4 {
					t.Fatalf("settled %v, next %d; want true, %d", p.Settled(), p.NextOffset(), log.end(3)+4)
				}
			},
		},
		{
			name: "reset: committed b0, b1' installs b0..b4",
			setup: func(t *testing.T, p *Plane) {
				log.apply(p, 0)
				p.Apply(&wire.PrepareHeader{Op: 2, Timestamp: other.prepares[1].Timestamp, Operation: wire.OperationSendMessages},
					mixed[1], 0, 0)
			},
			install: log.batches, kind: InstallReset, heard: []segmentEvent{{reset: true, batches: log.batches}},
			batches: log.batches, next: log.end(5), messages: log.end(5), settled: true,
		},
		{
			name:    "reset: a restart seeded with another b0..b4 installs b0..b2",
			setup:   func(t *testing.T, p *Plane) { p.SeedSegment(slices.Clone(other.batches)) },
			install: log.batches[:3], kind: InstallReset, heard: []segmentEvent{{reset: true, batches: log.batches[:3]}},
			batches: log.batches[:3], next: log.end(3), messages: log.end(3), settled: true,
		},
		{
			name:    "reset: a restart seeded with b0, b1' installs b0..b4",
			setup:   func(t *testing.T, p *Plane) { p.SeedSegment(slices.Clone(mixed)) },
			install: log.batches, kind: InstallReset, heard: []segmentEvent{{reset: true, batches: log.batches}},
			batches: log.batches, next: log.end(5), messages: log.end(5), settled: true,
		},
		{
			name: "reset: committed b0..b2, b3', b4' installs b0..b3",
			setup: func(t *testing.T, p *Plane) {
				for k := range 3 {
					log.apply(p, k)
				}
				b3 := Stamp(producerBatch(t, 4), 0, log.end(3), 999)
				p.Apply(&wire.PrepareHeader{Op: 4, Timestamp: 999, Operation: wire.OperationSendMessages}, b3, 0, 0)
				b4 := Stamp(producerBatch(t, 1), 0, log.end(3)+4, 1000)
				p.Apply(&wire.PrepareHeader{Op: 5, Timestamp: 1000, Operation: wire.OperationSendMessages}, b4, 0, 0)
			},
			// It holds more than the installed log, but not a log the
			// installed one is a prefix of.
			install: log.batches[:4], kind: InstallReset, heard: []segmentEvent{{reset: true, batches: log.batches[:4]}},
			batches: log.batches[:4], next: log.end(4), messages: log.end(4), settled: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seg := &recordingSegment{}
			p := newInstallPlane(seg)
			tc.setup(t, p)
			seg.take() // what the setup's commits appended
			// The caller's bytes: the plane must keep its own.
			install := make([][]byte, len(tc.install))
			for i, b := range tc.install {
				install[i] = append([]byte(nil), b...)
			}
			if kind := p.Install(install, nil); kind != tc.kind {
				t.Fatalf("kind %d, want %d", kind, tc.kind)
			}
			sameEvents(t, "the install", seg.take(), tc.heard)
			for _, b := range install {
				clear(b)
			}
			sameBatches(t, "the batches", p.Batches(), tc.batches)
			if p.NextOffset() != tc.next || p.Messages() != tc.messages || p.Settled() != tc.settled {
				t.Fatalf("next %d, messages %d, settled %v; want %d, %d, %v",
					p.NextOffset(), p.Messages(), p.Settled(), tc.next, tc.messages, tc.settled)
			}
			if tc.then != nil {
				tc.then(t, p, seg)
			}
		})
	}
}

type offsetEvent struct {
	consumer uint32
	offset   uint64
	deleted  bool
}

// TestInstallOffsets: the offset records hear every consumer whose stored
// offset went (in consumer order) and then every one that changed (in the
// installed order), and nothing of the rest.
func TestInstallOffsets(t *testing.T) {
	e := func(id uint32, off uint64) wire.OffsetEntry { return wire.OffsetEntry{ID: id, Offset: off} }
	for _, tc := range []struct {
		name    string
		stored  map[uint32]uint64
		install []wire.OffsetEntry
		heard   []offsetEvent
		want    []wire.OffsetEntry // Offsets() after
	}{
		{
			name: "delete 1, change 2, add 3", stored: map[uint32]uint64{1: 5, 2: 7},
			install: []wire.OffsetEntry{e(2, 9), e(3, 1)},
			heard:   []offsetEvent{{1, 0, true}, {2, 9, false}, {3, 1, false}},
			want:    []wire.OffsetEntry{e(2, 9), e(3, 1)},
		},
		{
			name: "stores in the installed order", stored: map[uint32]uint64{1: 5, 2: 7},
			install: []wire.OffsetEntry{e(3, 1), e(2, 9)},
			heard:   []offsetEvent{{1, 0, true}, {3, 1, false}, {2, 9, false}},
			want:    []wire.OffsetEntry{e(2, 9), e(3, 1)},
		},
		{
			name: "an unchanged consumer is not heard", stored: map[uint32]uint64{1: 5, 2: 7, 4: 4},
			install: []wire.OffsetEntry{e(4, 4), e(2, 9), e(3, 1)},
			heard:   []offsetEvent{{1, 0, true}, {2, 9, false}, {3, 1, false}},
			want:    []wire.OffsetEntry{e(2, 9), e(3, 1), e(4, 4)},
		},
		{
			name: "deletions in consumer order", stored: map[uint32]uint64{9: 1, 1: 2, 300: 3, 5: 4},
			install: nil,
			heard:   []offsetEvent{{1, 0, true}, {5, 0, true}, {9, 0, true}, {300, 0, true}},
			want:    []wire.OffsetEntry{},
		},
		{
			name: "the same offsets: nothing heard", stored: map[uint32]uint64{1: 5, 2: 7},
			install: []wire.OffsetEntry{e(2, 7), e(1, 5)},
			heard:   nil,
			want:    []wire.OffsetEntry{e(1, 5), e(2, 7)},
		},
		{
			name: "into none", stored: nil,
			install: []wire.OffsetEntry{e(7, 0), e(1, 3)},
			heard:   []offsetEvent{{7, 0, false}, {1, 3, false}},
			want:    []wire.OffsetEntry{e(1, 3), e(7, 0)},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := committedPlane(t, 2, 3)
			p.SeedOffsets(tc.stored)
			var heard []offsetEvent
			p.SetOffsetSink(func(c uint32, off uint64, deleted bool) { heard = append(heard, offsetEvent{c, off, deleted}) })
			p.Install(slices.Clone(p.Batches()), tc.install)
			if !slices.Equal(heard, tc.heard) {
				t.Fatalf("the offset records heard %v, want %v", heard, tc.heard)
			}
			if got := p.Offsets(); !slices.Equal(got, tc.want) {
				t.Fatalf("Offsets() %v, want %v", got, tc.want)
			}
			for _, w := range tc.want {
				if v, ok := p.StoredOffset(w.ID); !ok || v != w.Offset {
					t.Fatalf("StoredOffset(%d) = %d, %v; want %d", w.ID, v, ok, w.Offset)
				}
			}
			for c := range tc.stored {
				if !slices.ContainsFunc(tc.want, func(w wire.OffsetEntry) bool { return w.ID == c }) {
					if v, ok := p.StoredOffset(c); ok {
						t.Fatalf("StoredOffset(%d) = %d after its offset went", c, v)
					}
				}
			}
			// Without a sink, the install still takes the offsets.
			q := committedPlane(t, 2, 3)
			q.SeedOffsets(tc.stored)
			q.Install(slices.Clone(q.Batches()), tc.install)
			if got := q.Offsets(); !slices.Equal(got, tc.want) {
				t.Fatalf("without a sink: Offsets() %v, want %v", got, tc.want)
			}
		})
	}
}

// TestInstallRefusesABrokenLog: batches that are not contiguous from
// offset 0 panic, before the plane changes.
func TestInstallRefusesABrokenLog(t *testing.T) {
	log := newInstallLog(4, 0)
	b := log.batches
	for _, tc := range []struct {
		name    string
		batches [][]byte
	}{
		{"not from offset 0", [][]byte{b[1], b[2]}},
		{"a gap", [][]byte{b[0], b[2]}},
		{"a repeat", [][]byte{b[0], b[1], b[1]}},
		{"out of order", [][]byte{b[0], b[2], b[1]}},
		{"not a batch", [][]byte{b[0], []byte{1, 2, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seg := &recordingSegment{}
			p := newInstallPlane(seg)
			log.apply(p, 0)
			seg.take()
			p.StoreOffset(1, 5)
			var heard int
			p.SetOffsetSink(func(uint32, uint64, bool) { heard++ })
			func() {
				defer func() {
					if recover() == nil {
						t.Fatal("Install took a broken log")
					}
				}()
				p.Install(tc.batches, []wire.OffsetEntry{{ID: 2, Offset: 1}})
			}()
			sameEvents(t, "the refused install", seg.take(), nil)
			sameBatches(t, "after the refused install", p.Batches(), b[:1])
			if heard != 0 || p.NextOffset() != log.end(1) || p.Messages() != log.end(1) || !p.Settled() ||
				!slices.Equal(p.Offsets(), []wire.OffsetEntry{{ID: 1, Offset: 5}}) {
				t.Fatalf("the refused install changed the plane: next %d, messages %d, offsets %v, %d offsets heard",
					p.NextOffset(), p.Messages(), p.Offsets(), heard)
			}
		})
	}
}
